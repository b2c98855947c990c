//! How to reach the store's PostgreSQL: [`PgConfig`], read into tokio-postgres's settings and a
//! rustls connector. The URL may hold a password, so it is never printed whole: `Debug` and
//! every error show it with the password masked.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use secrecy::{ExposeSecret, SecretString};
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::StoreError;

/// Where the store's PostgreSQL is and how to talk to it.
#[derive(Clone)]
pub struct PgConfig {
    /// `postgres://user@host:port/database?...`; a password in it works but is better given
    /// apart, in `password`.
    pub url: String,
    /// Overrides the URL's password.
    pub password: Option<SecretString>,
    /// The CA certificate(s), PEM, that signed the server's certificate: set, the connection
    /// is TLS and the server is verified against it (also required by `sslmode=require`,
    /// `verify-ca` or `verify-full` in the URL: rustls always verifies).
    pub ca_file: Option<PathBuf>,
    /// The schema every table lives in (created if missing): one database can hold several
    /// stores, such as one per test.
    pub schema: String,
    /// How long connecting may take before the store is [`StoreError::Unavailable`].
    pub connect_timeout: Duration,
    /// How long one statement, or waiting for a connection, may take before the store is
    /// [`StoreError::Unavailable`] (also the server's `statement_timeout`).
    pub statement_timeout: Duration,
    /// Connections kept open at most.
    pub pool_size: usize,
}

impl PgConfig {
    /// The default schema.
    pub const SCHEMA: &'static str = "opsbot";

    /// `url` with the defaults: schema `opsbot`, 5 s to connect and per statement, 4
    /// connections, TLS only if the URL asks for it.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            password: None,
            ca_file: None,
            schema: Self::SCHEMA.to_owned(),
            connect_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(5),
            pool_size: 4,
        }
    }

    /// The URL with any password in it masked.
    pub fn redacted_url(&self) -> String {
        redact(&self.url)
    }

    /// Whether the URL carries a password (`user:password@` or `password=`), as
    /// tokio-postgres reads it; a URL it cannot read is [`StoreError::PgConfig`].
    pub fn url_holds_password(&self) -> Result<bool, StoreError> {
        Ok(self.parsed_url()?.0.get_password().is_some())
    }

    /// The URL as tokio-postgres reads it, and whether it asked for the server to be verified.
    fn parsed_url(&self) -> Result<(tokio_postgres::Config, bool), StoreError> {
        let (url, verify) = without_verify_mode(&self.url);
        let config = url.parse().map_err(|error| {
            config_error(format!(
                "url {} does not parse ({error})",
                self.redacted_url()
            ))
        })?;
        Ok((config, verify))
    }

    /// tokio-postgres's settings and the TLS connector they need.
    pub(crate) fn connection(
        &self,
    ) -> Result<(tokio_postgres::Config, MakeRustlsConnect), StoreError> {
        if !valid_schema(&self.schema) {
            return Err(config_error(format!(
                "schema {:?} is not a plain lowercase name (letters, digits, _; at most 63)",
                self.schema
            )));
        }
        let (mut config, verify) = self.parsed_url()?;
        if let Some(password) = &self.password {
            config.password(password.expose_secret());
        }
        let tls = verify || self.ca_file.is_some() || config.get_ssl_mode() == SslMode::Require;
        let connector = match (&self.ca_file, tls) {
            (Some(ca_file), _) => connector(ca_file)?,
            (None, true) => {
                return Err(config_error(
                    "the URL asks for TLS but no ca_file names the CA that signed the server's \
                     certificate"
                        .to_owned(),
                ));
            }
            (None, false) => MakeRustlsConnect::new(no_roots()?),
        };
        config
            .ssl_mode(if tls { SslMode::Require } else { SslMode::Disable })
            .connect_timeout(self.connect_timeout)
            .application_name("opsbot")
            .options(format!(
                "-c search_path={} -c statement_timeout={} -c idle_in_transaction_session_timeout={}",
                self.schema,
                self.statement_timeout.as_millis(),
                self.statement_timeout.as_millis().saturating_mul(4),
            ));
        Ok((config, connector))
    }
}

/// Masked, and without the password field.
impl fmt::Debug for PgConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgConfig")
            .field("url", &self.redacted_url())
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("ca_file", &self.ca_file)
            .field("schema", &self.schema)
            .field("connect_timeout", &self.connect_timeout)
            .field("statement_timeout", &self.statement_timeout)
            .field("pool_size", &self.pool_size)
            .finish()
    }
}

