use std::time::Duration;

use crate::common::{body, start};
use opsbot_cloud_sim::{CloudSimConfig, FaultKind, FaultRule};
use reqwest::Method;
use serde_json::json;

const SERVICE_PATHS: [&str; 3] = [
    "/placement/resource_providers",
    "/compute/v2.1/os-services",
    "/image/v2/images",
];

#[tokio::test]
async fn expired_tokens_are_refused_everywhere() {
    let cloud = start(CloudSimConfig {
        token_lifetime: Duration::ZERO,
        ..CloudSimConfig::default()
    })
    .await;
    let token = cloud.token().await;
    for path in SERVICE_PATHS
        .into_iter()
        .chain(["/identity/v3/auth/catalog"])
    {
        let response = cloud
            .http
            .get(cloud.url(path))
            .header("X-Auth-Token", &token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "{path}");
    }
}

#[tokio::test]
async fn revoked_tokens_are_refused_by_handle_and_admin_api() {
    let cloud = start(CloudSimConfig::default()).await;
    let send = |token: String| {
        let request = cloud
            .http
            .get(cloud.url(SERVICE_PATHS[0]))
            .header("X-Auth-Token", token);
        async move { request.send().await.unwrap().status() }
    };
    let token = cloud.token().await;
    assert_eq!(send(token.clone()).await, 200);
    cloud.sim.revoke_tokens();
    assert_eq!(send(token).await, 401);

    let token = cloud.token().await;
    assert_eq!(send(token.clone()).await, 200);
    let revoke = cloud
        .http
        .post(cloud.url("/_sim/revoke-tokens"))
        .send()
        .await
        .unwrap();
    assert_eq!(revoke.status(), 204);
    for path in SERVICE_PATHS {
        let response = cloud
            .http
            .get(cloud.url(path))
            .header("X-Auth-Token", &token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "{path}");
    }
    // A new token works again.
    assert_eq!(send(cloud.token().await).await, 200);
}

#[tokio::test]
async fn status_malformed_and_drop_faults_on_placement_and_compute() {
    let cloud = start(CloudSimConfig::default()).await;
    let token = cloud.token().await;
    let get = |path: &'static str| {
        let request = cloud
            .http
            .get(cloud.url(path))
            .header("X-Auth-Token", &token);
        async move { request.send().await }
    };
    cloud.sim.set_faults(vec![FaultRule {
        count: Some(1),
        path_prefix: Some("/placement/".into()),
        ..FaultRule::new(FaultKind::Status { status: 503 })
    }]);
    let unavailable = get("/placement/resource_providers").await.unwrap();
    assert_eq!(unavailable.status(), 503);
    let error = body(unavailable).await["errors"][0].clone();
    assert_eq!(error["title"], "Service Unavailable");
    assert_eq!(
        get("/placement/resource_providers").await.unwrap().status(),
        200
    );

    cloud.sim.set_faults(vec![FaultRule {
        method: Some("GET".into()),
        path_prefix: Some("/compute/".into()),
        ..FaultRule::new(FaultKind::MalformedJson)
    }]);
    let cut = get("/compute/v2.1/os-services").await.unwrap();
    assert_eq!(cut.status(), 200);
    assert!(cut.json::<serde_json::Value>().await.is_err());
    let compute_503 = FaultRule {
        path_prefix: Some("/compute/".into()),
        ..FaultRule::new(FaultKind::Status { status: 503 })
    };
    cloud.sim.set_faults(vec![compute_503]);
    assert_eq!(
        body(get("/compute/v2.1/os-services").await.unwrap()).await["serviceUnavailable"]["code"],
        503
    );

    cloud.sim.set_faults(vec![FaultRule {
        count: Some(1),
        path_prefix: Some("/placement/allocations".into()),
        ..FaultRule::new(FaultKind::Drop)
    }]);
    let consumer = uuid::Uuid::new_v4();
    let dropped = cloud
        .http
        .delete(cloud.url(&format!("/placement/allocations/{consumer}")))
        .header("X-Auth-Token", &token)
        .send()
        .await;
    let failed = match dropped {
        Err(_) => true,
        Ok(response) => response.bytes().await.is_err(),
    };
    assert!(failed, "a dropped connection must fail the request");
    let last = cloud.sim.calls().pop().unwrap();
    assert_eq!((last.method.as_str(), last.status), ("DELETE", 0));
    assert_eq!(cloud.sim.faults()[0].count, Some(0));
}

