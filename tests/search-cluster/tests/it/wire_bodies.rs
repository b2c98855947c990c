//! Bodies of settings, errors and flushes match the recorded ones: exactly where no value
//! depends on the run, by shape (keys, order, value kinds) elsewhere.
// Test helpers outside #[test] functions panic on failure too, like the tests themselves.

use crate::common::{Shape, shape, start_flavor};
use opsbot_search_sim::Flavor;
use reqwest::{Method, StatusCode};
use serde_json::Value;

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

#[tokio::test]
async fn cluster_settings_bodies_match_the_fixtures() {
    let sim = start_flavor(Flavor::Es7).await;
    let put = |body: &'static str, flat: bool| {
        let path = if flat {
            "/_cluster/settings?flat_settings=true"
        } else {
            "/_cluster/settings"
        };
        sim.json(Method::PUT, path, Some(body))
    };
    let cases = [
        (
            r#"{"persistent":{"cluster.routing.allocation.enable":"none"}}"#,
            false,
            crate::fixture!("cluster_settings_put.es7-os2.persistent-allocation-none.200.json"),
        ),
        (
            r#"{"persistent":{"cluster.routing.allocation.enable":"none"}}"#,
            true,
            crate::fixture!("cluster_settings_put.es7-os2.flat_settings-true.200.json"),
        ),
        (
            r#"{"persistent":{"cluster.routing.allocation.enable":null}}"#,
            false,
            crate::fixture!("cluster_settings_put.es7-os2.persistent-allocation-null.200.json"),
        ),
        (
            r#"{"transient":{"cluster":{"routing":{"allocation":{"exclude":{"_ip":"192.0.2.12"}}}}}}"#,
            false,
            crate::fixture!("cluster_settings_put.es7-os2.transient-exclude-ip.200.json"),
        ),
        (
            r#"{"transient":{"cluster.routing.allocation.exclude._ip":""}}"#,
            false,
            crate::fixture!("cluster_settings_put.es7-os2.transient-exclude-ip-empty.200.json"),
        ),
    ];
    for (body, flat, expected) in cases {
        let (status, response) = put(body, flat).await;
        assert_eq!(
            (status, response),
            (StatusCode::OK, parse(expected)),
            "{body}"
        );
    }
    let refused = [
        (
            r#"{"persistent":{"cluster.routing.allocation.enable":"BOGUS"}}"#,
            crate::fixture!("cluster_settings_put.es7.invalid-enable-value.400.json"),
        ),
        (
            r#"{"persistent":{"cluster.routing.allocation.enabled":"all"}}"#,
            crate::fixture!("cluster_settings_put.es7.unknown-setting.400.json"),
        ),
    ];
    for (body, expected) in refused {
        let (status, response) = put(body, false).await;
        assert_eq!(
            (status, response),
            (StatusCode::BAD_REQUEST, parse(expected)),
            "{body}"
        );
    }

    put(r#"{"persistent":{"cluster.routing.allocation.enable":"none"},"transient":{"cluster.routing.allocation.exclude._ip":"192.0.2.12"}}"#, false).await;
    let (_, body) = sim.get("/_cluster/settings").await;
    assert_eq!(
        body,
        parse(crate::fixture!(
            "cluster_settings_get.es7-os2.during-restart.200.json"
        ))
    );
    let (_, pretty) = sim
        .text(Method::GET, "/_cluster/settings?pretty", None)
        .await;
    assert_eq!(
        pretty,
        crate::fixture!("cluster_settings_get.es7-os2.during-restart.200.pretty.txt")
    );
}

