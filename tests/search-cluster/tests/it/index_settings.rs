//! Index identity and settings: uuids per incarnation, settings given at creation and checked
//! per flavor, hidden indices in listings, and the settings API.
// Test helpers outside #[test] functions panic on failure too, like the tests themselves.

use crate::common::{Sim, config, start, start_flavor};
use opsbot_search_sim::{Distribution, Flavor, SimConfig};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

async fn cat_uuid(sim: &Sim, name: &str) -> String {
    let (_, rows) = sim
        .get(&format!("/_cat/indices/{name}?format=json&h=uuid"))
        .await;
    rows[0]["uuid"].as_str().unwrap().to_owned()
}

async fn create(sim: &Sim, name: &str, body: Value) -> (StatusCode, Value) {
    sim.json(Method::PUT, &format!("/{name}"), Some(&body.to_string()))
        .await
}

fn listed(rows: &Value) -> Vec<String> {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|row| row["index"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn an_index_created_again_under_its_name_gets_a_new_uuid() {
    let sim = start_flavor(Flavor::Es7).await;
    assert_eq!(
        sim.json(Method::PUT, "/audit", None).await.0,
        StatusCode::OK
    );
    let first = cat_uuid(&sim, "audit").await;
    assert_eq!(first.len(), 22);
    let (_, settings) = sim
        .get("/audit/_settings/index.uuid?flat_settings=true")
        .await;
    assert_eq!(settings["audit"]["settings"]["index.uuid"], first.as_str());
    let (_, exists) = sim.json(Method::PUT, "/audit", None).await;
    assert_eq!(exists["error"]["index_uuid"], first.as_str());
    assert_eq!(
        exists["error"]["reason"],
        format!("index [audit/{first}] already exists")
    );

    assert_eq!(
        sim.json(Method::DELETE, "/audit", None).await.0,
        StatusCode::OK
    );
    assert_eq!(
        sim.json(Method::PUT, "/audit", None).await.0,
        StatusCode::OK
    );
    let second = cat_uuid(&sim, "audit").await;
    assert_ne!(first, second);
    let state = sim.handle.state();
    let uuids: Vec<&str> = state
        .indices
        .iter()
        .map(|index| index.uuid.as_str())
        .collect();
    let mut distinct = uuids.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), uuids.len(), "every index has its own uuid");
}

