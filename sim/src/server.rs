//! Starting and stopping the simulator, and the handle tests and the CLI hold on to.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::admin::{NodeAction, NodeChange, UnknownNode, change_node};
use crate::app::App;
use crate::calls::Call;
use crate::config::SimConfig;
use crate::fault::FaultRule;
use crate::world::WorldSnapshot;

/// How long [`SimHandle::shutdown`] lets in-flight requests finish before cutting them off.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A running simulator. Dropping it asks the server to stop gracefully.
#[derive(Debug)]
pub struct SimHandle {
    addr: SocketAddr,
    app: Arc<App>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

/// Serves a simulated cluster on `listener` (bind `127.0.0.1:0` for tests).
///
/// Fails with [`io::ErrorKind::InvalidInput`] for an unusable [`SimConfig`]
/// (see [`crate::ConfigError`]).
pub async fn spawn(config: SimConfig, listener: TcpListener) -> io::Result<SimHandle> {
    let app = Arc::new(
        App::new(config).map_err(|error| io::Error::new(io::ErrorKind::InvalidInput, error))?,
    );
    let addr = listener.local_addr()?;
    let (stop, stopped) = oneshot::channel::<()>();
    let router = crate::http::router(Arc::clone(&app));
    let task = tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async {
                // A dropped sender means the handle is gone: stop as well.
                let _ = stopped.await;
            })
            .await
    });
    tracing::info!(%addr, "simulated cluster listening");
    Ok(SimHandle {
        addr,
        app,
        stop: Some(stop),
        task: Some(task),
    })
}

impl SimHandle {
    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://IP:PORT`, the URL clients use as the cluster (haproxy VIP) address.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
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

    /// The fault rules with their remaining counts.
    pub fn faults(&self) -> Vec<FaultRule> {
        self.app.faults().clone()
    }

    /// Replaces the fault rules.
    pub fn set_faults(&self, rules: Vec<FaultRule>) {
        *self.app.faults() = rules;
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
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(mut task) = self.task.take() {
            match tokio::time::timeout(SHUTDOWN_GRACE, &mut task).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(error))) => tracing::warn!(%error, "simulator server failed"),
                Ok(Err(error)) => tracing::warn!(%error, "simulator task failed"),
                Err(_) => {
                    tracing::warn!("simulator did not stop in time; aborting open connections");
                    task.abort();
                }
            }
        }
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
