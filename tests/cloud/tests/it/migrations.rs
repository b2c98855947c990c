//! Resizes and migrations as Nova does them: the source allocations move to the migration's
//! uuid, confirm deletes them, revert moves them back, and placement shows consumer types
//! only from 1.38.

use crate::common::{Cloud, body, compute_service, keys, start};
use opsbot_cloud_sim::{CloudSimConfig, ConsumerType, MigrationError, MigrationType};
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

const PLACEMENT_1_28: (&str, &str) = ("placement", "1.28");

/// Hosts compute-01 and compute-02 (providers and up, enabled services) and `web-01` on
/// compute-01 with its allocation. Returns the providers and the server.
async fn two_hosts(config: CloudSimConfig) -> (Cloud, Uuid, Uuid, Uuid) {
    let cloud = start(config).await;
    let rp1 = cloud.sim.add_provider("compute-01");
    let rp2 = cloud.sim.add_provider("compute-02");
    for host in ["compute-01", "compute-02"] {
        cloud.sim.add_service(compute_service(host));
    }
    let vm = Uuid::new_v4();
    cloud
        .sim
        .add_server_on(vm, "web-01", "ACTIVE", "compute-01");
    cloud
        .sim
        .add_allocation(rp1, vm, &[("VCPU", 2), ("MEMORY_MB", 4096)]);
    (cloud, rp1, rp2, vm)
}

async fn provider_allocations(cloud: &Cloud, rp: Uuid, version: &str) -> Value {
    cloud
        .get_at(
            &format!("/placement/resource_providers/{rp}/allocations"),
            ("placement", version),
        )
        .await
}

async fn consumer(cloud: &Cloud, consumer: Uuid, version: &str) -> Value {
    cloud
        .get_at(
            &format!("/placement/allocations/{consumer}"),
            ("placement", version),
        )
        .await
}

async fn server(cloud: &Cloud, id: Uuid) -> reqwest::Response {
    cloud.get(&format!("/compute/v2.1/servers/{id}")).await
}

#[tokio::test]
async fn a_resize_moves_the_source_allocations_to_the_migration_uuid() {
    let (cloud, rp1, rp2, vm) = two_hosts(CloudSimConfig::default()).await;
    let migration = cloud
        .sim
        .start_migration(vm, "compute-02", MigrationType::Resize)
        .unwrap();
    assert_eq!(
        (migration.status.as_str(), migration.instance_uuid),
        ("migrating", vm)
    );

    // The source provider holds the migration consumer only; from 1.28 with its generation,
    // never with a type (recorded from Placement 16).
    let source = provider_allocations(&cloud, rp1, "1.39").await;
    assert_eq!(
        source["allocations"],
        json!({migration.uuid.to_string(): {
            "resources": {"VCPU": 2, "MEMORY_MB": 4096}, "consumer_generation": 1}})
    );
    // add_allocation bumped it once, the move once more.
    assert_eq!(source["resource_provider_generation"], 2);
    let old = provider_allocations(&cloud, rp1, "1.27").await;
    assert_eq!(
        keys(&old["allocations"][migration.uuid.to_string()]),
        ["resources"]
    );
    let dest = provider_allocations(&cloud, rp2, "1.28").await;
    assert_eq!(keys(&dest["allocations"]), [vm.to_string().as_str()]);

    // The migration consumer: the instance's project and user; its type only from 1.38, and
    // `unknown`, since Nova sends none.
    let at_1_37 = consumer(&cloud, migration.uuid, "1.37").await;
    assert_eq!(
        keys(&at_1_37),
        [
            "allocations",
            "consumer_generation",
            "project_id",
            "user_id"
        ]
    );
    let at_1_38 = consumer(&cloud, migration.uuid, "1.38").await;
    assert_eq!(at_1_38["consumer_type"], "unknown");
    assert_eq!(
        at_1_38["project_id"],
        consumer(&cloud, vm, "1.38").await["project_id"]
    );
    assert_eq!(
        consumer(&cloud, vm, "1.38").await["allocations"][rp2.to_string()]["resources"],
        json!({"VCPU": 2, "MEMORY_MB": 4096})
    );
    assert!(
        cloud
            .sim
            .set_consumer_type(migration.uuid, ConsumerType::Migration)
    );
    assert_eq!(
        consumer(&cloud, migration.uuid, "1.38").await["consumer_type"],
        "MIGRATION"
    );
    assert!(
        !cloud
            .sim
            .set_consumer_type(Uuid::new_v4(), ConsumerType::Instance)
    );

    // The migration uuid is no server; the server is resizing, still on its source.
    let missing = server(&cloud, migration.uuid).await;
    assert_eq!(missing.status(), 404);
    let moving = body(server(&cloud, vm).await).await["server"].clone();
    assert_eq!(moving["status"], "RESIZE");
    assert_eq!(moving["OS-EXT-STS:task_state"], "resize_migrating");
    assert_eq!(moving["OS-EXT-SRV-ATTR:host"], "compute-01");
}

