use crate::common::{Cloud, body, header, start};
use opsbot_cloud_sim::CloudSimConfig;
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

const PATCH_TYPE: &str = "application/openstack-images-v2.1-json-patch";

async fn patch(cloud: &Cloud, id: Uuid, content_type: &str, ops: Value) -> reqwest::Response {
    cloud
        .authed(Method::PATCH, &format!("/image/v2/images/{id}"))
        .await
        .header("Content-Type", content_type)
        .header("Accept", "application/json")
        .body(ops.to_string())
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn show_and_list_have_glances_flat_shape() {
    let cloud = start(CloudSimConfig::default()).await;
    let id = cloud
        .sim
        .add_image("ubuntu-22.04", &[("hw_disk_bus", "virtio")]);
    cloud.sim.add_image("cirros", &[]);
    let image = body(cloud.get(&format!("/image/v2/images/{id}")).await).await;
    assert_eq!(image["id"], id.to_string());
    assert_eq!(image["name"], "ubuntu-22.04");
    assert_eq!(image["status"], "active");
    assert_eq!(image["visibility"], "public");
    assert_eq!(image["hw_disk_bus"], "virtio");
    assert_eq!(image["self"], format!("/v2/images/{id}"));
    assert_eq!(image["schema"], "/v2/schemas/image");

    let listed = body(cloud.get("/image/v2/images?name=cirros").await).await;
    assert_eq!(listed["schema"], "/v2/schemas/images");
    assert_eq!(listed["first"], "/v2/images?name=cirros");
    let names: Vec<&str> = listed["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["cirros"]);
    let by_property = body(cloud.get("/image/v2/images?hw_disk_bus=virtio").await).await;
    assert_eq!(by_property["images"][0]["id"], id.to_string());
}

#[tokio::test]
async fn unknown_image_is_webobs_404_in_the_accepted_representation() {
    let cloud = start(CloudSimConfig::default()).await;
    let id = Uuid::new_v4();
    let json_404 = cloud
        .authed(Method::GET, &format!("/image/v2/images/{id}"))
        .await
        .header("Accept", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(json_404.status(), 404);
    assert_eq!(
        body(json_404).await,
        json!({"message": format!("No image found with ID {id}<br /><br />\n\n\n"),
               "code": "404 Not Found", "title": "Not Found"})
    );
    let html_404 = cloud.get(&format!("/image/v2/images/{id}")).await;
    assert_eq!(
        header(&html_404, "content-type"),
        Some("text/html; charset=UTF-8")
    );
    assert!(
        html_404
            .text()
            .await
            .unwrap()
            .contains(&format!("No image found with ID {id}"))
    );
}

#[tokio::test]
async fn patch_adds_and_replaces_properties() {
    let cloud = start(CloudSimConfig::default()).await;
    let id = cloud
        .sim
        .add_image("ubuntu-22.04", &[("hw_disk_bus", "virtio")]);
    let ops = json!([
        {"op": "add", "path": "/hw_scsi_model", "value": "virtio-scsi"},
        {"op": "replace", "path": "/hw_disk_bus", "value": "scsi"},
        {"op": "add", "path": "/hw_disk_bus", "value": "scsi"},
    ]);
    let response = patch(&cloud, id, PATCH_TYPE, ops.clone()).await;
    assert_eq!(response.status(), 200);
    let image = body(response).await;
    assert_eq!(
        (
            image["hw_disk_bus"].as_str(),
            image["hw_scsi_model"].as_str()
        ),
        (Some("scsi"), Some("virtio-scsi"))
    );
    let stored = cloud.sim.image(id).unwrap();
    assert_eq!(stored.properties["hw_scsi_model"], "virtio-scsi");
    let remove = patch(
        &cloud,
        id,
        PATCH_TYPE,
        json!([{"op": "remove", "path": "/hw_scsi_model"}]),
    )
    .await;
    assert_eq!(remove.status(), 200);
    assert!(
        !cloud
            .sim
            .image(id)
            .unwrap()
            .properties
            .contains_key("hw_scsi_model")
    );
    // The call log keeps the patch body.
    let logged = cloud
        .sim
        .calls()
        .into_iter()
        .find(|call| call.method == "PATCH")
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(logged.body.as_deref().unwrap()).unwrap(),
        ops
    );
}

#[tokio::test]
async fn patch_refusals_follow_glance() {
    let cloud = start(CloudSimConfig::default()).await;
    let id = cloud.sim.add_image("cirros", &[]);
    let add = json!([{"op": "add", "path": "/hw_disk_bus", "value": "scsi"}]);
    let wrong_type = patch(&cloud, id, "application/json", add.clone()).await;
    assert_eq!(wrong_type.status(), 415);
    assert!(
        header(&wrong_type, "accept-patch")
            .unwrap()
            .contains(PATCH_TYPE)
    );

    let missing = patch(
        &cloud,
        id,
        PATCH_TYPE,
        json!([
            {"op": "add", "path": "/hw_scsi_model", "value": "virtio-scsi"},
            {"op": "replace", "path": "/hw_disk_bus", "value": "scsi"},
        ]),
    )
    .await;
    assert_eq!(missing.status(), 409);
    assert_eq!(
        body(missing).await["message"],
        "Property hw_disk_bus does not exist.<br /><br />\n\n\n"
    );
    // All or nothing: the add before the failing replace did not stick.
    assert!(cloud.sim.image(id).unwrap().properties.is_empty());
    let remove_missing = patch(
        &cloud,
        id,
        PATCH_TYPE,
        json!([{"op": "remove", "path": "/hw_disk_bus"}]),
    )
    .await;
    assert_eq!(remove_missing.status(), 409);

    let read_only = patch(
        &cloud,
        id,
        PATCH_TYPE,
        json!([{"op": "replace", "path": "/id", "value": "x"}]),
    )
    .await;
    assert_eq!(read_only.status(), 403);
    assert_eq!(
        body(read_only).await["message"],
        "Attribute 'id' is read-only.<br /><br />\n\n\n"
    );
    let base = patch(
        &cloud,
        id,
        PATCH_TYPE,
        json!([{"op": "remove", "path": "/name"}]),
    )
    .await;
    assert_eq!(base.status(), 403);
    let not_string = patch(
        &cloud,
        id,
        PATCH_TYPE,
        json!([{"op": "add", "path": "/hw_disk_bus", "value": 7}]),
    )
    .await;
    assert_eq!(not_string.status(), 400);
    let not_list = patch(&cloud, id, PATCH_TYPE, json!({"op": "add"})).await;
    assert_eq!(not_list.status(), 400);
    let unknown = patch(&cloud, Uuid::new_v4(), PATCH_TYPE, add).await;
    assert_eq!(unknown.status(), 404);
}
