//! Fault injection as a client sees it, the call log, and the `/_sim` admin API.
// Test helpers outside #[test] functions panic on failure too, like the tests themselves.

use std::time::{Duration, Instant};

use crate::common::{ip, start, start_flavor};
use opsbot_search_sim::{FaultKind, FaultRule, Flavor, NodeStatus, SimConfig, WorldSnapshot};
use reqwest::{Method, StatusCode};

fn rule(spec: &str) -> FaultRule {
    spec.parse().unwrap()
}

#[tokio::test]
async fn status_faults_send_the_real_error_bodies() {
    let sim = start_flavor(Flavor::Es7).await;
    sim.handle.set_faults(vec![
        rule("status=429,count=1"),
        rule("status=503,count=1"),
        rule("status=502,count=1"),
    ]);

    let response = sim.send(Method::GET, "/_cluster/health", None).await;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(
        response.headers().get("retry-after").is_none(),
        "ES sends no Retry-After"
    );
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(
        (body["error"]["type"].as_str(), body["status"].as_u64()),
        (Some("es_rejected_execution_exception"), Some(429))
    );

    let (status, body) = sim.get("/_cluster/health").await;
    assert_eq!(
        (status, body["error"]["type"].as_str()),
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Some("master_not_discovered_exception")
        )
    );

    let response = sim.send(Method::GET, "/_cluster/health", None).await;
    assert_eq!(
        (
            response.status(),
            response.headers()["content-type"].to_str().unwrap()
        ),
        (StatusCode::BAD_GATEWAY, "text/html")
    );

    // Counts are used up: back to normal.
    assert_eq!(sim.get("/_cluster/health").await.0, StatusCode::OK);
    assert!(sim.handle.faults().iter().all(|rule| rule.count == Some(0)));
}

