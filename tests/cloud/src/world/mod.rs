//! The cloud's state: placement providers and allocations, nova servers, services and
//! migrations, images, and the clock Nova's timestamps follow.

mod compute;
mod heartbeat;
mod image;
mod migration;
mod moves;
mod placement;
mod restart;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::clock::Clock;
use crate::config::WorldSeed;

pub use compute::ComputeService;
pub(crate) use compute::{Server, Service};
pub use image::Image;
pub use migration::{Migration, MigrationError, MigrationType};
pub use placement::ConsumerType;
pub(crate) use placement::{Consumer, Provider, Write};
pub use restart::{ComputeRestart, RestartError, RestartFault};

/// A provider uuid that names no provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("unknown resource provider [{0}]")]
pub(crate) struct UnknownProvider(pub Uuid);

/// The project and user that own what is created without saying whose it is (seeded servers,
/// images and allocations): the first configured user and its project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Owner {
    pub project_id: String,
    pub user_id: String,
}

/// How the simulated Nova behaves where deployments differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Settings {
    /// How long a restarted compute service takes to report again once it is up.
    pub restart_downtime: Duration,
    /// How long the restart call takes (the container's stop and start).
    pub restart_call: Duration,
    /// Whether Nova writes consumer types (no release does; see `CloudSimConfig`).
    pub typed_consumers: bool,
}

impl Settings {
    /// The consumer type Nova sends for a consumer of this kind: none, unless configured.
    pub(crate) fn nova_type(&self, kind: ConsumerType) -> Option<ConsumerType> {
        self.typed_consumers.then_some(kind)
    }
}

/// Everything the OpenStack APIs read and change.
#[derive(Debug, Serialize)]
pub(crate) struct World {
    #[serde(skip)]
    clock: Clock,
    #[serde(skip)]
    owner: Owner,
    settings: Settings,
    /// In creation order, which placement's listings follow.
    providers: Vec<Provider>,
    consumers: BTreeMap<Uuid, Consumer>,
    servers: BTreeMap<Uuid, Server>,
    /// In creation order; each has nova's integer id and its uuid.
    services: Vec<Service>,
    /// In creation order.
    migrations: Vec<migration::Record>,
    restarts: restart::Restarts,
    images: Vec<Image>,
}

/// What `GET /_sim/state` shows: the world with services as Nova shows them now.
#[derive(Debug, Serialize)]
pub(crate) struct StateView<'w> {
    #[serde(with = "time::serde::rfc3339")]
    now: OffsetDateTime,
    #[serde(flatten)]
    world: &'w World,
    service_states: Vec<ComputeService>,
}

impl World {
    /// The world a seed describes; a seeded migration Nova would refuse is an error.
    pub(crate) fn new(
        seed: &WorldSeed,
        owner: Owner,
        settings: Settings,
    ) -> Result<Self, MigrationError> {
        let mut world = World {
            clock: Clock::default(),
            owner,
            settings,
            providers: Vec::new(),
            consumers: BTreeMap::new(),
            servers: BTreeMap::new(),
            services: Vec::new(),
            migrations: Vec::new(),
            restarts: restart::Restarts::default(),
            images: Vec::new(),
        };
        for provider in &seed.providers {
            world.add_provider(provider.uuid, &provider.name, &provider.allocations);
        }
        for server in &seed.servers {
            world.add_server(server);
        }
        for service in &seed.services {
            world.add_service(service);
        }
        for image in &seed.images {
            world.add_image(image);
        }
        for migration in &seed.migrations {
            let started = world.start_migration(
                migration.server,
                &migration.dest,
                migration.migration_type,
            )?;
            if migration.finished {
                world.finish_migration(started.uuid)?;
            }
        }
        Ok(world)
    }

    /// Now, by the simulator's clock.
    pub(crate) fn now(&self) -> OffsetDateTime {
        self.clock.now()
    }

    /// Now in whole seconds, as Nova's `DATETIME` columns keep timestamps.
    pub(crate) fn now_seconds(&self) -> OffsetDateTime {
        let now = self.now();
        now.replace_nanosecond(0).unwrap_or(now)
    }

    /// Moves the clock on.
    pub(crate) fn advance_clock(&self, by: Duration) {
        self.clock.advance(by);
    }

    /// The state as the admin API shows it.
    pub(crate) fn state(&self) -> StateView<'_> {
        StateView {
            now: self.now(),
            world: self,
            service_states: self.services(),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An empty world owned by project `p`, user `u`, whose Nova writes no consumer types.
    pub(crate) fn world() -> World {
        let owner = Owner {
            project_id: "p".into(),
            user_id: "u".into(),
        };
        let settings = Settings {
            restart_downtime: Duration::from_secs(20),
            restart_call: Duration::ZERO,
            typed_consumers: false,
        };
        match World::new(&WorldSeed::default(), owner, settings) {
            Ok(world) => world,
            Err(error) => panic!("{error}"),
        }
    }
}
