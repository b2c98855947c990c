//! Planners: pure functions from a request and what was observed to a plan. One module per
//! procedure family; `plan` is the one exhaustive dispatch.

mod cluster;

pub use cluster::ClusterFacts;

use crate::name::{ClusterName, NodeAddr};
use crate::plan::Plan;
use crate::request::ProcedureRequest;

/// Why no plan could be made. The `Display` text is what the operator reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error(
        "cluster `{cluster}` has no elected master, so it cannot be flushed safely; \
         start it with /cluster start cluster:{cluster}, or stop the remaining containers by hand"
    )]
    NoMaster { cluster: ClusterName },
    #[error(
        "cluster `{cluster}` does not answer; if it is already down, use /cluster start cluster:{cluster}"
    )]
    Unreachable { cluster: ClusterName },
    #[error(
        "node {node} is in cluster `{cluster}` but not in its inventory; add it to the config \
         so that it is stopped and started with the others"
    )]
    NodeNotInInventory {
        cluster: ClusterName,
        node: NodeAddr,
    },
    #[error("cluster `{cluster}` has no nodes in its inventory; list them in the config")]
    EmptyInventory { cluster: ClusterName },
}

/// What the planners know about the world. Only cluster facts exist so far.
#[derive(Debug, Clone)]
pub enum Facts {
    Cluster(ClusterFacts),
}

/// Computes the plan for a request from the facts observed just before.
pub fn plan(request: &ProcedureRequest, facts: &Facts) -> Result<Plan, PlanError> {
    let Facts::Cluster(facts) = facts;
    match request {
        ProcedureRequest::ClusterStop { cluster } => cluster::stop(request, cluster, facts),
        ProcedureRequest::ClusterStart { cluster } => cluster::start(request, cluster, facts),
        ProcedureRequest::ClusterRestart { cluster } => cluster::restart(request, cluster, facts),
    }
}
