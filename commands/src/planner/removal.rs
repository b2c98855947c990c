//! Spec 3.1 "Remove a node": drain it with an allocation exclusion, stop it, take it out of the
//! deployment, and clear the exclusion. It takes a node away for good, so it needs approval.

use crate::cluster::{AllocationSettings, Membership};
use crate::name::{ClusterName, NodeAddr};
use crate::plan::{ClusterDestructive, ClusterSafe, ClusterStep, ClusterWait, Plan};
use crate::planner::PlanError;
use crate::request::ProcedureRequest;

/// What the removal planner looks at.
#[derive(Debug, Clone)]
pub struct RemovalFacts {
    /// The nodes of the cluster from the config.
    pub inventory: Vec<NodeAddr>,
    pub membership: Membership,
    pub allocation: AllocationSettings,
    /// Shard copies on the node now (`_cat/allocation`); `None` when it has not joined.
    pub node_shards: Option<u64>,
}

pub(super) fn remove_node(
    request: &ProcedureRequest,
    cluster: &ClusterName,
    node: NodeAddr,
    facts: &RemovalFacts,
) -> Result<Plan, PlanError> {
    let (joined, master) = match &facts.membership {
        Membership::Formed { nodes, master } => (nodes, *master),
        Membership::NoMaster => {
            return Err(PlanError::NoMasterToDrain {
                cluster: cluster.clone(),
            });
        }
        Membership::Unreachable => {
            return Err(PlanError::Unreachable {
                cluster: cluster.clone(),
            });
        }
    };
    if !facts.inventory.contains(&node) {
        if joined.contains(&node) {
            return Err(PlanError::NodeNotInInventory {
                cluster: cluster.clone(),
                node,
            });
        }
        return Err(PlanError::UnknownNode {
            cluster: cluster.clone(),
            node,
            nodes: facts.inventory.clone(),
        });
    }
    let others = facts.inventory.iter().filter(|n| **n != node).count();
    let others_joined = joined.iter().filter(|n| **n != node).count();
    if others == 0 || others_joined == 0 {
        return Err(PlanError::LastNode {
            cluster: cluster.clone(),
            node,
        });
    }
    let mut notes = Vec::new();
    match &facts.allocation.exclusion {
        Some(exclusion) if exclusion.is_only(node) => notes.push(format!(
            "{node} is already excluded ({exclusion}), perhaps by an earlier run; this run sets \
             it again and clears it at the end"
        )),
        Some(exclusion) => {
            return Err(PlanError::ExclusionInPlace {
                cluster: cluster.clone(),
                exclusion: exclusion.clone(),
            });
        }
        None => {}
    }
    match facts.node_shards {
        Some(shards) => notes.push(format!(
            "{node} holds {shards} shard copies; they move to the other {others_joined} nodes \
             before it stops"
        )),
        None => notes.push(format!(
            "{node} has not joined the cluster (already stopped?): there is nothing to drain"
        )),
    }
    if master == Some(node) {
        notes.push(format!(
            "{node} is the elected master: when it stops, the others elect a new one"
        ));
    }
    notes.push(format!(
        "afterwards, remove {node} from the nodes of cluster `{cluster}` in opsbot's config, \
         or /cluster start and restart will look for it"
    ));
    let steps = vec![
        ClusterStep::Safe(ClusterSafe::ExcludeNode { node }),
        ClusterStep::Wait(ClusterWait::NodeDrained { node }),
        ClusterStep::Destructive(ClusterDestructive::RetireNode { node }),
        ClusterStep::Wait(ClusterWait::NodeLeft { node }),
        ClusterStep::Destructive(ClusterDestructive::UnlistNode { node }),
        // The spec's order: the exclusion goes as soon as the node is out, so a redeploy that
        // fails or waits for a person leaves no setting behind.
        ClusterStep::Safe(ClusterSafe::ClearExclusion { node }),
        ClusterStep::Safe(ClusterSafe::Redeploy { removed: node }),
    ];
    Ok(Plan::new(request.clone(), steps, notes)?)
}

#[cfg(test)]
mod tests;
