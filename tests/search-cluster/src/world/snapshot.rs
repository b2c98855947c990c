//! A serializable picture of the world for tests and the admin API (`GET /_sim/state`).

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use super::World;
use super::index::{CopyState, ShardCopy};
use super::index_settings;
use crate::flavor::Flavor;

/// Whether a node's container runs and has joined the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeStatus {
    /// Joined; holds shards.
    Up,
    /// Container started, not joined yet.
    Starting,
    /// Container stopped.
    Stopped,
}

/// Cluster or index health colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HealthStatus {
    /// Every copy active.
    Green,
    /// Every primary active, some replica not.
    Yellow,
    /// Some primary not active.
    Red,
}

impl IndexSnapshot {
    /// `index.hidden: true`: wildcards and plain listings skip it.
    pub fn hidden(&self) -> bool {
        index_settings::is_hidden(&self.settings)
    }
}

impl HealthStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            HealthStatus::Green => "green",
            HealthStatus::Yellow => "yellow",
            HealthStatus::Red => "red",
        }
    }
}

/// The numbers `_cluster/health` reports. Invariant:
/// `active_shards + initializing_shards + unassigned_shards` = all copies, and relocating
/// copies are part of `active_shards`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthSnapshot {
    /// Worst index health (green if there are no indices).
    pub status: HealthStatus,
    /// Joined nodes.
    pub number_of_nodes: usize,
    /// Started primaries (relocating ones included).
    pub active_primary_shards: usize,
    /// Started copies (relocating ones included).
    pub active_shards: usize,
    /// Copies moving to another node.
    pub relocating_shards: usize,
    /// Copies being recovered.
    pub initializing_shards: usize,
    /// Copies on no node.
    pub unassigned_shards: usize,
    /// Unassigned primaries (recent ES 8).
    pub unassigned_primary_shards: usize,
    /// Unassigned replicas waiting out the node-left delay.
    pub delayed_unassigned_shards: usize,
    /// Cluster-state tasks queued or executing on the master (index deletions).
    #[serde(default)]
    pub number_of_pending_tasks: usize,
    /// How long the oldest task still queued (not executing) has waited.
    #[serde(default)]
    pub task_max_waiting_in_queue_millis: u64,
    /// `active_shards` as a percentage of all copies (100 with no indices).
    pub active_shards_percent: f64,
}

/// One node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeSnapshot {
    /// Node IP.
    pub ip: Ipv4Addr,
    /// Node name (equal to the IP, as Kolla configures it).
    pub name: String,
    /// Container and membership state.
    pub state: NodeStatus,
    /// The elected master.
    pub is_master: bool,
    /// Shard copies assigned to it (relocation targets and initializing copies included).
    pub shards: usize,
    /// Container stops that changed something (a stop of a stopped node does not count).
    pub stops: u32,
    /// Container starts that changed something.
    pub starts: u32,
    /// Shard copies it held when it last stopped (0 when it had not joined): a node drained
    /// before its stop held none.
    pub shards_at_stop: usize,
}

/// What a shard copy is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CopyStatus {
    /// On no node.
    Unassigned,
    /// Being recovered onto `node`.
    Initializing,
    /// Serving from `node`.
    Started,
    /// Serving from `node` while moving to `relocating_to`.
    Relocating,
}

/// One shard copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopySnapshot {
    /// Primary or replica.
    pub primary: bool,
    /// Routing state.
    pub state: CopyStatus,
    /// Current node, if assigned.
    pub node: Option<Ipv4Addr>,
    /// Destination of a relocation.
    pub relocating_to: Option<Ipv4Addr>,
}

/// One index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexSnapshot {
    /// Index name.
    pub name: String,
    /// Index uuid.
    pub uuid: String,
    /// Index health.
    pub health: HealthStatus,
    /// Primary and replica.
    pub copies: Vec<CopySnapshot>,
    /// Nodes whose disks hold data of this index, running or not.
    pub data_on: Vec<Ipv4Addr>,
    /// Every index setting, flat, as `GET /{index}/_settings?flat_settings=true` shows them
    /// (`index.uuid`, `index.creation_date`, `index.lifecycle.name`, ...).
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
    /// The data stream it backs.
    #[serde(default)]
    pub data_stream: Option<String>,
    /// OpenSearch: the ISM policy it was attached to with the add API.
    #[serde(default)]
    pub ism_policy: Option<String>,
}

/// An index deletion the master has queued or is applying (`GET _cluster/pending_tasks`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingDeletionSnapshot {
    /// The task's `insert_order`.
    pub insert_order: u64,
    /// The task's `source`: `delete-index [[name/uuid], ...]`.
    pub source: String,
    /// The indices it deletes, in the order the source names them.
    pub indices: Vec<String>,
    /// Being applied (else still queued behind another task).
    pub executing: bool,
    /// Simulated milliseconds since the request arrived.
    pub time_in_queue_ms: u64,
    /// The `X-Opaque-Id` header of the request that asked for it.
    pub opaque_id: Option<String>,
}

