//! Serving over TLS, as an Elasticsearch 8 node does by default (`xpack.security.http.ssl`):
//! the certificate and key are given as PEM, and every connection's handshake runs in a task of
//! its own, so that a slow or broken client never holds up the others.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{RootCertStore, ServerConfig};
use tokio_rustls::server::TlsStream;

use crate::config::ConfigError;

/// The server's certificate chain (leaf first) and its private key, PEM.
#[derive(Clone, PartialEq, Eq)]
pub struct SimTls {
    pub cert_pem: String,
    pub key_pem: String,
    /// When set, a client must present a certificate these CAs (PEM) issued, as with
    /// `xpack.security.http.ssl.client_authentication: required`; the handshake of any other
    /// client fails.
    pub client_ca_pem: Option<String>,
}

impl std::fmt::Debug for SimTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is a secret even in a simulator's logs.
        f.debug_struct("SimTls").finish_non_exhaustive()
    }
}

impl SimTls {
    /// The rustls server settings; HTTP/1.1 only, as the cluster API is served. Also for test
    /// servers of other kinds (a TLS proxy in front of Keystone).
    pub fn server_config(&self) -> Result<Arc<ServerConfig>, ConfigError> {
        let bad = |what: &str, e: &dyn std::fmt::Display| ConfigError::Tls(format!("{what}: {e}"));
        let chain = CertificateDer::pem_slice_iter(self.cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad("certificate", &e))?;
        let key = PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes())
            .map_err(|e| bad("private key", &e))?;
        let provider = Arc::new(ring::default_provider());
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| bad("protocol versions", &e))?;
        let builder = match &self.client_ca_pem {
            None => builder.with_no_client_auth(),
            Some(pem) => {
                let mut roots = RootCertStore::empty();
                for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                    let cert = cert.map_err(|e| bad("client CA", &e))?;
                    roots.add(cert).map_err(|e| bad("client CA", &e))?;
                }
                let verifier = WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .build()
                    .map_err(|e| bad("client CA", &e))?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let mut config = builder
            .with_single_cert(chain, key)
            .map_err(|e| bad("certificate and key", &e))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

/// A listener for `axum::serve` that yields connections whose TLS handshake is done.
#[derive(Debug)]
pub struct TlsListener {
    rx: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    addr: SocketAddr,
}

impl TlsListener {
    pub fn new(tcp: TcpListener, config: Arc<ServerConfig>) -> io::Result<Self> {
        let addr = tcp.local_addr()?;
        let (tx, rx) = mpsc::channel(64);
        let acceptor = TlsAcceptor::from(config);
        tokio::spawn(async move {
            loop {
                let (stream, peer) = tokio::select! {
                    accepted = tcp.accept() => match accepted {
                        Ok(accepted) => accepted,
                        Err(e) => {
                            tracing::debug!("accept failed: {e}");
                            continue;
                        }
                    },
                    // The server is gone: stop listening.
                    () = tx.closed() => break,
                };
                // As Elasticsearch (`http.tcp.no_delay`) and Discord's edge do: no Nagle delay on
                // small answers, which would otherwise wait for the client's delayed ACK (~40 ms).
                let _ = stream.set_nodelay(true);
                let acceptor = acceptor.clone();
                let ready = tx.clone();
                tokio::spawn(async move {
                    match acceptor.accept(stream).await {
                        Ok(tls) => {
                            let _closed = ready.send((tls, peer)).await;
                        }
                        Err(e) => tracing::debug!("TLS handshake with {peer}: {e}"),
                    }
                });
            }
        });
        Ok(Self { rx, addr })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.rx.recv().await {
            Some(conn) => conn,
            // The accept loop only ends once this listener is gone.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.addr)
    }
}
