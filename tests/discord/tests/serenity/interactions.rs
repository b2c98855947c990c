//! Slash commands, responses, the 3-second rule, buttons, autocomplete and follow-ups.

use std::time::Duration;

use opsbot_fake_discord::{FakeConfig, FakeDiscord};
use serde_json::json;
use serenity::all::{
    CreateActionRow, CreateAutocompleteResponse, CreateButton, CreateInteractionResponse,
    CreateInteractionResponseFollowup, CreateInteractionResponseMessage, EditInteractionResponse,
    Interaction,
};

use crate::harness::{T, code_of, next, on, seen, start, within};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_reaches_serenity_deferred_then_original_edited() {
    within(Duration::from_secs(60), async {
        let (tx, mut rx) = seen();
        let bot = start(
            FakeConfig::default(),
            on(move |ctx, interaction| {
                let tx = tx.clone();
                async move {
                    let Interaction::Command(cmd) = interaction else { return };
                    cmd.defer(&ctx.http).await.unwrap();
                    let member = cmd.member.as_ref().unwrap();
                    tx.send(json!({
                        "name": cmd.data.name,
                        "options": serde_json::to_value(&cmd.data.options).unwrap(),
                        "user": cmd.user.id.get(),
                        "roles": member.roles.iter().map(|r| r.get()).collect::<Vec<_>>(),
                        "guild": cmd.guild_id.map(|g| g.get()),
                        "channel": cmd.channel_id.get(),
                    }))
                    .unwrap();
                    let edit = EditInteractionResponse::new().content("logs: green");
                    cmd.edit_response(&ctx.http, edit).await.unwrap();
                }
            }),
        )
        .await;
        let fake = &bot.fake;
        let cfg = fake.config().clone();
        let channel = cfg.channels[0];
        let alice = FakeDiscord::user(7, "alice", &[11, 12]);
        let options = json!([{"name": "status", "type": 1, "options": [{"name": "cluster", "type": 3, "value": "logs"}]}]);
        let id = fake.slash(&alice, channel, "cluster", options.clone()).await;

        let parsed = next(&mut rx).await;
        assert_eq!(parsed["name"], "cluster");
        assert_eq!(parsed["options"], options);
        assert_eq!(parsed["user"], 7);
        assert_eq!(parsed["roles"], json!([11, 12]));
        assert_eq!(parsed["guild"], cfg.guild_id);
        assert_eq!(parsed["channel"], channel);

        let first = fake.response(id, T).await.unwrap();
        assert_eq!(first.kind, 5);
        assert!(!first.ephemeral);
        assert!(first.at < cfg.first_response_deadline);
        assert_eq!(fake.reply_text(id, T).await.unwrap(), ("logs: green".to_owned(), false));
        let record = fake.interaction(id).unwrap();
        assert_eq!(record.original_edits.len(), 1);
        assert_eq!(record.original_edits[0]["content"], "logs: green");

        let shown = fake.wait_message(channel, T, |m| m.content == "logs: green").await.unwrap();
        assert_eq!(shown.flags, 0, "the thinking flag is cleared");
        assert_eq!(shown.history.len(), 2, "thinking, then the edit");
        assert_eq!(fake.response_latencies().len(), 1);

        bot.finish_clean().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_response_gets_40060_and_late_response_10062() {
    within(Duration::from_secs(60), async {
        let (tx, mut rx) = seen();
        let cfg = FakeConfig {
            first_response_deadline: Duration::from_millis(400),
            ..FakeConfig::default()
        };
        let bot = start(
            cfg,
            on(move |ctx, interaction| {
                let tx = tx.clone();
                async move {
                    let Interaction::Command(cmd) = interaction else {
                        return;
                    };
                    let reply = || {
                        CreateInteractionResponse::Message(
                            CreateInteractionResponseMessage::new().content("pong"),
                        )
                    };
                    if cmd.data.name == "slow" {
                        tokio::time::sleep(Duration::from_millis(800)).await;
                    }
                    let first = cmd.create_response(&ctx.http, reply()).await;
                    let second = cmd.create_response(&ctx.http, reply()).await;
                    tx.send(json!({
                        "first": first.as_ref().err().and_then(code_of),
                        "second": second.as_ref().err().and_then(code_of),
                    }))
                    .unwrap();
                }
            }),
        )
        .await;
        let fake = &bot.fake;
        let channel = fake.config().channels[0];
        let alice = FakeDiscord::user(7, "alice", &[]);

        let ping = fake.slash(&alice, channel, "ping", json!(null)).await;
        assert_eq!(next(&mut rx).await, json!({"first": null, "second": 40060}));
        assert_eq!(fake.response(ping, T).await.unwrap().kind, 4);

        let slow = fake.slash(&alice, channel, "slow", json!(null)).await;
        assert_eq!(
            next(&mut rx).await,
            json!({"first": 10062, "second": 10062})
        );
        assert!(
            fake.interaction(slow).is_none(),
            "a late response is not recorded"
        );
        assert!(
            fake.response(slow, Duration::from_millis(100))
                .await
                .is_err()
        );

        let fake = bot.stop().await;
        let violations = fake.violations();
        assert!(
            violations.iter().any(|v| v.contains("second response")),
            "{violations:?}"
        );
        assert!(
            violations.iter().any(|v| v.contains("late first response")),
            "{violations:?}"
        );
        fake.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn button_click_reaches_serenity_with_message_and_member() {
    within(Duration::from_secs(60), async {
        let (tx, mut rx) = seen();
        let bot = start(
            FakeConfig::default(),
            on(move |ctx, interaction| {
                let tx = tx.clone();
                async move {
                    match interaction {
                        Interaction::Command(cmd) => {
                            let button = CreateButton::new("approve:1").label("Approve");
                            let reply = CreateInteractionResponseMessage::new()
                                .content("approve run 1?")
                                .components(vec![CreateActionRow::Buttons(vec![button])]);
                            cmd.create_response(
                                &ctx.http,
                                CreateInteractionResponse::Message(reply),
                            )
                            .await
                            .unwrap();
                        }
                        Interaction::Component(click) => {
                            let member = click.member.as_ref().unwrap();
                            tx.send(json!({
                                "custom_id": click.data.custom_id,
                                "message": click.message.id.get(),
                                "content": click.message.content,
                                "author_bot": click.message.author.bot,
                                "user": member.user.id.get(),
                                "roles": member.roles.iter().map(|r| r.get()).collect::<Vec<_>>(),
                            }))
                            .unwrap();
                            let update = CreateInteractionResponseMessage::new()
                                .content(format!("approved by {}", member.user.name))
                                .components(vec![]);
                            click
                                .create_response(
                                    &ctx.http,
                                    CreateInteractionResponse::UpdateMessage(update),
                                )
                                .await
                                .unwrap();
                        }
                        _ => {}
                    }
                }
            }),
        )
        .await;
        let fake = &bot.fake;
        let channel = fake.config().channels[0];
        fake.slash(
            &FakeDiscord::user(7, "alice", &[]),
            channel,
            "ping",
            json!(null),
        )
        .await;
        let asked = fake
            .wait_message(channel, T, |m| !m.components.is_empty())
            .await
            .unwrap();

        let bob = FakeDiscord::user(8, "bob", &[42]);
        let click = fake.click(&bob, channel, asked.id, "approve:1").await;
        let parsed = next(&mut rx).await;
        assert_eq!(
            parsed,
            json!({"custom_id": "approve:1", "message": asked.id, "content": "approve run 1?",
                   "author_bot": true, "user": 8, "roles": [42]})
        );
        assert_eq!(fake.response(click, T).await.unwrap().kind, 7);
        assert_eq!(
            fake.reply_text(click, T).await.unwrap(),
            ("approved by bob".to_owned(), false)
        );
        let now = fake
            .wait_message(channel, T, |m| {
                m.id == asked.id && m.content == "approved by bob"
            })
            .await
            .unwrap();
        assert!(now.components.is_empty());
        assert_eq!(now.history.len(), 2);

        bot.finish_clean().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn autocomplete_choices_and_ephemeral_followup_after_deferral() {
    within(Duration::from_secs(60), async {
        let bot = start(
            FakeConfig::default(),
            on(|ctx, interaction| async move {
                match interaction {
                    Interaction::Autocomplete(ac) => {
                        let choices = CreateAutocompleteResponse::new()
                            .add_string_choice("logs", "logs")
                            .add_string_choice("metrics", "metrics");
                        ac.create_response(&ctx.http, CreateInteractionResponse::Autocomplete(choices)).await.unwrap();
                    }
                    Interaction::Command(cmd) => {
                        cmd.defer_ephemeral(&ctx.http).await.unwrap();
                        let followup = CreateInteractionResponseFollowup::new().content("only you see this").ephemeral(true);
                        cmd.create_followup(&ctx.http, followup).await.unwrap();
                    }
                    _ => {}
                }
            }),
        )
        .await;
        let fake = &bot.fake;
        let channel = fake.config().channels[0];
        let alice = FakeDiscord::user(7, "alice", &[]);

        let typing = json!([{"name": "status", "type": 1, "options": [{"name": "cluster", "type": 3, "value": "lo", "focused": true}]}]);
        let ac = fake.autocomplete(&alice, channel, "cluster", typing).await;
        let offered = fake.response(ac, T).await.unwrap();
        assert_eq!(offered.kind, 8);
        assert_eq!(offered.data["choices"][0], json!({"name": "logs", "value": "logs"}));

        let run = json!([{"name": "status", "type": 1, "options": [{"name": "cluster", "type": 3, "value": "logs"}]}]);
        let id = fake.slash(&alice, channel, "cluster", run).await;
        assert_eq!(fake.reply_text(id, T).await.unwrap(), ("only you see this".to_owned(), true));
        let record = fake.interaction(id).unwrap();
        assert_eq!((record.kind, record.ephemeral, record.followups.len()), (5, true, 1));
        let shown = fake.wait_message(channel, T, |m| m.content == "only you see this").await.unwrap();
        assert!(shown.ephemeral());

        bot.finish_clean().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_interaction_token_gets_10015() {
    within(Duration::from_secs(60), async {
        let (tx, mut rx) = seen();
        let cfg = FakeConfig {
            interaction_token_ttl: Duration::from_millis(500),
            ..FakeConfig::default()
        };
        let bot = start(
            cfg,
            on(move |ctx, interaction| {
                let tx = tx.clone();
                async move {
                    let Interaction::Command(cmd) = interaction else {
                        return;
                    };
                    cmd.defer(&ctx.http).await.unwrap();
                    tokio::time::sleep(Duration::from_millis(700)).await;
                    let edit = EditInteractionResponse::new().content("too late");
                    let edited = cmd.edit_response(&ctx.http, edit).await;
                    let followup = CreateInteractionResponseFollowup::new().content("too late");
                    let followed = cmd.create_followup(&ctx.http, followup).await;
                    tx.send(json!([
                        edited.as_ref().err().and_then(code_of),
                        followed.as_ref().err().and_then(code_of),
                    ]))
                    .unwrap();
                }
            }),
        )
        .await;
        let fake = &bot.fake;
        let channel = fake.config().channels[0];
        let id = fake
            .slash(
                &FakeDiscord::user(7, "alice", &[]),
                channel,
                "ping",
                json!(null),
            )
            .await;
        assert_eq!(next(&mut rx).await, json!([10015, 10015]));
        let record = fake.interaction(id).unwrap();
        assert_eq!(record.kind, 5);
        assert!(record.original_edits.is_empty() && record.followups.is_empty());

        let fake = bot.stop().await;
        let violations = fake.violations();
        assert_eq!(violations.len(), 2, "{violations:?}");
        assert!(
            violations.iter().all(|v| v.contains("expired token")),
            "{violations:?}"
        );
        fake.shutdown().await;
    })
    .await;
}
