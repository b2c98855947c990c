//! Serving a simulator's router until its handle stops it: what the cluster and the cloud
//! simulators share.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::serve::ListenerExt;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_rustls::rustls::ServerConfig;

use crate::tls::TlsListener;

/// How long [`Server::shutdown`] lets in-flight requests finish before cutting them off.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A router served on a listener. Dropping it asks the server to stop gracefully.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    what: &'static str,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl Server {
    /// Serves `router` on `listener`; `what` names the simulator in logs.
    pub fn serve(listener: TcpListener, router: Router, what: &'static str) -> io::Result<Self> {
        let addr = listener.local_addr()?;
        // No Nagle delay, as over TLS (see `TlsListener`).
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        Ok(Self::spawn(addr, what, move |stop| async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(stop)
                .await
        }))
    }

    /// [`Self::serve`] over TLS with `tls`.
    pub fn serve_tls(
        listener: TcpListener,
        tls: Arc<ServerConfig>,
        router: Router,
        what: &'static str,
    ) -> io::Result<Self> {
        let listener = TlsListener::new(listener, tls)?;
        let addr = axum::serve::Listener::local_addr(&listener)?;
        Ok(Self::spawn(addr, what, move |stop| async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(stop)
                .await
        }))
    }

    /// Runs `serve` until the handle stops it (or is dropped).
    fn spawn<F>(
        addr: SocketAddr,
        what: &'static str,
        serve: impl FnOnce(futures::future::BoxFuture<'static, ()>) -> F,
    ) -> Self
    where
        F: Future<Output = io::Result<()>> + Send + 'static,
    {
        let (stop, stopped) = oneshot::channel::<()>();
        // A dropped sender means the handle is gone: stop as well.
        let task = tokio::spawn(serve(Box::pin(async {
            let _ = stopped.await;
        })));
        tracing::info!(%addr, "{what} listening");
        Self {
            addr,
            what,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting requests, lets in-flight ones finish (up to a few seconds) and returns.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let what = self.what;
        if let Some(mut task) = self.task.take() {
            match tokio::time::timeout(SHUTDOWN_GRACE, &mut task).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(error))) => tracing::warn!(%error, "{what} server failed"),
                Ok(Err(error)) => tracing::warn!(%error, "{what} task failed"),
                Err(_) => {
                    tracing::warn!("{what} did not stop in time; aborting open connections");
                    task.abort();
                }
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
