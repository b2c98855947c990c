//! The Slack front end under load, against the loopback fake Slack: the time from an
//! envelope's delivery to its acknowledgement with 50 slash commands arriving at once (Slack
//! allows 3 s), and the messages posted and edited for 20 runs at once in one channel, to set
//! beside Discord's. Run with `cargo bench -p opsbot-tests --bench slack`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark that cannot set up must stop loudly.

use std::time::{Duration, Instant};

use opsbot_fake_slack::{SlashCommand, WebMethod};
use opsbot_tests::bench::{percentile, twenty_clusters};
use opsbot_tests::slack::{SlackScene, member};

#[tokio::main]
async fn main() {
    let scene = SlackScene::start(twenty_clusters()).await;

    // 50 commands at once: half answered from the store, half reading a cluster.
    let envelopes: Vec<String> = (0..50)
        .map(|i| {
            let (command, text) = if i % 2 == 0 {
                ("/run", "list")
            } else {
                ("/cluster", "status cluster:logs")
            };
            scene
                .fake
                .slash_command(&SlashCommand {
                    user_id: member("alice"),
                    channel_id: scene.channel.clone(),
                    command: command.to_owned(),
                    text: text.to_owned(),
                })
                .unwrap()
        })
        .collect();
    let mut latencies = Vec::new();
    for envelope in &envelopes {
        let ack = scene
            .fake
            .wait_ack(envelope, Duration::from_secs(10))
            .await
            .unwrap();
        latencies.push(ack.after);
    }
    latencies.sort();
    println!(
        "envelope → ack, 50 commands at once: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (Slack allows 3000 ms)",
        percentile(&latencies, 0.5).as_secs_f64() * 1000.0,
        percentile(&latencies, 0.99).as_secs_f64() * 1000.0,
        latencies.last().unwrap().as_secs_f64() * 1000.0,
    );

    // 20 restarts at once in one channel.
    let started = Instant::now();
    let lines: Vec<String> = (1..=20)
        .map(|n| format!("/cluster restart cluster:{}", opsbot_tests::cluster_name(n)))
        .collect();
    futures::future::join_all(lines.iter().map(|line| scene.slash("alice", line))).await;
    for n in 1..=20 {
        scene
            .progress(&format!("r-{n}"), |text| text.starts_with("✅"))
            .await;
    }
    let elapsed = started.elapsed();
    let progress: Vec<_> = scene
        .fake
        .messages(&scene.channel)
        .into_iter()
        .filter(|m| !m.blocks.is_empty())
        .collect();
    // Every version of a progress message is one post or one `chat.update`.
    let sent: usize = progress.iter().map(|m| m.history.len()).sum();
    println!(
        "20 restarts at once in one channel: {} messages, {sent} posts and edits in all, \
         {:.1} s, {} answered 429, {} history reads",
        progress.len(),
        elapsed.as_secs_f64(),
        scene.fake.rate_limited(),
        scene.fake.calls(WebMethod::ConversationsHistory).len(),
    );
}
