use crate::common::{Cloud, body, header, keys, start};
use opsbot_cloud_sim::{CloudSimConfig, Microversion};
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

/// A cloud with compute-01 holding two consumers, one of which also sits on compute-02.
async fn seeded() -> (Cloud, Uuid, Uuid, Uuid, Uuid) {
    let cloud = start(CloudSimConfig::default()).await;
    let (rp1, rp2) = (
        cloud.sim.add_provider("compute-01"),
        cloud.sim.add_provider("compute-02"),
    );
    let (vm1, vm2) = (Uuid::new_v4(), Uuid::new_v4());
    let small = [("VCPU", 2), ("MEMORY_MB", 4096), ("DISK_GB", 20)];
    cloud.sim.add_allocation(rp1, vm1, &small);
    cloud.sim.add_allocation(rp1, vm2, &[("VCPU", 4)]);
    cloud.sim.add_allocation(rp2, vm2, &[("DISK_GB", 40)]);
    (cloud, rp1, rp2, vm1, vm2)
}

async fn at(cloud: &Cloud, method: Method, path: &str, version: &str) -> reqwest::Response {
    cloud
        .authed(method, path)
        .await
        .header("OpenStack-API-Version", format!("placement {version}"))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn no_or_forged_token_gets_keystonemiddlewares_401_but_root_is_open() {
    let cloud = start(CloudSimConfig::default()).await;
    for token in [None, Some("demo:demo")] {
        let mut request = cloud.http.get(cloud.url("/placement/resource_providers"));
        if let Some(token) = token {
            request = request.header("X-Auth-Token", token);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 401);
        assert!(response.headers().get("openstack-api-version").is_none());
        // Fixture keystone-auth/01-no-token-401.json, key order included.
        assert_eq!(
            response.text().await.unwrap(),
            r#"{"error":{"code":401,"title":"Unauthorized","message":"The request you have made requires authentication."}}"#
        );
    }
    let root = cloud
        .http
        .get(cloud.url("/placement/"))
        .send()
        .await
        .unwrap();
    assert_eq!(root.status(), 200);
    assert_eq!(
        header(&root, "openstack-api-version"),
        Some("placement 1.0")
    );
    assert_eq!(header(&root, "vary"), Some("openstack-api-version"));
    assert_eq!(
        body(root).await,
        json!({"versions": [{"id": "v1.0", "max_version": "1.39", "min_version": "1.0",
                             "status": "CURRENT", "links": [{"rel": "self", "href": ""}]}]})
    );
}

#[tokio::test]
async fn providers_list_by_microversion_and_name() {
    let (cloud, rp1, _, _, _) = seeded().await;
    let response = at(
        &cloud,
        Method::GET,
        "/placement/resource_providers?name=compute-01",
        "1.17",
    )
    .await;
    assert_eq!(
        header(&response, "openstack-api-version"),
        Some("placement 1.17")
    );
    assert_eq!(header(&response, "cache-control"), Some("no-cache"));
    assert!(
        header(&response, "last-modified")
            .unwrap()
            .ends_with(" GMT")
    );
    let providers = body(response).await["resource_providers"].clone();
    assert_eq!(providers.as_array().unwrap().len(), 1);
    let provider = &providers[0];
    assert_eq!(
        keys(provider),
        [
            "generation",
            "links",
            "name",
            "parent_provider_uuid",
            "root_provider_uuid",
            "uuid"
        ]
    );
    assert_eq!(provider["uuid"], rp1.to_string());
    assert_eq!(provider["generation"], 2);
    assert_eq!(provider["parent_provider_uuid"], Value::Null);
    assert_eq!(provider["root_provider_uuid"], rp1.to_string());
    let rels: Vec<&str> = provider["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["rel"].as_str().unwrap())
        .collect();
    assert_eq!(
        rels,
        [
            "self",
            "inventories",
            "usages",
            "aggregates",
            "traits",
            "allocations"
        ]
    );
    assert_eq!(
        provider["links"][0]["href"],
        format!("/placement/resource_providers/{rp1}")
    );

    // 1.0: no nesting fields, three links, no caching headers (fixture 60).
    let old = cloud.get("/placement/resource_providers").await;
    assert_eq!(header(&old, "openstack-api-version"), Some("placement 1.0"));
    assert!(old.headers().get("last-modified").is_none());
    let old = body(old).await;
    assert_eq!(old["resource_providers"].as_array().unwrap().len(), 2);
    assert_eq!(
        keys(&old["resource_providers"][0]),
        ["generation", "links", "name", "uuid"]
    );
    assert_eq!(
        old["resource_providers"][0]["links"]
            .as_array()
            .unwrap()
            .len(),
        3
    );

    let none = at(
        &cloud,
        Method::GET,
        "/placement/resource_providers?name=nope",
        "1.17",
    )
    .await;
    assert_eq!(body(none).await, json!({"resource_providers": []}));
    let bad = at(
        &cloud,
        Method::GET,
        "/placement/resource_providers?colour=red",
        "1.17",
    )
    .await;
    assert_eq!(bad.status(), 400);
}

#[tokio::test]
async fn only_the_openstack_api_version_header_selects_a_version() {
    let cloud = start(CloudSimConfig::default()).await;
    let token = cloud.token().await;
    let served = |name: &'static str, value: &'static str| {
        let request = cloud
            .http
            .get(cloud.url("/placement/resource_providers"))
            .header("X-Auth-Token", &token)
            .header(name, value);
        async move { request.send().await.unwrap() }
    };
    for (name, value, expected) in [
        ("Cloud-API-Version", "placement 1.17", "placement 1.0"),
        ("X-OpenStack-Placement-API-Version", "1.17", "placement 1.0"),
        ("OpenStack-API-Version", "1.17", "placement 1.0"),
        ("OpenStack-API-Version", "compute 2.1", "placement 1.0"),
        ("openstack-api-version", "placement 1.17", "placement 1.17"),
        (
            "OpenStack-API-Version",
            "placement latest",
            "placement 1.39",
        ),
    ] {
        let response = served(name, value).await;
        assert_eq!(response.status(), 200, "{name}: {value}");
        assert_eq!(
            header(&response, "openstack-api-version"),
            Some(expected),
            "{name}: {value}"
        );
    }
    let bad = served("OpenStack-API-Version", "placement 1.abc").await;
    assert_eq!(bad.status(), 400);
    assert!(bad.headers().get("openstack-api-version").is_none());
    let error = body(bad).await["errors"][0].clone();
    assert_eq!(error["title"], "Bad Request");
    assert_eq!(
        error["detail"],
        "The server could not comply with the request since it is either malformed or otherwise incorrect.\n\n Invalid microversion: invalid version string: 1.abc; invalid literal for int() with base 10: 'abc'  "
    );
    assert!(error["request_id"].as_str().unwrap().starts_with("req-"));
    let high = served("OpenStack-API-Version", "placement 9.99").await;
    assert_eq!(high.status(), 406);
    let error = body(high).await["errors"][0].clone();
    assert_eq!(
        (error["max_version"].as_str(), error["min_version"].as_str()),
        (Some("1.39"), Some("1.0"))
    );
    assert!(
        error["detail"]
            .as_str()
            .unwrap()
            .ends_with("Unacceptable version header: 9.99")
    );

    let versions: Vec<Option<String>> = cloud
        .sim
        .calls()
        .into_iter()
        .map(|call| call.microversion)
        .collect();
    assert_eq!(
        versions[1..3],
        [
            Some("placement 1.0".to_owned()),
            Some("placement 1.0".to_owned())
        ]
    );
    assert_eq!(versions[7..], [None, None]);
}

/// A Wallaby placement (5.0.x) ends at 1.36: `microversion_parse`'s middleware answers a
/// later version with 406 and placement's error body names its range.
#[tokio::test]
async fn an_older_placement_refuses_versions_past_its_maximum() {
    let cloud = start(CloudSimConfig {
        placement_max_version: Microversion::new(1, 36),
        ..CloudSimConfig::default()
    })
    .await;
    let consumer = Uuid::new_v4();
    let rp = cloud.sim.add_provider("compute-01");
    cloud.sim.add_allocation(rp, consumer, &[("VCPU", 1)]);
    let path = format!("/placement/allocations/{consumer}");

    let root = cloud
        .http
        .get(cloud.url("/placement/"))
        .send()
        .await
        .unwrap();
    assert_eq!(body(root).await["versions"][0]["max_version"], "1.36");

    let refused = at(&cloud, Method::GET, &path, "1.38").await;
    assert_eq!(refused.status(), 406);
    assert!(refused.headers().get("openstack-api-version").is_none());
    let error = body(refused).await["errors"][0].clone();
    assert_eq!(error["title"], "Not Acceptable");
    assert_eq!(
        error["detail"],
        "The resource could not be generated that was acceptable to your browser (content of type application/json. \n\n Invalid microversion: Unacceptable version header: 1.38"
    );
    assert_eq!(
        (error["max_version"].as_str(), error["min_version"].as_str()),
        (Some("1.36"), Some("1.0"))
    );
    assert_eq!(at(&cloud, Method::GET, &path, "1.37").await.status(), 406);

    // Up to its maximum it answers as before; `latest` is that maximum.
    let served = at(&cloud, Method::GET, &path, "1.36").await;
    assert_eq!(served.status(), 200);
    assert_eq!(
        header(&served, "openstack-api-version"),
        Some("placement 1.36")
    );
    let allocations = body(served).await;
    assert!(allocations["consumer_generation"].is_u64());
    assert!(allocations.get("consumer_type").is_none());
    let latest = at(&cloud, Method::GET, &path, "latest").await;
    assert_eq!(
        header(&latest, "openstack-api-version"),
        Some("placement 1.36")
    );
    assert_eq!(at(&cloud, Method::GET, &path, "1.17").await.status(), 200);
}

#[tokio::test]
async fn a_placement_maximum_the_simulator_does_not_implement_is_refused() {
    for max in [
        Microversion::new(1, 40),
        Microversion::new(2, 0),
        Microversion::new(0, 9),
    ] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let config = CloudSimConfig {
            placement_max_version: max,
            ..CloudSimConfig::default()
        };
        let refused = opsbot_cloud_sim::spawn(config, listener)
            .await
            .err()
            .unwrap();
        assert_eq!(refused.kind(), std::io::ErrorKind::InvalidInput, "{max:?}");
        assert!(refused.to_string().contains("1.0–1.39"), "{refused}");
    }
}

#[tokio::test]
async fn provider_allocations_and_unknown_provider() {
    let (cloud, rp1, _, vm1, vm2) = seeded().await;
    let response = at(
        &cloud,
        Method::GET,
        &format!("/placement/resource_providers/{rp1}/allocations"),
        "1.17",
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        body(response).await,
        json!({
            "allocations": {
                vm1.to_string(): {"resources": {"VCPU": 2, "MEMORY_MB": 4096, "DISK_GB": 20}},
                vm2.to_string(): {"resources": {"VCPU": 4}},
            },
            "resource_provider_generation": 2,
        })
    );
    let unknown = "99999999-9999-4999-8999-999999999999";
    let missing = at(
        &cloud,
        Method::GET,
        &format!("/placement/resource_providers/{unknown}/allocations"),
        "1.17",
    )
    .await;
    assert_eq!(missing.status(), 404);
    assert_eq!(
        header(&missing, "openstack-api-version"),
        Some("placement 1.17")
    );
    let error = body(missing).await["errors"][0].clone();
    assert_eq!(keys(&error), ["detail", "request_id", "status", "title"]);
    assert_eq!(
        error["detail"],
        format!(
            "The resource could not be found.\n\n Resource provider '{unknown}' not found: No resource provider with uuid {unknown} found  "
        )
    );
}

#[tokio::test]
async fn deleting_a_consumer_clears_every_provider_then_404s() {
    let (cloud, rp1, rp2, vm1, vm2) = seeded().await;
    let path = format!("/placement/allocations/{vm2}");
    let response = at(&cloud, Method::GET, &path, "1.28").await;
    let view = body(response).await;
    assert_eq!(
        keys(&view),
        [
            "allocations",
            "consumer_generation",
            "project_id",
            "user_id"
        ]
    );
    assert_eq!(view["allocations"][rp1.to_string()]["generation"], 2);
    assert_eq!(
        view["allocations"][rp2.to_string()]["resources"],
        json!({"DISK_GB": 40})
    );
    assert_eq!(view["consumer_generation"], 2);
    assert_eq!(
        keys(&body(at(&cloud, Method::GET, &path, "1.11").await).await),
        ["allocations"]
    );

    let deleted = at(&cloud, Method::DELETE, &path, "1.17").await;
    assert_eq!(deleted.status(), 204);
    assert_eq!(
        header(&deleted, "openstack-api-version"),
        Some("placement 1.17")
    );
    assert!(deleted.bytes().await.unwrap().is_empty());
    assert_eq!(
        cloud.sim.allocations(rp1).into_keys().collect::<Vec<_>>(),
        [vm1]
    );
    assert!(cloud.sim.allocations(rp2).is_empty());
    // Deleting allocations leaves the provider generation alone (fixture 53).
    let provider = body(
        at(
            &cloud,
            Method::GET,
            &format!("/placement/resource_providers/{rp1}"),
            "1.17",
        )
        .await,
    )
    .await;
    assert_eq!(provider["generation"], 2);

    let again = at(&cloud, Method::DELETE, &path, "1.17").await;
    assert_eq!(again.status(), 404);
    let error = body(again).await["errors"][0].clone();
    assert_eq!(
        error["detail"],
        format!("The resource could not be found.\n\n No allocations for consumer '{vm2}'  ")
    );
    assert!(error.get("code").is_none());
    let coded = at(&cloud, Method::DELETE, &path, "1.23").await;
    assert_eq!(
        body(coded).await["errors"][0]["code"],
        "placement.undefined_code"
    );
    // An unknown consumer's allocations are empty, not missing (fixture 47).
    assert_eq!(
        body(at(&cloud, Method::GET, &path, "1.17").await).await,
        json!({"allocations": {}})
    );
}