#[tokio::test]
async fn filtered_faults_only_hit_matching_requests() {
    let sim = start_flavor(Flavor::Os2).await;
    sim.handle
        .set_faults(vec![rule("status=500,method=PUT,path=/_cluster")]);
    assert_eq!(sim.get("/_cluster/settings").await.0, StatusCode::OK);
    let (status, body) = sim
        .json(
            Method::PUT,
            "/_cluster/settings",
            Some(r#"{"transient":{}}"#),
        )
        .await;
    assert_eq!(
        (status, body["status"].as_u64()),
        (StatusCode::INTERNAL_SERVER_ERROR, Some(500))
    );
    assert_eq!(
        sim.json(Method::PUT, "/audit", None).await.0,
        StatusCode::OK
    );
}

#[tokio::test]
async fn latency_and_timeout_hold_the_request() {
    let sim = start_flavor(Flavor::Es7).await;
    sim.handle.set_faults(vec![rule("latency=150ms,count=1")]);
    let begun = Instant::now();
    assert_eq!(sim.get("/").await.0, StatusCode::OK);
    assert!(begun.elapsed() >= Duration::from_millis(150));

    sim.handle
        .set_faults(vec![rule("timeout=2s,count=1,path=/_cluster/health")]);
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let error = impatient
        .get(sim.url("/_cluster/health"))
        .send()
        .await
        .unwrap_err();
    assert!(error.is_timeout(), "{error}");
    assert_eq!(
        sim.get("/_cluster/health").await.0,
        StatusCode::OK,
        "the held request does not block others"
    );
}

#[tokio::test]
async fn malformed_json_is_a_truncated_200() {
    let sim = start_flavor(Flavor::Es7).await;
    sim.handle.set_faults(vec![rule("malformed,count=1")]);
    let response = sim.send(Method::GET, "/_cluster/health", None).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let text = response.text().await.unwrap();
    assert_eq!(text, r#"{"cluster_name":"kolla_log"#);
    assert!(serde_json::from_str::<serde_json::Value>(&text).is_err());
}

#[tokio::test]
async fn dropped_connections_fail_the_client() {
    let sim = start_flavor(Flavor::Es7).await;
    sim.handle.set_faults(vec![rule("drop,count=2,method=PUT")]);
    for _ in 0..2 {
        let result = sim
            .client
            .put(sim.url("/_cluster/settings"))
            .header("content-type", "application/json")
            .body(r#"{"transient":{}}"#)
            .send()
            .await;
        let failed = match result {
            Err(_) => true,
            Ok(response) => response.text().await.is_err(),
        };
        assert!(failed, "the client must see a broken response");
    }
    let calls = sim.handle.calls();
    assert_eq!(
        calls.iter().map(|call| call.status).collect::<Vec<_>>(),
        [0, 0],
        "no status was sent"
    );
    assert_eq!(sim.get("/").await.0, StatusCode::OK);
}

#[tokio::test]
async fn the_call_log_records_cluster_requests_only() {
    let config = SimConfig {
        faults: vec![rule("status=429,count=1")],
        ..crate::common::config(Flavor::Es7)
    };
    let sim = start(config).await;
    assert_eq!(
        sim.get("/_cat/health?format=json").await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
    sim.json(
        Method::PUT,
        "/_cluster/settings?flat_settings=true",
        Some(r#"{"transient":{}}"#),
    )
    .await;
    sim.admin(Method::GET, "/state").await;
    assert_eq!(sim.get("/_cat/nope").await.0, StatusCode::BAD_REQUEST);

    let calls = sim.handle.calls();
    let summary: Vec<(u64, &str, &str, &str, u16)> = calls
        .iter()
        .map(|call| {
            (
                call.seq,
                call.method.as_str(),
                call.path.as_str(),
                call.query.as_str(),
                call.status,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (1, "GET", "/_cat/health", "format=json", 429),
            (2, "PUT", "/_cluster/settings", "flat_settings=true", 200),
            (3, "GET", "/_cat/nope", "", 400),
        ]
    );
    assert_eq!(calls[1].body, r#"{"transient":{}}"#);

    let (status, listed) = sim.admin(Method::GET, "/calls").await;
    assert_eq!(
        (status, listed.as_array().map(Vec::len)),
        (StatusCode::OK, Some(3))
    );
    assert_eq!(
        sim.client
            .delete(sim.url("/_sim/calls"))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::NO_CONTENT
    );
    assert!(sim.handle.calls().is_empty());
    sim.get("/").await;
    assert_eq!(
        sim.handle.calls()[0].seq,
        4,
        "sequence numbers keep counting"
    );
}

#[tokio::test]
async fn admin_api_controls_nodes_and_faults() {
    let sim = start_flavor(Flavor::Es7).await;
    let (status, body) = sim.admin(Method::POST, "/nodes/10.0.0.12/stop").await;
    assert_eq!(
        (status, body),
        (
            StatusCode::OK,
            serde_json::json!({"node": "10.0.0.12", "state": "stopped", "changed": true})
        )
    );
    let (_, body) = sim.admin(Method::POST, "/nodes/10.0.0.12/stop").await;
    assert_eq!(body["changed"], false);
    let (_, body) = sim.admin(Method::POST, "/nodes/10.0.0.12/start").await;
    assert_eq!(
        (body["state"].as_str(), body["changed"].as_bool()),
        (Some("starting"), Some(true))
    );
    let (status, body) = sim.admin(Method::POST, "/nodes/10.0.0.99/stop").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown node [10.0.0.99]"))
    );

    let (_, state) = sim.admin(Method::GET, "/state").await;
    let state: WorldSnapshot = serde_json::from_value(state).unwrap();
    assert_eq!(state.nodes[1].ip, ip(12));
    assert!(matches!(
        state.nodes[1].state,
        NodeStatus::Starting | NodeStatus::Up
    ));

    let rules = r#"[{"kind":"status","status":503,"count":1},{"kind":"latency","ms":5,"path_prefix":"/_cat"}]"#;
    let response = sim
        .client
        .put(sim.url("/_sim/faults"))
        .body(rules)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(sim.handle.faults()[1].kind, FaultKind::Latency { ms: 5 });
    let response = sim
        .client
        .put(sim.url("/_sim/faults"))
        .body(r#"[{"kind":"explode"}]"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    // Admin requests are never faulted.
    assert_eq!(sim.admin(Method::GET, "/faults").await.0, StatusCode::OK);
    assert_eq!(sim.get("/").await.0, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        sim.client
            .delete(sim.url("/_sim/faults"))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::NO_CONTENT
    );
    assert!(sim.handle.faults().is_empty());
    assert_eq!(
        sim.admin(Method::GET, "/nope").await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn shutdown_stops_serving() {
    let sim = start_flavor(Flavor::Es7).await;
    let url = sim.url("/");
    assert_eq!(sim.get("/").await.0, StatusCode::OK);
    let crate::common::Sim { handle, .. } = sim;
    handle.shutdown().await;
    let fresh = reqwest::Client::new();
    assert!(fresh.get(url).send().await.is_err());
}

#[tokio::test]
async fn bad_configurations_are_refused() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = SimConfig {
        speed: 0.0,
        ..SimConfig::default()
    };
    let error = opsbot_search_sim::spawn(config, listener)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(error.to_string().contains("speed"), "{error}");
}

#[tokio::test]
async fn cat_allocation_is_faulted_and_logged_like_any_endpoint() {
    let sim = start_flavor(Flavor::Es7).await;
    sim.handle
        .set_faults(vec![rule("status=429,count=1,path=/_cat/allocation")]);
    assert_eq!(
        sim.get("/_cat/allocation?format=json").await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        sim.get("/_cat/allocation?format=json").await.0,
        StatusCode::OK
    );
    let logged: Vec<(String, String, u16)> = sim
        .handle
        .calls()
        .into_iter()
        .map(|call| (call.path, call.query, call.status))
        .collect();
    assert_eq!(
        logged,
        [
            ("/_cat/allocation".into(), "format=json".into(), 429),
            ("/_cat/allocation".into(), "format=json".into(), 200),
        ]
    );
}
