//! Spec 3.1 "Stop the cluster" and "Start the cluster", and the restart that joins them.

use crate::cluster::{HealthStatus, Membership, ServerVersion};
use crate::name::{ClusterName, NodeAddr};
use crate::plan::{ClusterSafe, ClusterStep, ClusterWait, Plan};
use crate::planner::PlanError;
use crate::request::ProcedureRequest;

/// What the cluster planners look at.
#[derive(Debug, Clone)]
pub struct ClusterFacts {
    /// The nodes of the cluster from the config, in the order operators expect them handled.
    pub inventory: Vec<NodeAddr>,
    /// From `GET /`; `None` when the cluster did not answer.
    pub version: Option<ServerVersion>,
    pub membership: Membership,
}

pub(super) fn stop(
    request: &ProcedureRequest,
    cluster: &ClusterName,
    facts: &ClusterFacts,
) -> Result<Plan, PlanError> {
    let (steps, notes) = stop_steps(cluster, facts)?;
    Ok(Plan::new(request.clone(), steps, notes)?)
}

pub(super) fn start(
    request: &ProcedureRequest,
    cluster: &ClusterName,
    facts: &ClusterFacts,
) -> Result<Plan, PlanError> {
    check_inventory(cluster, facts)?;
    Ok(Plan::new(
        request.clone(),
        start_steps(&facts.inventory),
        vec![start_note(facts)],
    )?)
}

pub(super) fn restart(
    request: &ProcedureRequest,
    cluster: &ClusterName,
    facts: &ClusterFacts,
) -> Result<Plan, PlanError> {
    let (mut steps, mut notes) = stop_steps(cluster, facts)?;
    steps.extend(start_steps(&facts.inventory));
    notes.push(start_note(facts));
    Ok(Plan::new(request.clone(), steps, notes)?)
}

/// Every joined node must be in the inventory: a node the bot does not know would be left
/// running while the others stop, and would hold a master election on its own.
fn check_inventory(cluster: &ClusterName, facts: &ClusterFacts) -> Result<(), PlanError> {
    if facts.inventory.is_empty() {
        return Err(PlanError::EmptyInventory {
            cluster: cluster.clone(),
        });
    }
    if let Membership::Formed { nodes, .. } = &facts.membership {
        if let Some(node) = nodes.iter().find(|n| !facts.inventory.contains(n)) {
            return Err(PlanError::NodeNotInInventory {
                cluster: cluster.clone(),
                node: *node,
            });
        }
    }
    Ok(())
}

fn stop_steps(
    cluster: &ClusterName,
    facts: &ClusterFacts,
) -> Result<(Vec<ClusterStep>, Vec<String>), PlanError> {
    check_inventory(cluster, facts)?;
    let master = match &facts.membership {
        Membership::Formed { master, .. } => *master,
        Membership::NoMaster => {
            return Err(PlanError::NoMaster {
                cluster: cluster.clone(),
            });
        }
        Membership::Unreachable => {
            return Err(PlanError::Unreachable {
                cluster: cluster.clone(),
            });
        }
    };
    let Some(version) = facts.version else {
        return Err(PlanError::Unreachable {
            cluster: cluster.clone(),
        });
    };
    let mode = version.flush_mode();
    let mut steps = vec![
        ClusterStep::Safe(ClusterSafe::DisableAllocation),
        ClusterStep::Safe(ClusterSafe::Flush { mode }),
    ];
    // The elected master goes last, so that the cluster holds one election, not one per node.
    let mut order: Vec<NodeAddr> = facts.inventory.clone();
    order.sort_by_key(|n| Some(*n) == master);
    for node in order {
        steps.push(ClusterStep::Safe(ClusterSafe::StopNode { node }));
        steps.push(ClusterStep::Wait(ClusterWait::NodeLeft { node }));
    }
    let mut notes = vec![format!("{version}: flush with POST {}", mode.path())];
    if let Some(master) = master {
        notes.push(format!("{master} is the elected master: it stops last"));
    }
    Ok((steps, notes))
}

fn start_steps(inventory: &[NodeAddr]) -> Vec<ClusterStep> {
    let mut steps = Vec::with_capacity(inventory.len() * 2 + 3);
    for &node in inventory {
        steps.push(ClusterStep::Safe(ClusterSafe::StartNode { node }));
        steps.push(ClusterStep::Wait(ClusterWait::NodeJoined { node }));
    }
    steps.push(ClusterStep::Wait(ClusterWait::ClusterFormed {
        nodes: inventory.len(),
        status: HealthStatus::Yellow,
    }));
    steps.push(ClusterStep::Safe(ClusterSafe::EnableAllocation));
    steps.push(ClusterStep::Safe(ClusterSafe::Report));
    steps
}

fn start_note(facts: &ClusterFacts) -> String {
    let quorum = facts.inventory.len() / 2 + 1;
    format!(
        "until {quorum} of {} nodes are up the cluster has no master, so a node's join is \
         confirmed once the cluster has formed",
        facts.inventory.len()
    )
}

#[cfg(test)]
mod tests;
