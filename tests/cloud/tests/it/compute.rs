use crate::common::{Cloud, body, header, keys, start};
use opsbot_cloud_sim::{CloudSimConfig, ComputeServiceSeed, ServiceState, ServiceStatus};
use reqwest::Method;
use serde_json::json;
use time::macros::datetime;
use uuid::Uuid;

async fn at(cloud: &Cloud, method: Method, path: &str, version: &str) -> reqwest::Response {
    cloud
        .authed(method, path)
        .await
        .header("OpenStack-API-Version", format!("compute {version}"))
        .send()
        .await
        .unwrap()
}

fn seed(binary: &str, host: &str) -> ComputeServiceSeed {
    ComputeServiceSeed {
        binary: binary.into(),
        status: ServiceStatus::Disabled,
        state: ServiceState::Down,
        disabled_reason: Some("retired".into()),
        ..ComputeServiceSeed::nova_compute(host, datetime!(2026-10-01 12:00:00 UTC))
    }
}

#[tokio::test]
async fn server_show_and_its_404s() {
    let cloud = start(CloudSimConfig::default()).await;
    let id = Uuid::new_v4();
    cloud.sim.add_server(id, "web-01", "ACTIVE");
    let response = cloud.get(&format!("/compute/v2.1/servers/{id}")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        header(&response, "openstack-api-version"),
        Some("compute 2.1")
    );
    assert_eq!(
        header(&response, "x-openstack-nova-api-version"),
        Some("2.1")
    );
    let server = body(response).await["server"].clone();
    assert_eq!(server["id"], id.to_string());
    assert_eq!(server["name"], "web-01");
    assert_eq!(server["status"], "ACTIVE");
    assert_eq!(server["OS-EXT-STS:vm_state"], "active");
    assert_eq!(server["OS-EXT-SRV-ATTR:host"], serde_json::Value::Null);
    for key in ["tenant_id", "user_id"] {
        assert_eq!(server[key].as_str().unwrap().len(), 32, "{key}");
    }
    assert!(server.get("locked").is_none());
    let later = body(
        at(
            &cloud,
            Method::GET,
            &format!("/compute/v2.1/servers/{id}"),
            "2.96",
        )
        .await,
    )
    .await;
    assert_eq!(later["server"]["locked"], false);

    assert!(cloud.sim.delete_server(id));
    for raw in [id.to_string(), "not-a-uuid".to_owned()] {
        let missing = cloud.get(&format!("/compute/v2.1/servers/{raw}")).await;
        assert_eq!(missing.status(), 404);
        assert_eq!(
            missing.text().await.unwrap(),
            format!(
                r#"{{"itemNotFound":{{"code":404,"message":"Instance {raw} could not be found."}}}}"#
            )
        );
    }
}

#[tokio::test]
async fn service_ids_are_integers_before_2_53_and_uuids_from_it() {
    let cloud = start(CloudSimConfig::default()).await;
    let uuid = cloud
        .sim
        .add_service(seed("nova-compute", "compute-old-01"));
    cloud.sim.add_service(ComputeServiceSeed {
        zone: "internal".into(),
        status: ServiceStatus::Enabled,
        state: ServiceState::Up,
        disabled_reason: None,
        ..seed("nova-scheduler", "controller-01")
    });
    let old = body(at(&cloud, Method::GET, "/compute/v2.1/os-services", "2.52").await).await;
    let first = &old["services"][0];
    assert_eq!(
        keys(first),
        [
            "binary",
            "disabled_reason",
            "forced_down",
            "host",
            "id",
            "state",
            "status",
            "updated_at",
            "zone"
        ]
    );
    assert_eq!(first["id"], 1);
    assert_eq!(
        *first,
        json!({"id": 1, "binary": "nova-compute", "disabled_reason": "retired",
               "host": "compute-old-01", "state": "down", "status": "disabled",
               "updated_at": "2026-10-01T12:00:00.000000", "forced_down": false, "zone": "nova"})
    );
    let new = body(
        at(
            &cloud,
            Method::GET,
            "/compute/v2.1/os-services?binary=nova-compute",
            "2.53",
        )
        .await,
    )
    .await;
    assert_eq!(new["services"].as_array().unwrap().len(), 1);
    assert_eq!(new["services"][0]["id"], uuid.to_string());
    let by_host = body(
        at(
            &cloud,
            Method::GET,
            "/compute/v2.1/os-services?host=controller-01",
            "2.53",
        )
        .await,
    )
    .await;
    assert_eq!(by_host["services"][0]["binary"], "nova-scheduler");
    // Before 2.11 there is no forced_down.
    let oldest = body(cloud.get("/compute/v2.1/os-services").await).await;
    assert!(oldest["services"][0].get("forced_down").is_none());
}

