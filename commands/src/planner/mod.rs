//! Planners: pure functions from a request and what was observed to a plan. One module per
//! procedure family; `plan` is the one exhaustive dispatch.

mod cluster;
mod indices;
mod removal;

pub use cluster::ClusterFacts;
pub use indices::IndexFacts;
pub use removal::RemovalFacts;

use crate::cluster::Exclusion;
use crate::index::IndexName;
use crate::name::{ClusterName, NodeAddr};
use crate::plan::Plan;
use crate::request::ProcedureRequest;
use crate::retention::Retention;

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
    #[error(
        "cluster `{cluster}` has no elected master, so no shard can move off a node; \
         bring it back first: /cluster start cluster:{cluster}"
    )]
    NoMasterToDrain { cluster: ClusterName },
    #[error(
        "{node} is not a node of cluster `{cluster}`; its nodes are {}",
        list(nodes)
    )]
    UnknownNode {
        cluster: ClusterName,
        node: NodeAddr,
        nodes: Vec<NodeAddr>,
    },
    #[error(
        "{node} is the last node of cluster `{cluster}` that is up: its shards have nowhere to \
         go; to take the whole cluster down, use /cluster stop cluster:{cluster}"
    )]
    LastNode {
        cluster: ClusterName,
        node: NodeAddr,
    },
    #[error(
        "cluster `{cluster}` already excludes nodes from allocation ({exclusion}); an earlier \
         removal may be half-done: finish it, or clear the setting with PUT /_cluster/settings \
         {} and ask again",
        exclusion.clearing_body()
    )]
    ExclusionInPlace {
        cluster: ClusterName,
        exclusion: Exclusion,
    },
    #[error(
        "no index `{index}` in cluster `{cluster}`; /indices list cluster:{cluster} shows the indices there are"
    )]
    UnknownIndex {
        cluster: ClusterName,
        index: IndexName,
    },
    /// The caller observed the wrong things for this request: a bug, caught here.
    #[error("internal error: the {needed:?} facts were not observed for this plan")]
    FactsMismatch { needed: FactsKind },
}

fn list(nodes: &[NodeAddr]) -> String {
    let nodes: Vec<String> = nodes.iter().map(ToString::to_string).collect();
    nodes.join(", ")
}

/// What the planners know about the world, observed just before planning.
#[derive(Debug, Clone)]
pub enum Facts {
    Cluster(ClusterFacts),
    Indices(IndexFacts),
    Removal(RemovalFacts),
}

/// Which facts a request's planner needs; the caller observes those.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactsKind {
    /// Version and membership.
    Cluster,
    /// One index listing.
    Indices,
    /// Membership, allocation settings and the shards on the node to remove.
    Removal { node: NodeAddr },
}

pub fn facts_needed(request: &ProcedureRequest) -> FactsKind {
    match request {
        ProcedureRequest::ClusterStop { .. }
        | ProcedureRequest::ClusterStart { .. }
        | ProcedureRequest::ClusterRestart { .. } => FactsKind::Cluster,
        ProcedureRequest::ClusterRemoveNode { node, .. } => FactsKind::Removal { node: *node },
        ProcedureRequest::IndicesPrune { .. } | ProcedureRequest::IndicesDelete { .. } => {
            FactsKind::Indices
        }
    }
}

/// Computes the plan for a request from the facts observed just before.
pub fn plan(request: &ProcedureRequest, facts: &Facts) -> Result<Plan, PlanError> {
    let mismatch = || PlanError::FactsMismatch {
        needed: facts_needed(request),
    };
    match (request, facts) {
        (ProcedureRequest::ClusterStop { cluster }, Facts::Cluster(f)) => {
            cluster::stop(request, cluster, f)
        }
        (ProcedureRequest::ClusterStart { cluster }, Facts::Cluster(f)) => {
            cluster::start(request, cluster, f)
        }
        (ProcedureRequest::ClusterRestart { cluster }, Facts::Cluster(f)) => {
            cluster::restart(request, cluster, f)
        }
        (ProcedureRequest::ClusterRemoveNode { cluster, node }, Facts::Removal(f)) => {
            removal::remove_node(request, cluster, *node, f)
        }
        (
            ProcedureRequest::IndicesPrune {
                cluster,
                older_than,
                prefix,
            },
            Facts::Indices(f),
        ) => {
            let retention = Retention {
                prefix: prefix.clone(),
                older_than: *older_than,
            };
            indices::prune(request, cluster, &retention, f)
        }
        (ProcedureRequest::IndicesDelete { cluster, index }, Facts::Indices(f)) => {
            indices::delete(request, cluster, index, f)
        }
        (_, Facts::Cluster(_) | Facts::Indices(_) | Facts::Removal(_)) => Err(mismatch()),
    }
}
