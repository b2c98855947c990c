//! SIGTERM `opsbot run` (as systemd stops it) while it serves the fake Discord: the gateway is
//! closed with a Close frame and the process exits, without serenity's 5 s shard timeout.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod support;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use opsbot_fake_discord::{FakeConfig, FakeDiscord};
use opsbot_sim::SimConfig;
use support::{PATIENCE, scene};

const CHANNEL: u64 = 900_000_000_000_000_001;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_closes_the_gateway_and_exits_at_once() {
    let fake = FakeDiscord::start(FakeConfig {
        channels: vec![CHANNEL],
        ..FakeConfig::default()
    })
    .await;
    let scene = scene(SimConfig::default(), r#"kind = "sim""#).await;
    let dir = scene.dir.path();
    std::fs::write(dir.join("token"), &fake.config().token).unwrap();
    std::fs::write(dir.join("ca.pem"), fake.ca_pem()).unwrap();
    let mut config = std::fs::read_to_string(&scene.config).unwrap();
    config.push_str(&format!(
        r#"
[discord]
token_file = "{token}"
guild = {guild}
channels = [{CHANNEL}]
api_address = "{address}"
ca_file = "{ca}"
"#,
        token = dir.join("token").display(),
        guild = fake.config().guild_id,
        address = fake.rest_addr(),
        ca = dir.join("ca.pem").display(),
    ));
    std::fs::write(&scene.config, config).unwrap();

    let mut bot = Command::new(env!("CARGO_BIN_EXE_opsbot"))
        .args(["run", "--config", &scene.config.display().to_string()])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    fake.wait_ready(PATIENCE).await.unwrap();
    fake.wait_commands(PATIENCE).await.unwrap();

    let term = Command::new("kill")
        .args(["-TERM", &bot.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let code = fake.wait_client_close(PATIENCE).await.unwrap();
    assert_eq!(code, 1000, "a normal close: the session ends");

    let mut stderr = bot.stderr.take().unwrap();
    let exited = tokio::task::spawn_blocking(move || bot.wait());
    // serenity gives a shard that does not close cleanly 5 s; a clean one is far quicker.
    let status = tokio::time::timeout(Duration::from_secs(4), exited)
        .await
        .expect("opsbot exited before serenity's 5 s shard timeout")
        .unwrap()
        .unwrap();
    let mut log = String::new();
    stderr.read_to_string(&mut log).unwrap();
    assert!(status.success(), "{status}: {log}");
    assert!(!log.contains("Failed to cleanly shutdown"), "{log}");
}
