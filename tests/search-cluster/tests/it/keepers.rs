//! Indices that belong to someone else: data streams' backing indices, ISM-managed indices,
//! system indices, and the scenario configuration that starts with them.
// Test helpers outside #[test] functions panic on failure too, like the tests themselves.

use crate::common::{Sim, config, start, start_flavor};
use opsbot_search_sim::{ConfigError, DataStreamSpec, Distribution, Flavor, IndexSpec, SimConfig};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const TEMPLATE: &str = r#"{"index_patterns": ["app-*"], "data_stream": {}, "template": {"settings": {"index.number_of_replicas": 1}}}"#;

async fn put(sim: &Sim, path: &str, body: &str) -> (StatusCode, Value) {
    sim.json(Method::PUT, path, Some(body)).await
}

/// `POST _plugins/_ism/add/{target}` attaching policy `retention`.
async fn ism_add(sim: &Sim, target: &str) -> (StatusCode, Value) {
    let path = format!("/_plugins/_ism/add/{target}");
    sim.json(Method::POST, &path, Some(r#"{"policy_id": "retention"}"#))
        .await
}

/// The day, by the simulator's clock, on which `stream`'s first backing index was created:
/// ES 8 names backing indices by it. Not the wall clock's day: the simulator's clock runs 1000
/// times as fast from the wall clock at start, so the two differ shortly before midnight UTC.
fn creation_day(sim: &Sim, stream: &str) -> String {
    let state = sim.handle.state();
    let backing = state
        .indices
        .iter()
        .find(|index| index.data_stream.as_deref() == Some(stream))
        .unwrap_or_else(|| panic!("no backing index of {stream}"));
    let millis: i128 = backing.settings["index.creation_date"].parse().unwrap();
    let day = time::OffsetDateTime::from_unix_timestamp_nanos(millis * 1_000_000)
        .unwrap()
        .date();
    format!(
        "{:04}.{:02}.{:02}",
        day.year(),
        u8::from(day.month()),
        day.day()
    )
}

#[tokio::test]
async fn data_streams_have_hidden_backing_indices_named_per_version() {
    let es7 = start(SimConfig {
        distribution: Distribution::Default,
        ..config(Flavor::Es7)
    })
    .await;
    let es8 = start_flavor(Flavor::Es8).await;
    let os2 = start_flavor(Flavor::Os2).await;
    for (sim, dated) in [(&es7, false), (&es8, true), (&os2, false)] {
        assert_eq!(
            put(sim, "/_index_template/app", TEMPLATE).await.0,
            StatusCode::OK
        );
        let (status, body) = put(sim, "/_data_stream/app-logs", "").await;
        assert_eq!(
            (status, body),
            (StatusCode::OK, json!({"acknowledged": true}))
        );
        let first = if dated {
            format!(".ds-app-logs-{}-000001", creation_day(sim, "app-logs"))
        } else {
            ".ds-app-logs-000001".to_owned()
        };
        let (_, streams) = sim.get("/_data_stream/app-logs").await;
        let status = streams["data_streams"][0]["status"].as_str();
        assert!(
            matches!(status, Some("YELLOW" | "GREEN")),
            "the replica may still copy: {status:?}"
        );
        sim.get("/_cluster/health?wait_for_status=green&timeout=60s")
            .await;
        let (_, streams) = sim.get("/_data_stream/app-logs").await;
        let stream = &streams["data_streams"][0];
        assert_eq!(stream["name"], "app-logs");
        assert_eq!(stream["timestamp_field"], json!({"name": "@timestamp"}));
        assert_eq!(stream["indices"][0]["index_name"], first.as_str());
        assert_eq!(
            stream["indices"][0]["index_uuid"].as_str().map(str::len),
            Some(22)
        );
        assert_eq!(
            (stream["generation"].as_u64(), stream["status"].as_str()),
            (Some(1), Some("GREEN"))
        );
        assert_eq!(stream["template"], "app");

        let (_, settings) = sim.get(&format!("/{first}/_settings/index.hidden")).await;
        assert_eq!(
            settings[first.as_str()]["settings"]["index"]["hidden"],
            "true"
        );
        // Hidden, yet listed with all indices: `_all`/`*`/nothing also expands every visible
        // data stream for requests that take streams (`_cat/indices` resolves through
        // `GetSettingsRequest`): elastic/elasticsearch#58869, `WildcardExpressionResolver.resolve`.
        let (_, rows) = sim.get("/_cat/indices?format=json&h=index").await;
        assert!(
            rows.as_array()
                .unwrap()
                .iter()
                .any(|row| row["index"] == first.as_str()),
            "{rows}"
        );
        let (_, rows) = sim.get("/_cat/indices/app-logs?format=json&h=index").await;
        assert_eq!(
            rows[0]["index"],
            first.as_str(),
            "the stream's name stands for its indices"
        );

        // The write index cannot be deleted; after a rollover the old one can.
        let (status, body) = sim.json(Method::DELETE, &format!("/{first}"), None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(
            body["error"]["reason"],
            format!(
                "index [{first}] is the write index for data stream [app-logs] and cannot be deleted"
            )
        );
        // To delete (`includeDataStreams()` false) the stream's name names nothing.
        let (status, body) = sim.json(Method::DELETE, "/app-logs", None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert_eq!(body["error"]["reason"], "no such index [app-logs]");
        let (status, rolled) = sim.json(Method::POST, "/app-logs/_rollover", None).await;
        assert_eq!(status, StatusCode::OK, "{rolled}");
        assert_eq!(
            (
                rolled["old_index"].as_str(),
                rolled["rolled_over"].as_bool()
            ),
            (Some(first.as_str()), Some(true))
        );
        assert!(rolled["new_index"].as_str().unwrap().ends_with("-000002"));
        assert_eq!(
            sim.json(Method::DELETE, &format!("/{first}"), None).await.0,
            StatusCode::OK
        );
        let state = sim.handle.state();
        assert_eq!(state.data_streams[0].indices.len(), 1);
        assert_eq!(state.data_streams[0].generation, 2);
        // Plain indices matching a data stream template cannot be created.
        let (status, body) = sim.json(Method::PUT, "/app-plain", None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(
            body["error"]["reason"]
                .as_str()
                .unwrap()
                .contains("creates data streams only")
        );
    }
    let (_, streams) = es8.get("/_data_stream").await;
    let stream = &streams["data_streams"][0];
    assert_eq!(stream["next_generation_managed_by"], "Unmanaged");
    assert_eq!(stream["indices"][0]["managed_by"], "Unmanaged");
    assert_eq!(stream["hidden"], false);
    let (_, streams) = os2.get("/_data_stream").await;
    assert!(
        streams["data_streams"][0].get("hidden").is_none(),
        "OpenSearch 2.11's shape"
    );
}

#[tokio::test]
async fn data_streams_exist_only_where_the_server_has_them() {
    for (flavor, distribution) in [
        (Flavor::Es6, Distribution::Default),
        (Flavor::Es7, Distribution::Oss),
    ] {
        let sim = start(SimConfig {
            distribution,
            ..config(flavor)
        })
        .await;
        let (status, body) = put(&sim, "/_data_stream/app-logs", "").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{flavor}");
        assert_eq!(
            body["error"],
            "no handler found for uri [/_data_stream/app-logs] and method [PUT]"
        );
    }
    let es8 = start_flavor(Flavor::Es8).await;
    let (status, body) = put(&es8, "/_data_stream/nothing-matches", "").await;
    assert_eq!(
        (status, body["error"]["reason"].as_str()),
        (
            StatusCode::BAD_REQUEST,
            Some("no matching index template found for data stream [nothing-matches]")
        )
    );
    // The default distribution's own `logs-*-*` template brings its ILM policy.
    assert_eq!(
        put(&es8, "/_data_stream/logs-nginx-default", "").await.0,
        StatusCode::OK
    );
    let (_, streams) = es8.get("/_data_stream/logs-*").await;
    assert_eq!(streams["data_streams"][0]["ilm_policy"], "logs");
    assert_eq!(
        streams["data_streams"][0]["indices"][0]["managed_by"],
        "Index Lifecycle Management"
    );
    let (status, _) = es8.get("/_data_stream/missing").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn ism_reports_managed_indices_through_explain_only() {
    let sim = start_flavor(Flavor::Os2).await;
    let (status, body) = ism_add(&sim, "flog-2026.03.01").await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "no policy stored yet: {body}"
    );
    assert_eq!(body["error"]["index"], ".opendistro-ism-config");

    let policy = r#"{"policy": {"description": "delete after 30 days", "default_state": "hot",
        "states": [{"name": "hot", "actions": [], "transitions": [{"state_name": "delete", "conditions": {"min_index_age": "30d"}}]},
                   {"name": "delete", "actions": [{"delete": {}}], "transitions": []}]}}"#;
    let response = sim
        .client
        .put(sim.url("/_plugins/_ism/policies/retention"))
        .header("content-type", "application/json")
        .body(policy)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(
        response.headers()["location"],
        "/_plugins/_ism/policies/retention"
    );
    let stored: Value = response.json().await.unwrap();
    assert_eq!(stored["policy"]["policy"]["policy_id"], "retention");
    assert_eq!(
        put(&sim, "/_plugins/_ism/policies/retention", policy)
            .await
            .0,
        StatusCode::CONFLICT
    );
    let (status, body) = put(
        &sim,
        "/_plugins/_ism/policies/broken",
        r#"{"policy": {"description": "x", "default_state": "warm", "states": [{"name": "hot"}]}}"#,
    )
    .await;
    assert_eq!(
        (status, body["error"]["reason"].as_str()),
        (
            StatusCode::BAD_REQUEST,
            Some("Policy must have a valid default state")
        )
    );

    let (_, added) = ism_add(&sim, "flog-2026.03.0*,.kibana_1,gone").await;
    assert_eq!(added["updated_indices"], 9);
    assert_eq!(added["failures"], true);
    assert_eq!(added["failed_indices"][0]["index_name"], ".kibana_1");
    let (_, again) = ism_add(&sim, "flog-2026.03.01").await;
    assert_eq!(
        again["failed_indices"][0]["reason"],
        "This index already has a policy, use the update policy API to update index policies"
    );

    let (_, explained) = sim
        .get("/_plugins/_ism/explain/flog-2026.03.01,flog-2026.03.10")
        .await;
    let uuid = sim.handle.state().indices[0].uuid.clone();
    assert_eq!(
        explained["flog-2026.03.01"],
        json!({
            "index.plugins.index_state_management.policy_id": "retention",
            "index.opendistro.index_state_management.policy_id": "retention",
            "index": "flog-2026.03.01",
            "index_uuid": uuid,
            "policy_id": "retention",
            "enabled": true,
        })
    );
    assert_eq!(
        explained["flog-2026.03.10"],
        json!({
            "index.plugins.index_state_management.policy_id": null,
            "index.opendistro.index_state_management.policy_id": null,
            "enabled": null,
        })
    );
    assert_eq!(explained["total_managed_indices"], 1);
    let (_, all) = sim.get("/_plugins/_ism/explain?size=5").await;
    assert_eq!(
        all.as_object().unwrap().len(),
        6,
        "5 managed indices and the total"
    );
    assert_eq!(all["total_managed_indices"], 9);
    // The add API does not set the index setting: it stays empty.
    let (_, settings) = sim
        .get("/flog-2026.03.01/_settings/index.plugins.index_state_management.policy_id")
        .await;
    assert_eq!(settings, json!({}));
    assert_eq!(
        sim.handle.state().indices[0].ism_policy.as_deref(),
        Some("retention")
    );
    // ISM's config index is hidden.
    let (_, rows) = sim.get("/_cat/indices?format=json&h=index").await;
    assert!(!rows.to_string().contains(".opendistro-ism-config"));
}

/// More managed indices than a search counts: explain's total stops at 10,000 and no page
/// reaches past the result window, but explaining by name finds every one.
#[tokio::test]
async fn ism_explain_is_bounded_by_the_search_window() {
    let managed = 10_001;
    let sim = start(SimConfig {
        indices: (0..managed)
            .map(|i| IndexSpec::new(format!("flog-{i:05}")).ism_policy("retention"))
            .collect(),
        ..config(Flavor::Os2)
    })
    .await;
    let (status, page) = sim.get("/_plugins/_ism/explain?size=1000&from=9000").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(page["total_managed_indices"], 10_000);
    assert_eq!(page.as_object().unwrap().len(), 1001);
    assert_eq!(page["flog-09999"]["policy_id"], "retention");

    let reason = "Result window is too large, from + size must be less than or equal to: [10000] but was [10500]. See the scroll api for a more efficient way to request large data sets. This limit can be set by changing the [index.max_result_window] index level setting.";
    let (status, refused) = sim.get("/_plugins/_ism/explain?size=1000&from=9500").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(refused["error"]["type"], "search_phase_execution_exception");
    assert_eq!(refused["error"]["root_cause"][0]["reason"], reason);
    assert_eq!(refused["error"]["caused_by"]["reason"], reason);
    // Named indices are searched 10,000 at a time: any `from` passes the window.
    let (status, _) = sim.get("/_plugins/_ism/explain/flog-10000?from=1").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let (status, last) = sim
        .get("/_plugins/_ism/explain/flog-10000,flog-00000?size=1")
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(last["flog-10000"]["policy_id"], "retention");
    assert_eq!(last["flog-00000"]["policy_id"], "retention");
    assert_eq!(last["total_managed_indices"], 2);
}

#[tokio::test]
async fn elasticsearch_has_no_ism_paths() {
    for flavor in [Flavor::Es6, Flavor::Es7, Flavor::Es8] {
        let sim = start_flavor(flavor).await;
        let (status, body) = sim.get("/_plugins/_ism/explain").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{flavor}");
        assert_eq!(
            body["error"],
            "no handler found for uri [/_plugins/_ism/explain] and method [GET]"
        );
    }
}

#[tokio::test]
async fn es8_hides_kibana_s_system_index_from_plain_listings() {
    let sim = start_flavor(Flavor::Es8).await;
    let (_, rows) = sim.get("/_cat/indices?format=json&h=index").await;
    assert_eq!(
        rows.as_array().map(Vec::len),
        Some(10),
        "daily indices only"
    );
    let (_, rows) = sim
        .get("/_cat/indices?format=json&h=index&expand_wildcards=all")
        .await;
    assert!(rows.to_string().contains(".kibana_8.11.3_001"));
    for flavor in [Flavor::Es6, Flavor::Es7, Flavor::Os2] {
        let sim = start_flavor(flavor).await;
        let (_, rows) = sim.get("/_cat/indices/.kibana*?format=json&h=index").await;
        assert_eq!(rows, json!([{"index": ".kibana_1"}]), "{flavor}");
    }
}

#[tokio::test]
async fn scenarios_start_with_indices_that_belong_to_someone_else() {
    let created = time::macros::datetime!(2025-12-01 00:00 UTC);
    let sim = start(SimConfig {
        indices: vec![
            IndexSpec::new("audit-2025.12.01")
                .setting("index.hidden", "true")
                .created(created),
            IndexSpec::new("app-2025.12.01").ism_policy("retention"),
        ],
        data_streams: vec![DataStreamSpec::new("metrics-app", 3)],
        ..config(Flavor::Os2)
    })
    .await;
    let state = sim.handle.state();
    let audit = state
        .indices
        .iter()
        .find(|index| index.name == "audit-2025.12.01")
        .unwrap();
    assert!(audit.hidden());
    assert_eq!(audit.settings["index.creation_date"], "1764547200000");
    let app = state
        .indices
        .iter()
        .find(|index| index.name == "app-2025.12.01")
        .unwrap();
    assert_eq!(app.ism_policy.as_deref(), Some("retention"));
    assert_eq!(state.data_streams[0].indices.len(), 3);
    assert!(
        state
            .indices
            .iter()
            .all(|index| index.copies.iter().all(|copy| copy.node.is_some()))
    );
    let (_, explained) = sim.get("/_plugins/_ism/explain").await;
    assert_eq!(explained["app-2025.12.01"]["policy_id"], "retention");

    let refused = opsbot_search_sim::spawn(
        SimConfig {
            indices: vec![IndexSpec::new("x").setting("index.lifecycle.name", "logs")],
            ..config(Flavor::Es7)
        },
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
    )
    .await
    .unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        refused
            .to_string()
            .contains("unknown setting [index.lifecycle.name]"),
        "{refused}"
    );
    let error = ConfigError::InvalidDataStream {
        name: "x".into(),
        reason: "r".into(),
    };
    assert_eq!(error.to_string(), "data stream [x]: r");
}

/// Index names a `_cat/indices` path lists.
async fn cat_names(sim: &Sim, path: &str) -> Vec<String> {
    let (status, rows) = sim.get(path).await;
    assert_eq!(status, StatusCode::OK, "{path}: {rows}");
    let mut names: Vec<String> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["index"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn listing_all_indices_includes_the_backing_indices_of_data_streams() {
    for flavor in [Flavor::Es7, Flavor::Es8, Flavor::Os2] {
        let sim = start(SimConfig {
            distribution: Distribution::Default,
            indices: vec![IndexSpec::new("audit-2026.03.01").setting("index.hidden", "true")],
            data_streams: vec![DataStreamSpec::new("logs-app-default", 2)],
            ..config(flavor)
        })
        .await;
        let backing: Vec<String> = sim.handle.state().data_streams[0].indices.clone();
        assert_eq!(backing.len(), 2);
        // `_all`, `*` and nothing resolve to every visible index plus every data stream's
        // backing indices (elastic/elasticsearch#58869; `WildcardExpressionResolver.resolve`
        // with `includeDataStreams()`), but not to a plain index made hidden.
        for path in [
            "/_cat/indices?format=json&h=index",
            "/_cat/indices/_all?format=json&h=index",
            "/_cat/indices/*?format=json&h=index",
        ] {
            let names = cat_names(&sim, path).await;
            for index in &backing {
                assert!(names.contains(index), "{flavor} {path}: {names:?}");
            }
            assert!(
                !names.iter().any(|name| name == "audit-2026.03.01"),
                "{flavor} {path}: a hidden index stays unlisted"
            );
            // The daily indices, the backing indices and (not ES 8's hidden one) `.kibana_1`.
            let kibana = usize::from(flavor != Flavor::Es8);
            assert_eq!(names.len(), 10 + 2 + kibana, "{flavor} {path}: {names:?}");
        }
        for path in ["/_settings", "/_all/_settings", "/*/_settings"] {
            let (status, settings) = sim.get(path).await;
            assert_eq!(status, StatusCode::OK, "{flavor} {path}");
            let settings = settings.as_object().unwrap();
            for index in &backing {
                assert!(settings.contains_key(index), "{flavor} {path}");
            }
            assert!(
                !settings.contains_key("audit-2026.03.01"),
                "{flavor} {path}"
            );
        }
        let names = cat_names(
            &sim,
            "/_cat/indices?format=json&h=index&expand_wildcards=all",
        )
        .await;
        assert!(names.iter().any(|name| name == "audit-2026.03.01"));
        assert_eq!(
            names.iter().filter(|name| backing.contains(name)).count(),
            2,
            "{flavor}: each backing index once"
        );
    }
}

#[tokio::test]
async fn deleting_a_data_stream_by_name_deletes_nothing() {
    for flavor in [Flavor::Es7, Flavor::Es8, Flavor::Os2] {
        let sim = start(SimConfig {
            distribution: Distribution::Default,
            data_streams: vec![DataStreamSpec::new("logs-app-default", 2)],
            ..config(flavor)
        })
        .await;
        let before = sim.handle.state().indices.len();
        // `DeleteIndexRequest.includeDataStreams()` is false: the name is unavailable, like a
        // missing index's (`innerResolve` / `ensureAliasOrIndexExists`).
        let (status, body) = sim.json(Method::DELETE, "/logs-app-default", None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{flavor}: {body}");
        assert_eq!(body["error"]["type"], "index_not_found_exception");
        assert_eq!(body["error"]["reason"], "no such index [logs-app-default]");
        assert_eq!(body["error"]["index"], "logs-app-default");
        let marked = body["error"].get("excluded_ds").cloned();
        if flavor == Flavor::Es8 {
            assert_eq!(marked, Some(json!("true")), "{body}");
        } else {
            assert_eq!(marked, None, "{flavor}: {body}");
        }
        // With `ignore_unavailable` the name is skipped; nothing left to delete is acknowledged.
        let (status, body) = sim
            .json(
                Method::DELETE,
                "/logs-app-default?ignore_unavailable=true",
                None,
            )
            .await;
        assert_eq!(
            (status, body),
            (StatusCode::OK, json!({"acknowledged": true})),
            "{flavor}"
        );
        let (status, _) = sim
            .json(
                Method::DELETE,
                "/logs-app-default,flog-2026.03.01?ignore_unavailable=true",
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{flavor}");
        let state = sim.handle.state();
        assert_eq!(state.indices.len(), before - 1, "{flavor}: the index only");
        assert_eq!(state.data_streams[0].indices.len(), 2, "{flavor}");
    }
}
