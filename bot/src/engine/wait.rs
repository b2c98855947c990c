//! Waits: observe every poll interval, publish what is seen, move on as soon as the condition
//! holds (at most one interval late), fail with the last observation when time runs out.

use opsbot_commands::cluster::{Membership, Observation};
use opsbot_commands::plan::ClusterWait;
use opsbot_commands::render::{self, Label};
use opsbot_commands::run::Run;
use opsbot_state::StoreError;
use tokio::sync::Notify;

use super::Inner;
use super::failure::StepFailure;
use super::step::StepOutcome;
use crate::backend::BackendError;
use crate::clusters::Cluster;

/// One look at the cluster: whether the condition holds, and what was seen.
struct Look {
    satisfied: bool,
    observation: Observation,
    note: String,
}

pub(super) async fn until(
    inner: &Inner,
    cluster: &Cluster,
    run: &Run,
    condition: &ClusterWait,
    waker: &Notify,
) -> Result<StepOutcome, StoreError> {
    let config = &inner.config;
    let timeout = match condition {
        ClusterWait::NodeLeft { .. } | ClusterWait::NodeJoined { .. } => config.node_timeout,
        ClusterWait::ClusterFormed { .. } => config.formation_timeout,
        ClusterWait::NodeDrained { .. } => config.drain_timeout,
    };
    let deadline = inner.clock.instant() + timeout;
    let waiting = condition.label();
    let waiting = waiting.trim_start_matches("wait ");
    let mut faults = 0;
    let mut last = Observation::default();
    loop {
        match look(cluster, condition).await {
            Ok(look) => {
                faults = 0;
                inner.progress.observe(run, look.observation.clone());
                if look.satisfied {
                    return Ok(StepOutcome::Done(look.note));
                }
                last = look.observation;
            }
            Err(error) if error.fault.is_transient() && faults + 1 < config.retry.attempts => {
                faults += 1;
                let note = Observation::retrying(&last, faults, config.retry.attempts, &error);
                inner.progress.observe(run, note);
            }
            Err(error) => {
                return Ok(StepFailure::During {
                    error: Box::new(error),
                    doing: format!("waiting {waiting}"),
                }
                .into());
            }
        }
        if inner.clock.instant() >= deadline {
            return Ok(StepFailure::GaveUp {
                waited: shown(timeout),
                waiting: waiting.to_owned(),
                last: last.to_string(),
            }
            .into());
        }
        if paused_for_cancel(inner, run, config.poll_interval, waker).await? {
            return Ok(StepOutcome::Cancelled);
        }
    }
}

/// Sleeps one poll interval, or less when the run is woken (an operator acted on it), and says
/// whether a cancel arrived: every wait, of a cluster or of a runbook's command, paces itself
/// with this.
pub(super) async fn paused_for_cancel(
    inner: &Inner,
    run: &Run,
    interval: std::time::Duration,
    waker: &Notify,
) -> Result<bool, StoreError> {
    let _ = inner.clock.timeout(interval, waker.notified()).await;
    cancel_requested(inner, run)
}

/// Whether an operator has asked the run to stop, as the store has it now.
pub(super) fn cancel_requested(inner: &Inner, run: &Run) -> Result<bool, StoreError> {
    Ok(inner.store.run(run.id)?.is_some_and(|r| r.cancel.is_some()))
}

/// A wait's timeout as the failure names it: `1m00s`.
pub(super) fn shown(timeout: std::time::Duration) -> String {
    render::duration(crate::clock::span(timeout))
}

/// Where the cluster's nodes stand now, as it shows them: what a stopped run reports instead of
/// what its own steps assume. `None` when the cluster does not answer, or answers without an
/// elected master (then no node knows the membership).
pub(super) async fn nodes_now(cluster: &Cluster) -> Option<Observation> {
    match cluster.search.membership().await.ok()? {
        // Without an elected master no node can say which nodes are in the cluster: "0/5
        // joined" would hide the nodes still up. The caller reports its own bookkeeping.
        Membership::NoMaster | Membership::Unreachable => None,
        membership => Some(Observation::of(&membership, &cluster.inventory, None)),
    }
}

async fn look(cluster: &Cluster, condition: &ClusterWait) -> Result<Look, BackendError> {
    let membership = cluster.search.membership().await?;
    let health = match membership {
        Membership::Formed { .. } => Some(cluster.search.health().await?),
        Membership::NoMaster | Membership::Unreachable => None,
    };
    let expected = cluster.inventory.len();
    let mut observation = Observation::of(&membership, &cluster.inventory, health.as_ref());
    let (satisfied, note) = match condition {
        ClusterWait::NodeLeft { node } => match &membership {
            Membership::Formed { nodes, .. } => (
                !nodes.contains(node),
                format!("{node} left · nodes {}/{expected} joined", nodes.len()),
            ),
            Membership::NoMaster => (
                true,
                format!("{node} left; the cluster lost its quorum, as expected"),
            ),
            Membership::Unreachable => (true, format!("{node} left; no node answers any more")),
        },
        ClusterWait::NodeJoined { node } => match &membership {
            Membership::Formed { nodes, .. } => (
                nodes.contains(node),
                format!("{node} joined · nodes {}/{expected} joined", nodes.len()),
            ),
            Membership::NoMaster => (
                true,
                format!(
                    "{node} started; no master yet, its join is checked once the cluster forms"
                ),
            ),
            Membership::Unreachable => (false, String::new()),
        },
        ClusterWait::ClusterFormed { nodes, status } => {
            let all_joined = cluster.inventory.iter().all(|n| membership.has(*n));
            let healthy = health.as_ref().is_some_and(|h| h.status >= *status);
            (
                all_joined && membership.joined() >= *nodes && healthy,
                observation.to_string(),
            )
        }
        ClusterWait::NodeDrained { node } => match &health {
            Some(health) => {
                let shards = cluster.search.shards_on(*node).await?.unwrap_or(0);
                observation.node_shards = Some((*node, shards));
                let relocating = health.relocating_shards;
                if relocating == 0 && shards > 0 {
                    observation.note = Some(format!(
                        "no shard is moving: the other nodes cannot take them (a replica needs \
                         a node of its own, or disks are past the watermark); \
                         /cluster status cluster:{} shows more",
                        cluster.name
                    ));
                }
                (
                    relocating == 0 && shards == 0,
                    format!("{node} holds no shards · relocating_shards 0"),
                )
            }
            // Without a master nothing moves; the wait goes on and says so.
            None => (false, String::new()),
        },
    };
    Ok(Look {
        satisfied,
        observation,
        note,
    })
}
