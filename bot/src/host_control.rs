//! Restarting the compute container on a hypervisor (spec 7): by command, by asking an
//! operator, or, in the simulated cloud, through the simulator's admin API.

use opsbot_commands::name::HostName;

use crate::config::HostControlConfig;
use crate::node_control::{NodeControlError, Outcome, run_command};

/// Host control for one cloud.
#[derive(Debug, Clone)]
pub struct HostControl {
    config: HostControlConfig,
    /// The cloud simulator's address, for the `sim` kind.
    sim_url: String,
    http: reqwest::Client,
}

impl HostControl {
    /// `auth_url` is the cloud's Keystone address; the simulator serves it at
    /// `{base}/identity/v3`, so the simulator's own address is derived from it by default.
    pub fn new(config: HostControlConfig, auth_url: &str) -> Self {
        let sim_url = match &config {
            HostControlConfig::Sim { url: Some(url) } => url.clone(),
            _ => auth_url
                .trim_end_matches('/')
                .trim_end_matches("/identity/v3")
                .to_owned(),
        };
        Self {
            config,
            sim_url: sim_url.trim_end_matches('/').to_owned(),
            http: reqwest::Client::new(),
        }
    }

    /// Restarts the compute container on `host`, or says what an operator must do. Whether
    /// it came back is for the caller to see (its compute service reports up again).
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
            HostControlConfig::Sim { .. } => self.sim(host).await,
        }
    }

    async fn sim(&self, host: &HostName) -> Result<Outcome, NodeControlError> {
        let url = format!("{}/_sim/compute/{host}/restart", self.sim_url);
        let response = self.http.post(url).send().await.map_err(|e| {
            NodeControlError::Sim(format!("could not be reached ({})", e.without_url()))
        })?;
        let status = response.status();
        if !status.is_success() {
            let said = response.text().await.unwrap_or_default();
            return Err(NodeControlError::Sim(format!(
                "answered {status} restarting {host}: {}",
                opsbot_commands::echo::visible(said.trim(), 200)
            )));
        }
        Ok(Outcome::Done {
            note: format!("restarted nova_compute on {host} (simulated)"),
            output: Vec::new(),
        })
    }
}
