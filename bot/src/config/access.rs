//! How a cluster or a cloud is reached beyond its URL: the CA to trust, the client certificate,
//! and the credentials. The config names where each secret is (a file or an environment
//! variable) and never holds one: secrets are read when the client is built, into
//! [`SecretString`]s that are never logged, stored or shown.

use std::env::VarError;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow, bail};
use secrecy::SecretString;
use serde::Deserialize;

use opsbot_commands::name::{CloudName, ClusterName, NodeAddr};

use super::{HostControlConfig, Interface, NodeControlConfig};

/// The TLS side of reaching a server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tls {
    /// PEM CA certificates that *replace* the built-in web roots, as curl's `--cacert` does: a
    /// private CA (Kolla's `kolla_enable_tls_internal`, Elasticsearch 8's generated one) is
    /// then the only authority trusted for this server.
    pub ca_file: Option<PathBuf>,
    /// The client certificate presented to servers that ask for one.
    pub identity: Option<ClientIdentity>,
}

/// A client certificate (chain) and its private key, both PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientIdentity {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Where a secret is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretSource {
    /// An environment variable.
    Env(String),
    /// A file (e.g. a systemd credential); its first line, trimmed.
    File(PathBuf),
}

impl SecretSource {
    /// The one source of `env` and `file`, `None` for neither; `what` names the pair in errors.
    pub(super) fn one_of(
        env: Option<String>,
        file: Option<PathBuf>,
        what: &str,
    ) -> Result<Option<Self>, String> {
        match (env, file) {
            (None, None) => Ok(None),
            (Some(variable), None) => Ok(Some(Self::Env(variable))),
            (None, Some(file)) => Ok(Some(Self::File(file))),
            (Some(_), Some(_)) => Err(format!(
                "give {what}_file or {what}_env, not both: which one would win is a guess"
            )),
        }
    }

    /// Reads the secret; an unset variable, an unreadable file and an empty value are errors.
    pub fn read(&self) -> anyhow::Result<SecretString> {
        let text = match self {
            Self::Env(variable) => env_value(variable, std::env::var(variable))?,
            Self::File(file) => first_line(file)?,
        };
        let text = text.trim();
        if text.is_empty() {
            match self {
                Self::Env(variable) => bail!("{variable} is empty"),
                Self::File(file) => bail!("{} is empty", file.display()),
            }
        }
        Ok(SecretString::from(text.to_owned()))
    }
}

/// The value `std::env::var` gave for `variable`. The error never carries the value:
/// `VarError::NotUnicode` holds it and would print it.
fn env_value(variable: &str, value: Result<String, VarError>) -> anyhow::Result<String> {
    value.map_err(|error| match error {
        VarError::NotPresent => anyhow!("{variable} is not set"),
        VarError::NotUnicode(_) => anyhow!("{variable} is not valid UTF-8"),
    })
}

fn first_line(file: &Path) -> anyhow::Result<String> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    Ok(text.lines().next().unwrap_or_default().to_owned())
}

/// How opsbot proves who it is to a search cluster with security on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterAuth {
    /// HTTP basic authentication (a native or file-realm user).
    Basic {
        username: String,
        password: SecretSource,
    },
    /// Elasticsearch's `Authorization: ApiKey <encoded>`, where the secret is the `encoded`
    /// value the create-API-key answer gives (base64 of `id:api_key`).
    ApiKey(SecretSource),
}

/// A `[[clusters]]` entry as written; [`super::ClusterConfig`] is what it must mean.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCluster {
    name: ClusterName,
    url: String,
    nodes: Vec<NodeAddr>,
    node_control: NodeControlConfig,
    ca_file: Option<PathBuf>,
    client_cert: Option<PathBuf>,
    client_key: Option<PathBuf>,
    username: Option<String>,
    password_file: Option<PathBuf>,
    password_env: Option<String>,
    api_key_file: Option<PathBuf>,
    api_key_env: Option<String>,
}

impl TryFrom<RawCluster> for super::ClusterConfig {
    type Error = String;

