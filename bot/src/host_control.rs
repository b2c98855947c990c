//! Restarting the compute container on a hypervisor (spec 7): by command, by asking an
//! operator, or, in the simulated cloud, not at all (it has no hosts) and saying so.

use opsbot_commands::name::HostName;

use crate::config::HostControlConfig;
use crate::node_control::{NodeControlError, Outcome, run_command};

/// Host control for one cloud.
#[derive(Debug, Clone)]
pub struct HostControl {
    config: HostControlConfig,
}

impl HostControl {
    pub fn new(config: HostControlConfig) -> Self {
        Self { config }
    }

    /// Restarts the compute container on `host`, or says what an operator must do. Restarting
    /// twice is harmless, so a restart interrupted by a crash is simply done again.
    pub async fn restart(&self, host: &HostName) -> Result<Outcome, NodeControlError> {
        match &self.config {
            HostControlConfig::Command {
                restart,
                container,
                timeout,
            } => {
                run_command(
                    &restart.render(host.as_str(), host.as_str(), container),
                    *timeout,
                )
                .await
            }
            HostControlConfig::Manual { container } => Ok(Outcome::AskOperator {
                prompt: format!("restart the `{container}` container on {host}"),
            }),
            HostControlConfig::Sim => Ok(Outcome::Done {
                note: format!("simulated cloud: no hosts to restart, {host} counts as restarted"),
                output: Vec::new(),
            }),
        }
    }
}
