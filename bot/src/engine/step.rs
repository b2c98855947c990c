//! Executing one step: write the intent, act, and report the outcome. A step found started after
//! a restart is first settled by looking at the world (`reconcile`), never replayed blindly.

use std::collections::BTreeMap;

use opsbot_commands::approval::{Approved, ClusterAct};
use opsbot_commands::audit::AuditKind;
use opsbot_commands::cluster::{CatReport, FlushMode, Membership, Observation};
use opsbot_commands::name::NodeAddr;
use opsbot_commands::plan::{Action, ClusterSafe, ClusterStep, OnCluster, Targeted};
use opsbot_commands::render;
use opsbot_commands::run::{Run, StepState};
use opsbot_state::StoreError;
use tokio::sync::Notify;

use super::failure::StepFailure;
use super::{Inner, delete, store_only, wait};
use crate::backend::{BackendError, Fault};
use crate::clusters::Cluster;
use crate::node_control::{NodeOp, Outcome};
use crate::process::CommandError;

/// How a step ended.
#[derive(Debug)]
pub(super) enum StepOutcome {
    Done(String),
    /// Done, with values a runbook step captured from its output for the steps after it.
    Captured {
        note: String,
        values: BTreeMap<String, String>,
    },
    /// A chunk of index deletions done: `deleted` of its indices removed by its own DELETE.
    Deleted {
        note: String,
        deleted: usize,
    },
    /// A runbook's approval gate is reached without an approval: the run waits for one.
    AwaitApproval,
    /// A person must act; the run waits for `/run done`.
    AskOperator(String),
    /// A cancel arrived during a wait.
    Cancelled,
    /// A cancel stopped the step's command; what it left, in words. The run then ends as
    /// cancelled, not failed.
    Interrupted(String),
    /// What happened, in words for the operator.
    Failed(String),
    /// Failed before it changed anything: the server refused its change.
    Refused(String),
}

impl StepOutcome {
    /// Why the step failed, if it did (a cancel's interruption is not a failure).
    pub(super) fn failure(&self) -> Option<&str> {
        match self {
            Self::Failed(error) | Self::Refused(error) => Some(error),
            _ => None,
        }
    }
}

pub(super) async fn execute(
    inner: &Inner,
    run: &Run,
    index: usize,
    resumed: bool,
    waker: &Notify,
) -> Result<StepOutcome, StoreError> {
    match run.plan().targeted() {
        Targeted::Cluster { cluster, steps } => {
            let Ok(cluster) = inner.targets.clusters.get(cluster) else {
                return Ok(StepFailure::TargetGone {
                    kind: "cluster",
                    name: cluster.to_string(),
                }
                .into());
            };
            on_cluster(inner, cluster, run, index, &steps[index], resumed, waker).await
        }
        Targeted::Cloud { cloud, steps } => {
            super::cloud_step::execute(inner, cloud, run, index, &steps[index], resumed, waker)
                .await
        }
        Targeted::Hosts { steps } => {
            super::runbook_step::execute(inner, run, index, &steps[index], resumed, waker).await
        }
    }
}

/// An approval gate, the same in every plan: the run goes past it only with an approval.
pub(super) fn gate(run: &Run) -> StepOutcome {
    match &run.approval {
        Some(grant) => StepOutcome::Done(format!("approved by {}", grant.by.name)),
        None => StepOutcome::AwaitApproval,
    }
}

async fn on_cluster(
    inner: &Inner,
    cluster: &Cluster,
    run: &Run,
    index: usize,
    action: &ClusterStep,
    resumed: bool,
    waker: &Notify,
) -> Result<StepOutcome, StoreError> {
    Ok(match action {
        Action::Gate { .. } => gate(run),
        Action::Safe(safe) => {
            if !resumed {
                mark_started(inner, run, index).await?;
            } else if let Some(note) = reconcile(cluster, safe).await {
                tracing::info!(%note, "settled a started step by observation");
                return Ok(StepOutcome::Done(note));
            }
            perform(inner, cluster, run, safe)
                .await
                .unwrap_or_else(StepOutcome::from)
        }
        Action::Wait(condition) => {
            if !resumed {
                mark_started(inner, run, index).await?;
            }
            wait::until(inner, cluster, run, condition, waker).await?
        }
        Action::Destructive(_) => {
            if !resumed {
                mark_started(inner, run, index).await?;
            }
            destroy(inner, cluster, run, index, resumed)
                .await
                .unwrap_or_else(StepOutcome::from)
        }
    })
}