    fn try_from(raw: RawCluster) -> Result<Self, String> {
        let name = raw.name;
        let within = |e: String| format!("cluster `{name}`: {e}");
        let identity = match (raw.client_cert, raw.client_key) {
            (None, None) => None,
            (Some(cert), Some(key)) => Some(ClientIdentity { cert, key }),
            (Some(_), None) => return Err(within("client_cert needs client_key too".into())),
            (None, Some(_)) => return Err(within("client_key needs client_cert too".into())),
        };
        let password = SecretSource::one_of(raw.password_env, raw.password_file, "password")
            .map_err(within)?;
        let api_key =
            SecretSource::one_of(raw.api_key_env, raw.api_key_file, "api_key").map_err(within)?;
        let auth = match (raw.username, password, api_key) {
            (None, None, None) => None,
            (Some(username), Some(password), None) => {
                Some(ClusterAuth::Basic { username, password })
            }
            (None, None, Some(key)) => Some(ClusterAuth::ApiKey(key)),
            (Some(_), None, None) => {
                return Err(within(
                    "username needs password_file or password_env".into(),
                ));
            }
            (None, Some(_), None) => {
                return Err(within("password_file/password_env need a username".into()));
            }
            (_, _, Some(_)) => {
                return Err(within(
                    "give a username with a password, or an api_key_file/api_key_env, not both"
                        .into(),
                ));
            }
        };
        Ok(Self {
            name,
            url: raw.url,
            nodes: raw.nodes,
            node_control: raw.node_control,
            tls: Tls {
                ca_file: raw.ca_file,
                identity,
            },
            auth,
        })
    }
}

/// A `[[clouds]]` entry as written; [`super::CloudConfig`] is what it must mean.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCloud {
    name: CloudName,
    auth_url: String,
    username: String,
    #[serde(default = "default_domain")]
    user_domain: String,
    project: String,
    #[serde(default = "default_domain")]
    project_domain: String,
    #[serde(default = "default_region")]
    region: String,
    #[serde(default)]
    interface: Interface,
    password_env: Option<String>,
    password_file: Option<PathBuf>,
    ca_file: Option<PathBuf>,
    #[serde(default)]
    compute_control: HostControlConfig,
}

fn default_domain() -> String {
    "Default".to_owned()
}

fn default_region() -> String {
    "RegionOne".to_owned()
}

impl TryFrom<RawCloud> for super::CloudConfig {
    type Error = String;

    fn try_from(raw: RawCloud) -> Result<Self, String> {
        // Keystone password authentication needs a password: none is as wrong as two.
        let Ok(Some(password)) =
            SecretSource::one_of(raw.password_env, raw.password_file, "password")
        else {
            return Err(format!(
                "cloud `{}`: give exactly one of password_env and password_file",
                raw.name
            ));
        };
        Ok(Self {
            name: raw.name,
            auth_url: raw.auth_url,
            username: raw.username,
            user_domain: raw.user_domain,
            project: raw.project,
            project_domain: raw.project_domain,
            region: raw.region,
            interface: raw.interface,
            password,
            ca_file: raw.ca_file,
            compute_control: raw.compute_control,
        })
    }
}

impl super::CloudConfig {
    /// What the cloud's one HTTP client trusts: a cloud presents no client certificate.
    pub fn tls(&self) -> Tls {
        Tls {
            ca_file: self.ca_file.clone(),
            identity: None,
        }
    }
}

/// Whose URL is checked, which says what its key is called and what to set instead.
#[derive(Debug, Clone, Copy)]
pub(super) enum UrlOf<'a> {
    Cluster(&'a ClusterName),
    Cloud(&'a CloudName),
}

/// Refuses what is not an http(s) URL, and what a URL must not carry or cannot use:
/// credentials (`user:password@`), which would be shown wherever the URL is, and TLS settings
/// on plain HTTP, which would silently do nothing.
pub(super) fn check_url(url: &str, tls: &Tls, of: UrlOf<'_>) -> anyhow::Result<()> {
    let (owner, key, instead) = match of {
        UrlOf::Cluster(name) => (
            format!("cluster `{name}`"),
            "url",
            "username with password_file or password_env (or api_key_file/api_key_env)",
        ),
        UrlOf::Cloud(name) => (
            format!("cloud `{name}`"),
            "auth_url",
            "username with password_file or password_env",
        ),
    };
    let url = reqwest::Url::parse(url).with_context(|| format!("{owner}: {key} is not a URL"))?;
    if !matches!(url.scheme(), "http" | "https") {
        bail!("{owner}: {key} must be http or https");
    }
    if !url.username().is_empty() || url.password().is_some() {
        bail!(
            "{owner}: {key} holds credentials (user:password@); remove them from the URL and \
             set {instead}"
        );
    }
    if url.scheme() == "http" && *tls != Tls::default() {
        bail!("{owner}: ca_file/client_cert are set but the URL is http://; use https://");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
