//! Nodes: their containers starting and stopping, joining, the master election, and what a
//! node leaving does to the shard copies it held.

use std::net::Ipv4Addr;

use super::World;
use super::index::{CopyState, Index, NodeId, ShardCopy};
use super::snapshot::NodeStatus;
use crate::hash::uuid;

/// Time from container start until the node has joined the cluster.
pub(crate) const BOOT_MS: u64 = 5_000;

/// One Elasticsearch/OpenSearch container.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub ip: Ipv4Addr,
    pub name: String,
    pub status: NodeStatus,
    /// When a starting node joins.
    pub ready_ms: u64,
    /// Container stops and starts that changed something: tests prove no side effect twice.
    pub stops: u32,
    pub starts: u32,
    /// Shard copies the node held when it last stopped: tests prove a removed node was drained.
    pub shards_at_stop: usize,
}

/// The persistent node id ES shows in the task API and node listings (22 url-safe base64
/// characters, like a uuid).
pub(crate) fn node_id(ip: Ipv4Addr) -> String {
    uuid(&format!("node/{ip}"))
}

impl World {
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

    pub(super) fn finish_boots(&mut self) {
        let now = self.now_ms;
        for node in &mut self.nodes {
            if node.status == NodeStatus::Starting && node.ready_ms <= now {
                node.status = NodeStatus::Up;
            }
        }
    }

    /// All nodes are master-eligible and vote; a majority elects. A healthy master stays master
    /// (ES never re-elects while the master is alive); otherwise the lowest IP wins.
    pub(super) fn elect_master(&mut self) {
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
