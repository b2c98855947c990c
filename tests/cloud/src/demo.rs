//! The small, believable cloud of opsbot's offline demo.

use std::collections::BTreeMap;

use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::config::{
    CloudSimConfig, ComputeServiceSeed, ImageSeed, MigrationSeed, ProviderSeed, ServerSeed,
    ServiceState, ServiceStatus, WorldSeed,
};
use crate::world::MigrationType;

/// Flavor-like resource sets: (VCPU, MEMORY_MB, DISK_GB).
const SMALL: (u64, u64, u64) = (1, 2048, 20);
const MEDIUM: (u64, u64, u64) = (2, 4096, 40);
const LARGE: (u64, u64, u64) = (4, 8192, 80);

fn resources((vcpu, memory_mb, disk_gb): (u64, u64, u64)) -> BTreeMap<String, u64> {
    BTreeMap::from([
        ("VCPU".to_owned(), vcpu),
        ("MEMORY_MB".to_owned(), memory_mb),
        ("DISK_GB".to_owned(), disk_gb),
    ])
}

/// One instance: its server (if nova still knows it) and its allocation.
struct Instance {
    name: &'static str,
    size: (u64, u64, u64),
    /// False for a stale allocation: nova deleted the server but placement kept the allocation.
    exists: bool,
}

const fn instance(name: &'static str, size: (u64, u64, u64), exists: bool) -> Instance {
    Instance { name, size, exists }
}

/// The instance being resized away from `compute-02`, and where to.
const RESIZED: (&str, &str) = ("analytics-01", "compute-03");

fn compute_service(host: &str, now: OffsetDateTime) -> ComputeServiceSeed {
    ComputeServiceSeed::nova_compute(host, now - Duration::seconds(7))
}

fn control_service(binary: &str, now: OffsetDateTime) -> ComputeServiceSeed {
    ComputeServiceSeed {
        binary: binary.to_owned(),
        zone: "internal".to_owned(),
        ..compute_service("controller-01", now)
    }
}

impl CloudSimConfig {
    /// Three hypervisors `compute-01..03` with running instances; on `compute-02`, two
    /// allocations whose servers no longer exist (stale) next to one that does, and the
    /// source allocations of `analytics-01`, resized to `compute-03` and awaiting confirmation
    /// (migration status `finished`, server `VERIFY_RESIZE`): a migration consumer, which is
    /// not stale although no server has its uuid; an old
    /// disabled-and-down `nova-compute` on `compute-old-01`; scheduler and conductor on
    /// `controller-01`; images `ubuntu-22.04` and `cirros` without any disk-bus properties.
    /// User `admin`/`adminpass` in project `admin`, domain `Default`.
    pub fn demo() -> Self {
        let now = OffsetDateTime::now_utc();
        let hosts: [(&str, &[Instance]); 3] = [
            (
                "compute-01",
                &[
                    instance("web-01", MEDIUM, true),
                    instance("web-02", MEDIUM, true),
                    instance("db-01", LARGE, true),
                ],
            ),
            (
                "compute-02",
                &[
                    instance("ci-runner-17", SMALL, false),
                    instance("ci-runner-18", SMALL, false),
                    instance("monitoring-01", MEDIUM, true),
                    instance(RESIZED.0, LARGE, true),
                ],
            ),
            (
                "compute-03",
                &[
                    instance("web-03", MEDIUM, true),
                    instance("cache-01", SMALL, true),
                ],
            ),
        ];
        let mut world = WorldSeed::default();
        for (host, instances) in hosts {
            let mut allocations = Vec::new();
            for instance in instances {
                let id = Uuid::new_v4();
                allocations.push((id, resources(instance.size)));
                if instance.exists {
                    world.servers.push(ServerSeed {
                        id,
                        name: instance.name.to_owned(),
                        status: "ACTIVE".to_owned(),
                        host: Some(host.to_owned()),
                    });
                }
            }
            world.providers.push(ProviderSeed {
                uuid: Uuid::new_v4(),
                name: host.to_owned(),
                allocations,
            });
        }
        world.migrations = world
            .servers
            .iter()
            .filter(|server| server.name == RESIZED.0)
            .map(|server| MigrationSeed {
                server: server.id,
                dest: RESIZED.1.to_owned(),
                migration_type: MigrationType::Resize,
                finished: true,
            })
            .collect();
        world.services = vec![
            control_service("nova-scheduler", now),
            control_service("nova-conductor", now),
            ComputeServiceSeed {
                status: ServiceStatus::Disabled,
                state: ServiceState::Down,
                updated_at: now - Duration::days(41),
                disabled_reason: Some("decommissioned, hardware returned".to_owned()),
                ..compute_service("compute-old-01", now)
            },
            compute_service("compute-01", now),
            compute_service("compute-02", now),
            compute_service("compute-03", now),
        ];
        world.images = [
            (
                "ubuntu-22.04",
                [("os_distro", "ubuntu"), ("os_version", "22.04")],
            ),
            ("cirros", [("os_distro", "cirros"), ("os_version", "0.6.2")]),
        ]
        .into_iter()
        .map(|(name, properties)| ImageSeed {
            id: Uuid::new_v4(),
            name: name.to_owned(),
            properties: properties
                .into_iter()
                .map(|(key, value)| (key.to_owned(), value.to_owned()))
                .collect(),
        })
        .collect();
        CloudSimConfig {
            world,
            // A demo's operator watches each restart: 3 s instead of a real cloud's ~20.
            compute_restart_downtime: std::time::Duration::from_secs(3),
            ..CloudSimConfig::default()
        }
    }
}
