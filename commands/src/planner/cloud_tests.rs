//! The cloud planners: stale allocations, the RPC cap and image properties.

use std::collections::BTreeMap;

use super::*;
use crate::openstack::compute::{ComputeService, Instance, Migration, ServiceState, ServiceStatus};
use crate::openstack::ids::{ImageId, ProviderId, ServiceId};
use crate::openstack::image::{Image, Property, PropertyKey, PropertySet};
use crate::openstack::placement::{Provider, ProviderAllocations, Resources};
use crate::openstack::rpc::VersionCapError;
use crate::plan::{Action, CloudDestructive, CloudSafe, CloudWait};
use crate::request::ProcedureRequest;

fn uuid(n: u8) -> String {
    format!("00000000-0000-4000-8000-0000000000{n:02x}")
}

fn consumer(n: u8) -> ConsumerId {
    ConsumerId::parse(&uuid(n)).unwrap()
}

fn cloud() -> CloudName {
    CloudName::parse("prod").unwrap()
}

fn host(name: &str) -> HostName {
    HostName::parse(name).unwrap()
}

/// compute-03 with consumers 1 (gone), 2 (exists) and 3 (gone).
fn stale_facts() -> StaleFacts {
    let provider = Provider {
        uuid: ProviderId::parse(&uuid(0xa0)).unwrap(),
        name: "compute-03".into(),
        parent: None,
        root: ProviderId::parse(&uuid(0xa0)).unwrap(),
    };
    let resources = Resources::new([("VCPU".into(), 2), ("MEMORY_MB".into(), 4096)]);
    let consumers = [1, 2, 3]
        .into_iter()
        .map(|n| (consumer(n), resources.clone()))
        .collect();
    let instances = BTreeMap::from([
        (consumer(1), Instance::Gone),
        (
            consumer(2),
            Instance::Exists {
                name: "web-1".into(),
                status: "ACTIVE".into(),
            },
        ),
        (consumer(3), Instance::Gone),
    ]);
    StaleFacts {
        allocations: ProviderAllocations {
            provider,
            generation: 7,
            consumers,
        },
        instances,
        migrations: Vec::new(),
        consumer_types: BTreeMap::new(),
    }
}

fn stale_request(instance: Option<ConsumerId>) -> ProcedureRequest {
    ProcedureRequest::PlacementStale {
        cloud: cloud(),
        host: host("compute-03"),
        instance,
    }
}

#[test]
fn only_allocations_of_gone_instances_are_deleted_then_verified() {
    let plan = plan(&stale_request(None), &Facts::Stale(stale_facts())).unwrap();
    let deleted: Vec<ConsumerId> = plan.deleted_consumers().collect();
    assert_eq!(deleted, vec![consumer(1), consumer(3)]);
    assert!(plan.needs_approval());
    assert!(matches!(
        plan.cloud_steps().last(),
        Some(Action::Safe(CloudSafe::VerifyReleased { .. }))
    ));
    assert!(
        plan.notes()
            .iter()
            .any(|n| n.contains("kept") && n.contains("web-1"))
    );
}

#[test]
fn a_named_instance_that_exists_is_refused() {
    let refused = plan(
        &stale_request(Some(consumer(2))),
        &Facts::Stale(stale_facts()),
    );
    assert!(
        matches!(refused, Err(PlanError::InstanceExists { ref name, .. }) if name == "web-1"),
        "{refused:?}"
    );
}

#[test]
fn a_named_instance_is_the_only_one_deleted() {
    let plan = plan(
        &stale_request(Some(consumer(3))),
        &Facts::Stale(stale_facts()),
    )
    .unwrap();
    assert_eq!(
        plan.deleted_consumers().collect::<Vec<_>>(),
        vec![consumer(3)]
    );
}

#[test]
fn a_named_instance_without_allocations_here_is_refused() {
    let refused = plan(
        &stale_request(Some(consumer(9))),
        &Facts::Stale(stale_facts()),
    );
    assert!(
        matches!(refused, Err(PlanError::NoAllocation { .. })),
        "{refused:?}"
    );
}

