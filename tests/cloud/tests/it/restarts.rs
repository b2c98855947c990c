//! Restarting a host's compute service: it goes quiet, then reports again with a fresh
//! `updated_at`; `state` follows Nova's rule (down once the last heartbeat is older than
//! 60 s), by the simulator's clock, which tests move on instead of sleeping.

use std::time::Duration;

use crate::common::{Cloud, body, compute_service, start};
use opsbot_cloud_sim::{CloudSimConfig, RestartError, RestartFault};
use reqwest::Method;
use serde_json::{Value, json};

/// compute-01 and compute-02 reporting.
async fn two_computes(config: CloudSimConfig) -> Cloud {
    let cloud = start(config).await;
    for host in ["compute-01", "compute-02"] {
        cloud.sim.add_service(compute_service(host));
    }
    cloud
}

/// compute-01's service as `GET /os-services?host=compute-01` shows it.
async fn service(cloud: &Cloud) -> Value {
    let listing = cloud
        .get_at(
            "/compute/v2.1/os-services?host=compute-01",
            ("compute", "2.53"),
        )
        .await;
    listing["services"][0].clone()
}

async fn advance(cloud: &Cloud, seconds: u64) {
    let moved = cloud
        .admin(
            Method::POST,
            "/_sim/clock/advance",
            Some(json!({"seconds": seconds})),
        )
        .await;
    assert_eq!(moved.status(), 200);
}

#[tokio::test]
async fn a_restarted_service_goes_down_then_comes_back_with_a_fresh_updated_at() {
    // The restart call answers at once: the test does not wait out docker's stop and start.
    let cloud = two_computes(CloudSimConfig {
        compute_restart_call: Duration::ZERO,
        ..CloudSimConfig::default()
    })
    .await;
    let before = service(&cloud).await;
    assert_eq!(before["state"], "up");
    // A running service reports every 10 s (kept in whole seconds): its updated_at is recent.
    let heartbeat = cloud.sim.services()[0].updated_at;
    assert!(cloud.sim.now() - heartbeat < time::Duration::seconds(11));
    assert_eq!(heartbeat.nanosecond(), 0);

    let restarted = cloud
        .admin(
            Method::POST,
            "/_sim/compute/compute-01/restart",
            Some(json!({"down_for_seconds": 90})),
        )
        .await;
    assert_eq!(restarted.status(), 200);
    let restarted = body(restarted).await;
    assert_eq!(restarted["host"], "compute-01");
    assert_eq!(restarted["failed"], false);

    // Stopped, it still shows up until its last heartbeat is 60 s old; updated_at stays.
    advance(&cloud, 30).await;
    let quiet = service(&cloud).await;
    assert_eq!(
        (&quiet["state"], &quiet["updated_at"]),
        (&json!("up"), &before["updated_at"])
    );
    advance(&cloud, 35).await;
    let down = service(&cloud).await;
    assert_eq!(
        (&down["state"], &down["updated_at"]),
        (&json!("down"), &before["updated_at"])
    );
    // The other host keeps reporting.
    assert_eq!(
        cloud.sim.services()[1].state,
        opsbot_cloud_sim::ServiceState::Up
    );

    advance(&cloud, 25).await;
    let back = service(&cloud).await;
    assert_eq!(back["state"], "up");
    let fresh = cloud.sim.services()[0].updated_at;
    let at: time::OffsetDateTime = serde_json::from_value(restarted["at"].clone())
        .map(|text: String| {
            time::OffsetDateTime::parse(&text, &time::format_description::well_known::Rfc3339)
                .unwrap()
        })
        .unwrap();
    assert!(fresh > at, "a fresh heartbeat after the restart");
    assert_ne!(back["updated_at"], before["updated_at"]);
    assert_eq!(cloud.sim.restart_count("compute-01"), 1);
    assert_eq!(cloud.sim.restart_count("compute-02"), 0);
    let state = body(cloud.admin(Method::GET, "/_sim/state", None).await).await;
    assert_eq!(state["restarts"]["log"][0]["host"], "compute-01");
    assert_eq!(state["service_states"][0]["state"], "up");
}

