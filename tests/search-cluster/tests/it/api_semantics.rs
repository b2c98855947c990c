//! Request semantics the bot relies on: what DELETE really deletes, index creation, synced
//! flush conflicts, settings validation.
// Test helpers outside #[test] functions panic on failure too, like the tests themselves.

use crate::common::{config, start, start_flavor};
use opsbot_search_sim::Flavor;
use reqwest::{Method, StatusCode};

fn names(sim: &crate::common::Sim) -> Vec<String> {
    sim.handle
        .state()
        .indices
        .into_iter()
        .map(|index| index.name)
        .collect()
}

#[tokio::test]
async fn a_missing_name_fails_the_whole_delete_unless_ignored() {
    let mut config = config(Flavor::Es7);
    config.extra_indices = vec![
        "flog-2026.02.30".into(),
        "flog-2026.10.01-reindexed".into(),
        "audit-log".into(),
    ];
    let sim = start(config).await;
    let before = names(&sim);
    assert_eq!(before.len(), 14);

    let (status, body) = sim
        .json(Method::DELETE, "/flog-2026.03.01,flog-2023.01.01", None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["index"], "flog-2023.01.01");
    assert_eq!(names(&sim), before, "nothing deleted");

    let (status, _) = sim
        .json(
            Method::DELETE,
            "/flog-2026.03.01,flog-2023.01.01?ignore_unavailable=true",
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(!names(&sim).contains(&"flog-2026.03.01".to_owned()));

    let (status, _) = sim
        .json(Method::DELETE, "/flog-2026.02.30,audit-log", None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(names(&sim).len(), 11);
    assert!(names(&sim).contains(&"flog-2026.10.01-reindexed".to_owned()));
}

#[tokio::test]
async fn wildcards_and_all_really_delete_before_es8() {
    for flavor in [Flavor::Es6, Flavor::Es7, Flavor::Os2] {
        let sim = start_flavor(flavor).await;
        let (status, _) = sim.json(Method::DELETE, "/flog-2026.03.0*", None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(names(&sim), ["flog-2026.03.10", ".kibana_1"], "{flavor}");
        let (status, _) = sim.json(Method::DELETE, "/nothing-*", None).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "a wildcard matching nothing is fine"
        );
        // `_all` in a list is a name starting with `_`: refused, nothing deleted.
        let (status, body) = sim
            .json(Method::DELETE, "/flog-2026.03.10,_all", None)
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{flavor}: {body}");
        assert_eq!(body["error"]["type"], "invalid_index_name_exception");
        assert_eq!(
            body["error"]["reason"],
            "Invalid index name [_all], must not start with '_'."
        );
        assert_eq!(names(&sim).len(), 2, "{flavor}");
        let (status, _) = sim.json(Method::DELETE, "/_all", None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(names(&sim).is_empty(), "{flavor}");
        let (_, health) = sim.get("/_cluster/health").await;
        assert_eq!(
            (
                health["status"].as_str(),
                health["active_shards_percent_as_number"].as_f64()
            ),
            (Some("green"), Some(100.0))
        );
    }
}

#[tokio::test]
async fn es8_refuses_wildcards_until_destructive_requires_name_is_false() {
    let sim = start_flavor(Flavor::Es8).await;
    for expression in ["/flog-*", "/_all", "/*"] {
        let (status, body) = sim.json(Method::DELETE, expression, None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{expression}");
        assert_eq!(
            body["error"]["reason"],
            "Wildcard expressions or all indices are not allowed"
        );
    }
    assert_eq!(names(&sim).len(), 11);
    let allow = r#"{"transient":{"action.destructive_requires_name":false}}"#;
    let (status, body) = sim
        .json(Method::PUT, "/_cluster/settings", Some(allow))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body["transient"]["action"]["destructive_requires_name"], "false",
        "ES echoes strings"
    );
    assert_eq!(
        sim.json(Method::DELETE, "/flog-*", None).await.0,
        StatusCode::OK
    );
    assert_eq!(names(&sim), [".kibana_8.11.3_001"], "Kibana 8's own index");

    // And ES 7 can be made as strict.
    let es7 = start_flavor(Flavor::Es7).await;
    let strict = r#"{"persistent":{"action.destructive_requires_name":"true"}}"#;
    es7.json(Method::PUT, "/_cluster/settings", Some(strict))
        .await;
    assert_eq!(
        es7.json(Method::DELETE, "/flog-*", None).await.0,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn created_indices_get_allocated_and_can_be_deleted() {
    let sim = start_flavor(Flavor::Es7).await;
    let (status, body) = sim.json(Method::PUT, "/audit-log", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        serde_json::json!({"acknowledged": true, "shards_acknowledged": true, "index": "audit-log"})
    );
    let (status, body) = sim.json(Method::PUT, "/audit-log", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["type"], "resource_already_exists_exception");
    let (status, body) = sim.json(Method::PUT, "/Audit", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["type"], "invalid_index_name_exception");

    let (status, _) = sim
        .get("/_cluster/health?wait_for_status=green&timeout=60s")
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, recovery) = sim
        .text(
            Method::GET,
            "/_cat/recovery/audit-log?h=type,stage&s=type",
            None,
        )
        .await;
    assert_eq!(recovery, "empty_store done\npeer        done\n");

    // With allocation off a new index stays red and is not acknowledged.
    let none = r#"{"transient":{"cluster.routing.allocation.enable":"none"}}"#;
    sim.json(Method::PUT, "/_cluster/settings", Some(none))
        .await;
    let (_, body) = sim.json(Method::PUT, "/blocked?timeout=2s", None).await;
    assert_eq!(body["shards_acknowledged"], false);
    let (_, health) = sim.get("/_cluster/health").await;
    assert_eq!(health["status"], "red");
}

#[tokio::test]
async fn synced_flush_conflicts_while_shards_recover() {
    // Slower time so the recoveries are still running when the flush arrives.
    let sim = start(opsbot_search_sim::SimConfig {
        speed: 20.0,
        ..config(Flavor::Es7)
    })
    .await;
    sim.stop(13);
    sim.start(13);
    sim.wait_until("recoveries", |state| state.health.initializing_shards > 0)
        .await;
    let (status, body) = sim.json(Method::POST, "/_flush/synced", None).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(body["_shards"]["failed"].as_u64().unwrap() > 0);
    let failing = body
        .as_object()
        .unwrap()
        .values()
        .find(|entry| entry.get("failures").is_some())
        .unwrap();
    assert_eq!(
        failing["failures"][0]["reason"],
        "[1] ongoing operations on primary"
    );

    sim.wait_until("green", |state| {
        state.health.initializing_shards == 0 && state.health.unassigned_shards == 0
    })
    .await;
    let (status, body) = sim.json(Method::POST, "/_flush/synced", None).await;
    assert_eq!(
        (status, body["_shards"]["successful"].as_u64()),
        (StatusCode::OK, Some(22))
    );
}

#[tokio::test]
async fn settings_are_validated_and_read_back() {
    let sim = start_flavor(Flavor::Os2).await;
    let put = |body: &'static str| sim.json(Method::PUT, "/_cluster/settings", Some(body));
    let (status, body) =
        put(r#"{"transient":{"cluster.routing.allocation.exclude._ip":"10.0.0.12,not-an-ip"}}"#)
            .await;
    assert_eq!(
        (status, body["error"]["reason"].as_str()),
        (
            StatusCode::BAD_REQUEST,
            Some("invalid IP address [not-an-ip] for [_ip]")
        )
    );
    let (status, body) = put(r#"{"persistent":{},"other":{}}"#).await;
    assert_eq!(
        (status, body["error"]["type"].as_str()),
        (StatusCode::BAD_REQUEST, Some("x_content_parse_exception"))
    );
    let (status, _) =
        put(r#"{"persistent":{"cluster.routing.allocation.enable":"Primaries"}}"#).await;
    assert_eq!(status, StatusCode::OK, "case-insensitive");
    let (status, body) = sim.json(Method::PUT, "/_cluster/settings", None).await;
    assert_eq!(
        (status, body["error"]["reason"].as_str()),
        (StatusCode::BAD_REQUEST, Some("request body is required"))
    );

    let (_, flat) = sim.get("/_cluster/settings?flat_settings=true").await;
    assert_eq!(
        flat,
        serde_json::json!({"persistent": {"cluster.routing.allocation.enable": "Primaries"}, "transient": {}})
    );
    assert_eq!(
        sim.handle.state().settings.persistent["cluster.routing.allocation.enable"],
        "Primaries"
    );

    let response = sim
        .client
        .put(sim.url("/_cluster/settings"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["error"], "Content-Type header is missing");
}

#[tokio::test]
async fn excluding_a_missing_name_is_a_missing_index_before_es8() {
    // ES 6/7 and OpenSearch look an excluded concrete name up (`innerResolve`) unless
    // `ignore_unavailable`; ES 8 never does (elastic/elasticsearch#90902).
    for flavor in [Flavor::Es6, Flavor::Es7, Flavor::Os2, Flavor::Es8] {
        let sim = start_flavor(flavor).await;
        let strict = flavor != Flavor::Es8;
        let (status, body) = sim
            .get("/_cat/indices/flog-*,-flog-1999.01.01?format=json&h=index")
            .await;
        if strict {
            assert_eq!(status, StatusCode::NOT_FOUND, "{flavor}: {body}");
            assert_eq!(
                body["error"]["reason"], "no such index [flog-1999.01.01]",
                "{flavor}"
            );
        } else {
            assert_eq!(body.as_array().map(Vec::len), Some(10), "{flavor}: {body}");
        }
        let (status, body) = sim
            .get("/flog-*,-flog-1999.01.01,-flog-2026.03.10/_settings?ignore_unavailable=true")
            .await;
        assert_eq!(status, StatusCode::OK, "{flavor}");
        assert_eq!(body.as_object().map(|o| o.len()), Some(9), "{flavor}");

        if flavor == Flavor::Es8 {
            continue;
        }
        let before = names(&sim);
        let (status, body) = sim
            .json(Method::DELETE, "/flog-*,-flog-1999.01.01", None)
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{flavor}: {body}");
        assert_eq!(names(&sim), before, "{flavor}: nothing deleted");
        let (status, _) = sim
            .json(
                Method::DELETE,
                "/flog-*,-flog-1999.01.01,-flog-2026.03.10?ignore_unavailable=true",
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{flavor}");
        let left = names(&sim);
        assert!(left.contains(&"flog-2026.03.10".to_owned()), "{flavor}");
        assert_eq!(left.iter().filter(|n| n.starts_with("flog-")).count(), 1);
    }
}
