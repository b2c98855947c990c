//! A moderator deletes the bot's messages: later reads, edits and enforced-nonce reposts get
//! 404 Unknown Message; a client subscribed to GUILD_MESSAGES hears of the deletion.

use std::time::Duration;

use opsbot_fake_discord::{FakeConfig, FakeDiscord};
use serde_json::json;
use serenity::all::{
    ChannelId, CreateActionRow, CreateButton, CreateInteractionResponse,
    CreateInteractionResponseMessage, CreateMessage, EditInteractionResponse, EditMessage,
    GatewayIntents, Interaction, Nonce,
};

use crate::harness::{T, next, on, refusal, seen, start, start_with, within};

fn not_found(code: isize) -> (u16, isize, String) {
    (404, code, String::new())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_message_is_gone_for_good() {
    within(Duration::from_secs(60), async {
        let intents = GatewayIntents::GUILDS | GatewayIntents::GUILD_MESSAGES;
        let cfg = FakeConfig {
            edits_per_window: 100,
            ..FakeConfig::default()
        };
        let mut bot = start_with(cfg, intents, on(|_, _| async {})).await;
        let (fake, http) = (&bot.fake, &bot.http);
        let channel = ChannelId::new(fake.config().channels[0]);
        let post = || {
            CreateMessage::new()
                .content("run 12: draining")
                .nonce(Nonce::String("r12-1763900000".into()))
                .enforce_nonce(true)
        };
        let posted = channel.send_message(http, post()).await.unwrap();
        let kept = channel.say(http, "another").await.unwrap();

        fake.delete_message(channel.get(), posted.id.get());
        let left: Vec<u64> = fake.messages(channel.get()).iter().map(|m| m.id).collect();
        assert_eq!(left, [kept.id.get()]);
        let deleted = fake.deleted_messages(channel.get());
        assert_eq!(deleted.len(), 1);
        assert_eq!(
            (deleted[0].id, deleted[0].content.as_str()),
            (posted.id.get(), "run 12: draining")
        );

        let edit = EditMessage::new().content("run 12: done");
        let err = channel
            .edit_message(http, posted.id, edit)
            .await
            .unwrap_err();
        assert_eq!(refusal(&err), not_found(10008));
        let err = channel.message(http, posted.id).await.unwrap_err();
        assert_eq!(refusal(&err), not_found(10008));
        let err = channel.delete_message(http, posted.id).await.unwrap_err();
        assert_eq!(refusal(&err), not_found(10008));
        // A repost with the same enforced nonce is not a fresh post: Discord answers 10008.
        let err = channel.send_message(http, post()).await.unwrap_err();
        assert_eq!(refusal(&err), not_found(10008));
        assert_eq!(fake.messages(channel.get()).len(), 1);

        let err = ChannelId::new(42)
            .edit_message(http, posted.id, EditMessage::new().content("x"))
            .await
            .unwrap_err();
        assert_eq!(refusal(&err), not_found(10003));

        let deletion = tokio::time::timeout(T, bot.events.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            deletion,
            json!({"t": "MESSAGE_DELETE", "channel": channel.get(), "message": posted.id.get()})
        );
        assert_eq!(bot.fake.invalid_requests(), 0, "404s are not counted");
        bot.finish_clean().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interaction_message_deleted_by_a_moderator_cannot_be_edited() {
    within(Duration::from_secs(60), async {
        let (tx, mut rx) = seen();
        let (go_tx, go_rx) = tokio::sync::watch::channel(false);
        let bot = start(
            FakeConfig::default(),
            on(move |ctx, interaction| {
                let (tx, mut go) = (tx.clone(), go_rx.clone());
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
                            go.wait_for(|go| *go).await.unwrap();
                            let edit = EditInteractionResponse::new().content("expired");
                            let edited = cmd.edit_response(&ctx.http, edit).await;
                            tx.send(json!(refusal(&edited.unwrap_err()))).unwrap();
                        }
                        Interaction::Component(click) => {
                            go.wait_for(|go| *go).await.unwrap();
                            let update = CreateInteractionResponseMessage::new().content("ok");
                            let updated = click
                                .create_response(
                                    &ctx.http,
                                    CreateInteractionResponse::UpdateMessage(update),
                                )
                                .await;
                            tx.send(json!(refusal(&updated.unwrap_err()))).unwrap();
                        }
                        _ => {}
                    }
                }
            }),
        )
        .await;
        let fake = &bot.fake;
        let channel = fake.config().channels[0];
        let alice = FakeDiscord::user(7, "alice", &[]);
        fake.slash(&alice, channel, "ping", json!(null)).await;
        let asked = fake
            .wait_message(channel, T, |m| !m.components.is_empty())
            .await
            .unwrap();
        // Alice clicks just as a moderator deletes the message; then the bot answers the
        // click and edits its original response.
        let click = fake.click(&alice, channel, asked.id, "approve:1").await;
        fake.delete_message(channel, asked.id);
        go_tx.send(true).unwrap();
        assert_eq!(next(&mut rx).await, json!([404, 10008, ""]));
        assert_eq!(next(&mut rx).await, json!([404, 10008, ""]));
        assert!(fake.interaction(click).is_none(), "the update was refused");
        assert!(fake.messages(channel).is_empty());
        bot.finish_clean().await;
    })
    .await;
}
