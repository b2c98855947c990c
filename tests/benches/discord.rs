//! The Discord front end under load, against the loopback fake Discord: the time from
//! INTERACTION_CREATE to the first response with 50 commands arriving at once (Discord allows
//! 3 s), and the channel messages sent for 20 runs polling at once, next to the state changes
//! they show. Run with `cargo bench -p opsbot-tests --bench discord`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark that cannot set up must stop loudly.

use std::time::{Duration, Instant};

use opsbot_tests::bench::{percentile, twenty_clusters};
use opsbot_tests::discord::{CHANNEL, DiscordScene, user};
use serde_json::json;

#[tokio::main]
async fn main() {
    let scene = DiscordScene::start(twenty_clusters()).await;
    let alice = user("alice");

    // 50 commands at once: half answered from the store, half deferred (they read a cluster).
    let commands = (0..50).map(|i| {
        let (command, options) = if i % 2 == 0 {
            ("run", json!([{"name": "list", "type": 1, "options": []}]))
        } else {
            (
                "cluster",
                json!([{"name": "status", "type": 1, "options": [
                {"name": "cluster", "type": 3, "value": "logs"}]}]),
            )
        };
        scene.fake.slash(&alice, CHANNEL, command, options)
    });
    let ids = futures::future::join_all(commands).await;
    for id in ids {
        scene
            .fake
            .response(id, Duration::from_secs(10))
            .await
            .unwrap();
    }
    let mut latencies = scene.fake.response_latencies();
    latencies.sort();
    println!(
        "first response, 50 commands at once: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (Discord allows 3000 ms)",
        percentile(&latencies, 0.5).as_secs_f64() * 1000.0,
        percentile(&latencies, 0.99).as_secs_f64() * 1000.0,
        latencies.last().unwrap().as_secs_f64() * 1000.0,
    );

    // 20 restarts at once in one channel.
    let started = Instant::now();
    let restarts = (1..=20).map(|n| {
        let cluster = opsbot_tests::cluster_name(n);
        let options = json!([{"name": "restart", "type": 1, "options": [
            {"name": "cluster", "type": 3, "value": cluster}]}]);
        scene.fake.slash(&alice, CHANNEL, "cluster", options)
    });
    futures::future::join_all(restarts).await;
    for n in 1..=20 {
        scene
            .progress(&format!("r-{n}"), |text| text.starts_with("✅"))
            .await;
    }
    let elapsed = started.elapsed();
    let progress: Vec<_> = scene
        .fake
        .messages(CHANNEL)
        .into_iter()
        .filter(|m| !m.embeds.is_empty())
        .collect();
    let sent: usize = progress.iter().map(|m| m.history.len()).sum();
    // Every step starts and ends: at least two state changes per step, before any observation.
    let steps_per_run = 2 * 5 + 3 + 2 * 5 + 2; // restart of 5 nodes (see the planner)
    let changes = 20 * 2 * steps_per_run;
    println!(
        "20 restarts at once in one channel: {} messages, {sent} posts and edits in all for at \
         least {changes} state changes ({:.1} % of them), {:.1} s, {} answered 429",
        progress.len(),
        sent as f64 * 100.0 / changes as f64,
        elapsed.as_secs_f64(),
        scene.fake.rate_limited(),
    );
}