#[test]
fn a_migrations_allocations_are_never_planned_for_deletion() {
    // Consumer 1 is the UUID of a resize that left compute-03 (Nova moved the instance's
    // allocations there to it); `GET /servers/<it>` is 404, as for a gone instance.
    let mut facts = stale_facts();
    facts.migrations.push(Migration {
        id: 17,
        uuid: consumer(1),
        instance: consumer(7),
        kind: "resize".into(),
        status: "finished".into(),
        source: Some("compute-03".into()),
        dest: Some("compute-04".into()),
    });
    // Consumer 3 is typed MIGRATION by placement, though Nova lists no such migration.
    facts.consumer_types.insert(consumer(3), "MIGRATION".into());
    let kept = plan(&stale_request(None), &Facts::Stale(facts.clone())).unwrap();
    assert!(kept.cloud_steps().is_empty(), "{:?}", kept.cloud_steps());
    let moving: Vec<&String> = kept
        .notes()
        .iter()
        .filter(|n| n.starts_with("kept") && n.contains(": migration "))
        .collect();
    assert_eq!(moving.len(), 2, "{:?}", kept.notes());
    // A resize Nova reports `finished` is done but for the operator's confirm or revert.
    assert!(
        moving[0].contains("migration awaiting a confirm or a revert, resize"),
        "{}",
        moving[0]
    );
    assert!(moving[1].contains("migration in progress"), "{}", moving[1]);
    // Named, it is refused, saying why.
    let refused = crate::planner::plan(&stale_request(Some(consumer(1))), &Facts::Stale(facts));
    assert!(
        matches!(refused, Err(PlanError::MigrationInProgress { .. })),
        "{refused:?}"
    );
    // A migration that ended holds nothing: its leftover allocations are stale.
    let mut ended = stale_facts();
    ended.migrations.push(Migration {
        id: 17,
        uuid: consumer(1),
        instance: consumer(7),
        kind: "migration".into(),
        status: "confirmed".into(),
        source: None,
        dest: None,
    });
    assert!(!ended.migrations[0].in_progress());
    let stale = plan(&stale_request(None), &Facts::Stale(ended)).unwrap();
    assert_eq!(
        stale.deleted_consumers().collect::<Vec<_>>(),
        vec![consumer(1), consumer(3)]
    );
}

#[test]
fn nothing_stale_is_nothing_to_do() {
    let mut facts = stale_facts();
    for instance in facts.instances.values_mut() {
        *instance = Instance::Exists {
            name: "vm".into(),
            status: "ACTIVE".into(),
        };
    }
    let plan = plan(&stale_request(None), &Facts::Stale(facts)).unwrap();
    assert!(plan.cloud_steps().is_empty());
    assert!(plan.notes().iter().any(|n| n.contains("nothing to delete")));
}

fn service(n: u8, host_name: &str, status: ServiceStatus, state: ServiceState) -> ComputeService {
    ComputeService {
        id: ServiceId::parse(&uuid(n)).unwrap(),
        binary: ComputeService::COMPUTE.into(),
        host: host(host_name),
        zone: "nova".into(),
        status,
        state,
        updated_at: None,
        disabled_reason: None,
    }
}

/// The services, with no migration at any hypervisor a restart is planned for.
fn rpc_facts(services: Vec<ComputeService>) -> RpcCapFacts {
    let migrations = restart_candidates(&services)
        .map(|s| (s.host.clone(), Vec::new()))
        .collect();
    RpcCapFacts {
        services,
        migrations,
    }
}

fn rpc_request() -> ProcedureRequest {
    ProcedureRequest::ComputeRpcCap {
        cloud: cloud(),
        error: Some(
            VersionCapError::parse("requested message version 5.0 ... version cap 4.17").unwrap(),
        ),
    }
}