#[tokio::test]
async fn hidden_indices_are_skipped_by_wildcards_unless_asked_for() {
    for flavor in [Flavor::Es7, Flavor::Es8, Flavor::Os2] {
        let sim = start_flavor(flavor).await;
        let (status, body) = create(
            &sim,
            "hidden-audit",
            json!({"settings": {"index.hidden": true}}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{flavor}: {body}");
        let (status, body) = create(
            &sim,
            "visible-audit",
            json!({"settings": {"index": {"hidden": false}}}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{flavor}: {body}");

        let (_, rows) = sim.get("/_cat/indices?format=json&h=index").await;
        assert!(
            !listed(&rows).contains(&"hidden-audit".to_owned()),
            "{flavor}"
        );
        assert!(
            listed(&rows).contains(&"visible-audit".to_owned()),
            "{flavor}"
        );
        let (_, rows) = sim.get("/_cat/indices/*-audit?format=json&h=index").await;
        assert_eq!(listed(&rows), ["visible-audit"], "{flavor}");
        let (_, rows) = sim
            .get("/_cat/indices?format=json&h=index&expand_wildcards=all")
            .await;
        assert!(
            listed(&rows).contains(&"hidden-audit".to_owned()),
            "{flavor}"
        );
        let (_, rows) = sim
            .get("/_cat/indices/hidden-audit?format=json&h=index")
            .await;
        assert_eq!(
            listed(&rows),
            ["hidden-audit"],
            "{flavor}: named, it is found"
        );

        let (_, settings) = sim.get("/_settings/index.hidden?flat_settings=true").await;
        assert!(settings.get("hidden-audit").is_none(), "{flavor}");
        assert_eq!(
            settings["visible-audit"]["settings"]["index.hidden"],
            "false"
        );
        let (_, settings) = sim
            .get("/_settings/index.hidden?flat_settings=true&expand_wildcards=open,hidden")
            .await;
        assert_eq!(
            settings["hidden-audit"]["settings"]["index.hidden"], "true",
            "{flavor}"
        );
        let (status, _) = sim.json(Method::DELETE, "/*-audit", None).await;
        if flavor != Flavor::Es8 {
            assert_eq!(status, StatusCode::OK);
            let names: Vec<String> = sim
                .handle
                .state()
                .indices
                .into_iter()
                .map(|i| i.name)
                .collect();
            assert!(
                names.contains(&"hidden-audit".to_owned()),
                "{flavor}: a wildcard delete spares it"
            );
            assert!(!names.contains(&"visible-audit".to_owned()), "{flavor}");
        }
    }
}

#[tokio::test]
async fn es6_knows_no_hidden_indices_and_its_cat_indices_takes_no_indices_options() {
    let sim = start_flavor(Flavor::Es6).await;
    let (status, body) = create(
        &sim,
        "hidden-audit",
        json!({"settings": {"index.hidden": true}}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["type"], "illegal_argument_exception");
    assert_eq!(
        body["error"]["reason"],
        "unknown setting [index.hidden] please check that any required plugins are installed, or check the breaking changes documentation for removed settings"
    );
    for query in ["expand_wildcards=all", "ignore_unavailable=true"] {
        let (status, body) = sim.get(&format!("/_cat/indices?{query}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}");
        assert!(
            body["error"]["reason"]
                .as_str()
                .unwrap()
                .contains("unrecognized parameter")
        );
    }
    let (status, _) = sim.get("/_settings?expand_wildcards=hidden").await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "no hidden state before 7.7"
    );

    let es7 = start_flavor(Flavor::Es7).await;
    let (status, rows) = es7
        .get("/_cat/indices/flog-2026.03.01,nope?format=json&h=index&ignore_unavailable=true")
        .await;
    assert_eq!(
        (status, listed(&rows)),
        (StatusCode::OK, vec!["flog-2026.03.01".to_owned()])
    );
    let (status, _) = es7.get("/_cat/indices/flog-2026.03.01,nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_settings_api_answers_nested_flat_filtered_and_with_defaults() {
    let sim = start_flavor(Flavor::Es7).await;
    let name = "flog-2026.03.01";
    let (status, nested) = sim.get(&format!("/{name}/_settings")).await;
    assert_eq!(status, StatusCode::OK);
    let index = &nested[name]["settings"]["index"];
    assert_eq!(index["number_of_shards"], "1");
    assert_eq!(index["provided_name"], name);
    assert_eq!(index["version"]["created"], "7100299");
    let created: i64 = index["creation_date"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        created / 86_400_000,
        1_772_323_200_000 / 86_400_000,
        "created on its day"
    );

    let (_, flat) = sim
        .get(&format!(
            "/{name}/_settings/index.uuid,index.creation*?flat_settings=true"
        ))
        .await;
    let keys: Vec<&String> = flat[name]["settings"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["index.creation_date", "index.uuid"]);

    let (_, human) = sim
        .get(&format!(
            "/{name}/_setting/index.creation_date*?flat_settings&human"
        ))
        .await;
    assert!(
        human[name]["settings"]["index.creation_date_string"]
            .as_str()
            .unwrap()
            .starts_with("2026-03-01T")
    );

    // Every index's settings in one request; an index without a matching setting is left out.
    let (_, all) = sim
        .get("/_settings/index.uuid,index.lifecycle.name?flat_settings=true&expand_wildcards=all")
        .await;
    assert_eq!(all.as_object().unwrap().len(), 11);
    let (_, none) = sim.get("/_settings/index.lifecycle.name").await;
    assert_eq!(none, json!({}));
    let (_, defaults) = sim
        .get(&format!(
            "/{name}/_settings/index.hidden?include_defaults=true&flat_settings=true"
        ))
        .await;
    assert_eq!(
        defaults[name],
        json!({"settings": {}, "defaults": {"index.hidden": "false"}})
    );

    // Missing names: 404 unless ignore_unavailable; nothing at all is an empty object.
    let (status, body) = sim.get("/flog-1999.01.01,flog-2026.03.01/_settings").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["index"], "flog-1999.01.01");
    let (status, body) = sim
        .get("/flog-1999.01.01,flog-2026.03.01/_settings/index.uuid?ignore_unavailable=true&allow_no_indices=true&expand_wildcards=all&flat_settings=true")
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["flog-2026.03.01"]
    );
    let (status, body) = sim
        .get("/gone-1,gone-2/_settings?ignore_unavailable=true")
        .await;
    assert_eq!((status, body), (StatusCode::OK, json!({})));
    let (status, body) = sim.get("/nothing-*/_settings?allow_no_indices=false").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["type"], "index_not_found_exception");
    let (status, body) = sim.get("/_settings?filter_path=*.settings").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn the_get_index_api_shows_settings_and_no_modelled_mappings() {
    let sim = start_flavor(Flavor::Os2).await;
    let (status, body) = sim.get("/flog-2026.03.0*?flat_settings=true").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body.as_object().unwrap().len(), 9);
    let index = &body["flog-2026.03.01"];
    assert_eq!(
        (&index["aliases"], &index["mappings"]),
        (&json!({}), &json!({}))
    );
    assert_eq!(index["settings"]["index.replication.type"], "DOCUMENT");
    let response = sim.send(Method::HEAD, "/flog-2026.03.01", None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let response = sim.send(Method::HEAD, "/flog-1999.01.01", None).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn create_bodies_are_checked_like_the_server_checks_them() {
    let sim = start_flavor(Flavor::Es7).await;
    let (status, body) = create(&sim, "x", json!({"settings": {"index.bogus": 1}})).await;
    assert_eq!(
        (status, body["error"]["type"].as_str()),
        (StatusCode::BAD_REQUEST, Some("illegal_argument_exception"))
    );
    let (status, body) = create(&sim, "x", json!({"index.hidden": true})).await;
    assert_eq!(
        (
            status,
            body["error"]["type"].as_str(),
            body["error"]["reason"].as_str()
        ),
        (
            StatusCode::BAD_REQUEST,
            Some("parse_exception"),
            Some("unknown key [index.hidden] for create index")
        )
    );
    let (status, body) = create(&sim, "x", json!({"settings": {"index.version.created": 1}})).await;
    assert_eq!(
        (status, body["error"]["type"].as_str()),
        (StatusCode::BAD_REQUEST, Some("validation_exception"))
    );
    let (status, body) = create(&sim, "x", json!({"settings": {"hidden": "yes"}})).await;
    assert_eq!(
        (status, body["error"]["reason"].as_str()),
        (
            StatusCode::BAD_REQUEST,
            Some("Failed to parse value [yes] as only [true] or [false] are allowed.")
        )
    );
    // A backdated index: `index.creation_date` is kept, `index.uuid` is the server's own.
    let (status, _) = create(
        &sim,
        "backdated",
        json!({"settings": {"index.creation_date": 1_500_000_000_000_i64, "index.uuid": "mine", "number_of_shards": 1}, "mappings": {}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, settings) = sim.get("/backdated/_settings?flat_settings=true").await;
    let settings = &settings["backdated"]["settings"];
    assert_eq!(settings["index.creation_date"], "1500000000000");
    assert_ne!(settings["index.uuid"], "mine");
    let state = sim.handle.state();
    let index = state
        .indices
        .iter()
        .find(|index| index.name == "backdated")
        .unwrap();
    assert_eq!(index.settings["index.creation_date"], "1500000000000");
}

#[tokio::test]
async fn ilm_settings_exist_where_x_pack_runs() {
    let body = json!({"settings": {"index.lifecycle.name": "logs-retention"}});
    for (flavor, distribution, accepted) in [
        (Flavor::Es6, Distribution::Oss, false),
        (Flavor::Es6, Distribution::Default, true),
        (Flavor::Es7, Distribution::Oss, false),
        (Flavor::Es7, Distribution::Default, true),
        (Flavor::Es8, Distribution::Oss, true),
        (Flavor::Os2, Distribution::Default, false),
    ] {
        let sim = start(SimConfig {
            distribution,
            ..config(flavor)
        })
        .await;
        let (status, answer) = create(&sim, "managed", body.clone()).await;
        let expected = if accepted {
            StatusCode::OK
        } else {
            StatusCode::BAD_REQUEST
        };
        assert_eq!(status, expected, "{flavor} {distribution:?}: {answer}");
        let (_, banner) = sim.get("/").await;
        if accepted {
            let (_, settings) = sim.get("/managed/_settings/index.lifecycle.name").await;
            assert_eq!(
                settings["managed"]["settings"]["index"]["lifecycle"]["name"],
                "logs-retention"
            );
            assert_eq!(banner["version"]["build_flavor"], "default");
        } else {
            assert!(
                answer["error"]["reason"]
                    .as_str()
                    .unwrap()
                    .starts_with("unknown setting [index.lifecycle.name]")
            );
        }
    }
}
