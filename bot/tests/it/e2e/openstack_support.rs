//! The real Keystone + Placement support (`opsbot_tests::openstack`) does what tests rely on:
//! tokens with a catalog that names Placement, Placement set-up helpers that read back what
//! they wrote, per-test regions, users whose credentials can be taken away, and revocation
//! that Placement honours at once.

use opsbot_tests::openstack::{ALL_INTERFACES, real_cloud, unique};
use reqwest::{Method, StatusCode};
use uuid::Uuid;

#[tokio::test]
async fn an_admin_token_has_placement_in_its_catalog_and_placement_takes_it() {
    let cloud = real_cloud().await;
    assert!(cloud.keystone_url().ends_with("/v3"));
    let token = cloud
        .issue_token(cloud.admin_user(), cloud.admin_password())
        .await
        .unwrap();
    for interface in ALL_INTERFACES {
        assert_eq!(
            token.endpoint("placement", interface, cloud.region()),
            Some(cloud.placement_url()),
            "{interface} placement endpoint in {:?}",
            token.catalog
        );
    }
    assert_eq!(
        token.body["token"]["project"]["name"],
        cloud.admin_project()
    );

    let answer = cloud
        .send(cloud.placement_request(Method::GET, "/resource_providers", &token.id))
        .await
        .unwrap();
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert!(answer.body["resource_providers"].is_array());
}

#[tokio::test]
async fn a_provider_gets_inventory_and_allocations_that_read_back() {
    let cloud = real_cloud().await;
    let name = unique("hv");
    let provider = cloud.create_provider(&name).await;
    assert!(cloud.provider_allocations(provider).await.is_empty());

    cloud
        .set_inventory(provider, &[("VCPU", 8), ("MEMORY_MB", 16384)])
        .await;
    let (first, second) = (Uuid::new_v4(), Uuid::new_v4());
    let (project, user) = (
        "6f3b8c1a2e4d4e0f9a7b5c3d1e2f4a6b",
        "0a1b2c3d4e5f40718293a4b5c6d7e8f9",
    );
    cloud
        .put_allocation(
            first,
            provider,
            &[("VCPU", 2), ("MEMORY_MB", 4096)],
            project,
            user,
        )
        .await;
    cloud
        .put_allocation(second, provider, &[("VCPU", 1)], project, user)
        .await;

    let allocations = cloud.provider_allocations(provider).await;
    assert_eq!(allocations.len(), 2, "{allocations:?}");
    assert_eq!(allocations[&first]["VCPU"], 2);
    assert_eq!(allocations[&first]["MEMORY_MB"], 4096);
    assert_eq!(allocations[&second]["VCPU"], 1);
    assert!(!allocations[&second].contains_key("MEMORY_MB"));

    // The inventory really is what was set: Placement refuses more than it holds.
    let token = cloud.admin_token().await;
    let over = cloud
        .send(
            cloud
                .placement_request(
                    Method::PUT,
                    &format!("/allocations/{}", Uuid::new_v4()),
                    &token,
                )
                .json(&serde_json::json!({
                    "allocations": {provider.to_string(): {"resources": {"VCPU": 6}}},
                    "project_id": project, "user_id": user})),
        )
        .await
        .unwrap();
    assert_eq!(over.status, StatusCode::CONFLICT, "{}", over.body);
}

#[tokio::test]
async fn a_region_of_its_own_has_the_given_service_and_placement() {
    let cloud = real_cloud().await;
    let region = unique("region");
    let compute = "http://127.0.0.1:9/compute/v2.1";
    cloud
        .add_region(&region, &[("compute", "nova", compute)])
        .await;

    let token = cloud
        .issue_token(cloud.admin_user(), cloud.admin_password())
        .await
        .unwrap();
    let mut endpoints = token.endpoints_in(&region);
    endpoints.sort();
    let mut expected: Vec<(String, String, String)> = ["compute", "placement"]
        .into_iter()
        .flat_map(|service| {
            let url = if service == "compute" {
                compute
            } else {
                cloud.placement_url()
            };
            ALL_INTERFACES
                .iter()
                .map(move |i| (service.to_owned(), (*i).to_owned(), url.to_owned()))
        })
        .collect();
    expected.sort();
    assert_eq!(endpoints, expected);
    // Other regions (and the tests using them) are untouched.
    assert_eq!(token.endpoint("compute", "public", cloud.region()), None);

    // Placement with only some interfaces, e.g. no internal one.
    let bare = unique("region");
    cloud.add_region_with(&bare, &[], &["public"]).await;
    let token = cloud
        .issue_token(cloud.admin_user(), cloud.admin_password())
        .await
        .unwrap();
    assert_eq!(
        token.endpoint("placement", "public", &bare),
        Some(cloud.placement_url())
    );
    assert_eq!(token.endpoint("placement", "internal", &bare), None);
    assert_eq!(token.endpoints_in(&bare).len(), 1);
}

#[tokio::test]
async fn a_revoked_token_is_refused_by_placement_at_once() {
    let cloud = real_cloud().await;
    let token = cloud.admin_token().await;
    let get = || cloud.send(cloud.placement_request(Method::GET, "/resource_providers", &token));
    // Seen (and validated) once, so a cached validation would still let it in.
    assert_eq!(get().await.unwrap().status, StatusCode::OK);

    cloud.revoke_token(&token).await;
    let refused = get().await.unwrap();
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{}", refused.body);
    assert_eq!(refused.body["error"]["code"], 401, "{}", refused.body);
    let challenge = refused.headers["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.contains(&cloud.keystone_url()),
        "www-authenticate: {challenge}"
    );
    // Other tokens are unaffected.
    let fresh = cloud.admin_token().await;
    let answer = cloud
        .send(cloud.placement_request(Method::GET, "/resource_providers", &fresh))
        .await
        .unwrap();
    assert_eq!(answer.status, StatusCode::OK);
}

#[tokio::test]
async fn a_user_can_authenticate_until_its_password_changes_or_it_is_disabled() {
    let cloud = real_cloud().await;
    let status = |token: String| async move {
        let get = cloud.placement_request(Method::GET, "/resource_providers", &token);
        cloud.send(get).await.unwrap().status
    };
    let name = unique("operator");
    cloud.create_user(&name, "first-secret").await;
    let before = cloud.issue_token(&name, "first-secret").await.unwrap();
    assert_eq!(
        before.endpoint("placement", "internal", cloud.region()),
        Some(cloud.placement_url())
    );
    assert_eq!(status(before.id.clone()).await, StatusCode::OK);

    cloud.set_user_password(&name, "second-secret").await;
    // The change revoked the user's tokens, and the old password is refused.
    assert_eq!(status(before.id).await, StatusCode::UNAUTHORIZED);
    let refused = cloud.issue_token(&name, "first-secret").await.unwrap_err();
    assert!(format!("{refused:#}").contains("401"), "{refused:#}");
    let after = cloud.issue_token(&name, "second-secret").await.unwrap();
    assert_eq!(status(after.id.clone()).await, StatusCode::OK);

    cloud.set_user_enabled(&name, false).await;
    assert_eq!(status(after.id).await, StatusCode::UNAUTHORIZED);
    let refused = cloud.issue_token(&name, "second-secret").await.unwrap_err();
    assert!(format!("{refused:#}").contains("401"), "{refused:#}");
}
