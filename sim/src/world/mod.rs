//! The simulated cluster: nodes, indices and settings, advanced lazily through simulated time.
//!
//! The world is a discrete-event simulation. Nothing runs in the background: every request first
//! calls [`World::advance`] with the current simulated time, which replays node boots, finished
//! recoveries and the allocation decisions they trigger, event by event, in order. The outcome
//! therefore does not depend on how often clients poll.

mod allocation;
mod health;
mod index;
mod resolve;
mod settings;
mod snapshot;

use std::net::Ipv4Addr;

pub(crate) use index::{CopyState, Index, NodeId, Recovery, RecoveryKind, ShardCopy};
pub(crate) use resolve::{MissingIndex, Resolution, glob_match};
pub(crate) use settings::{Applied, Settings, SettingsError};
pub use snapshot::{
    CopySnapshot, CopyStatus, HealthSnapshot, HealthStatus, IndexSnapshot, NodeSnapshot,
    NodeStatus, SettingsSnapshot, WorldSnapshot,
};

use crate::config::Flavor;

/// Time from container start until the node has joined the cluster.
const BOOT_MS: u64 = 5_000;

/// One Elasticsearch/OpenSearch container.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub ip: Ipv4Addr,
    pub name: String,
    pub status: NodeStatus,
    /// When a starting node joins.
    ready_ms: u64,
    /// Container stops and starts that changed something: tests prove no side effect twice.
    pub stops: u32,
    pub starts: u32,
    /// Shard copies the node held when it last stopped: tests prove a removed node was drained.
    pub shards_at_stop: usize,
}

/// The whole simulated cluster.
#[derive(Debug)]
pub(crate) struct World {
    flavor: Flavor,
    cluster_name: String,
    now_ms: u64,
    nodes: Vec<Node>,
    indices: Vec<Index>,
    /// Names of deleted indices in deletion order (a name recreated and deleted again appears
    /// twice): tests prove each selected index is deleted exactly once.
    deleted: Vec<String>,
    settings: Settings,
    master: Option<NodeId>,
}

/// `PUT /{index}` for a name that exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexExists;

impl World {
    /// A healthy cluster: every node up, copies spread round-robin with primary and replica on
    /// different nodes. `written` is the index the log shippers write to.
    pub(crate) fn new(
        flavor: Flavor,
        cluster_name: &str,
        ips: &[Ipv4Addr],
        index_names: &[String],
        written: &str,
    ) -> Self {
        let count = ips.len();
        let indices = index_names
            .iter()
            .enumerate()
            .map(|(position, name)| {
                let replica = (count > 1).then(|| (position + 1) % count);
                Index::existing(name, position % count, replica, name == written)
            })
            .collect();
        let mut world = World {
            flavor,
            cluster_name: cluster_name.to_owned(),
            now_ms: 0,
            nodes: ips
                .iter()
                .map(|ip| Node {
                    ip: *ip,
                    name: ip.to_string(),
                    status: NodeStatus::Up,
                    ready_ms: 0,
                    stops: 0,
                    starts: 0,
                    shards_at_stop: 0,
                })
                .collect(),
            indices,
            deleted: Vec::new(),
            settings: Settings::default(),
            master: None,
        };
        world.settle();
        world
    }

    pub(crate) fn flavor(&self) -> Flavor {
        self.flavor
    }

    pub(crate) fn cluster_name(&self) -> &str {
        &self.cluster_name
    }

    pub(crate) fn now_ms(&self) -> u64 {
        self.now_ms
    }

    pub(crate) fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub(crate) fn indices(&self) -> &[Index] {
        &self.indices
    }

    pub(crate) fn settings(&self) -> &Settings {
        &self.settings
    }

    pub(crate) fn master(&self) -> Option<NodeId> {
        self.master
    }

