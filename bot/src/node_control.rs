//! Stopping and starting the search container on a node: by command (argv templates, never a
//! shell), by asking an operator, or through the simulator. Whatever did it, the engine verifies
//! the effect through the cluster API afterwards.

use std::time::Duration;

use opsbot_commands::name::NodeAddr;
use serde::Deserialize;

use crate::backend::transport;
use crate::backend::{Fault, http};
use crate::config::{NodeControlConfig, Tls};
use crate::process::{CommandError, OutputBounds};

/// What node control does: a node's container, or the deployment around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeOp {
    Stop,
    Start,
    /// Take the node out of the search group of the deployment inventory.
    Unlist,
    /// Redeploy the search service with serial 1, after the node was unlisted.
    Redeploy,
}

impl NodeOp {
    fn verb(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Start => "start",
            Self::Unlist => "unlist",
            Self::Redeploy => "redeploy",
        }
    }

    fn doing(self) -> &'static str {
        match self {
            Self::Stop => "stopping",
            Self::Start => "starting",
            Self::Unlist => "unlisting",
            Self::Redeploy => "redeploying",
        }
    }

    fn past(self) -> &'static str {
        match self {
            Self::Stop => "stopped",
            Self::Start => "started",
            Self::Unlist => "unlisted",
            Self::Redeploy => "redeployed",
        }
    }

    /// What an operator is asked to do when no command does it.
    fn request(self, node: NodeAddr, container: &str) -> String {
        match self {
            Self::Stop | Self::Start => {
                format!("{} the `{container}` container on {node}", self.verb())
            }
            Self::Unlist => format!(
                "remove {node} from the `{container}` group of the deployment inventory \
                 (Kolla: the multinode inventory file)"
            ),
            Self::Redeploy => format!(
                "redeploy the search service with serial 1 \
                 (Kolla: kolla-ansible deploy --tags {container} -e kolla_serial=1)"
            ),
        }
    }
}

/// How an operation ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Done; `output` goes to the run log.
    Done { note: String, output: Vec<String> },
    /// A person must do it; the run waits for `/run done`.
    AskOperator { prompt: String },
}

/// How long a simulator's admin API may take to answer: its simulated `docker restart` takes
/// about a second; one that hangs fails the step instead of holding it.
const SIM_TIMEOUT: Duration = Duration::from_secs(30);

/// The admin API of a simulator (search cluster or cloud), for the `sim` kinds of node and host
/// control. It is reached as the cluster or cloud it simulates is: the same CA, the same
/// client certificate, the same size cap on answers.
#[derive(Debug, Clone)]
pub(crate) struct SimAdmin {
    url: String,
    http: reqwest::Client,
}

impl SimAdmin {
    pub(crate) fn new(url: &str, tls: &Tls) -> anyhow::Result<Self> {
        Ok(Self {
            url: url.trim_end_matches('/').to_owned(),
            http: http::client(tls, SIM_TIMEOUT)?,
        })
    }

    /// `POST {url}{path}` for `doing` (`restarting compute-01`), and the answer's body; an
    /// answer other than 2xx is an error with what the simulator said.
    pub(crate) async fn post(&self, path: &str, doing: &str) -> Result<String, CommandError> {
        let failed = |fault: Fault| {
            CommandError::Sim(match fault {
                Fault::Timeout => {
                    format!("did not answer within {}s {doing}", SIM_TIMEOUT.as_secs())
                }
                other => format!("{other} ({doing})"),
            })
        };
        let sent = self.http.post(format!("{}{path}", self.url)).send().await;
        let response = sent.map_err(|e| failed(transport::fault(&e)))?;
        let status = response.status();
        let body = http::body(response).await.map_err(failed)?;
        if !status.is_success() {
            let said = opsbot_commands::echo::visible(body.trim(), 200);
            return Err(CommandError::Sim(if said.is_empty() {
                format!("answered {status} {doing}")
            } else {
                format!("answered {status} {doing}: {said}")
            }));
        }
        Ok(body)
    }
}

/// Node control for one cluster.
#[derive(Debug, Clone)]
pub struct NodeControl {
    config: NodeControlConfig,
    /// The simulator's admin API, for the `sim` kind only.
    sim: Option<SimAdmin>,
}

