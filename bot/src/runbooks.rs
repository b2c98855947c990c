//! The runbook library: the operators' runbook files as loaded at start-up, the host inventory
//! they run on, and how their commands reach a host.

use std::path::PathBuf;

use anyhow::Context;
use opsbot_commands::plan::Plan;
use opsbot_commands::runbook::{Inventory, Runbook, RunbookError, RunbookRequest, Runbooks};

use crate::config::RunbooksConfig;
use crate::host_access::HostAccess;

/// Everything a runbook run needs besides the store.
#[derive(Debug, Clone)]
pub struct Library {
    pub runbooks: Runbooks,
    pub inventory: Inventory,
    pub access: HostAccess,
}

impl Library {
    /// Reads every `*.toml` of the configured directory, in name order. The first file that
    /// cannot be used stops the start-up, naming the file, the line and what is wrong: a bot
    /// that silently lacks a runbook would be found out at 3 a.m.
    pub fn load(config: &RunbooksConfig) -> anyhow::Result<Self> {
        let inventory = Inventory::new(config.inventory.clone());
        let mut list = Vec::new();
        if let Some(dir) = &config.dir {
            let entries = std::fs::read_dir(dir)
                .with_context(|| format!("cannot read the runbooks directory {}", dir.display()))?;
            let mut paths: Vec<PathBuf> = entries
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|path| path.extension().is_some_and(|e| e == "toml"))
                .collect();
            paths.sort();
            for path in paths {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read the runbook {}", path.display()))?;
                list.push(Runbook::parse(
                    &path.display().to_string(),
                    &text,
                    &inventory,
                )?);
            }
            if list.is_empty() {
                tracing::warn!(dir = %dir.display(), "the runbooks directory holds no *.toml file");
            }
        }
        Ok(Self {
            runbooks: Runbooks::new(list)?,
            inventory,
            access: HostAccess::new(config.access.clone()),
        })
    }

    /// Checks an operator's values against the runbook.
    pub fn request(
        &self,
        name: &str,
        params: &[(String, String)],
    ) -> Result<RunbookRequest, RunbookError> {
        let given: Vec<(&str, &str)> = params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        self.runbooks.get(name)?.request(&given, &self.inventory)
    }

    pub fn plan(&self, request: &RunbookRequest) -> Result<Plan, RunbookError> {
        self.runbooks
            .get(request.runbook.as_str())?
            .plan(request, &self.inventory)
    }
}