/// A data stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataStreamSnapshot {
    /// Stream name.
    pub name: String,
    /// Backing indices, oldest first; the last is the write index.
    pub indices: Vec<String>,
    /// Generation of the write index.
    pub generation: u64,
    /// The index template it was created from.
    pub template: String,
}

/// Persistent and transient settings, flat keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsSnapshot {
    /// Survive a full restart.
    pub persistent: BTreeMap<String, String>,
    /// Do not.
    pub transient: BTreeMap<String, String>,
}

/// Everything observable about the simulated cluster at one simulated instant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorldSnapshot {
    /// Imitated flavor.
    pub flavor: Flavor,
    /// `cluster.name`.
    pub cluster_name: String,
    /// Simulated milliseconds since start.
    pub sim_time_ms: u64,
    /// IP of the elected master, if a quorum has one.
    pub master: Option<Ipv4Addr>,
    /// `_cluster/health` numbers.
    pub health: HealthSnapshot,
    /// Cluster settings.
    pub settings: SettingsSnapshot,
    /// Nodes in IP order.
    pub nodes: Vec<NodeSnapshot>,
    /// Indices in creation order.
    pub indices: Vec<IndexSnapshot>,
    /// Names of deleted indices, in deletion order (at the moment the deletion was applied).
    pub deleted: Vec<String>,
    /// Index deletions the master has not finished applying.
    #[serde(default)]
    pub pending_deletions: Vec<PendingDeletionSnapshot>,
    /// Data streams.
    #[serde(default)]
    pub data_streams: Vec<DataStreamSnapshot>,
}

impl World {
    pub(crate) fn snapshot(&self) -> WorldSnapshot {
        let ip = |node: usize| self.nodes[node].ip;
        let copy = |copy: &ShardCopy| {
            let (state, relocating_to) = match &copy.state {
                CopyState::Unassigned { .. } => (CopyStatus::Unassigned, None),
                CopyState::Initializing(_) => (CopyStatus::Initializing, None),
                CopyState::Started { .. } => (CopyStatus::Started, None),
                CopyState::Relocating { to, .. } => (CopyStatus::Relocating, Some(ip(to.target))),
            };
            CopySnapshot {
                primary: copy.primary,
                state,
                node: copy.node().map(ip),
                relocating_to,
            }
        };
        WorldSnapshot {
            flavor: self.flavor(),
            cluster_name: self.cluster_name.clone(),
            sim_time_ms: self.now_ms,
            master: self.master.map(ip),
            health: self.health(),
            settings: SettingsSnapshot {
                persistent: self.settings.persistent.clone(),
                transient: self.settings.transient.clone(),
            },
            nodes: (0..self.nodes.len())
                .map(|node| NodeSnapshot {
                    ip: self.nodes[node].ip,
                    name: self.nodes[node].name.clone(),
                    state: self.nodes[node].status,
                    is_master: self.master == Some(node),
                    shards: self.copies_on(node),
                    stops: self.nodes[node].stops,
                    shards_at_stop: self.nodes[node].shards_at_stop,
                    starts: self.nodes[node].starts,
                })
                .collect(),
            indices: self
                .indices
                .iter()
                .map(|index| IndexSnapshot {
                    name: index.name.clone(),
                    uuid: index.uuid.clone(),
                    health: World::index_health(index),
                    copies: index.copies.iter().map(copy).collect(),
                    data_on: index.disk.iter().map(|disk| ip(disk.node)).collect(),
                    settings: index.settings.clone(),
                    data_stream: self
                        .data_streams()
                        .iter()
                        .find(|stream| stream.indices.contains(&index.name))
                        .map(|stream| stream.name.clone()),
                    ism_policy: self
                        .managed_indices()
                        .iter()
                        .find(|managed| managed.uuid == index.uuid)
                        .map(|managed| managed.policy_id.clone()),
                })
                .collect(),
            deleted: self.deleted.clone(),
            pending_deletions: self
                .pending_tasks()
                .into_iter()
                .map(|task| PendingDeletionSnapshot {
                    insert_order: task.insert_order,
                    source: task.source,
                    indices: task.indices.into_iter().map(|(name, _)| name).collect(),
                    executing: task.executing,
                    time_in_queue_ms: task.time_in_queue_ms,
                    opaque_id: task.opaque_id,
                })
                .collect(),
            data_streams: self
                .data_streams()
                .iter()
                .map(|stream| DataStreamSnapshot {
                    name: stream.name.clone(),
                    indices: stream.indices.clone(),
                    generation: stream.generation,
                    template: stream.template.clone(),
                })
                .collect(),
        }
    }
}
