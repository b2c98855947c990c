//! Private certificate authorities for tests, as an operator's own CA (Kolla's internal TLS,
//! Elasticsearch 8's generated one) or the one the fake `discord.com` is signed by. Serving is
//! the simulator's ([`opsbot_search_sim::TlsListener`]): rcgen stays out of the opsbot binary.

use std::sync::Arc;

use opsbot_search_sim::SimTls;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use tokio_rustls::rustls::ServerConfig;

use crate::FakeError;

/// A CA with its own name, signing server and client certificates.
pub struct Authority {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl std::fmt::Debug for Authority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key signs anything: not even a test prints it.
        f.debug_struct("Authority").finish_non_exhaustive()
    }
}

/// A server's or client's certificate and key, PEM.
#[derive(Clone)]
pub struct Leaf {
    pub cert_pem: String,
    pub key_pem: String,
}

impl std::fmt::Debug for Leaf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Leaf")
            .field("cert_pem", &self.cert_pem)
            .finish_non_exhaustive()
    }
}

impl Leaf {
    /// Serving with this certificate, asking clients for none.
    pub fn serving(&self) -> SimTls {
        SimTls {
            cert_pem: self.cert_pem.clone(),
            key_pem: self.key_pem.clone(),
            client_ca_pem: None,
        }
    }
}

impl Authority {
    /// A self-signed CA whose subject is `CN=<common_name>`.
    pub fn new(common_name: &str) -> Result<Self, FakeError> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate()?)?;
        Ok(Self { issuer })
    }

    /// The CA certificate, for a `ca_file`.
    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// A server certificate `CN=<common_name>` valid for `names` (IP addresses or DNS names).
    pub fn leaf(&self, common_name: &str, names: &[&str]) -> Result<Leaf, FakeError> {
        self.sign(common_name, names, ExtendedKeyUsagePurpose::ServerAuth)
    }

    /// A client certificate `CN=<common_name>`, for a `client_cert`.
    pub fn client(&self, common_name: &str) -> Result<Leaf, FakeError> {
        self.sign(common_name, &[], ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn sign(
        &self,
        common_name: &str,
        names: &[&str],
        usage: ExtendedKeyUsagePurpose,
    ) -> Result<Leaf, FakeError> {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names)?;
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.extended_key_usages = vec![usage];
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok(Leaf {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}

/// What the REST server serves and what a client must trust.
pub(crate) struct Identity {
    pub(crate) ca_pem: String,
    pub(crate) server: Arc<ServerConfig>,
}

/// A fresh CA and a `discord.com` certificate signed by it.
pub(crate) fn identity() -> Result<Identity, FakeError> {
    let ca = Authority::new("opsbot fake Discord test CA")?;
    let leaf = ca.leaf("discord.com", &["discord.com", "gateway.discord.gg"])?;
    // HTTP/1.1 only, as serenity's reqwest speaks it.
    let server = leaf
        .serving()
        .server_config()
        .map_err(|e| FakeError::Tls(e.to_string()))?;
    Ok(Identity {
        ca_pem: ca.pem(),
        server,
    })
}
