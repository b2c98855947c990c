//! Cloud procedures against the simulated cloud: stale allocations, the compute services and the
//! RPC cap, image properties, and what the cloud really received.

use std::time::Duration;

use opsbot_cloud_sim::{
    CloudSimConfig, ComputeServiceSeed, Interface, ServiceState, ServiceStatus,
};
use opsbot_commands::name::RunId;
use opsbot_commands::run::{Outcome, StepState};
use opsbot_search_sim::FaultRule;
use opsbot_tests::cloud::CloudScene;
use time::OffsetDateTime;
use uuid::Uuid;

fn uuid(n: u8) -> Uuid {
    Uuid::parse_str(&format!("00000000-0000-4000-8000-0000000000{n:02x}")).unwrap()
}

/// compute-03 with instances 1 and 3 gone from compute and 2 running.
async fn stale_scene() -> (CloudScene, Uuid) {
    let scene = CloudScene::start(CloudSimConfig::default()).await;
    let provider = scene.cloud.add_provider("compute-03");
    for n in [1, 2, 3] {
        scene.cloud.add_allocation(
            provider,
            uuid(n),
            &[("VCPU", 2), ("MEMORY_MB", 4096), ("DISK_GB", 40)],
        );
    }
    scene.cloud.add_server(uuid(2), "web-2", "ACTIVE");
    (scene, provider)
}

fn deletes(scene: &CloudScene, prefix: &str) -> Vec<String> {
    scene
        .cloud
        .calls()
        .into_iter()
        .filter(|c| c.method == "DELETE" && c.path.starts_with(prefix))
        .map(|c| c.path)
        .collect()
}

#[tokio::test]
async fn stale_allocations_are_deleted_after_a_second_operators_approval_and_only_those() {
    let (scene, provider) = stale_scene().await;
    let h = &scene.harness;
    let reply = h
        .slash("alice", "/placement stale cloud:prod host:compute-03")
        .await;
    assert!(
        reply.text.starts_with("r-1 waits for approval"),
        "{}",
        reply.text
    );
    assert!(
        deletes(&scene, "/placement").is_empty(),
        "nothing before approval"
    );

    let own = h.approve("alice", "r-1").await;
    assert!(own.private, "the requester cannot approve: {}", own.text);
    let approved = h.approve("bob", "r-1").await.text;
    assert!(
        approved.starts_with("r-1 approved by bob (plan digest "),
        "{approved}"
    );
    let run = h.finished(RunId::new(1)).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{:?}",
        run.steps()
    );

    let left: Vec<Uuid> = scene.cloud.allocations(provider).into_keys().collect();
    assert_eq!(
        left,
        vec![uuid(2)],
        "the running instance keeps its allocations"
    );
    assert_eq!(
        deletes(&scene, "/placement"),
        vec![
            format!("/placement/allocations/{}", uuid(1)),
            format!("/placement/allocations/{}", uuid(3)),
        ],
        "each stale consumer deleted once, nothing else"
    );
    // The password never reaches the store (every file of the sled directory is read).
    for entry in std::fs::read_dir(h.config.store.sled_path().unwrap()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes.windows(9).any(|w| w == b"adminpass"),
                "the cloud's password is in {}",
                path.display()
            );
        }
    }
    for call in scene.cloud.calls() {
        if call.path.starts_with("/placement/") {
            // 1.38 only to read a consumer's type, which older microversions do not show.
            let version = call.microversion.as_deref();
            let consumer_read =
                call.method == "GET" && call.path.starts_with("/placement/allocations/");
            assert!(
                version == Some("placement 1.17")
                    || (consumer_read && version == Some("placement 1.38")),
                "{call:?}"
            );
        }
        if !call.path.starts_with("/identity") {
            assert!(call.token_present, "{call:?}");
        }
    }
}

