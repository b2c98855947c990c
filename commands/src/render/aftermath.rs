//! What a run that stopped early leaves behind, in words an operator acts on at 3 a.m.: what
//! is still changed, what may be half-way, and the command that undoes or finishes it.

use std::fmt::Write as _;

use super::{Label, compact};
use crate::cluster::{Exclusion, Observation, SettingScope};
use crate::name::{ClusterName, NodeAddr};
use crate::plan::{Action, ClusterDestructive, ClusterSafe, ClusterStep};
use crate::request::ProcedureRequest;
use crate::run::{Run, StepState};

/// What a run that stopped early leaves behind, and the command that undoes or finishes it.
/// Shown when a run fails or is cancelled, so nobody has to work the state out at 3 a.m.
/// `seen` is how the cluster showed its nodes when the run stopped (`None` when it could not be
/// asked, or for runs that do not stop and start nodes): where a node stands is what the cluster
/// shows, never what the run's own steps assume.
pub fn aftermath(run: &Run, seen: Option<&Observation>) -> String {
    match run.plan().request() {
        ProcedureRequest::ClusterStop { cluster }
        | ProcedureRequest::ClusterStart { cluster }
        | ProcedureRequest::ClusterRestart { cluster } => cluster_aftermath(run, cluster, seen),
        ProcedureRequest::ClusterRemoveNode { cluster, node } => {
            removal_aftermath(run, cluster, *node)
        }
        ProcedureRequest::IndicesPrune { cluster, .. }
        | ProcedureRequest::IndicesDelete { cluster, .. } => deletion_aftermath(run, cluster),
        ProcedureRequest::PlacementStale { .. }
        | ProcedureRequest::ComputeRpcCap { .. }
        | ProcedureRequest::ImageProperties { .. }
        | ProcedureRequest::Runbook(_) => super::cloud::aftermath(run),
    }
}

/// For a node removal: whether the exclusion is still set, and where the node is.
fn removal_aftermath(run: &Run, cluster: &ClusterName, node: NodeAddr) -> String {
    let (mut excluded, mut cleared, mut stopped, mut unlisted) = (false, false, false, false);
    let mut uncertain = Vec::new();
    for (action, state) in cluster_steps(run) {
        let done = matches!(state, StepState::Done { .. });
        let touched = !matches!(state, StepState::Pending);
        match action {
            Action::Safe(ClusterSafe::ExcludeNode { .. }) => excluded = touched,
            Action::Safe(ClusterSafe::ClearExclusion { .. }) => cleared = done,
            Action::Destructive(ClusterDestructive::RetireNode { .. }) => stopped = done,
            Action::Destructive(ClusterDestructive::UnlistNode { .. }) => unlisted = done,
            Action::Destructive(ClusterDestructive::DeleteIndices { .. })
            | Action::Safe(_)
            | Action::Wait(_)
            | Action::Gate { .. } => {}
        }
        if touched && !done && action.is_destructive() {
            uncertain.push(format!("may be half-way: {}", action.label()));
        }
    }
    let mut said = Vec::new();
    if excluded && cleared {
        said.push(format!("the exclusion of {node} was cleared"));
    }
    if excluded && !cleared {
        let exclusion = Exclusion {
            scope: SettingScope::Transient,
            value: node.to_string(),
        };
        said.push(format!(
            "still set: {exclusion}; clear it with PUT /_cluster/settings {} on cluster `{cluster}`",
            exclusion.clearing_body()
        ));
    }
    said.extend(uncertain);
    let finish = format!("/cluster remove-node cluster:{cluster} node:{node}");
    match (stopped, unlisted) {
        (false, _) => said.push(format!("{node} still runs and stays in the deployment")),
        (true, false) => said.push(format!(
            "{node} is stopped but still in the deployment inventory; to finish, ask again: \
             {finish}; to bring it back, start its search container"
        )),
        (true, true) => said.push(format!(
            "{node} is stopped and out of the deployment inventory; redeploy the search service \
             with serial 1 to finish"
        )),
    }
    said.join("\n")
}

