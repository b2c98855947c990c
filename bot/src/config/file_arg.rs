//! `--config FILE`, as every command that reads the config takes it.

use std::path::PathBuf;

use clap::Args;

use super::Config;

/// Where the config is read from without `--config`: where `deploy/opsbot.service` and the
/// container image keep it, so a binary installed alone finds it too.
pub const DEFAULT_PATH: &str = "/etc/opsbot/opsbot.toml";

/// The config file a command reads.
#[derive(Debug, Clone, Args)]
pub struct ConfigFile {
    /// The TOML config; `opsbot example-config` prints a documented example of every key.
    #[arg(id = "config", long = "config", value_name = "FILE", default_value = DEFAULT_PATH)]
    pub path: PathBuf,
}

impl ConfigFile {
    /// Reads and validates it.
    pub fn load(&self) -> anyhow::Result<Config> {
        Config::load(&self.path)
    }
}
