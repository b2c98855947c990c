//! `[runbooks]`: where the operators' runbook files are, the hosts they may run on, and how a
//! runbook's command reaches its host.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use anyhow::bail;
use opsbot_commands::name::{GroupName, HostName};
use serde::Deserialize;

use crate::process::CommandTemplate;
use crate::process::OutputBounds;

/// Runbooks: where their files are, which hosts they may run on, and how commands reach a host.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunbooksConfig {
    /// The directory of `*.toml` runbook files, read at start-up; none loaded without it.
    pub dir: Option<PathBuf>,
    /// The hosts by group, in the order `each` steps go through them.
    #[serde(default)]
    pub inventory: BTreeMap<GroupName, Vec<HostName>>,
    #[serde(default)]
    pub access: HostAccessConfig,
    /// How much of one command's output is kept (a tracer can print gigabytes); the rest is
    /// only counted.
    #[serde(default)]
    pub output: OutputBounds,
}

/// How a runbook's command reaches its host.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum HostAccessConfig {
    /// Run `prefix` (an argv template with `{host}`, e.g. `["ssh", "-o", "BatchMode=yes",
    /// "{host}", "--"]` or kolla tooling) followed by the step's argv. Through ssh, every word is
    /// quoted for the remote shell, so that the host runs exactly the argv.
    Command { prefix: CommandTemplate },
    /// Ask an operator to run each command on its host and confirm with `/run done`.
    #[default]
    Manual,
}

impl RunbooksConfig {
    /// Checks what the types alone cannot: the access prefix names the host, each group lists a
    /// host once, and a runbook directory has hosts to run on.
    pub(super) fn validate(&self) -> anyhow::Result<()> {
        if let HostAccessConfig::Command { prefix } = &self.access {
            if !prefix.uses("{host}") || prefix.uses("{container}") || prefix.uses("{node}") {
                bail!(
                    "[runbooks.access] prefix must name the host as {{host}} and nothing else, \
                     e.g. [\"ssh\", \"-o\", \"BatchMode=yes\", \"{{host}}\", \"--\"]"
                );
            }
        }
        for (group, hosts) in &self.inventory {
            let unique: BTreeSet<_> = hosts.iter().collect();
            if unique.len() != hosts.len() {
                bail!("[runbooks.inventory] group `{group}` lists a host twice");
            }
        }
        if self.dir.is_some() && self.inventory.values().all(Vec::is_empty) {
            bail!(
                "[runbooks] has a dir but [runbooks.inventory] lists no hosts: runbooks would \
                 have nowhere to run"
            );
        }
        Ok(())
    }
}
