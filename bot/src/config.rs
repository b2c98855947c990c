//! The configuration file (TOML). Unknown keys are errors, every value is validated at load, and
//! nothing here is ever logged whole.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use opsbot_commands::consent::ConsentPolicy;
use opsbot_commands::name::{CloudName, ClusterName, NodeAddr};
use opsbot_commands::people::People;
use serde::Deserialize;

use crate::process::CommandTemplate;

mod access;
mod engine;
mod file_arg;
mod front;
mod matrix;
mod runbooks;
mod schedules;
mod slack;
mod store;

use access::UrlOf;
pub use access::{ClientIdentity, ClusterAuth, SecretSource, Tls};
pub use engine::{EngineConfig, ProgressConfig, RetryPolicy};
pub use file_arg::{ConfigFile, DEFAULT_PATH};
pub use front::{ConsoleConfig, DiscordConfig, MetricsConfig, PersonConfig, Role};
pub use matrix::{MatrixConfig, RoomId};
pub use runbooks::{HostAccessConfig, RunbooksConfig};
pub use schedules::{ScheduleConfig, SchedulingConfig};
pub use slack::{SlackConfig, SlackId};
pub use store::{PostgresStore, Retention, StoreBackend, StoreConfig};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub store: StoreConfig,
    #[serde(default)]
    pub engine: EngineConfig,
    #[serde(default)]
    pub progress: ProgressConfig,
    #[serde(default)]
    pub clusters: Vec<ClusterConfig>,
    /// OpenStack clouds whose placement, compute and image APIs opsbot acts on.
    #[serde(default)]
    pub clouds: Vec<CloudConfig>,
    /// Operators' own procedures, and the hosts they run on.
    #[serde(default)]
    pub runbooks: RunbooksConfig,
    /// Who may use opsbot: each person once, with their account on every surface.
    #[serde(default)]
    pub people: Vec<PersonConfig>,
    #[serde(default)]
    pub console: ConsoleConfig,
    /// The Discord front end (`opsbot run`); absent when only the console is used.
    pub discord: Option<DiscordConfig>,
    /// The Slack front end (`opsbot run`), beside Discord or alone.
    pub slack: Option<SlackConfig>,
    /// The Matrix front end (`opsbot run`): rooms on a homeserver, beside the others or alone.
    pub matrix: Option<MatrixConfig>,
    #[serde(default)]
    pub metrics: MetricsConfig,
    /// Procedures that run at cron times (see `config::schedules`).
    #[serde(default)]
    pub schedules: Vec<ScheduleConfig>,
    #[serde(default)]
    pub scheduling: SchedulingConfig,
    /// Who must agree before each procedure's plan acts: `"cluster stop" = "none"`.
    #[serde(default)]
    pub approval: ConsentPolicy,
}

/// One search cluster. Written with flat keys (`ca_file`, `username`, `password_file`, ...),
/// read into types where a half-given identity or two passwords cannot exist.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "access::RawCluster")]
pub struct ClusterConfig {
    pub name: ClusterName,
    /// The cluster's HTTP address, e.g. `http://10.0.0.10:9200` (Kolla's internal VIP).
    pub url: String,
    /// The search nodes, by IP (Kolla names nodes after their IP), in the order to start them.
    pub nodes: Vec<NodeAddr>,
    pub node_control: NodeControlConfig,
    /// The CA to trust and the client certificate, for `https://` clusters.
    pub tls: Tls,
    /// Credentials, for clusters with security on; none sends no `Authorization`.
    pub auth: Option<ClusterAuth>,
}

/// How the search container on a node is stopped and started.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum NodeControlConfig {
    /// Run a command (argv, never a shell) such as `ssh {host} docker stop {container}`.
    Command {
        stop: CommandTemplate,
        start: CommandTemplate,
        container: String,
        /// Host to reach a node by, when it is not the node's IP.
        #[serde(default)]
        hosts: BTreeMap<NodeAddr, String>,
        #[serde(with = "humantime_serde", default = "default_command_timeout")]
        timeout: Duration,
        /// Removes a node from the search group of the deployment inventory; without it, an
        /// operator is asked to.
        #[serde(default)]
        unlist: Option<CommandTemplate>,
        /// Redeploys the search service with serial 1; without it, an operator is asked to.
        #[serde(default)]
        redeploy: Option<CommandTemplate>,
        #[serde(with = "humantime_serde", default = "default_redeploy_timeout")]
        redeploy_timeout: Duration,
    },
    /// Ask an operator to do it and confirm with `/run done`.
    Manual { container: String },
    /// The simulator's admin API (demo and tests); `url` defaults to the cluster's.
    Sim { url: Option<String> },
}

fn default_command_timeout() -> Duration {
    Duration::from_secs(120)
}

fn default_redeploy_timeout() -> Duration {
    Duration::from_secs(60 * 60)
}

