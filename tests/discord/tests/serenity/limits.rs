//! Rate limits honoured by serenity's own ratelimiter, and Discord's content limits.

use std::time::{Duration, Instant};

use futures::future::join_all;
use opsbot_fake_discord::{FakeConfig, FakeDiscord};
use serde_json::json;
use serenity::all::{
    ChannelId, CommandOptionType, CreateActionRow, CreateButton, CreateCommand,
    CreateCommandOption, CreateInteractionResponse, CreateInteractionResponseMessage,
    CreateMessage, EditMessage, GuildId, Interaction,
};

use crate::harness::{T, code_of, next, on, seen, start, within};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serenity_retries_429s_itself_and_every_edit_lands() {
    within(Duration::from_secs(60), async {
        let cfg = FakeConfig {
            edits_per_window: 5,
            window: Duration::from_secs(1),
            ..FakeConfig::default()
        };
        let bot = start(cfg, on(|_, _| async {})).await;
        let (fake, http) = (&bot.fake, &bot.http);
        let channel = ChannelId::new(fake.config().channels[0]);

        // Seven edits at once (two past the window): serenity knows no limit for the route yet, so some get 429s,
        // which its ratelimiter sleeps out (retry-after) and retries.
        let posted = channel
            .send_message(http, CreateMessage::new().content("v0"))
            .await
            .unwrap();
        let edits = (1..=7).map(|i| {
            channel.edit_message(http, posted.id, EditMessage::new().content(format!("v{i}")))
        });
        for result in join_all(edits).await {
            result.unwrap();
        }
        let limited = fake.rate_limited();
        assert!(limited > 0, "no 429 was answered");
        let stored = fake
            .messages(channel.get())
            .into_iter()
            .find(|m| m.id == posted.id.get())
            .unwrap();
        let mut versions: Vec<String> = stored
            .history
            .iter()
            .map(|v| v["content"].as_str().unwrap().to_owned())
            .collect();
        versions.sort_by_key(|v| v[1..].parse::<u32>().unwrap());
        assert_eq!(
            versions,
            (0..=7).map(|i| format!("v{i}")).collect::<Vec<_>>()
        );

        // Ten posts one after the other: once serenity has seen the headers it waits by itself.
        let other = ChannelId::new(fake.config().channels[1]);
        let started = Instant::now();
        for i in 0..10 {
            other.say(http, format!("post {i}")).await.unwrap();
        }
        assert!(
            started.elapsed() >= Duration::from_millis(900),
            "serenity did not wait for the window"
        );
        assert_eq!(fake.messages(other.get()).len(), 10);
        assert!(
            fake.rate_limited() <= limited + 1,
            "serenity ignored x-ratelimit-remaining"
        );

        bot.finish_clean().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_content_and_long_custom_id_get_50035() {
    within(Duration::from_secs(60), async {
        let (tx, mut rx) = seen();
        let bot = start(
            FakeConfig::default(),
            on(move |ctx, interaction| {
                let tx = tx.clone();
                async move {
                    let Interaction::Command(cmd) = interaction else {
                        return;
                    };
                    // serenity's builders refuse long content themselves; the raw call does not.
                    let long = json!({"type": 4, "data": {"content": "x".repeat(2001)}});
                    let too_long = ctx
                        .http
                        .create_interaction_response(cmd.id, &cmd.token, &long, vec![])
                        .await;
                    let button = CreateButton::new("c".repeat(101)).label("Go");
                    let bad = CreateInteractionResponseMessage::new()
                        .content("go?")
                        .components(vec![CreateActionRow::Buttons(vec![button])]);
                    let bad_id = cmd
                        .create_response(&ctx.http, CreateInteractionResponse::Message(bad))
                        .await;
                    let ok = CreateInteractionResponseMessage::new().content("fine");
                    let fine = cmd
                        .create_response(&ctx.http, CreateInteractionResponse::Message(ok))
                        .await;
                    tx.send(json!([
                        too_long.as_ref().err().and_then(code_of),
                        bad_id.as_ref().err().and_then(code_of),
                        fine.is_ok(),
                    ]))
                    .unwrap();
                }
            }),
        )
        .await;
        let (fake, http) = (&bot.fake, &bot.http);
        let channel = ChannelId::new(fake.config().channels[0]);

        let err = http
            .send_message(channel, vec![], &json!({"content": "x".repeat(2001)}))
            .await
            .unwrap_err();
        assert_eq!(code_of(&err), Some(50035));
        match &err {
            serenity::Error::Http(serenity::http::HttpError::UnsuccessfulRequest(r)) => {
                assert_eq!(r.status_code.as_u16(), 400);
                assert_eq!(r.error.errors[0].path, "content");
                assert_eq!(r.error.errors[0].code, "BASE_TYPE_MAX_LENGTH");
            }
            other => panic!("expected a 400, got {other:?}"),
        }
        let button = CreateButton::new("c".repeat(101)).label("Go");
        let message = CreateMessage::new()
            .content("go?")
            .components(vec![CreateActionRow::Buttons(vec![button])]);
        let err = channel.send_message(http, message).await.unwrap_err();
        assert_eq!(code_of(&err), Some(50035));
        let ok = CreateButton::new("c".repeat(100)).label("Go");
        let message = CreateMessage::new()
            .content("go?")
            .components(vec![CreateActionRow::Buttons(vec![ok])]);
        channel.send_message(http, message).await.unwrap();

        let id = fake
            .slash(
                &FakeDiscord::user(7, "alice", &[]),
                channel.get(),
                "ping",
                json!(null),
            )
            .await;
        assert_eq!(next(&mut rx).await, json!([50035, 50035, true]));
        assert_eq!(
            fake.reply_text(id, T).await.unwrap(),
            ("fine".to_owned(), false)
        );

        // Command registration is validated as Discord does.
        let guild = GuildId::new(fake.config().guild_id);
        let err = guild
            .set_commands(http, vec![CreateCommand::new("Bad Name").description("x")])
            .await
            .unwrap_err();
        assert_eq!(code_of(&err), Some(50035));
        let mut crowded = CreateCommand::new("crowded").description("too many options");
        for i in 0..26 {
            crowded = crowded.add_option(CreateCommandOption::new(
                CommandOptionType::String,
                format!("o{i}"),
                "an option",
            ));
        }
        let err = guild.set_commands(http, vec![crowded]).await.unwrap_err();
        assert_eq!(code_of(&err), Some(50035));
        assert_eq!(
            fake.commands().len(),
            3,
            "refused registrations change nothing"
        );

        let fake = bot.stop().await;
        let violations = fake.violations();
        assert_eq!(violations.len(), 6, "{violations:?}");
        assert!(
            violations.iter().any(|v| v.contains("custom_id")),
            "{violations:?}"
        );
        fake.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_repeated_with_an_enforced_nonce_returns_the_first_message() {
    within(Duration::from_secs(60), async {
        let bot = start(FakeConfig::default(), on(|_, _| async {})).await;
        let (fake, http) = (&bot.fake, &bot.http);
        let channel = ChannelId::new(fake.config().channels[0]);
        let post = |text: &str| {
            CreateMessage::new()
                .content(text)
                .nonce(serenity::all::Nonce::String("r1-1732171234".into()))
                .enforce_nonce(true)
        };
        let first = channel.send_message(http, post("first")).await.unwrap();
        let again = channel.send_message(http, post("again")).await.unwrap();
        assert_eq!(again.id, first.id);
        assert_eq!(again.content, "first");
        assert_eq!(fake.messages(channel.get()).len(), 1);
    })
    .await;
}
