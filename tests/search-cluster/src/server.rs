//! Starting and stopping the simulator, and the handle tests and the CLI hold on to.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::serving::Server;

use crate::admin::{NodeAction, NodeChange, UnknownNode, change_node};
use crate::app::App;
use crate::calls::Call;
use crate::config::SimConfig;
use crate::fault::FaultRule;
use crate::tls::SimTls;
use crate::world::WorldSnapshot;

/// A running simulator. Dropping it asks the server to stop gracefully.
#[derive(Debug)]
pub struct SimHandle {
    addr: SocketAddr,
    /// `https` when serving TLS.
    scheme: &'static str,
    app: Arc<App>,
    server: Server,
}

/// Serves a simulated cluster on `listener` (bind `127.0.0.1:0` for tests).
///
/// Fails with [`io::ErrorKind::InvalidInput`] for an unusable [`SimConfig`]
/// (see [`crate::ConfigError`]).
pub async fn spawn(config: SimConfig, listener: TcpListener) -> io::Result<SimHandle> {
    let invalid = |error| io::Error::new(io::ErrorKind::InvalidInput, error);
    let tls = config
        .tls
        .as_ref()
        .map(SimTls::server_config)
        .transpose()
        .map_err(invalid)?;
    let app = Arc::new(App::new(config).map_err(invalid)?);
    let addr = listener.local_addr()?;
    let router = crate::http::router(Arc::clone(&app));
    let (server, scheme) = match tls {
        Some(tls) => (
            Server::serve_tls(listener, tls, router, "simulated cluster")?,
            "https",
        ),
        None => (
            Server::serve(listener, router, "simulated cluster")?,
            "http",
        ),
    };
    Ok(SimHandle {
        addr,
        scheme,
        app,
        server,
    })
}

impl SimHandle {
    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://IP:PORT` (`https://` with TLS), the URL clients use as the cluster (haproxy
    /// VIP) address.
    pub fn base_url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// The cluster API requests received so far (admin requests are not logged).
    pub fn calls(&self) -> Vec<Call> {
        self.app.calls().list()
    }

    /// Empties the call log; sequence numbers keep counting.
    pub fn clear_calls(&self) {
        self.app.calls().clear();
    }

    /// The world at the current simulated time.
    pub fn state(&self) -> WorldSnapshot {
        self.app.with_world(|world| world.snapshot())
    }

    /// The names of the indices the cluster holds now.
    pub fn index_names(&self) -> Vec<String> {
        self.state().indices.into_iter().map(|i| i.name).collect()
    }

    /// The fault rules with their remaining counts.
    pub fn faults(&self) -> Vec<FaultRule> {
        self.app.faults().clone()
    }

    /// Replaces the fault rules.
    pub fn set_faults(&self, rules: Vec<FaultRule>) {
        *self.app.faults() = rules;
    }

    /// Changes [`SimConfig::delete_apply`] for deletions the master starts from now on (one
    /// already executing keeps its time).
    pub fn set_delete_apply(&self, apply: Duration) {
        let millis = u64::try_from(apply.as_millis()).unwrap_or(u64::MAX);
        self.app.with_world(|world| world.set_delete_apply(millis));
    }

    /// Starts a snapshot that copies the named indices as they are now, ending any earlier
    /// one (no names: none runs). Deleting one of them is refused until it ends.
    pub fn set_snapshotting(&self, names: &[&str]) {
        self.app.with_world(|world| {
            let uuids = world
                .indices()
                .iter()
                .filter(|index| names.contains(&index.name.as_str()))
                .map(|index| index.uuid.clone())
                .collect();
            world.set_snapshotting(uuids);
        });
    }

    /// Stops a node's container at once (its shard data stays on its disk).
    pub fn stop_node(&self, ip: Ipv4Addr) -> Result<NodeChange, UnknownNode> {
        change_node(&self.app, ip, NodeAction::Stop)
    }

    /// Starts a node's container; it joins the cluster after booting.
    pub fn start_node(&self, ip: Ipv4Addr) -> Result<NodeChange, UnknownNode> {
        change_node(&self.app, ip, NodeAction::Start)
    }

    /// Stops accepting requests, lets in-flight ones finish (up to a few seconds) and returns.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}
