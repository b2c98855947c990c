//! A fresh certificate authority and a `discord.com` leaf signed by it, served with rustls (ring).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::server::TlsStream;

use crate::FakeError;

/// The names the leaf certificate is valid for.
const LEAF_NAMES: [&str; 2] = ["discord.com", "gateway.discord.gg"];

/// What the REST server serves and what a client must trust.
pub(crate) struct Identity {
    pub(crate) ca_pem: String,
    pub(crate) server: Arc<ServerConfig>,
}

/// Generates a CA and a leaf for `discord.com` signed by it.
pub(crate) fn identity() -> Result<Identity, FakeError> {
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "opsbot fake Discord test CA");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate()?)?;

    let mut leaf_params = CertificateParams::new(
        LEAF_NAMES
            .iter()
            .map(|n| (*n).to_owned())
            .collect::<Vec<_>>(),
    )?;
    leaf_params
        .distinguished_name
        .push(DnType::CommonName, "discord.com");
    leaf_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    leaf_params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    let leaf_key = KeyPair::generate()?;
    let leaf = leaf_params.signed_by(&leaf_key, &ca)?;

    let chain: Vec<CertificateDer<'static>> = vec![leaf.der().clone(), ca.der().clone()];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let mut server = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| FakeError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| FakeError::Tls(e.to_string()))?;
    // serenity's reqwest speaks HTTP/1.1 only; so does this server.
    server.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Identity {
        ca_pem: ca.pem(),
        server: Arc::new(server),
    })
}

/// A listener for `axum::serve` that yields connections whose TLS handshake is done.
///
/// Handshakes run in their own tasks, so a slow or broken client never blocks the others.
pub(crate) struct TlsListener {
    rx: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    addr: SocketAddr,
}

impl TlsListener {
    pub(crate) fn new(tcp: TcpListener, config: Arc<ServerConfig>) -> io::Result<Self> {
        let addr = tcp.local_addr()?;
        let (tx, rx) = mpsc::channel(64);
        let acceptor = TlsAcceptor::from(config);
        tokio::spawn(async move {
            loop {
                let (stream, peer) = tokio::select! {
                    accepted = tcp.accept() => match accepted {
                        Ok(accepted) => accepted,
                        Err(e) => {
                            tracing::debug!("fake discord: accept failed: {e}");
                            continue;
                        }
                    },
                    // The server is gone: stop listening.
                    () = tx.closed() => break,
                };
                // As Discord's edge does: no Nagle delay on small answers (otherwise every
                // response waits for the client's delayed ACK, about 40 ms).
                let _ = stream.set_nodelay(true);
                let acceptor = acceptor.clone();
                let ready = tx.clone();
                tokio::spawn(async move {
                    match acceptor.accept(stream).await {
                        Ok(tls) => {
                            let _closed = ready.send((tls, peer)).await;
                        }
                        Err(e) => tracing::debug!("fake discord: TLS handshake with {peer}: {e}"),
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