/// A destructive step: only with the approval proof, re-derived from the stored grant (after a
/// restart too), and never replayed blindly after a crash.
async fn destroy(
    inner: &Inner,
    cluster: &Cluster,
    run: &Run,
    step: usize,
    resumed: bool,
) -> Result<StepOutcome, StepFailure> {
    match Approved::<OnCluster>::verify(run, step)?.act() {
        // Checks the chunk's names before deleting, so a chunk found started deletes only what
        // is still there as approved, once no earlier delete of it is still being applied.
        ClusterAct::DeleteIndices(indices) => {
            delete::chunk(inner, cluster, run, step, indices, resumed).await
        }
        ClusterAct::RetireNode(node) => {
            if resumed {
                if let Some(note) = left_already(cluster, node).await {
                    return Ok(StepOutcome::Done(note));
                }
            }
            // Stopping a container that is still up is safe to repeat.
            control(inner, cluster, run, NodeOp::Stop, node).await
        }
        ClusterAct::UnlistNode(node) => {
            if resumed && !cluster.nodes.repeatable(NodeOp::Unlist) {
                return Ok(StepOutcome::AskOperator(format!(
                    "opsbot restarted while its command was taking {node} out of the deployment \
                     inventory; check that {node} is out of it (remove it if not)"
                )));
            }
            control(inner, cluster, run, NodeOp::Unlist, node).await
        }
    }
}

/// `Some(note)` when the node is no longer in the cluster: its stop has taken effect.
async fn left_already(cluster: &Cluster, node: NodeAddr) -> Option<String> {
    match cluster.search.membership().await.ok()? {
        Membership::Formed { nodes, .. } if !nodes.contains(&node) => {
            Some(format!("{node} had already left (found after a restart)"))
        }
        _ => None,
    }
}

/// The write-ahead record: flushed before the side effect, so a crash leaves evidence of it.
pub(super) async fn mark_started(inner: &Inner, run: &Run, index: usize) -> Result<(), StoreError> {
    let now = inner.clock.now();
    let action = render::step_label_at(run.plan(), index);
    let updated = inner
        .writes
        .update_run(run.id, None, move |run| {
            run.steps_mut()[index] = StepState::Started { at: now };
            Ok(vec![AuditKind::StepStarted {
                step: index,
                action: action.clone(),
            }])
        })
        .await
        .map_err(store_only)?;
    inner.progress.changed(&updated);
    Ok(())
}

/// Is the effect of a started step already visible? Then it is done; otherwise it is repeated,
/// which is safe for every safe action (settings are set, not toggled; stopping a stopped
/// container and flushing twice change nothing).
async fn reconcile(cluster: &Cluster, action: &ClusterSafe) -> Option<String> {
    let found = |what: String| Some(format!("{what} (found after a restart)"));
    match action {
        ClusterSafe::DisableAllocation => {
            let settings = cluster.search.allocation().await.ok()?;
            (settings.enable.as_deref() == Some("none"))
                .then(|| found("allocation already disabled".into()))?
        }
        ClusterSafe::EnableAllocation => {
            let settings = cluster.search.allocation().await.ok()?;
            matches!(settings.enable.as_deref(), None | Some("all"))
                .then(|| found("allocation already enabled".into()))?
        }
        ClusterSafe::StopNode { node } => left_already(cluster, *node).await,
        ClusterSafe::StartNode { node } => match cluster.search.membership().await.ok()? {
            Membership::Formed { nodes, .. } if nodes.contains(node) => {
                found(format!("{node} had already joined"))
            }
            _ => None,
        },
        ClusterSafe::ExcludeNode { node } => {
            let settings = cluster.search.allocation().await.ok()?;
            settings
                .exclusion
                .is_some_and(|e| e.is_only(*node))
                .then(|| found(format!("{node} already excluded")))?
        }
        ClusterSafe::ClearExclusion { node } => {
            let settings = cluster.search.allocation().await.ok()?;
            (!settings.exclusion.is_some_and(|e| e.names(*node)))
                .then(|| found(format!("the exclusion of {node} already cleared")))?
        }
        ClusterSafe::Flush { .. }
        | ClusterSafe::Report
        | ClusterSafe::VerifyDeleted
        | ClusterSafe::Redeploy { .. } => None,
    }
}