#[test]
fn old_disabled_services_go_under_approval_then_the_computes_restart() {
    use ServiceState::{Down, Up};
    use ServiceStatus::{Disabled, Enabled};
    let facts = rpc_facts(vec![
        service(1, "compute-01", Enabled, Up),
        service(2, "compute-old", Disabled, Down),
        service(3, "compute-02", Enabled, Up),
        service(4, "compute-07", Disabled, Up),
        service(5, "compute-09", Enabled, Down),
    ]);
    let plan = plan(&rpc_request(), &Facts::RpcCap(facts)).unwrap();
    let kinds: Vec<String> = plan
        .cloud_steps()
        .iter()
        .map(|step| match step {
            Action::Destructive(CloudDestructive::DeleteComputeService { host, .. }) => {
                format!("delete {host}")
            }
            Action::Safe(CloudSafe::RestartCompute { host }) => format!("restart {host}"),
            Action::Wait(CloudWait::ComputeUp { host }) => format!("wait for {host}"),
            Action::Gate { .. } => "approval".to_owned(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "approval",
            "delete compute-old",
            "restart compute-01",
            "wait for compute-01",
            "restart compute-02",
            "wait for compute-02"
        ]
    );
    assert_eq!(plan.approval_at(), Some(0));
    assert!(plan.notes()[0].contains("requested 5.0, cap 4.17"));
    assert!(
        plan.notes()
            .iter()
            .any(|n| n.contains("kept nova-compute on compute-07"))
    );
}

#[test]
fn with_no_old_service_the_fix_is_a_rolling_restart_still_under_approval() {
    let facts = rpc_facts(vec![service(
        1,
        "compute-01",
        ServiceStatus::Enabled,
        ServiceState::Up,
    )]);
    let plan = plan(&rpc_request(), &Facts::RpcCap(facts)).unwrap();
    // A restart interrupts the hypervisor's compute service: a second person says when.
    assert_eq!(plan.approval_at(), Some(0));
    assert_eq!(plan.cloud_steps().len(), 3);
    assert!(matches!(
        plan.cloud_steps()[2],
        Action::Wait(CloudWait::ComputeUp { .. })
    ));
}

#[test]
fn no_compute_up_is_refused() {
    let facts = rpc_facts(vec![service(
        2,
        "compute-old",
        ServiceStatus::Disabled,
        ServiceState::Down,
    )]);
    let refused = plan(&rpc_request(), &Facts::RpcCap(facts));
    assert!(
        matches!(refused, Err(PlanError::NoComputeUp { .. })),
        "{refused:?}"
    );
}

/// A migration of instance `n` between two hosts.
fn moving(n: u8, kind: &str, status: &str, source: &str, dest: &str) -> Migration {
    Migration {
        id: u64::from(n) + 16,
        uuid: consumer(n + 0x10),
        instance: consumer(n),
        kind: kind.into(),
        status: status.into(),
        source: Some(source.into()),
        dest: Some(dest.into()),
    }
}

/// What the plan restarts, in order.
fn restarted(plan: &Plan) -> Vec<String> {
    plan.cloud_steps()
        .iter()
        .filter_map(|step| match step {
            Action::Safe(CloudSafe::RestartCompute { host }) => Some(host.to_string()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_hypervisor_with_a_migration_in_progress_at_either_end_is_not_restarted() {
    use ServiceState::Up;
    use ServiceStatus::Enabled;
    let mut facts = rpc_facts(
        ["compute-01", "compute-02", "compute-03", "compute-04"]
            .iter()
            .enumerate()
            .map(|(n, host)| service(n as u8 + 1, host, Enabled, Up))
            .collect(),
    );
    let live = moving(1, "live-migration", "running", "compute-02", "compute-03");
    // Both ends are named by `GET /os-migrations?host=`.
    for host in ["compute-02", "compute-03"] {
        facts
            .migrations
            .insert(self::host(host), vec![live.clone()]);
    }
    // A resize awaiting its confirmation runs nothing: a restart does not disturb it; one
    // that ended holds nothing either.
    facts.migrations.insert(
        host("compute-04"),
        vec![
            moving(2, "resize", "finished", "compute-04", "compute-01"),
            moving(3, "live-migration", "completed", "compute-04", "compute-01"),
        ],
    );
    let plan = plan(&rpc_request(), &Facts::RpcCap(facts)).unwrap();
    assert_eq!(restarted(&plan), ["compute-01", "compute-04"]);
    assert_eq!(plan.approval_at(), Some(0));
    let held: Vec<&String> = plan
        .notes()
        .iter()
        .filter(|n| n.contains("is not restarted"))
        .collect();
    let held_back = |host: &str| {
        format!(
            "{host} is not restarted: live migration 17 of instance {} is running \
             (compute-02 → compute-03); run /compute rpc-cap cloud:prod again once it has \
             finished",
            consumer(1)
        )
    };
    assert_eq!(held, [&held_back("compute-02"), &held_back("compute-03")]);
}

#[test]
fn cold_migrations_and_resizes_under_way_hold_their_hosts_back_too() {
    let mut facts = rpc_facts(vec![service(
        1,
        "compute-01",
        ServiceStatus::Enabled,
        ServiceState::Up,
    )]);
    facts.migrations.insert(
        host("compute-01"),
        vec![
            moving(1, "migration", "migrating", "compute-01", "compute-02"),
            moving(2, "resize", "post-migrating", "compute-03", "compute-01"),
        ],
    );
    let plan = plan(&rpc_request(), &Facts::RpcCap(facts)).unwrap();
    let note = plan
        .notes()
        .iter()
        .find(|n| n.starts_with("compute-01 is not restarted"))
        .unwrap();
    assert!(
        note.contains("cold migration 17 of instance")
            && note.contains("; resize 18 of instance")
            && note.ends_with("once they have finished"),
        "{note}"
    );
}

#[test]
fn with_every_hypervisor_held_back_there_is_nothing_to_do_and_the_notes_say_why() {
    let mut facts = rpc_facts(vec![service(
        1,
        "compute-01",
        ServiceStatus::Enabled,
        ServiceState::Up,
    )]);
    facts.migrations.insert(
        host("compute-01"),
        vec![moving(
            1,
            "live-migration",
            "queued",
            "compute-01",
            "compute-02",
        )],
    );
    let plan = plan(&rpc_request(), &Facts::RpcCap(facts.clone())).unwrap();
    assert!(plan.cloud_steps().is_empty(), "{:?}", plan.cloud_steps());
    assert!(
        plan.notes()
            .iter()
            .any(|n| n.starts_with("compute-01 is not restarted: live migration 17"))
            && plan.notes().last().unwrap().starts_with("nothing to do"),
        "{:?}",
        plan.notes()
    );
    // An old record to delete is still deleted, under approval, with no restart.
    facts.services.push(service(
        2,
        "compute-old",
        ServiceStatus::Disabled,
        ServiceState::Down,
    ));
    let plan = super::plan(&rpc_request(), &Facts::RpcCap(facts)).unwrap();
    assert!(restarted(&plan).is_empty());
    assert_eq!(plan.approval_at(), Some(0));
    assert!(matches!(
        plan.cloud_steps()[1],
        Action::Destructive(CloudDestructive::DeleteComputeService { .. })
    ));
}

#[test]
fn a_hypervisor_whose_migrations_were_not_read_is_a_facts_mismatch() {
    let mut facts = rpc_facts(vec![service(
        1,
        "compute-01",
        ServiceStatus::Enabled,
        ServiceState::Up,
    )]);
    facts.migrations.clear();
    let refused = plan(&rpc_request(), &Facts::RpcCap(facts));
    assert!(
        matches!(refused, Err(PlanError::FactsMismatch { .. })),
        "{refused:?}"
    );
}

fn image(n: u8, name: &str, properties: &[(PropertyKey, &str)]) -> Image {
    Image {
        id: ImageId::parse(&uuid(n)).unwrap(),
        name: name.into(),
        status: "active".into(),
        properties: properties
            .iter()
            .map(|(k, v)| (*k, (*v).to_owned()))
            .collect(),
    }
}

fn image_request() -> ProcedureRequest {
    ProcedureRequest::ImageProperties {
        cloud: cloud(),
        image: crate::openstack::ids::ImageRef::parse("ubuntu").unwrap(),
        properties: PropertySet::new([
            Property::parse(PropertyKey::HwScsiModel, "virtio-scsi").unwrap(),
            Property::parse(PropertyKey::HwDiskBus, "scsi").unwrap(),
        ])
        .unwrap(),
    }
}

#[test]
fn only_differing_properties_are_patched() {
    let facts = ImageFacts {
        matches: vec![image(1, "ubuntu", &[(PropertyKey::HwDiskBus, "scsi")])],
    };
    let plan = plan(&image_request(), &Facts::Image(facts)).unwrap();
    let [Action::Safe(CloudSafe::SetImageProperties { changes, .. })] = plan.cloud_steps() else {
        panic!("{:?}", plan.cloud_steps());
    };
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].property.key(), PropertyKey::HwScsiModel);
    assert!(!plan.needs_approval());
}

#[test]
fn an_image_already_set_is_nothing_to_do_and_ambiguity_is_refused() {
    let set = image(
        1,
        "ubuntu",
        &[
            (PropertyKey::HwDiskBus, "scsi"),
            (PropertyKey::HwScsiModel, "virtio-scsi"),
        ],
    );
    let plan = plan(
        &image_request(),
        &Facts::Image(ImageFacts {
            matches: vec![set.clone()],
        }),
    )
    .unwrap();
    assert!(plan.cloud_steps().is_empty());
    let twice = ImageFacts {
        matches: vec![set, image(2, "ubuntu", &[])],
    };
    assert!(matches!(
        super::plan(&image_request(), &Facts::Image(twice)),
        Err(PlanError::SeveralImages { .. })
    ));
    assert!(matches!(
        super::plan(
            &image_request(),
            &Facts::Image(ImageFacts { matches: vec![] })
        ),
        Err(PlanError::UnknownImage { .. })
    ));
}
