//! The bot's permissions per channel: what Discord refuses without them (403 50001, 50013),
//! what it lets through regardless (interaction responses), and how a client can see them.

use std::time::Duration;

use opsbot_fake_discord::FakeConfig;
use opsbot_fake_discord::permissions::{
    BOT_DEFAULT, EMBED_LINKS, MEMBER, SEND_MESSAGES, VIEW_CHANNEL,
};
use serde_json::json;
use serenity::all::{
    ChannelId, CreateEmbed, CreateInteractionResponse, CreateInteractionResponseFollowup,
    CreateInteractionResponseMessage, CreateMessage, EditMessage, GuildId, Interaction,
    PermissionOverwriteType, UserId,
};

use crate::harness::{T, next, on, refusal, seen, start, within};

/// Posts that fail with the same status, code and nothing else.
fn forbidden(code: isize) -> (u16, isize, String) {
    (403, code, String::new())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_without_view_send_or_embed_links_is_refused() {
    within(Duration::from_secs(60), async {
        let cfg = FakeConfig {
            edits_per_window: 100,
            ..FakeConfig::default()
        };
        let bot = start(cfg, on(|_, _| async {})).await;
        let (fake, http) = (&bot.fake, &bot.http);
        let channel = ChannelId::new(fake.config().channels[0]);
        let posted = channel.say(http, "before").await.unwrap();
        let embed = || CreateEmbed::new().description("state");

        fake.set_bot_permissions(channel.get(), BOT_DEFAULT & !VIEW_CHANNEL);
        let err = channel.to_channel(http).await.unwrap_err();
        assert_eq!(refusal(&err), forbidden(50001));
        let err = channel.say(http, "hidden").await.unwrap_err();
        assert_eq!(refusal(&err), forbidden(50001));
        let edit = EditMessage::new().content("after");
        let err = channel
            .edit_message(http, posted.id, edit)
            .await
            .unwrap_err();
        assert_eq!(refusal(&err), forbidden(50001));
        let err = channel.message(http, posted.id).await.unwrap_err();
        assert_eq!(refusal(&err), forbidden(50001));

        fake.set_bot_permissions(channel.get(), BOT_DEFAULT & !SEND_MESSAGES);
        let err = channel.say(http, "muted").await.unwrap_err();
        assert_eq!(refusal(&err), forbidden(50013));
        // Editing its own message needs no SEND_MESSAGES...
        let edit = EditMessage::new().content("edited while muted");
        channel.edit_message(http, posted.id, edit).await.unwrap();
        // ...but embeds need EMBED_LINKS, which SEND_MESSAGES' absence denies implicitly.
        let edit = EditMessage::new().embed(embed());
        let err = channel
            .edit_message(http, posted.id, edit)
            .await
            .unwrap_err();
        assert_eq!(refusal(&err), forbidden(50013));

        fake.set_bot_permissions(channel.get(), BOT_DEFAULT & !EMBED_LINKS);
        let err = channel
            .send_message(http, CreateMessage::new().embed(embed()))
            .await
            .unwrap_err();
        assert_eq!(refusal(&err), forbidden(50013));
        let edit = EditMessage::new().embed(embed());
        let err = channel
            .edit_message(http, posted.id, edit)
            .await
            .unwrap_err();
        assert_eq!(refusal(&err), forbidden(50013));
        channel.say(http, "text is fine").await.unwrap();

        fake.set_bot_permissions(channel.get(), BOT_DEFAULT);
        channel
            .send_message(http, CreateMessage::new().embed(embed()))
            .await
            .unwrap();
        assert_eq!(fake.invalid_requests(), 8, "every 403 counts");
        assert_eq!(fake.messages(channel.get()).len(), 3);

        // A refusal is Discord's answer to a moderator's change, not a broken rule.
        bot.finish_clean().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interaction_responses_ignore_channel_permissions_and_report_them() {
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
                    let embed = CreateEmbed::new().description("state");
                    let reply = CreateInteractionResponseMessage::new().embed(embed.clone());
                    let answered = cmd
                        .create_response(&ctx.http, CreateInteractionResponse::Message(reply))
                        .await;
                    let followup = CreateInteractionResponseFollowup::new().embed(embed);
                    let followed = cmd.create_followup(&ctx.http, followup).await;
                    tx.send(json!({
                        "app_permissions": cmd.app_permissions.map(|p| p.bits()),
                        "answered": answered.is_ok(),
                        "followed": followed.is_ok(),
                    }))
                    .unwrap();
                }
            }),
        )
        .await;
        let fake = &bot.fake;
        let channel = fake.config().channels[1];
        fake.set_bot_permissions(channel, 0);
        let alice = opsbot_fake_discord::FakeDiscord::user(7, "alice", &[]);
        fake.slash(&alice, channel, "ping", json!(null)).await;
        assert_eq!(
            next(&mut rx).await,
            json!({"app_permissions": 0, "answered": true, "followed": true})
        );
        assert_eq!(fake.invalid_requests(), 0);
        bot.finish_clean().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_computes_the_bots_permissions_from_the_channel_and_the_guild() {
    within(Duration::from_secs(60), async {
        let mut bot = start(FakeConfig::default(), on(|_, _| async {})).await;
        let cfg = bot.fake.config().clone();
        let channel = ChannelId::new(cfg.channels[0]);
        let bits = (MEMBER & !EMBED_LINKS) | (1 << 13);
        bot.fake.set_bot_permissions(channel.get(), bits);
        assert_eq!(bot.fake.bot_permissions(channel.get()), bits);

        // Discord's algorithm: the @everyone role, then the bot's member overwrite.
        let guild = GuildId::new(cfg.guild_id)
            .to_partial_guild(&bot.http)
            .await
            .unwrap();
        let everyone = guild.roles[&guild.id.everyone_role()].permissions.bits();
        let shown = channel
            .to_channel(&bot.http)
            .await
            .unwrap()
            .guild()
            .unwrap();
        let mut computed = everyone;
        for o in &shown.permission_overwrites {
            assert_eq!(
                o.kind,
                PermissionOverwriteType::Member(cfg.bot_user_id.into())
            );
            computed = (computed & !o.deny.bits()) | o.allow.bits();
        }
        assert_eq!(computed, bits);

        // And the gateway tells the client of the change.
        let update = tokio::time::timeout(T, bot.events.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(update["t"], "CHANNEL_UPDATE");
        assert_eq!(update["channel"], channel.get());
        bot.finish_clean().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serenity_computes_the_bots_permissions_from_its_member_as_discord_does() {
    within(Duration::from_secs(60), async {
        let bot = start(FakeConfig::default(), on(|_, _| async {})).await;
        let cfg = bot.fake.config().clone();
        let (guild_id, channel) = (GuildId::new(cfg.guild_id), ChannelId::new(cfg.channels[0]));
        let guild = guild_id.to_partial_guild(&bot.http).await.unwrap();
        let member = guild_id
            .member(&bot.http, UserId::new(cfg.bot_user_id))
            .await
            .unwrap();
        assert!(member.roles.is_empty(), "the bot has only @everyone");
        for bits in [MEMBER, MEMBER & !EMBED_LINKS, MEMBER & !SEND_MESSAGES] {
            bot.fake.set_bot_permissions(channel.get(), bits);
            let shown = channel
                .to_channel(&bot.http)
                .await
                .unwrap()
                .guild()
                .unwrap();
            let computed = guild.user_permissions_in(&shown, &member);
            assert_eq!(computed.bits(), bits);
        }
        let stranger = guild_id
            .member(&bot.http, UserId::new(42))
            .await
            .unwrap_err();
        assert_eq!(refusal(&stranger), (404, 10007, String::new()));
        bot.finish_clean().await;
    })
    .await;
}