    /// Nodes that have joined (not merely started), in IP order.
    pub(crate) fn joined_nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, node)| node.status == NodeStatus::Up)
    }

    /// Brings the world up to `target_ms`, processing every event on the way in order.
    pub(crate) fn advance(&mut self, target_ms: u64) {
        loop {
            self.settle();
            match self.next_event_ms() {
                Some(at) if at <= target_ms => self.now_ms = at,
                _ => break,
            }
        }
        self.now_ms = self.now_ms.max(target_ms);
        self.settle();
    }

    /// The next simulated instant at which something will change by itself.
    pub(crate) fn next_event_ms(&self) -> Option<u64> {
        let boots = self
            .nodes
            .iter()
            .filter(|node| node.status == NodeStatus::Starting)
            .map(|node| node.ready_ms);
        // Without a master nothing is decided: recoveries cannot be marked done.
        let decided = self
            .master
            .is_some()
            .then_some(())
            .into_iter()
            .flat_map(|()| {
                self.indices.iter().flat_map(|index| {
                    index.copies.iter().filter_map(|copy| match &copy.state {
                        CopyState::Unassigned {
                            since_ms,
                            node_left: true,
                        } if !copy.primary => {
                            Some(since_ms.saturating_add(health::NODE_LEFT_DELAY_MS))
                        }
                        _ => copy.ongoing_recovery().map(|recovery| recovery.done_ms),
                    })
                })
            });
        boots.chain(decided).filter(|&at| at > self.now_ms).min()
    }

    fn node_by_ip(&self, ip: Ipv4Addr) -> Option<NodeId> {
        self.nodes.iter().position(|node| node.ip == ip)
    }

    pub(crate) fn node_ip(&self, node: NodeId) -> Ipv4Addr {
        self.nodes[node].ip
    }

    /// Stops a node's container at once. `None` for an unknown IP, else whether anything changed.
    pub(crate) fn stop_node(&mut self, ip: Ipv4Addr) -> Option<bool> {
        let node = self.node_by_ip(ip)?;
        if self.nodes[node].status == NodeStatus::Stopped {
            return Some(false);
        }
        let was_member = self.nodes[node].status == NodeStatus::Up;
        self.nodes[node].shards_at_stop = if was_member { self.copies_on(node) } else { 0 };
        self.nodes[node].status = NodeStatus::Stopped;
        self.nodes[node].stops += 1;
        if was_member {
            if self.master == Some(node) {
                self.master = None;
            }
            let now = self.now_ms;
            for index in &mut self.indices {
                lose_node(index, node, now);
            }
        }
        self.settle();
        Some(true)
    }

    /// Starts a stopped node's container; it joins after the boot time.
    pub(crate) fn start_node(&mut self, ip: Ipv4Addr) -> Option<bool> {
        let node = self.node_by_ip(ip)?;
        if self.nodes[node].status != NodeStatus::Stopped {
            return Some(false);
        }
        self.nodes[node].status = NodeStatus::Starting;
        self.nodes[node].starts += 1;
        self.nodes[node].ready_ms = self.now_ms.saturating_add(BOOT_MS);
        Some(true)
    }

    fn finish_boots(&mut self) {
        let now = self.now_ms;
        for node in &mut self.nodes {
            if node.status == NodeStatus::Starting && node.ready_ms <= now {
                node.status = NodeStatus::Up;
            }
        }
    }

    /// All nodes are master-eligible and vote; a majority elects. A healthy master stays master
    /// (ES never re-elects while the master is alive); otherwise the lowest IP wins.
    fn elect_master(&mut self) {
        let joined = self.joined_nodes().count();
        let quorum = self.nodes.len() / 2 + 1;
        self.master = if joined < quorum {
            None
        } else {
            self.master
                .filter(|&node| self.nodes[node].status == NodeStatus::Up)
                .or_else(|| self.joined_nodes().map(|(node, _)| node).next())
        };
    }

    /// Copies assigned to a node, relocation targets included.
    pub(crate) fn copies_on(&self, node: NodeId) -> usize {
        self.indices
            .iter()
            .flat_map(|index| index.copies.iter())
            .filter(|copy| copy.occupies(node))
            .count()
    }

    /// Applies a `PUT _cluster/settings` body and lets allocation react at once.
    pub(crate) fn update_settings(
        &mut self,
        body: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Applied, SettingsError> {
        let applied = self.settings.update(body)?;
        self.settle();
        Ok(applied)
    }

    pub(crate) fn resolve(
        &self,
        expression: &str,
        ignore_unavailable: bool,
    ) -> Result<Resolution, MissingIndex> {
        let names: Vec<&str> = self
            .indices
            .iter()
            .map(|index| index.name.as_str())
            .collect();
        resolve::resolve(&names, expression, ignore_unavailable)
    }

    /// Creates an empty index; allocation places its primary if `enable` allows.
    pub(crate) fn create_index(&mut self, name: &str) -> Result<(), IndexExists> {
        if self.indices.iter().any(|index| index.name == name) {
            return Err(IndexExists);
        }
        self.indices.push(Index::created(name, self.now_ms));
        self.settle();
        Ok(())
    }

    /// Deletes indices by position (as returned by [`World::resolve`]).
    pub(crate) fn delete_indices(&mut self, positions: &[usize]) {
        let mut position = 0;
        let deleted = &mut self.deleted;
        self.indices.retain(|index| {
            let keep = !positions.contains(&position);
            position += 1;
            if !keep {
                deleted.push(index.name.clone());
            }
            keep
        });
        self.settle();
    }
}

/// A node left: its copies become unassigned (their data stays on its disk), relocations to it
/// are cancelled, and a surviving replica is promoted if the primary was lost.
fn lose_node(index: &mut Index, node: NodeId, now: u64) {
    for copy in &mut index.copies {
        match &copy.state {
            CopyState::Relocating { node: source, to } if to.target == node => {
                copy.state = CopyState::Started { node: *source };
            }
            _ if copy.node() == Some(node) => {
                *copy = ShardCopy::unassigned(copy.primary, now, true)
            }
            _ => {}
        }
    }
    let primary = index.primary_slot();
    let replica = 1 - primary;
    if !index.copies[primary].is_active() {
        // A replica that was copying from the lost primary fails with it.
        if matches!(index.copies[replica].state, CopyState::Initializing(_)) {
            index.copies[replica] = ShardCopy::unassigned(false, now, false);
        }
        if index.copies[replica].is_active() {
            index.copies[primary].primary = false;
            index.copies[replica].primary = true;
        }
    }
    // The next write on the surviving primary marks the lost copy stale (removes it from the
    // in-sync set). Only the index being written gets writes; idle daily indices stay in sync.
    if index.written && index.copies.iter().any(ShardCopy::is_active) {
        for disk in index.disk.iter_mut().filter(|disk| disk.node == node) {
            disk.in_sync = false;
        }
    }
}

#[cfg(test)]
mod tests;