#[tokio::test]
async fn deleting_services_by_the_id_the_microversion_uses() {
    let cloud = start(CloudSimConfig::default()).await;
    let uuid = cloud
        .sim
        .add_service(seed("nova-compute", "compute-old-01"));
    cloud
        .sim
        .add_service(seed("nova-compute", "compute-old-02"));

    let not_uuid = at(
        &cloud,
        Method::DELETE,
        "/compute/v2.1/os-services/2",
        "2.53",
    )
    .await;
    assert_eq!(not_uuid.status(), 400);
    assert_eq!(
        body(not_uuid).await,
        json!({"badRequest": {"code": 400, "message": "Invalid uuid 2"}})
    );
    let not_int = at(
        &cloud,
        Method::DELETE,
        &format!("/compute/v2.1/os-services/{uuid}"),
        "2.52",
    )
    .await;
    assert_eq!(not_int.status(), 400);

    let deleted = at(
        &cloud,
        Method::DELETE,
        &format!("/compute/v2.1/os-services/{uuid}"),
        "2.53",
    )
    .await;
    assert_eq!(deleted.status(), 204);
    assert_eq!(
        header(&deleted, "openstack-api-version"),
        Some("compute 2.53")
    );
    assert_eq!(cloud.sim.services().len(), 1);
    let again = at(
        &cloud,
        Method::DELETE,
        &format!("/compute/v2.1/os-services/{uuid}"),
        "2.53",
    )
    .await;
    assert_eq!(again.status(), 404);
    assert_eq!(
        body(again).await,
        json!({"itemNotFound": {"code": 404, "message": format!("Service {uuid} not found.")}})
    );
    // The legacy header selects the integer form.
    let legacy = cloud
        .authed(Method::DELETE, "/compute/v2.1/os-services/2")
        .await
        .header("X-OpenStack-Nova-API-Version", "2.11")
        .send()
        .await
        .unwrap();
    assert_eq!(legacy.status(), 204);
    assert!(cloud.sim.services().is_empty());
}

#[tokio::test]
async fn nova_version_errors_and_missing_token() {
    let cloud = start(CloudSimConfig::default()).await;
    let bad = at(&cloud, Method::GET, "/compute/v2.1/os-services", "2.abc").await;
    assert_eq!(bad.status(), 400);
    assert_eq!(
        body(bad).await["badRequest"]["message"],
        "API Version String 2.abc is of invalid format. Must be of format MajorNum.MinorNum."
    );
    let high = at(&cloud, Method::GET, "/compute/v2.1/os-services", "2.97").await;
    assert_eq!(high.status(), 406);
    assert_eq!(
        body(high).await["computeFault"]["message"],
        "Version 2.97 is not supported by the API. Minimum is 2.1 and maximum is 2.96."
    );
    let anonymous = cloud
        .http
        .get(cloud.url("/compute/v2.1/os-services"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    assert_eq!(body(anonymous).await["error"]["code"], 401);
    let version = cloud
        .http
        .get(cloud.url("/compute/v2.1/"))
        .send()
        .await
        .unwrap();
    assert_eq!(body(version).await["version"]["version"], "2.96");
}