#[tokio::test]
async fn faults_set_through_the_admin_api_and_admin_is_never_faulted() {
    let cloud = start(CloudSimConfig::default()).await;
    let put = cloud
        .http
        .put(cloud.url("/_sim/faults"))
        .json(&json!([{"kind": "status", "status": 502}]))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200);
    let identity = cloud
        .http
        .get(cloud.sim.identity_url())
        .send()
        .await
        .unwrap();
    assert_eq!(identity.status(), 502);
    assert_eq!(body(identity).await["error"]["title"], "Bad Gateway");
    let state = cloud
        .http
        .get(cloud.url("/_sim/state"))
        .send()
        .await
        .unwrap();
    assert_eq!(state.status(), 200);
    assert!(body(state).await["providers"].is_array());
    let bad = cloud
        .http
        .put(cloud.url("/_sim/faults"))
        .body("[{")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let cleared = cloud
        .http
        .delete(cloud.url("/_sim/faults"))
        .send()
        .await
        .unwrap();
    assert_eq!(cleared.status(), 204);
    assert!(cloud.sim.faults().is_empty());
}

#[tokio::test]
async fn the_call_log_never_holds_a_password_or_token() {
    let cloud = start(CloudSimConfig::default()).await;
    let token = cloud.token().await;
    let image = cloud.sim.add_image("cirros", &[]);
    cloud
        .authed(Method::PATCH, &format!("/image/v2/images/{image}"))
        .await
        .header(
            "Content-Type",
            "application/openstack-images-v2.1-json-patch",
        )
        .body(r#"[{"op": "add", "path": "/hw_disk_bus", "value": "scsi"}]"#)
        .send()
        .await
        .unwrap();
    cloud
        .http
        .get(cloud.url("/placement/"))
        .header("X-Auth-Token", &token)
        .send()
        .await
        .unwrap();
    let calls = cloud.sim.calls();
    let logged = serde_json::to_string(&calls).unwrap();
    assert!(!logged.contains("adminpass"), "{logged}");
    assert!(!logged.contains(&token), "{logged}");
    assert!(!logged.contains("gAAAA"), "{logged}");
    let auth = &calls[0];
    assert_eq!(
        (auth.path.as_str(), auth.status, auth.body.as_ref()),
        ("/identity/v3/auth/tokens", 201, None)
    );
    assert!(
        calls
            .iter()
            .any(|call| call.method == "PATCH" && call.token_present && call.body.is_some())
    );
    let admin_view = cloud
        .http
        .get(cloud.url("/_sim/calls"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&admin_view).unwrap(),
        serde_json::to_value(&calls).unwrap()
    );
    cloud.sim.clear_calls();
    assert!(cloud.sim.calls().is_empty());
}

#[tokio::test]
async fn the_demo_cloud_has_stale_allocations_on_compute_02() {
    let cloud = start(CloudSimConfig::demo()).await;
    let providers = body(
        cloud
            .get("/placement/resource_providers?name=compute-02")
            .await,
    )
    .await;
    let uuid: uuid::Uuid = providers["resource_providers"][0]["uuid"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let consumers: Vec<uuid::Uuid> = cloud.sim.allocations(uuid).into_keys().collect();
    assert_eq!(consumers.len(), 4);
    // One of the consumers nova does not know as a server is a resize in progress.
    let migrations = cloud.sim.migrations();
    assert!(migrations[0].in_progress() && consumers.contains(&migrations[0].uuid));
    let mut statuses = Vec::new();
    for consumer in consumers.into_iter().filter(|c| *c != migrations[0].uuid) {
        statuses.push(
            cloud
                .get(&format!("/compute/v2.1/servers/{consumer}"))
                .await
                .status()
                .as_u16(),
        );
    }
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 404, 404]);
    let services = cloud.sim.services();
    let old = services
        .iter()
        .find(|service| service.host == "compute-old-01")
        .unwrap();
    assert_eq!(
        (old.binary.as_str(), old.status, old.state),
        (
            "nova-compute",
            opsbot_cloud_sim::ServiceStatus::Disabled,
            opsbot_cloud_sim::ServiceState::Down
        )
    );
    assert_eq!(services.len(), 6);
    let images = body(cloud.get("/image/v2/images").await).await;
    let names: Vec<&str> = images["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ubuntu-22.04", "cirros"]);
    assert!(images["images"][0].get("hw_disk_bus").is_none());
}

#[tokio::test]
async fn foreign_tokens_pass_only_when_accepted() {
    for (accept, expected) in [(false, 401), (true, 200)] {
        let cloud = start(CloudSimConfig {
            accept_foreign_tokens: accept,
            ..CloudSimConfig::default()
        })
        .await;
        let foreign = cloud
            .http
            .get(cloud.url("/compute/v2.1/os-services"))
            .header("X-Auth-Token", "gAAAAABfrom-a-real-keystone")
            .send()
            .await
            .unwrap();
        assert_eq!(
            foreign.status(),
            expected,
            "accept_foreign_tokens: {accept}"
        );
        let anonymous = cloud
            .http
            .get(cloud.url("/compute/v2.1/os-services"))
            .send()
            .await
            .unwrap();
        assert_eq!(anonymous.status(), 401);
    }
}