#[tokio::test]
async fn errors_match_the_fixtures_exactly() {
    let sim = start_flavor(Flavor::Es7).await;
    let (status, body) = sim.get("/_cat/nope").await;
    assert_eq!(
        (status, body),
        (
            StatusCode::BAD_REQUEST,
            parse(crate::fixture!("error.es7-os2.no-handler.400.json"))
        )
    );

    let response = sim.send(Method::POST, "/_cluster/settings", None).await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.headers()["allow"], "GET,PUT");
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        parse(crate::fixture!("error.es7-os2.wrong-method.405.json"))
    );

    let response = sim
        .client
        .put(sim.url("/_cluster/settings"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(r#"{"persistent":{}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        parse(crate::fixture!("error.es7.content-type-missing.406.json"))
    );

    let (status, body) = sim.json(Method::DELETE, "/flog-2023.01.01", None).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::NOT_FOUND,
            parse(crate::fixture!("delete_index.es7-os2.not-found.404.json"))
        )
    );
    let (status, body) = sim.json(Method::DELETE, "/flog-2026.03.01", None).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::OK,
            parse(crate::fixture!("delete_index.es-os.ok.200.json"))
        )
    );

    let es8 = start_flavor(Flavor::Es8).await;
    let (status, body) = es8.json(Method::DELETE, "/flog-*", None).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::BAD_REQUEST,
            parse(crate::fixture!(
                "delete_index.es-os.destructive-requires-name.400.json"
            ))
        )
    );
}

#[tokio::test]
async fn lost_quorum_answers_not_discovered_per_flavor() {
    for (flavor, fixture) in [
        (
            Flavor::Es7,
            crate::fixture!("error.es7.master-not-discovered.503.json"),
        ),
        (
            Flavor::Os2,
            crate::fixture!("error.os2.cluster-manager-not-discovered.503.json"),
        ),
    ] {
        let sim = start_flavor(flavor).await;
        for node in [11, 12, 13] {
            sim.stop(node);
        }
        let (status, body) = sim.get("/_cluster/health?master_timeout=1s").await;
        assert_eq!(
            (status, body),
            (StatusCode::SERVICE_UNAVAILABLE, parse(fixture)),
            "{flavor}"
        );
    }
}

#[tokio::test]
async fn flush_bodies_per_flavor() {
    let es7 = start_flavor(Flavor::Es7).await;
    let (status, body) = es7.text(Method::POST, "/_flush", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        shape(&body),
        shape(crate::fixture!("flush.es7-os2.200.json"))
    );
    assert_eq!(parse(&body)["_shards"]["total"], 22);

    let response = es7.send(Method::POST, "/_flush/synced", None).await;
    let warning = response.headers()["warning"].to_str().unwrap().to_owned();
    assert!(
        warning.starts_with("299 Elasticsearch-7.10.2-"),
        "{warning}"
    );
    assert!(warning.ends_with(r#""Synced flush is deprecated and will be removed in 8.0. Use flush at /_flush or /{index}/_flush instead.""#));
    let body = response.text().await.unwrap();
    let (Shape::Object(ours), Shape::Object(recorded)) = (
        shape(&body),
        shape(crate::fixture!("flush_synced.es5-es7.ok.200.json")),
    ) else {
        panic!("synced flush bodies are objects")
    };
    assert_eq!(ours[0], recorded[0], "_shards first");
    assert_eq!(ours[1].1, recorded[1].1, "then one entry per index");
    assert_eq!(ours.len(), 12, "_shards and one entry per index");

    let es6 = start_flavor(Flavor::Es6).await;
    let response = es6.send(Method::POST, "/_flush/synced", None).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get("warning").is_none());

    let es8 = start_flavor(Flavor::Es8).await;
    let (status, body) = es8.text(Method::POST, "/_flush/synced", None).await;
    assert_eq!(
        (status, parse(&body)),
        (
            StatusCode::BAD_REQUEST,
            parse(crate::fixture!("flush_synced.es8.no-handler.400.json"))
        )
    );

    let os2 = start_flavor(Flavor::Os2).await;
    let response = os2.send(Method::POST, "/_flush/synced", None).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["warning"]
            .to_str()
            .unwrap()
            .contains("Synced flush was removed and a normal flush was performed instead.")
    );
    assert_eq!(
        shape(&response.text().await.unwrap()),
        shape(crate::fixture!("flush_synced.os2.simulated.200.json"))
    );
}
