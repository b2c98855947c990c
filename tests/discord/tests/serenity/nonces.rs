//! Nonces: at most 25 characters; `enforce_nonce` returns the author's earlier message only
//! within the nonce window, measured on the fake's clock.

use std::time::Duration;

use opsbot_fake_discord::FakeConfig;
use serenity::all::{ChannelId, CreateMessage, Nonce};

use crate::harness::{on, refusal, start, within};

fn post(text: &str, nonce: Nonce) -> CreateMessage {
    CreateMessage::new()
        .content(text)
        .nonce(nonce)
        .enforce_nonce(true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nonce_longer_than_25_characters_gets_50035() {
    within(Duration::from_secs(60), async {
        let bot = start(FakeConfig::default(), on(|_, _| async {})).await;
        let (fake, http) = (&bot.fake, &bot.http);
        let channel = ChannelId::new(fake.config().channels[0]);
        let long = Nonce::String("n".repeat(26));
        let err = channel
            .send_message(http, post("x", long))
            .await
            .unwrap_err();
        assert_eq!(refusal(&err), (400, 50035, "nonce".to_owned()));
        match &err {
            serenity::Error::Http(serenity::http::HttpError::UnsuccessfulRequest(r)) => {
                assert_eq!(r.error.errors[0].code, "BASE_TYPE_MAX_LENGTH");
                assert_eq!(r.error.errors[0].message, "Must be 25 or fewer in length.");
            }
            other => panic!("expected a 400, got {other:?}"),
        }
        let fits = Nonce::String("n".repeat(25));
        channel.send_message(http, post("x", fits)).await.unwrap();
        let fake = bot.stop().await;
        assert_eq!(fake.violations().len(), 1, "{:?}", fake.violations());
        fake.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enforce_nonce_returns_the_earlier_message_within_the_window_only() {
    within(Duration::from_secs(60), async {
        let cfg = FakeConfig {
            nonce_window: Duration::from_secs(120),
            edits_per_window: 100,
            ..FakeConfig::default()
        };
        let bot = start(cfg, on(|_, _| async {})).await;
        let (fake, http) = (&bot.fake, &bot.http);
        let channel = ChannelId::new(fake.config().channels[0]);
        let other = ChannelId::new(fake.config().channels[1]);
        let run = || Nonce::String("r12-1763900000".into());

        let first = channel
            .send_message(http, post("first", run()))
            .await
            .unwrap();
        fake.advance_clock(Duration::from_secs(119));
        let again = channel
            .send_message(http, post("again", run()))
            .await
            .unwrap();
        assert_eq!((again.id, again.content.as_str()), (first.id, "first"));
        // Discord dedupes by author, not by channel.
        let elsewhere = other
            .send_message(http, post("there", run()))
            .await
            .unwrap();
        assert_eq!((elsewhere.id, elsewhere.channel_id), (first.id, channel));

        fake.advance_clock(Duration::from_secs(2));
        let late = channel
            .send_message(http, post("late", run()))
            .await
            .unwrap();
        assert_ne!(late.id, first.id);
        assert_eq!(late.content, "late");

        // Integer nonces, and no dedup without `enforce_nonce`.
        let a = channel
            .send_message(http, post("a", Nonce::Number(42)))
            .await
            .unwrap();
        let b = channel
            .send_message(http, post("b", Nonce::Number(42)))
            .await
            .unwrap();
        assert_eq!(a.id, b.id);
        let loose = CreateMessage::new().content("c").nonce(Nonce::Number(42));
        let c = channel.send_message(http, loose).await.unwrap();
        assert_ne!(c.id, a.id);

        let texts: Vec<String> = fake
            .messages(channel.get())
            .into_iter()
            .map(|m| m.content)
            .collect();
        assert_eq!(texts, ["first", "late", "a", "c"]);
        assert!(fake.messages(other.get()).is_empty());
        bot.finish_clean().await;
    })
    .await;
}