fn cluster_aftermath(run: &Run, cluster: &ClusterName, seen: Option<&Observation>) -> String {
    let mut allocation_disabled = false;
    // The nodes this run stopped and did not start again, and those it started.
    let (mut stopped, mut started): (Vec<NodeAddr>, Vec<NodeAddr>) = (Vec::new(), Vec::new());
    let mut uncertain: Vec<String> = Vec::new();
    for (action, state) in cluster_steps(run) {
        let done = matches!(state, StepState::Done { .. });
        let touched = !matches!(state, StepState::Pending);
        let Action::Safe(safe) = action else { continue };
        match safe {
            ClusterSafe::DisableAllocation if done => allocation_disabled = true,
            ClusterSafe::EnableAllocation if done => allocation_disabled = false,
            ClusterSafe::StopNode { node } if done => {
                stopped.push(*node);
                started.retain(|n| n != node);
            }
            ClusterSafe::StartNode { node } if done => {
                started.push(*node);
                stopped.retain(|n| n != node);
            }
            ClusterSafe::StopNode { node } | ClusterSafe::StartNode { node } if touched => {
                uncertain.push(format!("{node} may be half-way ({})", safe.label()));
            }
            _ => {}
        }
    }
    let mut left = Vec::new();
    if allocation_disabled {
        left.push(
            "shard allocation is disabled (persistent cluster.routing.allocation.enable: none)"
                .to_owned(),
        );
    }
    left.extend(uncertain);
    let all_joined = seen.is_some_and(|seen| {
        seen.missing.is_empty()
            && seen.note.is_none()
            && seen.nodes_joined.is_some_and(|(joined, of)| joined == of)
    });
    let nodes = |nodes: &[NodeAddr]| {
        nodes
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match seen {
        Some(seen) if !all_joined => {
            left.push(format!("as the cluster shows its nodes now: {seen}"))
        }
        Some(_) => {}
        None if !stopped.is_empty() || !started.is_empty() => {
            let mut did = Vec::new();
            if !stopped.is_empty() {
                did.push(format!("stopped {}", nodes(&stopped)));
            }
            if !started.is_empty() {
                did.push(format!("started {}", nodes(&started)));
            }
            left.push(format!(
                "the cluster could not be asked where its nodes stand; this run {}",
                did.join(" and ")
            ));
        }
        None => {}
    }
    if left.is_empty() {
        return "nothing was left changed".to_owned();
    }
    format!(
        "left in place: {}\nto bring the cluster back: /cluster start cluster:{cluster}",
        left.join("; ")
    )
}

/// For deletions: what was deleted, what was not, and what may be half-way.
fn deletion_aftermath(run: &Run, cluster: &ClusterName) -> String {
    let total = run.plan().deleted_indices().count();
    let (mut deleted, mut spared, mut kept, mut partial) = (0, 0, Vec::new(), Vec::new());
    for (step, indices) in run.plan().index_deletions() {
        match run.steps().get(step) {
            // A record from before chunks counted what their DELETE removed: the chunk's size.
            Some(StepState::Done { deleted: count, .. }) => {
                let count = count.unwrap_or(indices.len()).min(indices.len());
                deleted += count;
                spared += indices.len() - count;
            }
            None
            | Some(
                StepState::Pending
                | StepState::Failed {
                    unchanged: true, ..
                },
            ) => {
                kept.extend(indices.iter().cloned());
            }
            Some(_) => partial.extend(indices.iter().cloned()),
        }
    }
    // A check after the deletes that found some still there: "deleted" would not be true.
    let unverified = cluster_steps(run).any(|(action, state)| {
        matches!(action, Action::Safe(ClusterSafe::VerifyDeleted))
            && matches!(state, StepState::Failed { .. })
    });
    let mut text = if unverified {
        // The chunks' counts would include what was gone before its DELETE: the check's own
        // listing, above, counts per index.
        format!(
            "the cluster answered every DELETE, but the check after found some of the {total} \
             selected indices still there (above, counted per index)"
        )
    } else {
        format!("deleted {deleted} of {total} selected indices")
    };
    if spared > 0 {
        let _ = write!(
            text,
            "; {spared} {} gone before {} delete or re-created since the plan and kept (the \
             steps say which)",
            if spared == 1 { "was" } else { "were" },
            if spared == 1 { "its" } else { "their" },
        );
    }
    if !kept.is_empty() {
        let _ = write!(text, "; not deleted: {}", compact(&kept));
    }
    if !partial.is_empty() {
        let _ = write!(
            text,
            "; may be partly deleted: {} (/indices list cluster:{cluster} shows what remains)",
            compact(&partial)
        );
    }
    text
}

/// A search cluster's run's steps beside their states; none for another kind of run.
fn cluster_steps(run: &Run) -> impl Iterator<Item = (&ClusterStep, &StepState)> {
    run.plan().cluster_steps().iter().zip(run.steps())
}
