//! Starting and stopping the simulated cloud, and the handle tests and the demo hold on to.

mod nova;

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use opsbot_search_sim::{FaultRule, Server};
use tokio::net::TcpListener;
use uuid::Uuid;

use crate::app::App;
use crate::calls::Call;
use crate::config::{CloudSimConfig, ComputeServiceSeed, ImageSeed, ServerSeed};
use crate::http::microversion::{PLACEMENT_MAX, PLACEMENT_MIN};
use crate::world::{ComputeService, Image};

/// A running simulated cloud. Dropping it asks the server to stop gracefully.
#[derive(Debug)]
pub struct CloudSimHandle {
    addr: SocketAddr,
    app: Arc<App>,
    server: Server,
}

/// Serves a simulated cloud on `listener` (bind `127.0.0.1:0` for tests). A seeded migration
/// that Nova would refuse fails with [`io::ErrorKind::InvalidInput`].
pub async fn spawn(config: CloudSimConfig, listener: TcpListener) -> io::Result<CloudSimHandle> {
    let addr = listener.local_addr()?;
    let max = config.placement_max_version;
    if !(PLACEMENT_MIN..=PLACEMENT_MAX).contains(&max) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "placement_max_version {max} is outside {PLACEMENT_MIN}–{PLACEMENT_MAX}, the placement microversions the simulator implements"
            ),
        ));
    }
    let app = App::new(&config, format!("http://{addr}"))
        .map_err(|refused| io::Error::new(io::ErrorKind::InvalidInput, refused))?;
    let app = Arc::new(app);
    let server = Server::serve(
        listener,
        crate::http::router(Arc::clone(&app)),
        "simulated cloud",
    )?;
    Ok(CloudSimHandle { addr, app, server })
}

impl CloudSimHandle {
    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://IP:PORT`, under which every API has its prefix.
    pub fn base_url(&self) -> String {
        self.app.base_url.clone()
    }

    /// `{base}/identity/v3`, the `auth_url` clients start from.
    pub fn identity_url(&self) -> String {
        format!("{}/identity/v3", self.app.base_url)
    }

    /// The OpenStack requests received so far (admin requests are not logged).
    pub fn calls(&self) -> Vec<Call> {
        self.app.calls().list()
    }

    /// Empties the call log; sequence numbers keep counting.
    pub fn clear_calls(&self) {
        self.app.calls().clear();
    }

    /// The fault rules with their remaining counts.
    pub fn faults(&self) -> Vec<FaultRule> {
        self.app.faults().clone()
    }

    /// Replaces the fault rules.
    pub fn set_faults(&self, rules: Vec<FaultRule>) {
        *self.app.faults() = rules;
    }

    /// Revokes every token issued so far: they all get 401 from now on.
    pub fn revoke_tokens(&self) {
        self.app.tokens().revoke_all();
    }

    /// Adds a resource provider (a hypervisor) with generation 0 and returns its uuid.
    pub fn add_provider(&self, name: &str) -> Uuid {
        let uuid = Uuid::new_v4();
        self.app.world().add_provider(uuid, name, &[]);
        uuid
    }

    /// Sets a consumer's resources on a provider (replacing what it had there) and bumps the
    /// provider's generation, as a placement allocation write does.
    ///
    /// # Panics
    ///
    /// If `provider` was not added first: a mistake in a test's setup, never client input.
    pub fn add_allocation(&self, provider: Uuid, consumer: Uuid, resources: &[(&str, u64)]) {
        let resources = resources
            .iter()
            .map(|(class, amount)| ((*class).to_owned(), *amount))
            .collect();
        let added = self
            .app
            .world()
            .add_allocation(provider, consumer, resources);
        if let Err(unknown) = added {
            panic!("{unknown}: add it with add_provider first");
        }
    }

    /// A provider's allocations by consumer; empty for an unknown provider.
    pub fn allocations(&self, provider: Uuid) -> BTreeMap<Uuid, BTreeMap<String, u64>> {
        self.app
            .world()
            .provider(provider)
            .map(|found| found.allocations.clone())
            .unwrap_or_default()
    }

    /// Adds (or replaces) a server not placed on any host.
    pub fn add_server(&self, id: Uuid, name: &str, status: &str) {
        self.app.world().add_server(&ServerSeed {
            id,
            name: name.to_owned(),
            status: status.to_owned(),
            host: None,
        });
    }

    /// Deletes a server (nova answers 404 for it from now on); its allocations stay. False if
    /// there was no such server.
    pub fn delete_server(&self, id: Uuid) -> bool {
        self.app.world().delete_server(id)
    }

    /// Adds a nova service and returns its uuid (its integer id is the next free one).
    pub fn add_service(&self, seed: ComputeServiceSeed) -> Uuid {
        self.app.world().add_service(&seed)
    }

    /// Every nova service, in creation order.
    pub fn services(&self) -> Vec<ComputeService> {
        self.app.world().services()
    }

    /// Adds an active public image with these custom properties and returns its uuid.
    pub fn add_image(&self, name: &str, properties: &[(&str, &str)]) -> Uuid {
        let id = Uuid::new_v4();
        self.app.world().add_image(&ImageSeed {
            id,
            name: name.to_owned(),
            properties: properties
                .iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                .collect(),
        });
        id
    }

    /// An image as it is now.
    pub fn image(&self, id: Uuid) -> Option<Image> {
        self.app.world().image(id).cloned()
    }

    /// Stops accepting requests, lets in-flight ones finish (up to a few seconds) and returns.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}