#[tokio::test]
async fn a_nova_that_writes_consumer_types_marks_both_consumers() {
    let (cloud, _, _, vm) = two_hosts(CloudSimConfig {
        nova_writes_consumer_types: true,
        ..CloudSimConfig::default()
    })
    .await;
    assert_eq!(cloud.sim.consumer_type(vm), Some(ConsumerType::Instance));
    let migration = cloud
        .sim
        .start_migration(vm, "compute-02", MigrationType::Migration)
        .unwrap();
    assert_eq!(
        consumer(&cloud, migration.uuid, "1.38").await["consumer_type"],
        "MIGRATION"
    );
    assert_eq!(
        consumer(&cloud, vm, "1.38").await["consumer_type"],
        "INSTANCE"
    );
}

#[tokio::test]
async fn confirming_deletes_the_migration_allocations() {
    let (cloud, rp1, rp2, vm) = two_hosts(CloudSimConfig::default()).await;
    let migration = cloud
        .sim
        .start_migration(vm, "compute-02", MigrationType::Resize)
        .unwrap();
    let finished = cloud.sim.finish_migration(migration.uuid).unwrap();
    assert_eq!(finished.status, "finished");
    assert!(
        finished.in_progress(),
        "a resize awaiting confirmation holds allocations"
    );
    let verify = body(server(&cloud, vm).await).await["server"].clone();
    assert_eq!(
        (
            &verify["status"],
            &verify["OS-EXT-STS:vm_state"],
            &verify["OS-EXT-SRV-ATTR:host"]
        ),
        (
            &json!("VERIFY_RESIZE"),
            &json!("resized"),
            &json!("compute-02")
        )
    );
    assert_eq!(cloud.sim.allocations(rp1).len(), 1);

    let confirmed = cloud.sim.confirm_migration(migration.uuid).unwrap();
    assert_eq!(confirmed.status, "confirmed");
    assert!(!confirmed.in_progress());
    assert!(cloud.sim.allocations(rp1).is_empty());
    assert_eq!(
        cloud.sim.allocations(rp2).into_keys().collect::<Vec<_>>(),
        [vm]
    );
    // Nova empties the consumer with a PUT, which (unlike DELETE) bumps the provider.
    assert_eq!(
        provider_allocations(&cloud, rp1, "1.28").await["resource_provider_generation"],
        3
    );
    assert_eq!(
        consumer(&cloud, migration.uuid, "1.38").await,
        json!({"allocations": {}})
    );
    let active = body(server(&cloud, vm).await).await["server"].clone();
    assert_eq!(
        (&active["status"], &active["OS-EXT-SRV-ATTR:host"]),
        (&json!("ACTIVE"), &json!("compute-02"))
    );
    assert_eq!(
        cloud.sim.confirm_migration(migration.uuid),
        Err(MigrationError::NotInProgress(
            migration.uuid,
            "confirmed".into()
        ))
    );
}

#[tokio::test]
async fn reverting_moves_the_allocations_back_to_the_instance() {
    let (cloud, rp1, rp2, vm) = two_hosts(CloudSimConfig::default()).await;
    let migration = cloud
        .sim
        .start_migration(vm, "compute-02", MigrationType::Migration)
        .unwrap();
    let reverted = cloud.sim.revert_migration(migration.uuid).unwrap();
    assert_eq!(reverted.status, "reverted");
    assert_eq!(
        cloud.sim.allocations(rp1).into_keys().collect::<Vec<_>>(),
        [vm]
    );
    assert!(cloud.sim.allocations(rp2).is_empty());
    let instance = consumer(&cloud, vm, "1.28").await;
    // Re-created by the destination claim (1), then written once more by the move back.
    assert_eq!(instance["consumer_generation"], 2);
    assert_eq!(keys(&instance["allocations"]), [rp1.to_string().as_str()]);
    let back = body(server(&cloud, vm).await).await["server"].clone();
    assert_eq!(
        (&back["status"], &back["OS-EXT-SRV-ATTR:host"]),
        (&json!("ACTIVE"), &json!("compute-01"))
    );
}

