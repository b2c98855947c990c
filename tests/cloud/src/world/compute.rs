//! Nova's part of the world: servers and the services of the compute control plane.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use super::World;
use super::heartbeat::Heartbeat;
use crate::config::{ComputeServiceSeed, ServerSeed, ServiceState, ServiceStatus};

/// A nova server.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Server {
    pub id: Uuid,
    pub name: String,
    pub status: String,
    pub host: Option<String>,
    pub project_id: String,
    pub user_id: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created: OffsetDateTime,
}

/// A nova service as `os-services` shows it at one instant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComputeService {
    /// The id before microversion 2.53.
    pub id: u32,
    /// The id from microversion 2.53 on.
    pub uuid: Uuid,
    /// Binary name, e.g. `nova-compute`.
    pub binary: String,
    /// Host name.
    pub host: String,
    /// Availability zone.
    pub zone: String,
    /// Enabled or disabled.
    pub status: ServiceStatus,
    /// Up or down, as Nova derives it from `updated_at` and the clock (see the crate docs).
    pub state: ServiceState,
    /// Last heartbeat.
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
    /// Why an operator disabled it.
    pub disabled_reason: Option<String>,
    /// Whether an operator forced it down (never set by the simulator's own API).
    pub forced_down: bool,
}

/// A nova service as the simulator holds it: its record and its heartbeat.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Service {
    pub id: u32,
    pub uuid: Uuid,
    pub binary: String,
    pub host: String,
    zone: String,
    status: ServiceStatus,
    disabled_reason: Option<String>,
    forced_down: bool,
    pub heartbeat: Heartbeat,
}

impl Service {
    /// What Nova shows at `now`: `state` from the heartbeat (`ServiceGroup.service_is_up`).
    pub(crate) fn at(&self, now: OffsetDateTime) -> ComputeService {
        let up = !self.forced_down && self.heartbeat.is_up(now);
        ComputeService {
            id: self.id,
            uuid: self.uuid,
            binary: self.binary.clone(),
            host: self.host.clone(),
            zone: self.zone.clone(),
            status: self.status,
            state: if up {
                ServiceState::Up
            } else {
                ServiceState::Down
            },
            updated_at: self.heartbeat.updated_at(now),
            disabled_reason: self.disabled_reason.clone(),
            forced_down: self.forced_down,
        }
    }

    /// Whether this is the compute service of `host`, the one a container restart restarts.
    pub(crate) fn is_compute_on(&self, host: &str) -> bool {
        self.binary == "nova-compute" && self.host == host
    }
}

impl World {
    pub(crate) fn add_server(&mut self, seed: &ServerSeed) {
        let now = self.now_seconds();
        let server = Server {
            id: seed.id,
            name: seed.name.clone(),
            status: seed.status.clone(),
            host: seed.host.clone(),
            project_id: self.owner.project_id.clone(),
            user_id: self.owner.user_id.clone(),
            created: now,
        };
        self.servers.insert(seed.id, server);
    }

    pub(crate) fn server(&self, id: Uuid) -> Option<&Server> {
        self.servers.get(&id)
    }

    /// Deletes a server; its allocations stay, as they do when nova loses track of one. Its
    /// migration records go with it, as Nova's `instance_destroy` deletes them.
    pub(crate) fn delete_server(&mut self, id: Uuid) -> bool {
        self.forget_migrations_of(id);
        self.servers.remove(&id).is_some()
    }

    /// Adds a service: `Up` in the seed means it has reported every interval since
    /// `updated_at`, `Down` that it stopped running after reporting at `updated_at`.
    pub(crate) fn add_service(&mut self, seed: &ComputeServiceSeed) -> Uuid {
        let id = self
            .services
            .iter()
            .map(|service| service.id)
            .max()
            .unwrap_or(0)
            + 1;
        let uuid = Uuid::new_v4();
        self.services.push(Service {
            id,
            uuid,
            binary: seed.binary.clone(),
            host: seed.host.clone(),
            zone: seed.zone.clone(),
            status: seed.status,
            disabled_reason: seed.disabled_reason.clone(),
            forced_down: false,
            heartbeat: match seed.state {
                ServiceState::Up => Heartbeat::reporting_since(seed.updated_at),
                ServiceState::Down => Heartbeat::stopped_at(seed.updated_at),
            },
        });
        uuid
    }

    /// Every service as Nova shows it now, in creation order.
    pub(crate) fn services(&self) -> Vec<ComputeService> {
        let now = self.now();
        self.services
            .iter()
            .map(|service| service.at(now))
            .collect()
    }

    /// Removes the service whose id (integer or uuid, as the caller's microversion uses) is
    /// given. Unlike nova, nothing else goes with it: no compute node, no resource provider,
    /// and no refusal for a host that still has instances.
    pub(crate) fn delete_service(&mut self, matches: impl Fn(&Service) -> bool) -> bool {
        let before = self.services.len();
        self.services.retain(|service| !matches(service));
        self.services.len() != before
    }
}
