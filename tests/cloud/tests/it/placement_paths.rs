use crate::common::{Cloud, body, header, start};
use opsbot_cloud_sim::CloudSimConfig;
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

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
async fn unknown_paths_methods_and_provider_creation() {
    let cloud = start(CloudSimConfig::default()).await;
    let nope = at(&cloud, Method::GET, "/placement/nope", "1.17").await;
    assert_eq!(nope.status(), 404);
    assert_eq!(
        body(nope).await["errors"][0]["detail"],
        "The resource could not be found.\n\n   "
    );
    let patch = at(
        &cloud,
        Method::PATCH,
        "/placement/resource_providers",
        "1.17",
    )
    .await;
    assert_eq!(patch.status(), 405);
    assert_eq!(header(&patch, "allow"), Some("GET, POST"));

    let create = |version: &'static str, body: Value| {
        let cloud = &cloud;
        async move {
            cloud
                .authed(Method::POST, "/placement/resource_providers")
                .await
                .header("OpenStack-API-Version", format!("placement {version}"))
                .json(&body)
                .send()
                .await
                .unwrap()
        }
    };
    let created = create("1.17", json!({"name": "compute-09"})).await;
    assert_eq!(created.status(), 201);
    let location = header(&created, "location").unwrap().to_owned();
    assert!(location.starts_with(&cloud.url("/placement/resource_providers/")));
    assert_eq!(
        create("1.17", json!({"name": "compute-09"})).await.status(),
        409
    );
    assert_eq!(create("1.17", json!({"nam": "x"})).await.status(), 400);
    let uuid = Uuid::new_v4();
    let with_body = create("1.20", json!({"name": "compute-10", "uuid": uuid})).await;
    assert_eq!(with_body.status(), 200);
    assert_eq!(body(with_body).await["uuid"], uuid.to_string());
}

#[tokio::test]
#[should_panic(expected = "add it with add_provider first")]
async fn seeding_an_allocation_on_an_unknown_provider_is_a_setup_mistake() {
    let cloud = start(CloudSimConfig::default()).await;
    cloud
        .sim
        .add_allocation(Uuid::new_v4(), Uuid::new_v4(), &[("VCPU", 1)]);
}