/// Where the store is, for logs and errors: user, hosts, database and schema, no secret.
pub(crate) fn describe(config: &tokio_postgres::Config, schema: &str) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .zip(config.get_ports().iter().chain(std::iter::repeat(&5432)))
        .map(|(host, port)| match host {
            Host::Tcp(name) => format!("{name}:{port}"),
            Host::Unix(path) => format!("{}:{port}", path.display()),
        })
        .collect();
    format!(
        "postgres {}@{}/{} schema {schema}",
        config.get_user().unwrap_or("?"),
        hosts.join(","),
        config.get_dbname().unwrap_or("?"),
    )
}

fn config_error(detail: String) -> StoreError {
    StoreError::PgConfig { detail }
}

/// A schema name that needs no quoting anywhere it is spliced in.
fn valid_schema(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 63
        && chars
            .next()
            .is_some_and(|first| first.is_ascii_lowercase() || first == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The URL without `sslmode=verify-ca|verify-full` (tokio-postgres knows only up to
/// `require`), and whether it had one.
fn without_verify_mode(url: &str) -> (String, bool) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_owned(), false);
    };
    let (verify, kept): (Vec<&str>, Vec<&str>) = query
        .split('&')
        .partition(|pair| matches!(*pair, "sslmode=verify-ca" | "sslmode=verify-full"));
    let url = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (url, !verify.is_empty())
}

/// The URL with the password of `user:password@` and of `password=` masked.
fn redact(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(scheme_end) = out.find("://") {
        let rest = scheme_end + 3;
        let authority_end = out[rest..].find(['/', '?']).map_or(out.len(), |i| rest + i);
        if let Some(at) = out[rest..authority_end].rfind('@') {
            if let Some(colon) = out[rest..rest + at].find(':') {
                out.replace_range(rest + colon + 1..rest + at, "***");
            }
        }
    }
    if let Some(start) = out.find("password=") {
        let value = start + "password=".len();
        let end = out[value..]
            .find(['&', ' '])
            .map_or(out.len(), |i| value + i);
        out.replace_range(value..end, "***");
    }
    out
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A connector that verifies the server against the CA in `ca_file`.
fn connector(ca_file: &std::path::Path) -> Result<MakeRustlsConnect, StoreError> {
    let unreadable = |detail: String| {
        config_error(format!(
            "ca_file {} cannot be used ({detail})",
            ca_file.display()
        ))
    };
    let mut roots = rustls::RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(ca_file).map_err(|e| unreadable(e.to_string()))?;
    for cert in certs {
        let cert = cert.map_err(|e| unreadable(e.to_string()))?;
        roots.add(cert).map_err(|e| unreadable(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(unreadable("it holds no certificate".to_owned()));
    }
    let config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| unreadable(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// A connector for a connection that never uses TLS (`sslmode=disable`): it has nothing to
/// verify against, and is there only because the pool has one type of connector.
fn no_roots() -> Result<rustls::ClientConfig, StoreError> {
    Ok(rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| config_error(e.to_string()))?
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        let mut config =
            PgConfig::new("postgres://opsbot:hunter2@db.example:5432/ops?sslmode=require");
        config.password = Some(SecretString::from("s3cret"));
        let shown = format!("{config:?}");
        assert!(
            !shown.contains("hunter2") && !shown.contains("s3cret"),
            "{shown}"
        );
        assert!(
            shown.contains("postgres://opsbot:***@db.example:5432/ops"),
            "{shown}"
        );
        assert_eq!(
            redact("host=db user=opsbot password=hunter2 dbname=ops"),
            "host=db user=opsbot password=*** dbname=ops"
        );
        assert_eq!(
            redact("postgres://opsbot@db/ops"),
            "postgres://opsbot@db/ops"
        );
    }

    #[test]
    fn tls_without_a_ca_is_refused_and_verify_modes_are_understood() {
        let error = PgConfig::new("postgres://opsbot@db/ops?sslmode=verify-full")
            .connection()
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("no ca_file"), "{error}");
        assert_eq!(
            without_verify_mode("postgres://a@b/c?sslmode=verify-full&application_name=x"),
            ("postgres://a@b/c?application_name=x".to_owned(), true)
        );
        let (config, _) = PgConfig::new("postgres://opsbot@db:6543/ops")
            .connection()
            .unwrap();
        assert_eq!(config.get_ssl_mode(), SslMode::Disable);
        assert_eq!(
            describe(&config, "opsbot"),
            "postgres opsbot@db:6543/ops schema opsbot"
        );
        let mut bad = PgConfig::new("postgres://opsbot@db/ops");
        bad.schema = "Robert'); DROP".to_owned();
        assert!(bad.connection().is_err());
    }
}