async fn perform(
    inner: &Inner,
    cluster: &Cluster,
    run: &Run,
    action: &ClusterSafe,
) -> Result<StepOutcome, StepFailure> {
    match action {
        ClusterSafe::DisableAllocation => {
            retried(inner, run, || {
                cluster.search.set_allocation_enable(Some("none"))
            })
            .await?;
            Ok(StepOutcome::Done("allocation disabled".into()))
        }
        ClusterSafe::EnableAllocation => {
            retried(inner, run, || cluster.search.set_allocation_enable(None)).await?;
            Ok(StepOutcome::Done("allocation re-enabled".into()))
        }
        ClusterSafe::Flush { mode } => {
            let report = retried(inner, run, || cluster.search.flush(*mode)).await?;
            let what = match mode {
                FlushMode::Synced => "synced-flushed",
                FlushMode::Plain => "flushed",
            };
            let mut note = format!("{what} {}/{} shards", report.successful, report.total);
            if report.failed > 0 {
                note.push_str(&format!(
                    "; {} failed (they recover from their translog, more slowly)",
                    report.failed
                ));
            }
            Ok(StepOutcome::Done(note))
        }
        ClusterSafe::StopNode { node } => control(inner, cluster, run, NodeOp::Stop, *node).await,
        ClusterSafe::StartNode { node } => control(inner, cluster, run, NodeOp::Start, *node).await,
        ClusterSafe::Report => {
            let health = retried(inner, run, || cluster.search.cat_health()).await;
            let recovery = retried(inner, run, || cluster.search.cat_recovery()).await;
            let nodes = retried(inner, run, || cluster.search.cat_nodes()).await;
            let report = CatReport {
                health: health?,
                recovery: recovery?,
                nodes: nodes?,
            };
            Ok(StepOutcome::Done(render::report(&report, &cluster.name)))
        }
        ClusterSafe::VerifyDeleted => delete::verify(inner, cluster, run).await,
        ClusterSafe::ExcludeNode { node } => {
            let value = node.to_string();
            retried(inner, run, || cluster.search.set_exclusion(&value)).await?;
            Ok(StepOutcome::Done(format!(
                "excluded {node}: its shards move to the other nodes"
            )))
        }
        ClusterSafe::ClearExclusion { node } => {
            // Only this run's address goes: one another person added meanwhile stays.
            let settings = retried(inner, run, || cluster.search.allocation()).await?;
            let Some(exclusion) = settings.exclusion.filter(|e| e.names(*node)) else {
                return Ok(StepOutcome::Done(format!(
                    "the exclusion of {node} was already cleared"
                )));
            };
            let rest = exclusion.without(*node);
            retried(inner, run, || cluster.search.set_exclusion(&rest)).await?;
            Ok(StepOutcome::Done(if rest.is_empty() {
                format!("cleared the exclusion of {node}")
            } else {
                format!(
                    "cleared the exclusion of {node}; kept the one of {rest}, set by someone else"
                )
            }))
        }
        ClusterSafe::Redeploy { removed } => {
            control(inner, cluster, run, NodeOp::Redeploy, *removed).await
        }
    }
}

/// Runs `call` with the retry policy, each retried fault shown in the run's progress; a fault
/// that remains is the step's failure.
pub(super) async fn retried<T, Fut>(
    inner: &Inner,
    run: &Run,
    call: impl FnMut() -> Fut,
) -> Result<T, BackendError>
where
    Fut: Future<Output = Result<T, BackendError>>,
{
    let retry = inner.retry();
    // Checked before every try, a retry's included: a backoff may outlast the tenure.
    let mut call = call;
    let acting = || {
        let acting = acting(inner);
        let attempt = call();
        async move {
            acting.map_err(|why| {
                BackendError::once("opsbot", "the request", Fault::NotActing(why.to_string()))
            })?;
            attempt.await
        }
    };
    retry
        .run(acting, |error, tries| {
            observe_retry(inner, run, tries, retry.policy.attempts, error);
        })
        .await
}

/// Whether this instance may start a side effect now (see `lease`): the store refuses a
/// stale instance's writes, and this keeps it from acting between them.
pub(super) fn acting(inner: &Inner) -> Result<(), StepFailure> {
    inner.tenure.check().map_err(StepFailure::NotActing)
}

/// Says on the run's progress message that a step's call failed for now and is tried again.
pub(super) fn observe_retry(
    inner: &Inner,
    run: &Run,
    tries: u32,
    attempts: u32,
    error: &BackendError,
) {
    let note = Observation::retrying(&Observation::default(), tries, attempts, error);
    inner.progress.observe(run, note);
}

/// Keeps a command's output in the run log, and turns node or host control's answer into the
/// step's outcome.
pub(super) async fn controlled(
    inner: &Inner,
    run: &Run,
    target: &str,
    outcome: Result<Outcome, CommandError>,
) -> Result<StepOutcome, StepFailure> {
    let output: &[String] = match &outcome {
        Ok(Outcome::Done { output, .. }) | Err(CommandError::Failed { output, .. }) => output,
        Ok(Outcome::AskOperator { .. }) | Err(_) => &[],
    };
    // The output is evidence, not the outcome: a run does not fail because it could not be kept.
    if let Err(error) = inner.writes.append_run_log(run.id, output.to_vec()).await {
        tracing::error!(%error, "cannot keep command output in the run log");
    }
    match outcome {
        Ok(Outcome::Done { note, .. }) => Ok(StepOutcome::Done(note)),
        Ok(Outcome::AskOperator { prompt }) => Ok(StepOutcome::AskOperator(prompt)),
        Err(error) => Err(StepFailure::Command {
            on: target.to_owned(),
            error,
        }),
    }
}

async fn control(
    inner: &Inner,
    cluster: &Cluster,
    run: &Run,
    op: NodeOp,
    node: NodeAddr,
) -> Result<StepOutcome, StepFailure> {
    acting(inner)?;
    let outcome = cluster.nodes.apply(op, node).await;
    controlled(inner, run, &format!("node control on {node}"), outcome).await
}
