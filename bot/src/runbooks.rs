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
            access: HostAccess::new(config.access.clone(), config.output),
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use opsbot_commands::name::{GroupName, HostName};

    use super::*;
    use crate::config::HostAccessConfig;

    fn config(dir: &std::path::Path) -> RunbooksConfig {
        RunbooksConfig {
            dir: Some(dir.to_owned()),
            inventory: BTreeMap::from([(
                GroupName::parse("compute").unwrap(),
                vec![HostName::parse("compute-01").unwrap()],
            )]),
            access: HostAccessConfig::Manual,
            output: crate::process::OutputBounds::default(),
        }
    }

    #[test]
    fn a_malformed_runbook_stops_the_start_naming_its_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let good = "name = \"ok\"\ndescription = \"fine\"\n[[steps]]\nkind = \"confirm\"\nprompt = \"look\"\n";
        std::fs::write(dir.path().join("a.toml"), good).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a runbook").unwrap();
        let bad = "name = \"bad\"\ndescription = \"x\"\n[[steps]]\nkind = \"run\"\non = \"compute-01\"\nargv = [\"bash\", \"-c\", \"reboot\"]\n";
        std::fs::write(dir.path().join("b.toml"), bad).unwrap();
        let error = format!("{:#}", Library::load(&config(dir.path())).unwrap_err());
        let file = dir.path().join("b.toml");
        assert!(
            error.starts_with(&format!("{}:6: `bash` is a shell", file.display())),
            "{error}"
        );
        std::fs::remove_file(&file).unwrap();
        let library = Library::load(&config(dir.path())).unwrap();
        assert_eq!(
            library.runbooks.iter().count(),
            1,
            "only *.toml files are read"
        );
    }

    #[test]
    fn a_missing_directory_is_an_error_that_names_it() {
        let error = format!(
            "{:#}",
            Library::load(&config(std::path::Path::new("/nonexistent/runbooks"))).unwrap_err()
        );
        assert!(error.contains("/nonexistent/runbooks"), "{error}");
    }
}