#[tokio::test]
async fn a_failed_resize_leaves_both_consumers_and_a_failed_live_migration_rolls_back() {
    let (cloud, rp1, rp2, vm) = two_hosts(CloudSimConfig::default()).await;
    let resize = cloud
        .sim
        .start_migration(vm, "compute-02", MigrationType::Resize)
        .unwrap();
    let failed = cloud.sim.fail_migration(resize.uuid).unwrap();
    assert_eq!(failed.status, "error");
    assert!(!failed.in_progress());
    assert_eq!(
        cloud.sim.allocations(rp1).into_keys().collect::<Vec<_>>(),
        [resize.uuid]
    );
    assert_eq!(
        cloud.sim.allocations(rp2).into_keys().collect::<Vec<_>>(),
        [vm]
    );
    assert_eq!(
        body(server(&cloud, vm).await).await["server"]["status"],
        "ERROR"
    );

    let (cloud, rp1, rp2, vm) = two_hosts(CloudSimConfig::default()).await;
    let live = cloud
        .sim
        .start_migration(vm, "compute-02", MigrationType::LiveMigration)
        .unwrap();
    assert_eq!(live.status, "running");
    assert_eq!(
        body(server(&cloud, vm).await).await["server"]["status"],
        "MIGRATING"
    );
    assert_eq!(cloud.sim.fail_migration(live.uuid).unwrap().status, "error");
    assert_eq!(
        cloud.sim.allocations(rp1).into_keys().collect::<Vec<_>>(),
        [vm]
    );
    assert!(cloud.sim.allocations(rp2).is_empty());
    assert_eq!(
        body(server(&cloud, vm).await).await["server"]["status"],
        "ACTIVE"
    );
}

/// Nova's `_reset_live_migration` at start-up: the running live migration turns `error`, the
/// server is no longer `MIGRATING`, and no allocation moves back.
#[tokio::test]
async fn restarting_the_source_compute_resets_its_running_live_migration() {
    let (cloud, rp1, rp2, vm) = two_hosts(CloudSimConfig::default()).await;
    let live = cloud
        .sim
        .start_migration(vm, "compute-02", MigrationType::LiveMigration)
        .unwrap();
    cloud.sim.restart_compute("compute-02").unwrap();
    assert_eq!(cloud.sim.migrations()[0].status, "running", "not its host");

    cloud.sim.restart_compute("compute-01").unwrap();
    assert_eq!(cloud.sim.migrations()[0].status, "error");
    assert_eq!(
        cloud.sim.allocations(rp1).into_keys().collect::<Vec<_>>(),
        [live.uuid],
        "the migration consumer keeps the source"
    );
    assert_eq!(
        cloud.sim.allocations(rp2).into_keys().collect::<Vec<_>>(),
        [vm]
    );
    let reset = body(server(&cloud, vm).await).await["server"].clone();
    assert_eq!(reset["status"], "ACTIVE");
    assert_eq!(reset["OS-EXT-SRV-ATTR:host"], "compute-01");
}

#[tokio::test]
async fn moves_are_refused_as_nova_refuses_them() {
    let (cloud, _, rp2, vm) = two_hosts(CloudSimConfig::default()).await;
    let start = |server, dest| {
        cloud
            .sim
            .start_migration(server, dest, MigrationType::Migration)
    };
    let stranger = Uuid::new_v4();
    assert_eq!(
        start(stranger, "compute-02"),
        Err(MigrationError::UnknownServer(stranger))
    );
    assert_eq!(
        start(vm, "compute-01"),
        Err(MigrationError::SameHost(vm, "compute-01".into()))
    );
    assert_eq!(
        start(vm, "compute-09"),
        Err(MigrationError::UnknownHost("compute-09".into()))
    );
    // A destination whose compute service is disabled is no valid host.
    cloud.sim.add_provider("compute-03");
    cloud.sim.add_service(opsbot_cloud_sim::ComputeServiceSeed {
        status: opsbot_cloud_sim::ServiceStatus::Disabled,
        ..compute_service("compute-03")
    });
    assert_eq!(
        start(vm, "compute-03"),
        Err(MigrationError::HostUnavailable("compute-03".into()))
    );
    let unplaced = Uuid::new_v4();
    cloud.sim.add_server(unplaced, "never-booted", "ACTIVE");
    assert_eq!(
        start(unplaced, "compute-02"),
        Err(MigrationError::NoHost(unplaced))
    );
    let empty = Uuid::new_v4();
    cloud
        .sim
        .add_server_on(empty, "no-allocations", "ACTIVE", "compute-01");
    assert_eq!(
        start(empty, "compute-02"),
        Err(MigrationError::NoAllocations(empty, "compute-01".into()))
    );
    let migration = start(vm, "compute-02").unwrap();
    assert_eq!(
        start(vm, "compute-02"),
        Err(MigrationError::InvalidState(vm, "RESIZE".into()))
    );
    assert!(cloud.sim.allocations(rp2).contains_key(&vm));
    // Deleting the server deletes its migration records, not its allocations.
    assert!(cloud.sim.delete_server(vm));
    assert!(cloud.sim.migrations().is_empty());
    assert_eq!(
        cloud.sim.confirm_migration(migration.uuid),
        Err(MigrationError::UnknownMigration(migration.uuid))
    );
}