#[tokio::test]
async fn an_instance_that_exists_is_never_deleted() {
    let (scene, provider) = stale_scene().await;
    let h = &scene.harness;
    let named = format!(
        "/placement stale cloud:prod host:compute-03 instance:{}",
        uuid(2)
    );
    let reply = h.slash("alice", &named).await;
    assert!(
        reply.private && reply.text.contains("exists (`web-2`, ACTIVE)"),
        "{}",
        reply.text
    );

    // Planned while gone, back before the delete: kept.
    let id = h
        .start_run("alice", "/placement stale cloud:prod host:compute-03")
        .await;
    scene.cloud.add_server(uuid(3), "restored", "ACTIVE");
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{:?}",
        run.steps()
    );
    let notes: Vec<&str> = run
        .steps()
        .iter()
        .filter_map(|s| match s {
            StepState::Done { note, .. } => Some(note.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("instance `restored` exists now")),
        "{notes:?}"
    );
    let left: Vec<Uuid> = scene.cloud.allocations(provider).into_keys().collect();
    assert_eq!(left, vec![uuid(2), uuid(3)]);
}

#[tokio::test]
async fn bad_cloud_input_gets_a_clear_answer_and_nothing_is_deleted() {
    let (scene, _) = stale_scene().await;
    scene.cloud.add_provider("compute-dup");
    scene.cloud.add_provider("compute-dup");
    let h = &scene.harness;
    for (line, expected) in [
        (
            "/placement stale cloud:staging host:compute-03",
            "unknown cloud `staging`; configured: prod",
        ),
        (
            "/placement stale cloud:prod host:compute-99",
            "no resource provider named `compute-99`",
        ),
        (
            "/placement stale cloud:prod host:compute-dup",
            "2 resource providers are named `compute-dup`",
        ),
        (
            "/placement stale cloud:prod host:compute-03 instance:12345",
            "is not a UUID",
        ),
        (
            "/image properties cloud:prod image:cirros hw_disk_bus:ide",
            "hw_disk_bus: must be `scsi`",
        ),
        (
            "/image properties cloud:prod image:nope os_type:linux",
            "has no image `nope`",
        ),
    ] {
        let reply = h.slash("alice", line).await;
        assert!(reply.private, "{line}");
        assert!(reply.text.contains(expected), "{line}: {}", reply.text);
    }
    assert!(deletes(&scene, "/").is_empty());
    assert!(h.engine.store().runs().unwrap().is_empty());
}

fn service(host: &str, status: ServiceStatus, state: ServiceState) -> ComputeServiceSeed {
    ComputeServiceSeed {
        status,
        state,
        ..ComputeServiceSeed::nova_compute(
            host,
            OffsetDateTime::now_utc() - time::Duration::minutes(3),
        )
    }
}

