//! SIGKILL the real binary during a rolling `nova_compute` restart (while compute-02 is being
//! restarted or awaited), start it again until the run completes, and check on the simulated
//! cloud: every hypervisor restarted exactly once, in order, and none before the one ahead of
//! it reported up again. Kill points come from a printed seed; `OPSBOT_CRASH_SEED` replays one.

use std::sync::Arc;
use std::time::Duration;

use crate::support::{Dice, cloud_config, complete, kill_when};
use opsbot_cloud_sim::{CloudSimConfig, ComputeServiceSeed};
use time::OffsetDateTime;

/// Kills per run of the test suite.
const KILLS: u64 = 2;
const HOSTS: [&str; 3] = ["compute-01", "compute-02", "compute-03"];
const RPC_CAP: &str = "/compute rpc-cap cloud:prod";
/// How long a restarted `nova-compute` stays quiet in these tests.
const DOWNTIME: Duration = Duration::from_secs(1);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_a_rolling_restart_never_restarts_a_host_twice() {
    let mut dice = Dice::from_env();
    let seed = dice.seed();
    for kill in 0..KILLS {
        // At once (the restart's answer not yet recorded: an operator is asked), or up to
        // 1.5 s after compute-02's restart arrived: while it is quiet, or once it reports again.
        let delay = match kill {
            0 => Duration::ZERO,
            _ => Duration::from_millis(dice.below(1500)),
        };
        round(kill, delay, seed).await;
    }
}

async fn round(kill: u64, delay: Duration, seed: u64) {
    let what = format!("kill {kill} (seed {seed}): {delay:?} after compute-02's restart arrived");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = CloudSimConfig {
        compute_restart_downtime: DOWNTIME,
        ..CloudSimConfig::default()
    };
    let cloud = Arc::new(opsbot_cloud_sim::spawn(config, listener).await.unwrap());
    for host in HOSTS {
        cloud.add_service(compute(host));
    }
    let dir = tempfile::tempdir().unwrap();
    let config = cloud_config(
        dir.path(),
        &cloud,
        r#"
poll_interval = "100ms"
compute_timeout = "30s"
"#,
    );

    let restarted = || cloud.restart_count("compute-02") > 0;
    kill_when(&config, RPC_CAP, restarted, delay, &what).await;
    // A wait resumed after its host came back takes the next report (every 10 s by the cloud's
    // clock): the cloud's clock runs 10 times faster while the run is finished.
    let clock = {
        let cloud = Arc::clone(&cloud);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                cloud.advance_clock(Duration::from_secs(1));
            }
        })
    };
    // Each time alice also confirms the manual step a restart cut off by the kill asks for
    // (refused harmlessly when there is none: the simulator did restart it, since the kill
    // came after the restart arrived).
    complete(&config, "/run done id:r-1\n", &what).await;
    clock.abort();

    let restarts = cloud.compute_restarts();
    let hosts: Vec<&str> = restarts.iter().map(|r| r.host.as_str()).collect();
    assert_eq!(hosts, HOSTS, "{what}: each hypervisor once, in order");
    for pair in restarts.windows(2) {
        let back = pair[0].reports_again_at.expect("it came back");
        assert!(
            pair[1].at >= back,
            "{what}: {} restarted at {} before {} reported at {back}",
            pair[1].host,
            pair[1].at,
            pair[0].host
        );
    }
}

fn compute(host: &str) -> ComputeServiceSeed {
    ComputeServiceSeed::nova_compute(host, OffsetDateTime::now_utc() - time::Duration::seconds(5))
}