/// One OpenStack cloud, reached as an administrative profile through Keystone v3 password
/// authentication. The password is never in this file: it comes from `password_env` or
/// `password_file` (e.g. a systemd credential), and is never logged or stored.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "access::RawCloud")]
pub struct CloudConfig {
    pub name: CloudName,
    /// Keystone's v3 address, e.g. `https://10.0.0.10:5000/v3`.
    pub auth_url: String,
    pub username: String,
    pub user_domain: String,
    pub project: String,
    pub project_domain: String,
    pub region: String,
    /// Which catalog endpoints to use (spec 4.2: `internal`).
    pub interface: Interface,
    /// Where the password is: `password_env` or `password_file` (its first line).
    pub password: SecretSource,
    /// PEM CA certificates trusted for Keystone and every catalog endpoint, instead of the
    /// built-in web roots (Kolla's `kolla_enable_tls_internal` CA).
    pub ca_file: Option<PathBuf>,
    /// How the compute containers on the hypervisors are restarted.
    pub compute_control: HostControlConfig,
}

/// A catalog interface.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interface {
    Public,
    #[default]
    Internal,
    Admin,
}

impl Interface {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Internal => "internal",
            Self::Admin => "admin",
        }
    }
}

/// How a container on a hypervisor is restarted (spec 7: the compute container).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum HostControlConfig {
    /// Run a command (argv, never a shell) such as `ssh {host} docker restart {container}`.
    Command {
        restart: CommandTemplate,
        #[serde(default = "default_compute_container")]
        container: String,
        #[serde(with = "humantime_serde", default = "default_command_timeout")]
        timeout: Duration,
    },
    /// Ask an operator to do it and confirm with `/run done`.
    Manual {
        #[serde(default = "default_compute_container")]
        container: String,
    },
    /// The simulated cloud's admin API (demo and tests), which restarts the host's simulated
    /// `nova-compute`; `url` defaults to the simulator's, taken from the cloud's `auth_url`.
    Sim { url: Option<String> },
}

impl Default for HostControlConfig {
    fn default() -> Self {
        Self::Manual {
            container: default_compute_container(),
        }
    }
}

/// Kolla's name of the compute container.
fn default_compute_container() -> String {
    "nova_compute".to_owned()
}

impl Config {
    /// Reads and validates a config file; errors name the file and what is wrong.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the config file {}", path.display()))?;
        let config =
            Self::parse(&text).with_context(|| format!("config file {}", path.display()))?;
        config
            .validate()
            .with_context(|| format!("config file {}", path.display()))?;
        Ok(config)
    }

    /// Parses a config's text; keys of earlier versions are refused naming what replaced them.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        // Read twice: as a table to name retired keys, then typed, with the line of any error.
        let table: toml::Table = toml::from_str(text)?;
        front::refuse_retired_keys(&table)?;
        Ok(toml::from_str(text)?)
    }

    /// The configured people, checked: each account belongs to one person.
    pub fn people(&self) -> anyhow::Result<People> {
        front::people(&self.people)
    }

    /// Checks what the types alone cannot: uniqueness, URLs, hosts.
    pub fn validate(&self) -> anyhow::Result<()> {
        let mut names = BTreeSet::new();
        for cluster in &self.clusters {
            if !names.insert(&cluster.name) {
                bail!("cluster `{}` is configured twice", cluster.name);
            }
            access::check_url(&cluster.url, &cluster.tls, UrlOf::Cluster(&cluster.name))?;
            if cluster.nodes.is_empty() {
                bail!("cluster `{}` lists no nodes", cluster.name);
            }
            let unique: BTreeSet<_> = cluster.nodes.iter().collect();
            if unique.len() != cluster.nodes.len() {
                bail!("cluster `{}` lists a node twice", cluster.name);
            }
            if let NodeControlConfig::Command {
                hosts, container, ..
            } = &cluster.node_control
            {
                crate::process::check_value("container", container)
                    .with_context(|| format!("cluster `{}`", cluster.name))?;
                for host in hosts.values() {
                    crate::process::check_value("host", host)
                        .with_context(|| format!("cluster `{}`", cluster.name))?;
                }
            }
        }
        let mut clouds = BTreeSet::new();
        for cloud in &self.clouds {
            if !clouds.insert(&cloud.name) {
                bail!("cloud `{}` is configured twice", cloud.name);
            }
            access::check_url(&cloud.auth_url, &cloud.tls(), UrlOf::Cloud(&cloud.name))?;
            if let HostControlConfig::Command { container, .. }
            | HostControlConfig::Manual { container } = &cloud.compute_control
            {
                crate::process::check_value("container", container)
                    .with_context(|| format!("cloud `{}`", cloud.name))?;
            }
        }
        self.runbooks.validate()?;
        if self.clusters.is_empty() && self.clouds.is_empty() && self.runbooks.dir.is_none() {
            bail!(
                "the config names no [[clusters]], no [[clouds]] and no [runbooks]: opsbot would \
                 have nothing to act on"
            );
        }
        schedules::validate(self)?;
        front::validate(self)
    }

    pub fn cluster(&self, name: &ClusterName) -> Option<&ClusterConfig> {
        self.clusters.iter().find(|c| &c.name == name)
    }
}

#[cfg(test)]
mod tests;
