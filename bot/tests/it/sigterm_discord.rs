//! SIGTERM `opsbot run` (as systemd stops it) while it serves the fake Discord: the gateway is
//! closed with a Close frame and the process exits, without serenity's 5 s shard timeout.

use std::time::Duration;

use crate::support::{Bot, PATIENCE, scene, with_fake_discord};
use opsbot_fake_discord::FakeDiscord;
use opsbot_search_sim::SimConfig;

/// `opsbot run` serving the fake Discord: ready, its commands registered.
async fn serving() -> (crate::support::Scene, FakeDiscord, Bot) {
    let scene = scene(SimConfig::default(), r#"kind = "sim""#).await;
    let fake = with_fake_discord(&scene).await;
    let bot = Bot::run(&scene.config);
    fake.wait_ready(PATIENCE).await.unwrap();
    fake.wait_commands(PATIENCE).await.unwrap();
    (scene, fake, bot)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_closes_the_gateway_and_exits_at_once() {
    let (_scene, fake, mut bot) = serving().await;

    // serenity gives a shard that does not close cleanly 5 s; a clean one is far quicker.
    let (status, log) = bot
        .terminated(Duration::from_secs(4))
        .await
        .expect("opsbot exited before serenity's 5 s shard timeout");
    let code = fake.wait_client_close(PATIENCE).await.unwrap();
    assert_eq!(code, 1000, "a normal close: the session ends");
    assert!(status.success(), "{status}: {log}");
    assert!(!log.contains("Failed to cleanly shutdown"), "{log}");
}

/// A gateway that never answers the Close frame (a proxy holding the connection) does not hold
/// the stop: the bot waits a second for the answer, not serenity's five.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_does_not_wait_for_a_close_the_gateway_never_answers() {
    let (_scene, fake, mut bot) = serving().await;
    fake.leave_client_closes_unanswered();

    let (status, log) = bot
        .terminated(Duration::from_secs(4))
        .await
        .expect("opsbot exited before serenity's 5 s shard timeout");
    assert_eq!(fake.wait_client_close(PATIENCE).await.unwrap(), 1000);
    assert!(status.success(), "{status}: {log}");
    assert!(log.contains("did not answer the Close frame"), "{log}");
}
