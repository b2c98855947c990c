//! The one HTTP client of a cluster or a cloud: the CA it trusts, the certificate it presents,
//! its timeouts, and answers read with a size cap. Every certificate failure names the
//! certificate (subject and issuer), so that "not trusted" says *which* certificate.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::header::HeaderValue;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::ring;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, OtherError, RootCertStore, SignatureScheme};
use secrecy::ExposeSecret;

use super::error::Fault;
use super::transport;
use crate::config::{ClusterAuth, SecretSource, Tls};

/// The largest answer opsbot reads: `_cat/indices` of 30,000 indices is a few MiB, so an answer
/// past this is a misdirected URL or a broken proxy, and reading it whole could exhaust memory.
pub const BODY_CAP: u64 = 64 * 1024 * 1024;

/// The longest a connection (TCP and TLS) may take; an unreachable address fails this fast
/// rather than after the whole request timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A client for one server: `timeout` bounds each whole request, connecting bounded sooner.
pub fn client(tls: &Tls, timeout: Duration) -> anyhow::Result<reqwest::Client> {
    reqwest::Client::builder()
        .use_preconfigured_tls(rustls_config(tls)?)
        .timeout(timeout)
        .connect_timeout(timeout.min(CONNECT_TIMEOUT))
        .user_agent(concat!("opsbot/", env!("CARGO_PKG_VERSION")))
        .build()
        .context("cannot set up the HTTP client")
}

/// The TLS settings: `ca_file` replaces the web roots when given; a client identity when given.
pub(crate) fn rustls_config(tls: &Tls) -> anyhow::Result<rustls::ClientConfig> {
    let provider = Arc::new(ring::default_provider());
    let mut roots = RootCertStore::empty();
    match &tls.ca_file {
        Some(file) => {
            for cert in certificates(file)? {
                roots
                    .add(cert)
                    .with_context(|| format!("{}: a CA certificate is unusable", file.display()))?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .context("cannot set up certificate verification")?;
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("cannot set up TLS")?
        // `dangerous` only because any custom verifier is: `Naming` leaves every decision to
        // the Web PKI verifier and only adds names to its refusals.
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Naming(verifier)));
    match &tls.identity {
        None => Ok(builder.with_no_client_auth()),
        Some(identity) => {
            let key = PrivateKeyDer::from_pem_file(&identity.key).with_context(|| {
                format!(
                    "client_key {} holds no PEM private key",
                    identity.key.display()
                )
            })?;
            builder
                .with_client_auth_cert(certificates(&identity.cert)?, key)
                .with_context(|| {
                    format!(
                        "client_cert {} and client_key {} do not make a usable identity",
                        identity.cert.display(),
                        identity.key.display()
                    )
                })
        }
    }
}

/// The `Authorization` header of `auth`, its secret read now; sensitive, so never shown.
pub fn authorization(auth: &ClusterAuth) -> anyhow::Result<HeaderValue> {
    let (text, source) = match auth {
        ClusterAuth::Basic { username, password } => {
            let secret = password.read().context("the cluster's password")?;
            let pair = format!("{username}:{}", secret.expose_secret());
            (
                format!("Basic {}", STANDARD.encode(pair)),
                "username/password",
            )
        }
        ClusterAuth::ApiKey(key) => {
            let secret = key.read().context("the cluster's API key")?;
            (
                format!("{API_KEY_SCHEME}{}", secret.expose_secret()),
                "API key",
            )
        }
    };
    let mut value = HeaderValue::from_str(&text)
        .map_err(|_| anyhow::anyhow!("the {source} holds characters an HTTP header cannot"))?;
    value.set_sensitive(true);
    if let ClusterAuth::ApiKey(key) = auth {
        let encoded = text.strip_prefix(API_KEY_SCHEME).unwrap_or_default();
        if !is_encoded_api_key(encoded) {
            let setting = match key {
                SecretSource::File(_) => "api_key_file",
                SecretSource::Env(_) => "api_key_env",
            };
            anyhow::bail!(
                "{setting} must hold the `encoded` value of the create-API-key answer (base64 of \
                 id:api_key)"
            );
        }
    }
    Ok(value)
}

const API_KEY_SCHEME: &str = "ApiKey ";

/// What Elasticsearch's ApiKeyService accepts: base64 of `id:api_key` with an id. The
/// create-API-key answer also gives `id` and `api_key` apart; either alone would be refused by
/// every request, so it is refused once, at start-up, naming the setting.
fn is_encoded_api_key(encoded: &str) -> bool {
    STANDARD.decode(encoded).is_ok_and(|pair| {
        pair.iter()
            .position(|&b| b == b':')
            .is_some_and(|at| at > 0)
    })
}

/// Every certificate of a PEM file; a file with none is an error.
fn certificates(file: &std::path::Path) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(file)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .with_context(|| format!("cannot read PEM certificates from {}", file.display()))?;
    if certs.is_empty() {
        anyhow::bail!("{} holds no PEM certificate", file.display());
    }
    Ok(certs)
}

/// A certificate the server presented and why it was refused.
#[derive(Debug, thiserror::Error)]
#[error("certificate `{subject}` issued by `{issuer}`: {cause}")]
pub struct RefusedCertificate {
    pub subject: String,
    pub issuer: String,
    pub cause: CertificateError,
}

/// Web PKI verification whose refusals carry the refused certificate's subject and issuer.
#[derive(Debug)]
struct Naming(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for Naming {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            .map_err(|error| match error {
                rustls::Error::InvalidCertificate(cause) => {
                    let (subject, issuer) = names(end_entity);
                    let named = RefusedCertificate {
                        subject,
                        issuer,
                        cause,
                    };
                    rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(
                        Arc::new(named),
                    )))
                }
                other => other,
            })
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// A certificate's subject and issuer as `CN=..., O=...`; `?` for what cannot be parsed.
fn names(cert: &CertificateDer<'_>) -> (String, String) {
    match x509_parser::parse_x509_certificate(cert.as_ref()) {
        Ok((_, parsed)) => (parsed.subject().to_string(), parsed.issuer().to_string()),
        Err(_) => ("?".to_owned(), "?".to_owned()),
    }
}

/// The whole body of `response`, refused once it passes [`BODY_CAP`]: read chunk by chunk, so
/// that a huge answer costs at most the cap in memory.
pub async fn body(mut response: reqwest::Response) -> Result<String, Fault> {
    let too_large = Fault::TooLarge { limit: BODY_CAP };
    if response.content_length().is_some_and(|n| n > BODY_CAP) {
        return Err(too_large);
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| transport::fault(&e))? {
        if (bytes.len() + chunk.len()) as u64 > BODY_CAP {
            return Err(too_large);
        }
        bytes.extend_from_slice(&chunk);
    }
    // Valid UTF-8 (every JSON answer) is kept without a copy.
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|invalid| String::from_utf8_lossy(invalid.as_bytes()).into_owned()))
}

#[cfg(test)]
mod tests;
