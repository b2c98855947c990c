//! The cloud's state: placement providers and allocations, nova servers and services, images.

mod compute;
mod image;
mod placement;

use std::collections::BTreeMap;

use serde::Serialize;
use uuid::Uuid;

use crate::config::WorldSeed;

pub use compute::ComputeService;
pub(crate) use compute::Server;
pub use image::Image;
pub(crate) use placement::{Consumer, Provider};

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

/// Everything the OpenStack APIs read and change; `GET /_sim/state` shows it as is.
#[derive(Debug, Serialize)]
pub(crate) struct World {
    #[serde(skip)]
    owner: Owner,
    /// In creation order, which placement's listings follow.
    providers: Vec<Provider>,
    consumers: BTreeMap<Uuid, Consumer>,
    servers: BTreeMap<Uuid, Server>,
    /// In creation order; each has nova's integer id and its uuid.
    services: Vec<ComputeService>,
    images: Vec<Image>,
}

impl World {
    pub(crate) fn new(seed: &WorldSeed, owner: Owner) -> Self {
        let mut world = World {
            owner,
            providers: Vec::new(),
            consumers: BTreeMap::new(),
            servers: BTreeMap::new(),
            services: Vec::new(),
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
        world
    }
}