#[tokio::test]
async fn the_admin_api_starts_steps_and_lists_migrations() {
    let (cloud, rp1, _, vm) = two_hosts(CloudSimConfig::default()).await;
    let started = cloud
        .admin(
            Method::POST,
            "/_sim/migrations",
            Some(json!({"server": vm, "dest": "compute-02", "migration_type": "live-migration"})),
        )
        .await;
    assert_eq!(started.status(), 201);
    let started = body(started).await;
    assert_eq!(started["status"], "running");
    let uuid = started["uuid"].as_str().unwrap().to_owned();
    assert_eq!(
        cloud.sim.allocations(rp1).into_keys().collect::<Vec<_>>(),
        [uuid.parse::<Uuid>().unwrap()]
    );
    let busy = cloud
        .admin(
            Method::POST,
            "/_sim/migrations",
            Some(json!({"server": vm, "dest": "compute-02", "migration_type": "resize"})),
        )
        .await;
    assert_eq!(busy.status(), 409);
    let status = cloud
        .admin(
            Method::PUT,
            &format!("/_sim/migrations/{uuid}/status"),
            Some(json!({"status": "post-migrating"})),
        )
        .await;
    assert_eq!(body(status).await["status"], "post-migrating");
    let finish = cloud
        .admin(
            Method::POST,
            &format!("/_sim/migrations/{uuid}/finish"),
            None,
        )
        .await;
    assert_eq!(finish.status(), 409, "a live migration has no finish step");
    let done = cloud
        .admin(
            Method::POST,
            &format!("/_sim/migrations/{uuid}/confirm"),
            None,
        )
        .await;
    assert_eq!(body(done).await["status"], "completed");
    assert!(cloud.sim.allocations(rp1).is_empty());
    let listed = body(cloud.admin(Method::GET, "/_sim/migrations", None).await).await;
    assert_eq!(listed[0]["uuid"], uuid.as_str());
    let unknown = cloud
        .admin(
            Method::POST,
            &format!("/_sim/migrations/{}/revert", Uuid::new_v4()),
            None,
        )
        .await;
    assert_eq!(unknown.status(), 404);
    let state = body(cloud.admin(Method::GET, "/_sim/state", None).await).await;
    assert_eq!(state["migrations"][0]["status"], "completed");
}

#[tokio::test]
async fn the_demo_resizes_an_instance_away_from_compute_02() {
    let cloud = start(CloudSimConfig::demo()).await;
    let migrations = cloud
        .get_at(
            "/compute/v2.1/os-migrations?host=compute-02",
            ("compute", "2.59"),
        )
        .await;
    let migration = migrations["migrations"][0].clone();
    assert_eq!(migrations["migrations"].as_array().unwrap().len(), 1);
    assert_eq!(
        (
            &migration["status"],
            &migration["migration_type"],
            &migration["source_compute"],
            &migration["dest_compute"]
        ),
        (
            &json!("finished"),
            &json!("resize"),
            &json!("compute-02"),
            &json!("compute-03")
        )
    );
    let uuid: Uuid = migration["uuid"].as_str().unwrap().parse().unwrap();
    let providers = cloud
        .get_at(
            "/placement/resource_providers?name=compute-02",
            PLACEMENT_1_28,
        )
        .await;
    let rp: Uuid = providers["resource_providers"][0]["uuid"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(cloud.sim.allocations(rp).contains_key(&uuid));
    assert_eq!(server(&cloud, uuid).await.status(), 404);
    let resized = body(
        server(
            &cloud,
            migration["instance_uuid"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap(),
        )
        .await,
    )
    .await;
    assert_eq!(resized["server"]["status"], "VERIFY_RESIZE");
    assert_eq!(resized["server"]["name"], "analytics-01");
}
