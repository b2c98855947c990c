//! Private certificate authorities for tests (the fake Discord's), test files, and a
//! TLS-terminating proxy to put in front of a plain HTTP server such as the real Keystone.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

pub use opsbot_fake_discord::tls::{Authority, Leaf};

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write test file");
    path
}

/// Serves TLS with `leaf` on a fresh loopback port and relays every connection to `upstream`
/// in plain TCP, as a TLS-terminating load balancer (Kolla's haproxy) does; returns its address.
/// It runs until the test's runtime ends.
pub async fn tls_proxy(leaf: &Leaf, upstream: SocketAddr) -> SocketAddr {
    let tls = leaf.serving().server_config().expect("server TLS settings");
    let acceptor = TlsAcceptor::from(tls);
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
    let addr = listener.local_addr().expect("proxy address");
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut client) = acceptor.accept(client).await else {
                    return;
                };
                if let Ok(mut server) = TcpStream::connect(upstream).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    addr
}
