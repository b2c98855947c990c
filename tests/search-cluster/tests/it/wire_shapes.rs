//! Every endpoint's output has the recorded shape: same keys in the same order, same value kinds,
//! same `_cat` columns. Bodies without run-specific values must match the fixtures exactly.
// Test helpers outside #[test] functions panic on failure too, like the tests themselves.

use crate::common::{Shape, Sim, header, keys, shape, start_flavor};
use opsbot_search_sim::Flavor;
use reqwest::{Method, StatusCode};
use serde_json::Value;

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// `_cat` in all three renderings: JSON keys, `?v` header and plain row width match the fixture.
async fn assert_cat(sim: &Sim, path: &str, fixture_json: &str, fixture_verbose: &str) {
    let (status, json) = sim
        .text(Method::GET, &format!("{path}?format=json"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(keys(&json), keys(fixture_json), "{path} JSON keys");
    let Shape::Array(Some(row)) = shape(&json) else {
        panic!("{path}: no rows")
    };
    let Shape::Object(cells) = *row else {
        panic!("{path}: rows are not objects")
    };
    assert!(
        cells
            .iter()
            .all(|(_, kind)| matches!(kind, Shape::String | Shape::Null)),
        "{path}: {cells:?}"
    );

    let response = sim.send(Method::GET, &format!("{path}?v"), None).await;
    assert_eq!(
        response.headers()["content-type"],
        "text/plain; charset=UTF-8"
    );
    let verbose = response.text().await.unwrap();
    assert_eq!(
        header(&verbose),
        header(fixture_verbose),
        "{path} ?v header"
    );

    let (_, plain) = sim.text(Method::GET, path, None).await;
    assert_eq!(
        plain.lines().count() + 1,
        verbose.lines().count(),
        "{path}: header only with ?v"
    );
    let first_row = plain.lines().next().unwrap_or_default();
    assert_eq!(
        first_row.split_whitespace().count(),
        header(fixture_verbose).len(),
        "{path}: {first_row}"
    );
}

#[tokio::test]
async fn cat_endpoints_match_the_recorded_columns() {
    let es7 = start_flavor(Flavor::Es7).await;
    assert_cat(
        &es7,
        "/_cat/health",
        crate::fixture!("cat_health.es7.green.format-json.json"),
        crate::fixture!("cat_health.es7.green.v.txt"),
    )
    .await;
    assert_cat(
        &es7,
        "/_cat/nodes",
        crate::fixture!("cat_nodes.es7.format-json.json"),
        crate::fixture!("cat_nodes.es7.v.txt"),
    )
    .await;
    assert_cat(
        &es7,
        "/_cat/indices",
        crate::fixture!("cat_indices.es7.format-json.json"),
        crate::fixture!("cat_indices.es7.v.txt"),
    )
    .await;
    assert_cat(
        &es7,
        "/_cat/recovery",
        crate::fixture!("cat_recovery.es7-os2.rolling-restart.format-json.json"),
        crate::fixture!("cat_recovery.es7-os2.rolling-restart.v.txt"),
    )
    .await;

    let es8 = start_flavor(Flavor::Es8).await;
    assert_cat(
        &es8,
        "/_cat/indices",
        crate::fixture!("cat_indices.es8.format-json.json"),
        crate::fixture!("cat_indices.es8.v.txt"),
    )
    .await;

    let os2 = start_flavor(Flavor::Os2).await;
    assert_cat(
        &os2,
        "/_cat/health",
        crate::fixture!("cat_health.os2.green.format-json.json"),
        crate::fixture!("cat_health.os2.green.v.txt"),
    )
    .await;
    assert_cat(
        &os2,
        "/_cat/nodes",
        crate::fixture!("cat_nodes.os2.format-json.json"),
        crate::fixture!("cat_nodes.os2.v.txt"),
    )
    .await;
    assert_cat(
        &os2,
        "/_cat/indices",
        crate::fixture!("cat_indices.os2.format-json.json"),
        crate::fixture!("cat_indices.os2.v.txt"),
    )
    .await;
    assert_cat(
        &os2,
        "/_cat/recovery",
        crate::fixture!("cat_recovery.es7-os2.rolling-restart.format-json.json"),
        crate::fixture!("cat_recovery.es7-os2.rolling-restart.v.txt"),
    )
    .await;
}

#[tokio::test]
async fn cat_parameters_select_sort_and_filter() {
    let sim = start_flavor(Flavor::Es7).await;
    let (_, text) = sim
        .text(
            Method::GET,
            "/_cat/indices/flog-*?h=index,docs.count&s=index:desc&bytes=b",
            None,
        )
        .await;
    let names: Vec<&str> = text
        .lines()
        .map(|line| line.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(names.len(), 10);
    assert_eq!(names[0], "flog-2026.03.10");
    assert_eq!(names[9], "flog-2026.03.01");
    let (_, text) = sim
        .text(
            Method::GET,
            "/_cat/indices/.kibana_1?h=store.size&bytes=b",
            None,
        )
        .await;
    assert!(text.trim().parse::<u64>().unwrap() > 0, "{text}");
    let (status, body) = sim.get("/_cat/indices/flog-1999.01.01").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["type"], "index_not_found_exception");
    let (status, body) = sim.get("/_cat/health?bogus=1").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["error"]["reason"],
        "request [/_cat/health] contains unrecognized parameter: [bogus]"
    );
}

fn pretty_keys(text: &str) -> Vec<&str> {
    text.lines()
        .map(|line| line.split(" : ").next().unwrap_or(line))
        .collect()
}

#[tokio::test]
async fn cluster_health_has_each_flavors_fields_in_order() {
    for (flavor, fixture) in [
        (
            Flavor::Es6,
            crate::fixture!("cluster_health.es7.green.200.json"),
        ),
        (
            Flavor::Es7,
            crate::fixture!("cluster_health.es7.green.200.json"),
        ),
        (
            Flavor::Es8,
            crate::fixture!("cluster_health.es8_recent.node-down.200.json"),
        ),
        (
            Flavor::Os2,
            crate::fixture!("cluster_health.os2.green.200.json"),
        ),
    ] {
        let sim = start_flavor(flavor).await;
        let (status, body) = sim.text(Method::GET, "/_cluster/health", None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(shape(&body), shape(fixture), "{flavor}");
        assert!(!body.contains('\n'), "compact by default");
    }
    for (flavor, fixture) in [
        (
            Flavor::Es7,
            crate::fixture!("cluster_health.es7.green.200.pretty.txt"),
        ),
        (
            Flavor::Os2,
            crate::fixture!("cluster_health.os2.green.200.pretty.txt"),
        ),
    ] {
        let sim = start_flavor(flavor).await;
        let (_, body) = sim.text(Method::GET, "/_cluster/health?pretty", None).await;
        assert_eq!(pretty_keys(&body), pretty_keys(fixture), "{flavor}");
        assert!(body.ends_with("}\n"));
    }
}

#[tokio::test]
async fn root_banner_per_flavor() {
    for (flavor, number) in [
        (Flavor::Es6, "6.8.23"),
        (Flavor::Es7, "7.10.2"),
        (Flavor::Es8, "8.11.3"),
        (Flavor::Os2, "2.11.1"),
    ] {
        let sim = start_flavor(flavor).await;
        let (status, text) = sim.text(Method::GET, "/", None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            keys(&text),
            ["name", "cluster_name", "cluster_uuid", "version", "tagline"]
        );
        let body = parse(&text);
        assert_eq!(body["version"]["number"], number);
        assert_eq!(body["name"], "10.0.0.11");
        assert_eq!(body["cluster_uuid"].as_str().unwrap().len(), 22);
        match flavor {
            Flavor::Os2 => {
                assert_eq!(body["version"]["distribution"], "opensearch");
                assert_eq!(
                    body["tagline"],
                    "The OpenSearch Project: https://opensearch.org/"
                );
            }
            Flavor::Es7 => assert_eq!(body["version"]["build_flavor"], "oss"),
            Flavor::Es8 => assert_eq!(body["version"]["build_flavor"], "default"),
            Flavor::Es6 => assert_eq!(body["tagline"], "You Know, for Search"),
        }
    }
}

#[tokio::test]
async fn cat_allocation_has_each_flavors_columns() {
    // No recorded fixture: the columns of ES's and OpenSearch's `RestAllocationAction`.
    const BASE: [&str; 9] = [
        "shards",
        "disk.indices",
        "disk.used",
        "disk.avail",
        "disk.total",
        "disk.percent",
        "host",
        "ip",
        "node",
    ];
    const ES8: [&str; 13] = [
        "shards",
        "shards.undesired",
        "write_load.forecast",
        "disk.indices.forecast",
        "disk.indices",
        "disk.used",
        "disk.avail",
        "disk.total",
        "disk.percent",
        "host",
        "ip",
        "node",
        "node.role",
    ];
    for (flavor, columns) in [
        (Flavor::Es6, &BASE[..]),
        (Flavor::Es7, &BASE[..]),
        (Flavor::Es8, &ES8[..]),
        (Flavor::Os2, &BASE[..]),
    ] {
        let sim = start_flavor(flavor).await;
        let (status, json) = sim
            .text(Method::GET, "/_cat/allocation?format=json", None)
            .await;
        assert_eq!(status, StatusCode::OK, "{flavor}");
        assert_eq!(keys(&json), columns, "{flavor}");
        let Shape::Array(Some(row)) = shape(&json) else {
            panic!("{flavor}: no rows")
        };
        assert_eq!(
            *row,
            Shape::Object(
                columns
                    .iter()
                    .map(|column| ((*column).to_owned(), Shape::String))
                    .collect()
            ),
            "{flavor}: every cell of a node row is a string"
        );
        let response = sim.send(Method::GET, "/_cat/allocation?v", None).await;
        assert_eq!(
            response.headers()["content-type"],
            "text/plain; charset=UTF-8"
        );
        let verbose = response.text().await.unwrap();
        assert_eq!(header(&verbose), columns, "{flavor}");
        // Numbers are right-aligned under their header, text left-aligned.
        let first_row = verbose.lines().nth(1).unwrap();
        let shards_width = "shards".len();
        assert!(
            first_row[..shards_width].starts_with(' ') && !first_row[..shards_width].ends_with(' '),
            "{flavor}: {verbose}"
        );
        let (status, _) = sim
            .text(
                Method::GET,
                "/_cat/allocation?h=s,di,n&s=s:desc&bytes=kb&local=true",
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    let sim = start_flavor(Flavor::Es7).await;
    let (status, body) = sim.get("/_cat/allocation/10.0.0.11").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (
            StatusCode::BAD_REQUEST,
            Some("no handler found for uri [/_cat/allocation/10.0.0.11] and method [GET]")
        ),
        "the per-node route is not simulated"
    );
}
