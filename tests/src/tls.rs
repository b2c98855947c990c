//! A private certificate authority for tests, as an operator's own CA (Kolla's internal TLS,
//! Elasticsearch 8's generated one), and a TLS-terminating proxy to put in front of a plain
//! HTTP server such as the real Keystone.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

/// A CA with its own name, signing server certificates.
pub struct Authority {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl std::fmt::Debug for Authority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authority").finish_non_exhaustive()
    }
}

/// A server's or client's certificate and key, PEM.
#[derive(Debug, Clone)]
pub struct Leaf {
    pub cert_pem: String,
    pub key_pem: String,
}

impl Authority {
    /// A self-signed CA whose subject is `CN=<common_name>`.
    pub fn new(common_name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().expect("CA key");
        Self {
            issuer: CertifiedIssuer::self_signed(params, key).expect("CA certificate"),
        }
    }

    /// The CA certificate, for a `ca_file`.
    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// A server certificate `CN=<common_name>` valid for `names` (IP addresses or DNS names).
    pub fn leaf(&self, common_name: &str, names: &[&str]) -> Leaf {
        self.sign(common_name, names, ExtendedKeyUsagePurpose::ServerAuth)
    }

    /// A client certificate `CN=<common_name>`, for a `client_cert`.
    pub fn client(&self, common_name: &str) -> Leaf {
        self.sign(common_name, &[], ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn sign(&self, common_name: &str, names: &[&str], usage: ExtendedKeyUsagePurpose) -> Leaf {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names).expect("leaf params");
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.extended_key_usages = vec![usage];
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        let key = KeyPair::generate().expect("leaf key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("leaf certificate");
        Leaf {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }
}

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
    let tls = opsbot_sim::SimTls {
        cert_pem: leaf.cert_pem.clone(),
        key_pem: leaf.key_pem.clone(),
        client_ca_pem: None,
    };
    let acceptor = TlsAcceptor::from(tls.server_config().expect("server TLS settings"));
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
