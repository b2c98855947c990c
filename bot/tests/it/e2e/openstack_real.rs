//! opsbot against a REAL Keystone 30 and Placement 16 (started by the test set-up itself; a
//! failure to start fails these tests, it never skips them): password authentication, the
//! catalog's internal endpoint, re-authentication after a revocation, and a whole stale-allocation
//! run verified on the placement server. Compute is the simulated one, registered in Keystone's
//! catalog: no compute service runs here.

use std::time::Duration;

use opsbot::config::EngineConfig;
use opsbot_cloud_sim::{CloudSimConfig, CloudSimHandle};
use opsbot_commands::run::{Outcome, RunState};
use opsbot_tests::cloud::{Account, cloud_config};
use opsbot_tests::openstack::{RealCloud, real_cloud, unique};
use opsbot_tests::{Harness, Setup};
use uuid::Uuid;

/// A simulated compute API that takes the real Keystone's tokens, registered in a catalog region
/// of the test's own; and a harness whose cloud `prod` is the real Keystone as `username`.
struct Real {
    cloud: &'static RealCloud,
    compute: CloudSimHandle,
    region: String,
    harness: Harness,
    _dir: tempfile::TempDir,
}

async fn real(username: &str, password: &str, placement_interfaces: &[&str]) -> Real {
    let cloud = real_cloud().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let compute = opsbot_cloud_sim::spawn(
        CloudSimConfig {
            accept_foreign_tokens: true,
            ..CloudSimConfig::default()
        },
        listener,
    )
    .await
    .unwrap();
    let region = unique("region");
    let compute_url = format!("{}/compute/v2.1", compute.base_url());
    cloud
        .add_region_with(
            &region,
            &[("compute", "nova", &compute_url)],
            placement_interfaces,
        )
        .await;
    let dir = tempfile::tempdir().unwrap();
    let account = Account {
        auth_url: &cloud.keystone_url(),
        username,
        password,
        project: cloud.admin_project(),
        region: &region,
    };
    // The real servers have one worker each and serve the tests of this binary side by side:
    // a request may queue behind others, so it gets the production default's patience.
    let defaults = Setup::default();
    let harness = Harness::start(Setup {
        clouds: vec![cloud_config("prod", &account, dir.path())],
        engine: EngineConfig {
            request_timeout: EngineConfig::default().request_timeout,
            ..defaults.engine
        },
        ..defaults
    })
    .await;
    Real {
        cloud,
        compute,
        region,
        harness,
        _dir: dir,
    }
}

async fn admin(placement_interfaces: &[&str]) -> Real {
    let cloud = real_cloud().await;
    real(
        cloud.admin_user(),
        cloud.admin_password(),
        placement_interfaces,
    )
    .await
}

const ALL: &[&str] = &["public", "internal", "admin"];

/// A hypervisor of its own in the real placement, with three consumers.
async fn hypervisor(r: &Real) -> (String, Uuid, [Uuid; 3]) {
    let host = unique("compute");
    let provider = r.cloud.create_provider(&host).await;
    r.cloud
        .set_inventory(
            provider,
            &[("VCPU", 32), ("MEMORY_MB", 131_072), ("DISK_GB", 2000)],
        )
        .await;
    let consumers = [Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4()];
    for consumer in consumers {
        r.cloud
            .put_allocation(
                consumer,
                provider,
                &[("VCPU", 2), ("MEMORY_MB", 4096), ("DISK_GB", 40)],
                "p-test",
                "u-test",
            )
            .await;
    }
    (host, provider, consumers)
}

#[tokio::test]
async fn a_stale_allocation_run_against_real_keystone_and_placement() {
    let r = admin(ALL).await;
    let (host, provider, [gone, running, also_gone]) = hypervisor(&r).await;
    r.compute.add_server(running, "db-1", "ACTIVE");
    let h = &r.harness;

    let view = h
        .slash(
            "alice",
            &format!("/placement allocations cloud:prod host:{host}"),
        )
        .await;
    assert!(!view.private, "{}", view.text);
    assert!(
        view.text.contains(&format!(
            "{running} VCPU 2 · MEMORY_MB 4096 · DISK_GB 40 · `db-1` ACTIVE"
        )),
        "{}",
        view.text
    );
    assert!(
        view.text.contains(&format!("{gone} VCPU 2")) && view.text.contains("(stale)"),
        "{}",
        view.text
    );

    let id = h
        .start_run("alice", &format!("/placement stale cloud:prod host:{host}"))
        .await;
    assert!(matches!(h.run(id).state, RunState::AwaitingApproval { .. }));
    assert_eq!(
        r.cloud.provider_allocations(provider).await.len(),
        3,
        "nothing before approval"
    );
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{:?}",
        run.steps()
    );

    let left: Vec<Uuid> = r
        .cloud
        .provider_allocations(provider)
        .await
        .into_keys()
        .collect();
    assert_eq!(
        left,
        vec![running],
        "only the running instance's allocation is left"
    );
    let mut deleted: Vec<Uuid> = run.plan().deleted_consumers().map(|c| c.uuid()).collect();
    deleted.sort();
    let mut expected = vec![gone, also_gone];
    expected.sort();
    assert_eq!(deleted, expected);
}

