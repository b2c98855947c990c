//! Planners: pure functions from a request and what was observed to a plan. One module per
//! procedure family; `plan` is the one exhaustive dispatch.

mod cluster;
mod image;
mod indices;
mod removal;
mod rpc_cap;
mod stale;

pub use cluster::ClusterFacts;
pub use image::ImageFacts;
pub use indices::IndexFacts;
pub use removal::RemovalFacts;
pub use rpc_cap::{RpcCapFacts, restart_candidates};
pub use stale::{Holder, StaleFacts, holder};

use crate::cluster::Exclusion;
use crate::index::IndexName;
use crate::name::{CloudName, ClusterName, HostName, NodeAddr};
use crate::openstack::ids::{ConsumerId, ImageRef};
use crate::openstack::placement::ProviderLookupError;
use crate::plan::{Misfit, Plan};
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
    /// No single resource provider stands for the host.
    #[error(transparent)]
    Provider(#[from] ProviderLookupError),
    #[error(
        "instance {consumer} has no allocation on {host}; /placement allocations cloud:{cloud} \
         host:{host} lists the consumers there"
    )]
    NoAllocation {
        cloud: CloudName,
        host: HostName,
        consumer: ConsumerId,
    },
    #[error(
        "instance {consumer} exists (`{name}`, {status}), so its allocations are not stale and \
         opsbot will not delete them; if it should be gone, delete the instance itself"
    )]
    InstanceExists {
        consumer: ConsumerId,
        name: String,
        status: String,
    },
    /// `why` names the migration (`kept <consumer>: migration in progress, ...`).
    #[error("{consumer} is not stale: {why}; opsbot will not delete a migration's allocations")]
    MigrationInProgress { consumer: ConsumerId, why: String },
    #[error(
        "cloud `{cloud}` has no enabled compute service that is up: nothing could take the new \
         cap; bring the hypervisors back first (/compute services cloud:{cloud})"
    )]
    NoComputeUp { cloud: CloudName },
    #[error("cloud `{cloud}` has no image `{image}`; check the name or give the image's id")]
    UnknownImage { cloud: CloudName, image: String },
    #[error("several images are named `{image}` ({ids}); give the id of the one to change")]
    SeveralImages { image: String, ids: String },
    /// The caller observed the wrong things for this request: a bug, caught here.
    #[error("internal error: the {needed:?} facts were not observed for this plan")]
    FactsMismatch { needed: FactsKind },
    #[error(transparent)]
    Misfit(#[from] Misfit),
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
    Stale(StaleFacts),
    RpcCap(RpcCapFacts),
    Image(ImageFacts),
}

/// Which facts a request's planner needs; the caller observes those.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FactsKind {
    /// Version and membership.
    Cluster,
    /// One index listing.
    Indices,
    /// Membership, allocation settings and the shards on the node to remove.
    Removal { node: NodeAddr },
    /// The provider named after the host, its allocations, and each consumer's instance.
    Stale { host: HostName },
    /// The compute services, and the migrations at each hypervisor a restart is planned for.
    RpcCap,
    /// The images the reference names.
    Image { image: ImageRef },
    /// None from a backend: a runbook is planned from its file and the host inventory.
    Runbook,
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
        ProcedureRequest::PlacementStale { host, .. } => FactsKind::Stale { host: host.clone() },
        ProcedureRequest::ComputeRpcCap { .. } => FactsKind::RpcCap,
        ProcedureRequest::ImageProperties { image, .. } => FactsKind::Image {
            image: image.clone(),
        },
        ProcedureRequest::Runbook(_) => FactsKind::Runbook,
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
        (
            ProcedureRequest::PlacementStale {
                cloud,
                host,
                instance,
            },
            Facts::Stale(f),
        ) => stale::stale(request, cloud, host, *instance, f),
        (ProcedureRequest::ComputeRpcCap { cloud, error }, Facts::RpcCap(f)) => {
            rpc_cap::rpc_cap(request, cloud, error.as_ref(), f)
        }
        (
            ProcedureRequest::ImageProperties {
                cloud,
                image,
                properties,
            },
            Facts::Image(f),
        ) => image::properties(request, cloud, image, properties, f),
        (
            _,
            Facts::Cluster(_)
            | Facts::Indices(_)
            | Facts::Removal(_)
            | Facts::Stale(_)
            | Facts::RpcCap(_)
            | Facts::Image(_),
        ) => Err(mismatch()),
    }
}

#[cfg(test)]
mod cloud_tests;
