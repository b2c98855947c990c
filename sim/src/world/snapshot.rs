//! A serializable picture of the world for tests and the admin API (`GET /_sim/state`).

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use super::World;
use super::index::{CopyState, ShardCopy};
use crate::config::Flavor;

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
    /// Names of deleted indices, in deletion order.
    pub deleted: Vec<String>,
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
            flavor: self.flavor,
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
                })
                .collect(),
            deleted: self.deleted.clone(),
        }
    }
}
