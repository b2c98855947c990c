//! Discord out of reach when `opsbot run` starts: the bot starts all the same, says so in
//! `/healthz` with the cause, and connects (registering its commands) once Discord answers.

use std::net::SocketAddr;
use std::time::Duration;

use opsbot_fake_discord::{FakeConfig, FakeDiscord};
use opsbot_tests::Setup;
use opsbot_tests::discord::{ANNOUNCE_CHANNEL, CHANNEL, discord_config};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A loopback relay to `upstream` that drops every connection while it is off, as a network
/// outage between the bot and Discord does.
async fn relay(upstream: SocketAddr) -> (SocketAddr, watch::Sender<bool>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (on, is_on) = watch::channel(false);
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            if !*is_on.borrow() {
                continue; // dropped: the connection is closed at once
            }
            tokio::spawn(async move {
                if let Ok(mut outbound) = TcpStream::connect(upstream).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    (address, on)
}

/// `/healthz` as it answers now.
async fn health(metrics: SocketAddr) -> (u16, String) {
    match reqwest::get(format!("http://{metrics}/healthz")).await {
        Ok(answer) => (answer.status().as_u16(), answer.text().await.unwrap()),
        Err(error) => (0, error.to_string()),
    }
}

/// Polls `/healthz` (bounded) until its text satisfies `wanted`.
async fn until_health(metrics: SocketAddr, what: &str, wanted: impl Fn(&str) -> bool) -> String {
    let deadline = tokio::time::Instant::now() + crate::support::PATIENCE;
    loop {
        let (status, text) = health(metrics).await;
        if status == 200 && wanted(&text) {
            return text;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "/healthz never said {what}; last: {status} {text}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_discord_does_not_stop_the_start_and_is_joined_once_it_answers() {
    let fake = FakeDiscord::start(FakeConfig {
        channels: vec![CHANNEL, ANNOUNCE_CHANNEL],
        ..FakeConfig::default()
    })
    .await;
    let (relay, on) = relay(fake.rest_addr()).await;
    let (_sims, mut config, dir) = opsbot_tests::world(&Setup::default()).await;
    let mut discord = discord_config(&fake, dir.path());
    discord.api_address = Some(relay);
    config.discord = Some(discord);
    let metrics = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let metrics_address = metrics.local_addr().unwrap();
    drop(metrics);
    config.metrics.listen = Some(metrics_address);
    let (stop, stopped) = watch::channel(false);
    let bot = tokio::spawn(opsbot::serve::run_until(
        config,
        opsbot::clock::Clock::system(),
        async move {
            let mut stopped = stopped;
            let _ = stopped.wait_for(|s| *s).await;
        },
    ));

    let down = until_health(metrics_address, "discord unavailable", |text| {
        text.contains("discord unavailable")
    })
    .await;
    assert!(
        down.starts_with("ok: active (sole instance); discord unavailable (")
            && down.contains("Discord lost the connection to https://discord.com")
            && down.contains("retrying"),
        "{down}"
    );
    assert!(fake.commands().is_empty(), "nothing registered while down");

    on.send(true).unwrap();
    let up = until_health(metrics_address, "discord back", |text| {
        !text.contains("discord")
    })
    .await;
    assert_eq!(up, "ok: active (sole instance)\n");
    crate::support::until("the commands registered", || !fake.commands().is_empty()).await;

    stop.send(true).unwrap();
    bot.await.unwrap().unwrap();
}
