//! SIGKILL the real binary between the approval of a stale-allocation run and its deletes (and
//! while a delete is in flight), restart it until the run completes, and check on the simulated
//! cloud: each stale consumer's allocations deleted exactly once, the running instance's never.
//! Kill points come from a printed seed; `OPSBOT_CRASH_SEED` replays a failure.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod support;

use std::time::Duration;

use opsbot_cloud_sim::{CloudSimConfig, CloudSimHandle};
use opsbot_sim::FaultRule;
use support::{Dice, cloud_config, complete, kill_when};
use uuid::Uuid;

/// Kills per run of the test suite.
const KILLS: u64 = 10;

const STALE: &str = "/placement stale cloud:prod host:compute-03";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_between_approval_and_delete_deletes_each_stale_allocation_exactly_once() {
    let mut dice = Dice::from_env();
    let seed = dice.seed();
    for kill in 0..KILLS {
        // Kill when the first delete arrives, plus up to 150 ms: before it is answered
        // (deletes are slowed to 80 ms), after, or during the next one.
        let delay = Duration::from_millis(dice.below(150));
        round(kill, delay, seed).await;
    }
}

async fn round(kill: u64, delay: Duration, seed: u64) {
    let what = format!("kill {kill} (seed {seed}): {delay:?} after the first delete arrived");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let cloud = opsbot_cloud_sim::spawn(CloudSimConfig::default(), listener)
        .await
        .unwrap();
    let provider = cloud.add_provider("compute-03");
    let stale = [Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4()];
    let running = Uuid::new_v4();
    for consumer in stale.iter().chain([&running]) {
        cloud.add_allocation(provider, *consumer, &[("VCPU", 1), ("MEMORY_MB", 2048)]);
    }
    cloud.add_server(running, "db-1", "ACTIVE");
    cloud.set_faults(vec![
        "latency=80ms,method=DELETE".parse::<FaultRule>().unwrap(),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let config = cloud_config(
        dir.path(),
        &cloud,
        r#"
[engine.retry]
attempts = 5
base_delay = "50ms"
max_delay = "500ms"
"#,
    );

    let delete_arrived = || deletes(&cloud).next().is_some();
    kill_when(&config, STALE, delete_arrived, delay, &what).await;
    complete(&config, "", &what).await;

    let left: Vec<Uuid> = cloud.allocations(provider).into_keys().collect();
    assert_eq!(left, vec![running], "{what}");
    // A delete cut off by the kill before the cloud answered it (status 0) did nothing; every
    // answered one removed something, so none may have been answered twice for a consumer.
    let mut answered: Vec<String> = deletes(&cloud)
        .filter(|c| c.status != 0)
        .map(|c| c.path)
        .collect();
    answered.sort();
    let mut expected: Vec<String> = stale
        .iter()
        .map(|c| format!("/placement/allocations/{c}"))
        .collect();
    expected.sort();
    assert_eq!(
        answered, expected,
        "{what}: each stale consumer deleted once"
    );
}

fn deletes(cloud: &CloudSimHandle) -> impl Iterator<Item = opsbot_cloud_sim::Call> {
    cloud.calls().into_iter().filter(|c| c.method == "DELETE")
}