#[tokio::test]
async fn a_quick_restart_never_shows_down_only_a_fresh_updated_at() {
    let cloud = two_computes(CloudSimConfig::default()).await;
    let before = service(&cloud).await;
    let restart = cloud.sim.restart_compute("compute-01").unwrap();
    // The restart call's second (the container's stop and start), then 20 s to the report.
    assert_eq!(
        restart.reports_again_at,
        Some(restart.at + time::Duration::seconds(21))
    );
    for _ in 0..3 {
        cloud.sim.advance_clock(Duration::from_secs(6));
        let during = service(&cloud).await;
        assert_eq!(
            (&during["state"], &during["updated_at"]),
            (&json!("up"), &before["updated_at"])
        );
    }
    cloud.sim.advance_clock(Duration::from_secs(3));
    let after = service(&cloud).await;
    assert_eq!(after["state"], "up");
    assert_ne!(after["updated_at"], before["updated_at"]);
}

#[tokio::test]
async fn a_service_that_never_comes_back_stays_down() {
    let cloud = two_computes(CloudSimConfig::default()).await;
    let switched = cloud
        .admin(
            Method::PUT,
            "/_sim/compute/compute-01/restart-fault",
            Some(json!({"fault": "stays_down"})),
        )
        .await;
    assert_eq!(switched.status(), 200);
    let before = service(&cloud).await;
    let restart = cloud.sim.restart_compute("compute-01").unwrap();
    assert_eq!(restart.reports_again_at, None);
    cloud.sim.advance_clock(Duration::from_secs(24 * 3600));
    let gone = service(&cloud).await;
    assert_eq!(
        (&gone["state"], &gone["updated_at"]),
        (&json!("down"), &before["updated_at"])
    );

    // Cleared, a new restart brings it back.
    let cleared = cloud
        .admin(
            Method::DELETE,
            "/_sim/compute/compute-01/restart-fault",
            None,
        )
        .await;
    assert_eq!(cleared.status(), 204);
    cloud
        .sim
        .restart_compute_for("compute-01", Duration::from_secs(5))
        .unwrap();
    cloud.sim.advance_clock(Duration::from_secs(1 + 5));
    assert_eq!(service(&cloud).await["state"], "up");
    assert_eq!(cloud.sim.restart_count("compute-01"), 2);
}

#[tokio::test]
async fn a_failing_restart_answers_an_error_and_leaves_the_service_running() {
    let cloud = two_computes(CloudSimConfig::default()).await;
    cloud
        .sim
        .set_restart_fault("compute-02", Some(RestartFault::Fails));
    let failed = cloud
        .admin(Method::POST, "/_sim/compute/compute-02/restart", None)
        .await;
    assert_eq!(failed.status(), 500);
    assert!(
        body(failed).await["error"]
            .as_str()
            .unwrap()
            .starts_with("Error response from daemon: Cannot restart container nova_compute")
    );
    assert!(matches!(
        cloud.sim.restart_compute("compute-02"),
        Err(RestartError::Failed(host)) if host == "compute-02"
    ));
    cloud.sim.advance_clock(Duration::from_secs(300));
    assert_eq!(
        cloud.sim.services()[1].state,
        opsbot_cloud_sim::ServiceState::Up
    );
    assert_eq!(cloud.sim.restart_count("compute-02"), 0);
    let attempts = cloud.sim.compute_restarts();
    assert_eq!(attempts.len(), 2);
    assert!(attempts.iter().all(|restart| restart.failed));

    let unknown = cloud
        .admin(Method::POST, "/_sim/compute/compute-09/restart", None)
        .await;
    assert_eq!(unknown.status(), 404);
    assert_eq!(
        cloud.sim.restart_compute("compute-09"),
        Err(RestartError::NoComputeService("compute-09".into()))
    );
    let clock = body(cloud.admin(Method::GET, "/_sim/clock", None).await).await;
    assert!(clock["now"].is_string());
}