#[tokio::test]
async fn a_migration_consumer_is_never_planned_against_the_real_placement() {
    // As a Nova that types its consumers leaves a resize: the instance's allocations on the
    // destination, the migration's (typed MIGRATION at 1.38) on the source. No server in
    // compute has either UUID as seen from the source host.
    let r = admin(ALL).await;
    let (host, provider, [gone, running, _]) = hypervisor(&r).await;
    r.compute.add_server(running, "db-1", "ACTIVE");
    let migration = Uuid::new_v4();
    r.cloud
        .put_typed_allocation(
            migration,
            provider,
            &[("VCPU", 4), ("MEMORY_MB", 8192)],
            "MIGRATION",
        )
        .await;
    let h = &r.harness;

    let view = h
        .slash(
            "alice",
            &format!("/placement allocations cloud:prod host:{host}"),
        )
        .await;
    assert!(
        view.text.contains(&format!("{migration} VCPU 4"))
            && view.text.contains("migration in progress"),
        "{}",
        view.text
    );
    let named = h
        .slash(
            "alice",
            &format!("/placement stale cloud:prod host:{host} instance:{migration}"),
        )
        .await;
    assert!(
        named.private && named.text.contains("placement types it MIGRATION"),
        "{}",
        named.text
    );

    let id = h
        .start_run("alice", &format!("/placement stale cloud:prod host:{host}"))
        .await;
    let planned: Vec<Uuid> = h
        .run(id)
        .plan()
        .deleted_consumers()
        .map(|c| c.uuid())
        .collect();
    assert!(planned.contains(&gone), "{planned:?}");
    assert!(!planned.contains(&migration), "{planned:?}");
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{:?}",
        run.steps()
    );
    let left = r.cloud.provider_allocations(provider).await;
    assert!(
        left.contains_key(&migration) && left.contains_key(&running),
        "{left:?}"
    );
    assert_eq!(left.len(), 2, "{left:?}");
}

#[tokio::test]
async fn a_wrong_password_is_a_clear_refusal() {
    let cloud = real_cloud().await;
    let r = real(cloud.admin_user(), "not-the-password", ALL).await;
    let reply = r
        .harness
        .slash("alice", "/placement stale cloud:prod host:compute-01")
        .await;
    assert!(reply.private, "{}", reply.text);
    assert!(
        reply.text.contains("POST /v3/auth/tokens answered 401")
            && reply.text.contains("could not authenticate"),
        "{}",
        reply.text
    );
    assert!(
        !reply.text.contains("not-the-password"),
        "the password leaked: {}",
        reply.text
    );
    assert!(r.harness.engine.store().runs().unwrap().is_empty());
}

#[tokio::test]
async fn a_revoked_token_is_replaced_once_and_a_lost_account_is_named() {
    let cloud = real_cloud().await;
    let user = unique("opsbot");
    cloud.create_user(&user, "first-secret").await;
    let r = real(&user, "first-secret", ALL).await;
    let (host, _, _) = hypervisor(&r).await;
    let ask = format!("/placement allocations cloud:prod host:{host}");
    let before = r.harness.slash("alice", &ask).await;
    assert!(!before.private, "{}", before.text);

    // Disabling a user revokes its tokens; enabled again, it may have new ones (Keystone's
    // revocation events have one-second resolution).
    cloud.set_user_enabled(&user, false).await;
    cloud.set_user_enabled(&user, true).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let after = r.harness.slash("alice", &ask).await;
    assert!(
        !after.private,
        "the revoked token was not replaced: {}",
        after.text
    );

    // A new password: the cached token is revoked and the configured one no longer works.
    cloud.set_user_password(&user, "second-secret").await;
    let lost = r.harness.slash("alice", &ask).await;
    assert!(
        lost.private && lost.text.contains("could not authenticate"),
        "{}",
        lost.text
    );
}

#[tokio::test]
async fn a_catalog_without_an_internal_placement_endpoint_is_named() {
    let r = admin(&["public"]).await;
    let reply = r
        .harness
        .slash("alice", "/placement allocations cloud:prod host:compute-01")
        .await;
    assert!(
        reply.private
            && reply.text.contains(&format!(
                "no internal placement endpoint in region {} (there: public)",
                r.region
            )),
        "{}",
        reply.text
    );
}