impl NodeControl {
    /// `cluster_url` and `tls` are the cluster's: a simulator's admin API is reached there by
    /// default, and always as the cluster is.
    pub fn new(config: NodeControlConfig, cluster_url: &str, tls: &Tls) -> anyhow::Result<Self> {
        let sim = match &config {
            NodeControlConfig::Sim { url } => {
                Some(SimAdmin::new(url.as_deref().unwrap_or(cluster_url), tls)?)
            }
            NodeControlConfig::Command { .. } | NodeControlConfig::Manual { .. } => None,
        };
        Ok(Self { config, sim })
    }

    /// Does `op` for `node`, or says what an operator must do.
    pub async fn apply(&self, op: NodeOp, node: NodeAddr) -> Result<Outcome, CommandError> {
        match &self.config {
            NodeControlConfig::Command {
                stop,
                start,
                container,
                hosts,
                timeout,
                unlist,
                redeploy,
                redeploy_timeout,
            } => {
                let (template, timeout) = match op {
                    NodeOp::Stop => (Some(stop), *timeout),
                    NodeOp::Start => (Some(start), *timeout),
                    NodeOp::Unlist => (unlist.as_ref(), *timeout),
                    NodeOp::Redeploy => (redeploy.as_ref(), *redeploy_timeout),
                };
                let Some(template) = template else {
                    return Ok(Outcome::AskOperator {
                        prompt: op.request(node, container),
                    });
                };
                let host = hosts
                    .get(&node)
                    .cloned()
                    .unwrap_or_else(|| node.to_string());
                let argv = template.render(&host, &node.to_string(), container);
                run_command(&argv, timeout).await
            }
            NodeControlConfig::Manual { container } => Ok(Outcome::AskOperator {
                prompt: op.request(node, container),
            }),
            NodeControlConfig::Sim { .. } => match (op, &self.sim) {
                (NodeOp::Stop | NodeOp::Start, Some(sim)) => Self::sim(sim, op, node).await,
                (NodeOp::Stop | NodeOp::Start, None) => {
                    Err(CommandError::Sim("has no address (internal error)".into()))
                }
                // The simulator has no deployment around it: nothing to change, and it says so.
                (NodeOp::Unlist | NodeOp::Redeploy, _) => Ok(Outcome::Done {
                    note: format!(
                        "simulated cluster: no deployment to change, {node} counts as {}",
                        op.past()
                    ),
                    output: Vec::new(),
                }),
            },
        }
    }

    /// False when doing `op` again after a crash could do harm: a command changing the
    /// deployment inventory is not known to be idempotent. Stops and starts are; asking a
    /// person again is too.
    pub fn repeatable(&self, op: NodeOp) -> bool {
        match (&self.config, op) {
            (NodeControlConfig::Command { unlist, .. }, NodeOp::Unlist) => unlist.is_none(),
            _ => true,
        }
    }

    async fn sim(sim: &SimAdmin, op: NodeOp, node: NodeAddr) -> Result<Outcome, CommandError> {
        let path = format!("/_sim/nodes/{node}/{}", op.verb());
        let doing = format!("{} {node}", op.doing());
        let answer = sim.post(&path, &doing).await?;
        let changed: SimAnswer = serde_json::from_str(&answer)
            .map_err(|e| CommandError::Sim(format!("sent an unreadable answer ({e})")))?;
        let note = if changed.changed {
            format!("{} {node}", op.past())
        } else {
            format!("{node} was already {}", changed.state)
        };
        Ok(Outcome::Done {
            note,
            output: Vec::new(),
        })
    }
}

#[derive(Debug, Deserialize)]
struct SimAnswer {
    state: String,
    changed: bool,
}

/// Runs argv with a timeout; exit 0 is done, anything else a failure with its last lines.
pub(crate) async fn run_command(
    argv: &[String],
    timeout: Duration,
) -> Result<Outcome, CommandError> {
    let bounds = OutputBounds::default().at_most_lines(crate::process::KEPT_LINES);
    let finished = crate::process::run(argv, None, timeout, bounds, std::future::pending()).await?;
    let ending = finished.ending();
    // The run log says when it holds only the end of what the command printed.
    let dropped = finished.output.dropped();
    let mut lines = finished.output.lines;
    if let Some(dropped) = dropped {
        lines.insert(0, format!("({dropped})"));
    }
    if finished.code == Some(0) {
        Ok(Outcome::Done {
            note: format!("`{}` exited 0", argv.join(" ")),
            output: lines,
        })
    } else {
        Err(CommandError::Failed {
            program: argv.first().cloned().unwrap_or_default(),
            ending,
            last_line: lines.last().cloned().unwrap_or_default(),
            output: lines,
        })
    }
}

#[cfg(test)]
mod tests;
