//! Mentions: whom a message would ping, by Discord's defaults and `allowed_mentions`, and the
//! 400s for an `allowed_mentions` Discord refuses.

use std::time::Duration;

use opsbot_fake_discord::permissions::{BOT_DEFAULT, MENTION_EVERYONE};
use opsbot_fake_discord::{FakeConfig, FakeDiscord, Mention, Ping};
use serde_json::json;
use serenity::all::{
    ChannelId, CreateAllowedMentions, CreateEmbed, CreateInteractionResponse,
    CreateInteractionResponseFollowup, CreateInteractionResponseMessage, CreateMessage,
    EditInteractionResponse, EditMessage, Interaction,
};

use crate::harness::{T, next, on, refusal, seen, start, within};

fn mentions_of(pings: &[Ping], message: u64) -> Vec<Mention> {
    pings
        .iter()
        .filter(|p| p.message_id == message)
        .map(|p| p.mention)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channel_messages_ping_unless_allowed_mentions_says_otherwise() {
    within(Duration::from_secs(60), async {
        let cfg = FakeConfig {
            edits_per_window: 100,
            ..FakeConfig::default()
        };
        let bot = start(cfg, on(|_, _| async {})).await;
        let (fake, http) = (&bot.fake, &bot.http);
        let channel = ChannelId::new(fake.config().channels[0]);
        let text = "@everyone <@7> <@!8> <@&11> and `@here` in code";

        // No allowed_mentions: Discord parses users, roles and everyone.
        let loud = channel.say(http, text).await.unwrap();
        let pings = fake.pings();
        assert_eq!(
            mentions_of(&pings, loud.id.get()),
            [
                Mention::Everyone,
                Mention::User(7),
                Mention::User(8),
                Mention::Role(11)
            ]
        );
        assert!(
            pings
                .iter()
                .all(|p| !p.edit && p.channel_id == channel.get())
        );
        assert!(loud.mention_everyone);
        let users: Vec<u64> = loud.mentions.iter().map(|u| u.id.get()).collect();
        assert_eq!(users, [7, 8]);
        assert_eq!(
            loud.mention_roles
                .iter()
                .map(|r| r.get())
                .collect::<Vec<_>>(),
            [11]
        );

        // `parse: []` silences everything; a listed user is still pinged.
        let quiet = CreateMessage::new()
            .content(text)
            .allowed_mentions(CreateAllowedMentions::new());
        let quiet = channel.send_message(http, quiet).await.unwrap();
        assert!(!quiet.mention_everyone && quiet.mentions.is_empty());
        let only = CreateAllowedMentions::new().users([8]);
        let one = CreateMessage::new().content(text).allowed_mentions(only);
        let one = channel.send_message(http, one).await.unwrap();
        // Embeds never ping.
        let embed = CreateMessage::new().embed(CreateEmbed::new().description("@everyone <@7>"));
        let embed = channel.send_message(http, embed).await.unwrap();
        let pings = fake.pings();
        assert_eq!(mentions_of(&pings, quiet.id.get()), []);
        assert_eq!(mentions_of(&pings, one.id.get()), [Mention::User(8)]);
        assert_eq!(mentions_of(&pings, embed.id.get()), []);

        // An edit of the content is parsed anew, with the defaults; one without content is not.
        let edit = EditMessage::new().content("now @here");
        channel.edit_message(http, quiet.id, edit).await.unwrap();
        let edit = EditMessage::new().embed(CreateEmbed::new().description("x"));
        channel.edit_message(http, one.id, edit).await.unwrap();
        let pings = fake.pings();
        assert_eq!(mentions_of(&pings, quiet.id.get()), [Mention::Here]);
        assert!(
            pings
                .iter()
                .any(|p| p.message_id == quiet.id.get() && p.edit)
        );
        assert_eq!(mentions_of(&pings, one.id.get()), [Mention::User(8)]);

        // Without MENTION_EVERYONE, @everyone pings nobody.
        fake.set_bot_permissions(channel.get(), BOT_DEFAULT & !MENTION_EVERYONE);
        let tame = channel.say(http, "@everyone").await.unwrap();
        assert!(!tame.mention_everyone);
        assert_eq!(mentions_of(&fake.pings(), tame.id.get()), []);

        let fake = bot.stop().await;
        let violations = fake.violations();
        assert_eq!(violations.len(), fake.pings().len(), "{violations:?}");
        assert_eq!(violations.len(), 6, "{violations:?}");
        assert!(
            violations[0].contains("would ping @everyone"),
            "{violations:?}"
        );
        fake.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interaction_messages_ping_users_only_by_default() {
    within(Duration::from_secs(60), async {
        let bot = start(
            FakeConfig::default(),
            on(|ctx, interaction| async move {
                let Interaction::Command(cmd) = interaction else {
                    return;
                };
                let reply =
                    CreateInteractionResponseMessage::new().content("@everyone <@7> <@&11>");
                cmd.create_response(&ctx.http, CreateInteractionResponse::Message(reply))
                    .await
                    .unwrap();
                let quiet = CreateInteractionResponseFollowup::new()
                    .content("<@8>")
                    .allowed_mentions(CreateAllowedMentions::new());
                cmd.create_followup(&ctx.http, quiet).await.unwrap();
                let roles = CreateAllowedMentions::new().roles([11]);
                let edit = EditInteractionResponse::new()
                    .content("<@&11> <@&12>")
                    .allowed_mentions(roles);
                cmd.edit_response(&ctx.http, edit).await.unwrap();
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
        fake.wait_message(channel, T, |m| m.content == "<@&11> <@&12>")
            .await
            .unwrap();
        let record = fake.interaction(id).unwrap();
        assert_eq!(record.followups.len(), 1);
        let pings: Vec<(Mention, bool)> =
            fake.pings().iter().map(|p| (p.mention, p.edit)).collect();
        assert_eq!(
            pings,
            [(Mention::User(7), false), (Mention::Role(11), true)]
        );
        let fake = bot.stop().await;
        assert_eq!(fake.violations().len(), 2, "{:?}", fake.violations());
        fake.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_mentions_discord_refuses_get_50035() {
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
                    let both = CreateAllowedMentions::new().all_roles(true).roles([11]);
                    let reply = CreateInteractionResponseMessage::new()
                        .content("hi")
                        .allowed_mentions(both);
                    let refused = cmd
                        .create_response(&ctx.http, CreateInteractionResponse::Message(reply))
                        .await;
                    tx.send(json!(refusal(&refused.unwrap_err()))).unwrap();
                }
            }),
        )
        .await;
        let (fake, http) = (&bot.fake, &bot.http);
        let channel = ChannelId::new(fake.config().channels[0]);
        let both = CreateAllowedMentions::new().all_users(true).users([7]);
        let message = CreateMessage::new().content("<@7>").allowed_mentions(both);
        let err = channel.send_message(http, message).await.unwrap_err();
        assert_eq!(refusal(&err), (400, 50035, "allowed_mentions".to_owned()));
        let many = CreateAllowedMentions::new().users(1..=101_u64);
        let message = CreateMessage::new().content("hi").allowed_mentions(many);
        let err = channel.send_message(http, message).await.unwrap_err();
        assert_eq!(
            refusal(&err),
            (400, 50035, "allowed_mentions.users".to_owned())
        );
        let odd = json!({"content": "hi", "allowed_mentions": {"parse": ["all"]}});
        let err = http.send_message(channel, vec![], &odd).await.unwrap_err();
        assert_eq!(
            refusal(&err),
            (400, 50035, "allowed_mentions.parse.0".to_owned())
        );
        // An empty `users` list next to `parse: ["users"]` is fine.
        let fine = CreateAllowedMentions::new().all_users(true);
        let message = CreateMessage::new().content("hi").allowed_mentions(fine);
        channel.send_message(http, message).await.unwrap();

        fake.slash(
            &FakeDiscord::user(7, "alice", &[]),
            channel.get(),
            "ping",
            json!(null),
        )
        .await;
        assert_eq!(
            next(&mut rx).await,
            json!([400, 50035, "data.allowed_mentions"])
        );
        assert!(fake.pings().is_empty());
        let fake = bot.stop().await;
        assert_eq!(fake.violations().len(), 4, "{:?}", fake.violations());
        fake.shutdown().await;
    })
    .await;
}
