//! Restarting the compute container on a hypervisor (spec 7): by command, by asking an
//! operator, or, in the simulated cloud, through the simulator's admin API.

use opsbot_commands::name::HostName;

use crate::config::{HostControlConfig, Tls};
use crate::node_control::{Outcome, SimAdmin, run_command};
use crate::process::CommandError;

/// Host control for one cloud.
#[derive(Debug, Clone)]
pub struct HostControl {
    config: HostControlConfig,
    /// The cloud simulator's admin API, for the `sim` kind only.
    sim: Option<SimAdmin>,
}

impl HostControl {
    /// `auth_url` is the cloud's Keystone address; the simulator serves it at
    /// `{base}/identity/v3`, so the simulator's own address is derived from it by default.
    /// `tls` is the cloud's: the simulator is reached as the cloud is.
    pub fn new(config: HostControlConfig, auth_url: &str, tls: &Tls) -> anyhow::Result<Self> {
        let sim = match &config {
            HostControlConfig::Sim { url } => Some(SimAdmin::new(
                url.as_deref().unwrap_or_else(|| {
                    auth_url
                        .trim_end_matches('/')
                        .trim_end_matches("/identity/v3")
                }),
                tls,
            )?),
            HostControlConfig::Command { .. } | HostControlConfig::Manual { .. } => None,
        };
        Ok(Self { config, sim })
    }

    /// Restarts the compute container on `host`, or says what an operator must do. Whether
    /// it came back is for the caller to see (its compute service reports up again).
    pub async fn restart(&self, host: &HostName) -> Result<Outcome, CommandError> {
        match (&self.config, &self.sim) {
            (
                HostControlConfig::Command {
                    restart,
                    container,
                    timeout,
                },
                _,
            ) => {
                run_command(
                    &restart.render(host.as_str(), host.as_str(), container),
                    *timeout,
                )
                .await
            }
            (HostControlConfig::Manual { container }, _) => Ok(Outcome::AskOperator {
                prompt: format!("restart the `{container}` container on {host}"),
            }),
            (HostControlConfig::Sim { .. }, Some(sim)) => {
                sim.post(
                    &format!("/_sim/compute/{host}/restart"),
                    &format!("restarting {host}"),
                )
                .await?;
                Ok(Outcome::Done {
                    note: format!("restarted nova_compute on {host} (simulated)"),
                    output: Vec::new(),
                })
            }
            (HostControlConfig::Sim { .. }, None) => {
                Err(CommandError::Sim("has no address (internal error)".into()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_simulator_that_never_answers_fails_the_restart_in_time() {
        // Takes connections and never answers them.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                held.push(stream);
            }
        });
        let control = HostControl::new(
            HostControlConfig::Sim { url: Some(url) },
            "",
            &Tls::default(),
        )
        .unwrap();
        let host = HostName::parse("compute-01").unwrap();
        let error = control.restart(&host).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "the simulator did not answer within 30s restarting compute-01"
        );
    }
}