#[tokio::test]
async fn the_rpc_cap_fix_deletes_old_disabled_services_then_restarts_the_computes() {
    let scene = CloudScene::start(CloudSimConfig {
        compute_restart_downtime: Duration::from_secs(1),
        ..CloudSimConfig::default()
    })
    .await;
    let old = scene.cloud.add_service(service(
        "compute-old",
        ServiceStatus::Disabled,
        ServiceState::Down,
    ));
    for host in ["compute-01", "compute-02"] {
        scene
            .cloud
            .add_service(service(host, ServiceStatus::Enabled, ServiceState::Up));
    }
    let h = &scene.harness;
    let services = h.slash("alice", "/compute services cloud:prod").await;
    let first = services.text.lines().nth(1).unwrap_or_default();
    assert!(
        first.contains("compute-old") && first.contains("disabled"),
        "{}",
        services.text
    );

    let line = "/compute rpc-cap cloud:prod error:\"Requested message version, 5.0 is \
                incompatible.  It needs to be equal in major version and less than or equal in \
                minor version as the specified version cap 4.17.\"";
    let id = h.start_run("alice", line).await;
    let run = h.run(id);
    let plan = run.plan();
    assert!(
        plan.notes()[0].contains("requested 5.0, cap 4.17"),
        "{:?}",
        plan.notes()
    );
    assert!(
        deletes(&scene, "/compute").is_empty(),
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
    assert_eq!(
        deletes(&scene, "/compute"),
        vec![format!("/compute/v2.1/os-services/{old}")]
    );
    let hosts: Vec<String> = scene.cloud.services().into_iter().map(|s| s.host).collect();
    assert!(!hosts.contains(&"compute-old".to_owned()), "{hosts:?}");
    assert_eq!(
        run.steps().len(),
        6,
        "the approval, one delete, two restarts each with its wait"
    );
    assert_eq!(scene.cloud.restart_count("compute-01"), 1);
    assert_eq!(scene.cloud.restart_count("compute-02"), 1);
}

#[tokio::test]
async fn image_properties_are_set_with_one_json_patch_of_what_differs() {
    let scene = CloudScene::start(CloudSimConfig::default()).await;
    let image = scene.cloud.add_image(
        "ubuntu-22.04",
        &[("hw_disk_bus", "ide"), ("os_type", "linux")],
    );
    let h = &scene.harness;
    let id = h
        .start_run(
            "alice",
            "/image properties cloud:prod image:ubuntu-22.04 hw_scsi_model:virtio-scsi \
             hw_disk_bus:scsi os_type:linux os_distro:ubuntu",
        )
        .await;
    let run = h.finished(id).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{:?}",
        run.steps()
    );
    let patches: Vec<serde_json::Value> = scene
        .cloud
        .calls()
        .into_iter()
        .filter(|c| c.method == "PATCH")
        .map(|c| serde_json::from_str(&c.body.unwrap()).unwrap())
        .collect();
    assert_eq!(patches.len(), 1);
    let ops: Vec<(String, String)> = patches[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| {
            (
                op["op"].as_str().unwrap().into(),
                op["path"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        ops,
        [
            ("add".to_owned(), "/hw_scsi_model".to_owned()),
            ("replace".to_owned(), "/hw_disk_bus".to_owned()),
            ("add".to_owned(), "/os_distro".to_owned()),
        ]
    );
    let after = serde_json::to_value(scene.cloud.image(image).unwrap()).unwrap();
    assert_eq!(after["properties"]["hw_disk_bus"], "scsi", "{after}");
    assert_eq!(
        after["properties"]["hw_scsi_model"], "virtio-scsi",
        "{after}"
    );
}

#[tokio::test]
async fn faults_are_retried_and_a_revoked_or_expiring_token_is_renewed() {
    // Keystone's default: the bot's clock is moved past it, not waited out.
    const LIFETIME: Duration = Duration::from_secs(3600);
    let scene = CloudScene::start(CloudSimConfig {
        token_lifetime: LIFETIME,
        ..CloudSimConfig::default()
    })
    .await;
    scene.cloud.add_service(service(
        "compute-01",
        ServiceStatus::Enabled,
        ServiceState::Up,
    ));
    let h = &scene.harness;
    scene.cloud.set_faults(vec![
        "status=503,count=2,path=/compute"
            .parse::<FaultRule>()
            .unwrap(),
    ]);
    let reply = h.slash("alice", "/compute services cloud:prod").await;
    assert!(reply.text.contains("compute-01"), "{}", reply.text);

    scene.cloud.revoke_tokens();
    let reply = h.slash("alice", "/compute services cloud:prod").await;
    assert!(
        reply.text.contains("compute-01"),
        "after a revocation: {}",
        reply.text
    );

    // Only the bot's clock: the simulator keeps its tokens on wall time, so the one the bot
    // holds is still valid there, and only a renewal by the bot's own reckoning is seen.
    h.clock.skip(LIFETIME);
    scene.cloud.clear_calls();
    let reply = h.slash("alice", "/compute services cloud:prod").await;
    assert!(
        reply.text.contains("compute-01"),
        "after expiry: {}",
        reply.text
    );
    let statuses: Vec<(String, u16)> = scene
        .cloud
        .calls()
        .into_iter()
        .map(|c| (c.path, c.status))
        .collect();
    assert_eq!(
        statuses,
        [
            ("/identity/v3/auth/tokens".to_owned(), 201),
            ("/compute/v2.1/os-services".to_owned(), 200),
        ],
        "an expiring token is renewed before use, not after a refusal"
    );
}

#[tokio::test]
async fn a_catalog_without_an_internal_placement_endpoint_is_named() {
    let scene = CloudScene::start(CloudSimConfig {
        placement_interfaces: vec![Interface::Public],
        ..CloudSimConfig::default()
    })
    .await;
    let reply = scene
        .harness
        .slash("alice", "/placement allocations cloud:prod host:compute-03")
        .await;
    assert!(
        reply.private
            && reply
                .text
                .contains("no internal placement endpoint in region RegionOne (there: public)"),
        "{}",
        reply.text
    );
}
