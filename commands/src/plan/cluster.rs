//! The steps of a search cluster's plan.

use serde::{Deserialize, Serialize};

use crate::cluster::{FlushMode, HealthStatus};
use crate::index::PlannedIndex;
use crate::name::NodeAddr;

/// Side effects on a search cluster that need no approval: idempotent and reversible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ClusterSafe {
    /// Persistent `cluster.routing.allocation.enable` = `none`.
    DisableAllocation,
    /// Persistent `cluster.routing.allocation.enable` = null (back to the default, `all`).
    EnableAllocation,
    /// Flush before the nodes stop, so that recovery after the start is fast.
    Flush { mode: FlushMode },
    /// Stop the search container on one node (node control).
    StopNode { node: NodeAddr },
    /// Start the search container on one node (node control).
    StartNode { node: NodeAddr },
    /// Read `_cat/health`, `_cat/recovery` and `_cat/nodes` and post a summary.
    Report,
    /// List the indices once and check that none of those the plan deletes remains.
    VerifyDeleted,
    /// Transient `cluster.routing.allocation.exclude._ip` = the node: its shards move away.
    ExcludeNode { node: NodeAddr },
    /// Transient `cluster.routing.allocation.exclude._ip` = "": undoes [`Self::ExcludeNode`],
    /// also when the run is cancelled or fails.
    ClearExclusion { node: NodeAddr },
    /// Redeploy the search service with a rolling serial of 1, once `removed` is out of the
    /// deployment inventory (node control).
    Redeploy { removed: NodeAddr },
}

/// Conditions a search cluster's run waits for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ClusterWait {
    /// The node is no longer listed in `_cat/nodes` (or the cluster lost its quorum, which is
    /// expected once a majority of nodes is stopped).
    NodeLeft { node: NodeAddr },
    /// The node is listed in `_cat/nodes`; while the cluster has no elected master this cannot be
    /// seen yet, and the wait moves on: `ClusterFormed` checks every node afterwards.
    NodeJoined { node: NodeAddr },
    /// All `nodes` have joined and the health status is at least `status`.
    ClusterFormed { nodes: usize, status: HealthStatus },
    /// No shard is relocating and the node holds no shard copy any more.
    NodeDrained { node: NodeAddr },
}

/// Destructive side effects on a search cluster: each runs only with an `Approved` proof for
/// the run's digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ClusterDestructive {
    /// `DELETE /a,b,c` of these exact indices: one chunk, its path under [`MAX_DELETE_PATH`].
    /// Right before, the indices are listed again and only those still present are deleted.
    DeleteIndices { indices: Vec<PlannedIndex> },
    /// Stop the search container of a drained node that is leaving the cluster for good.
    RetireNode { node: NodeAddr },
    /// Remove the node from the search group of the deployment inventory (node control).
    UnlistNode { node: NodeAddr },
}

/// Longest `DELETE` path, in bytes: well under the 4 KB request-line limit of common proxies.
pub const MAX_DELETE_PATH: usize = 3000;
