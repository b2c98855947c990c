use crate::common::{Cloud, body, header, keys, password_body, start};
use opsbot_cloud_sim::{CloudSimConfig, Interface, UserConfig};
use serde_json::{Value, json};

async fn issue(cloud: &Cloud, request: &Value) -> reqwest::Response {
    cloud
        .http
        .post(format!("{}/auth/tokens", cloud.sim.identity_url()))
        .json(request)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn version_document_has_keystones_shape() {
    let cloud = start(CloudSimConfig::default()).await;
    let response = cloud
        .http
        .get(cloud.sim.identity_url())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(header(&response, "vary"), Some("X-Auth-Token"));
    let identity_url = cloud.sim.identity_url();
    assert_eq!(
        body(response).await,
        json!({"version": {
            "id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
            "links": [{"rel": "self", "href": format!("{identity_url}/")}],
            "media-types": [{"base": "application/json",
                             "type": "application/vnd.openstack.identity-v3+json"}],
        }})
    );
}

#[tokio::test]
async fn password_token_has_the_recorded_shape_and_catalog() {
    let cloud = start(CloudSimConfig::default()).await;
    let response = issue(&cloud, &password_body("admin", "adminpass", "admin")).await;
    assert_eq!(response.status(), 201);
    let subject = header(&response, "x-subject-token").unwrap().to_owned();
    assert!(subject.len() > 40);
    let token = body(response).await["token"].clone();
    assert_eq!(
        keys(&token),
        [
            "audit_ids",
            "catalog",
            "expires_at",
            "is_domain",
            "issued_at",
            "methods",
            "project",
            "roles",
            "user"
        ]
    );
    assert_eq!(token["methods"], json!(["password"]));
    assert_eq!(
        token["user"]["domain"],
        json!({"id": "default", "name": "Default"})
    );
    assert_eq!(token["user"]["name"], "admin");
    assert_eq!(token["user"]["password_expires_at"], Value::Null);
    assert_eq!(token["user"]["id"].as_str().unwrap().len(), 32);
    assert_eq!(token["project"]["name"], "admin");
    assert_eq!(token["project"]["domain"]["id"], "default");
    assert_eq!(token["is_domain"], false);
    assert!(
        token["roles"]
            .as_array()
            .unwrap()
            .iter()
            .any(|role| role["name"] == "admin")
    );
    let expires = token["expires_at"].as_str().unwrap();
    assert!(
        expires.ends_with(".000000Z") && expires.len() == 27,
        "{expires}"
    );
    assert_ne!(token["expires_at"], token["issued_at"]);

    let base = cloud.sim.base_url();
    let services: Vec<(String, String, String)> = token["catalog"]
        .as_array()
        .unwrap()
        .iter()
        .map(|service| {
            let endpoints = service["endpoints"].as_array().unwrap();
            assert_eq!(endpoints.len(), 3, "{service}");
            let endpoint = &endpoints[0];
            assert_eq!(
                keys(endpoint),
                ["id", "interface", "region", "region_id", "url"]
            );
            assert_eq!(endpoint["region_id"], "RegionOne");
            (
                service["name"].as_str().unwrap().to_owned(),
                service["type"].as_str().unwrap().to_owned(),
                endpoint["url"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("keystone", "identity", format!("{base}/identity/v3/")),
        ("placement", "placement", format!("{base}/placement")),
        ("nova", "compute", format!("{base}/compute/v2.1")),
        ("glance", "image", format!("{base}/image")),
    ]
    .map(|(name, kind, url)| (name.to_owned(), kind.to_owned(), url));
    assert_eq!(services, expected);

    // The token works for the catalog call, which lists the same catalog.
    let catalog = cloud
        .http
        .get(format!("{}/auth/catalog", cloud.sim.identity_url()))
        .header("X-Auth-Token", subject)
        .send()
        .await
        .unwrap();
    assert_eq!(catalog.status(), 200);
    assert_eq!(body(catalog).await["catalog"], token["catalog"]);
}

#[tokio::test]
async fn wrong_password_unknown_user_and_foreign_project_get_keystones_401() {
    let cloud = start(CloudSimConfig::default()).await;
    for request in [
        password_body("admin", "wrong", "admin"),
        password_body("nobody", "adminpass", "admin"),
        password_body("admin", "adminpass", "service"),
    ] {
        let response = issue(&cloud, &request).await;
        assert_eq!(response.status(), 401);
        assert!(response.headers().get("x-subject-token").is_none());
        assert_eq!(
            header(&response, "www-authenticate").unwrap(),
            format!("Keystone uri=\"{}\"", cloud.sim.identity_url())
        );
        // Fixture keystone/02-token-bad-password-401.json, key order included.
        assert_eq!(
            response.text().await.unwrap(),
            r#"{"error":{"code":401,"message":"The request you have made requires authentication.","title":"Unauthorized"}}"#
        );
    }
}

#[tokio::test]
async fn domains_by_id_project_by_id_and_bad_bodies() {
    let cloud = start(CloudSimConfig::default()).await;
    let mut by_id = password_body("admin", "adminpass", "admin");
    by_id["auth"]["identity"]["password"]["user"]["domain"] = json!({"id": "default"});
    by_id["auth"]["scope"]["project"]["domain"] = json!({"id": "default"});
    let response = issue(&cloud, &by_id).await;
    assert_eq!(response.status(), 201);
    let project_id = body(response).await["token"]["project"]["id"].clone();
    let mut project_by_id = password_body("admin", "adminpass", "admin");
    project_by_id["auth"]["scope"] = json!({"project": {"id": project_id}});
    assert_eq!(issue(&cloud, &project_by_id).await.status(), 201);

    let mut unscoped = password_body("admin", "adminpass", "admin");
    unscoped["auth"].as_object_mut().unwrap().remove("scope");
    let response = issue(&cloud, &unscoped).await;
    assert_eq!(response.status(), 400);
    assert_eq!(body(response).await["error"]["title"], "Bad Request");
    let garbage = cloud
        .http
        .post(format!("{}/auth/tokens", cloud.sim.identity_url()))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(garbage.status(), 400);
}

#[tokio::test]
async fn catalog_follows_the_region_and_placement_interface_switches() {
    let mut config = CloudSimConfig {
        region: "RegionTwo".into(),
        placement_interfaces: vec![Interface::Public, Interface::Admin],
        ..CloudSimConfig::default()
    };
    config
        .users
        .push(UserConfig::new("placement", "Default", "secret", "service"));
    let cloud = start(config).await;
    let response = issue(&cloud, &password_body("placement", "secret", "service")).await;
    assert_eq!(response.status(), 201);
    let token = body(response).await["token"].clone();
    assert_eq!(token["project"]["name"], "service");
    let placement = token["catalog"]
        .as_array()
        .unwrap()
        .iter()
        .find(|service| service["type"] == "placement")
        .unwrap()
        .clone();
    let interfaces: Vec<&str> = placement["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|endpoint| {
            assert_eq!(endpoint["region"], "RegionTwo");
            endpoint["interface"].as_str().unwrap()
        })
        .collect();
    assert_eq!(interfaces, ["public", "admin"]);
}
