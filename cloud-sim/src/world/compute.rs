//! Nova's part of the world: servers and the services of the compute control plane.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use super::World;
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

/// A nova service as the simulator holds it.
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
    /// Up or down.
    pub state: ServiceState,
    /// Last heartbeat.
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
    /// Why an operator disabled it.
    pub disabled_reason: Option<String>,
    /// Whether an operator forced it down (never set by the simulator's own API).
    pub forced_down: bool,
}

impl World {
    pub(crate) fn add_server(&mut self, seed: &ServerSeed) {
        let server = Server {
            id: seed.id,
            name: seed.name.clone(),
            status: seed.status.clone(),
            host: seed.host.clone(),
            project_id: self.owner.project_id.clone(),
            user_id: self.owner.user_id.clone(),
            created: crate::timestamps::now_seconds(),
        };
        self.servers.insert(seed.id, server);
    }

    pub(crate) fn server(&self, id: Uuid) -> Option<&Server> {
        self.servers.get(&id)
    }

    /// Deletes a server; its allocations stay, as they do when nova loses track of one.
    pub(crate) fn delete_server(&mut self, id: Uuid) -> bool {
        self.servers.remove(&id).is_some()
    }

    pub(crate) fn add_service(&mut self, seed: &ComputeServiceSeed) -> Uuid {
        let id = self
            .services
            .iter()
            .map(|service| service.id)
            .max()
            .unwrap_or(0)
            + 1;
        let uuid = Uuid::new_v4();
        self.services.push(ComputeService {
            id,
            uuid,
            binary: seed.binary.clone(),
            host: seed.host.clone(),
            zone: seed.zone.clone(),
            status: seed.status,
            state: seed.state,
            updated_at: seed.updated_at,
            disabled_reason: seed.disabled_reason.clone(),
            forced_down: false,
        });
        uuid
    }

    pub(crate) fn services(&self) -> &[ComputeService] {
        &self.services
    }

    /// Removes the service whose id (integer or uuid, as the caller's microversion uses) is
    /// given. Unlike nova, nothing else goes with it: no compute node, no resource provider,
    /// and no refusal for a host that still has instances.
    pub(crate) fn delete_service(&mut self, matches: impl Fn(&ComputeService) -> bool) -> bool {
        let before = self.services.len();
        self.services.retain(|service| !matches(service));
        self.services.len() != before
    }
}
