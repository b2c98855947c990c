//! Shard allocation as the elected master runs it: finish recoveries, place unassigned copies,
//! move copies off excluded nodes, all within ES's throttling limits.

use super::index::{CopyState, Recovery, RecoveryKind};
use super::settings::Allocation;
use super::{NodeId, NodeStatus, World};

/// A primary reopening its own files (translog replay only).
const STORE_RECOVERY_MS: u64 = 2_000;
/// A brand-new, empty primary.
const EMPTY_STORE_MS: u64 = 200;
/// A replica copied file by file from the primary.
const PEER_RECOVERY_MS: u64 = 10_000;
/// A replica whose files were still on the target's disk: only the difference is sent.
const REUSED_PEER_RECOVERY_MS: u64 = 2_000;
/// Moving a started copy to another node.
const RELOCATION_MS: u64 = 10_000;
/// `cluster.routing.allocation.node_concurrent_incoming_recoveries` default.
const MAX_INCOMING_RECOVERIES: usize = 2;
/// `cluster.routing.allocation.node_initial_primaries_recoveries` default.
const MAX_INITIAL_PRIMARY_RECOVERIES: usize = 4;
/// Concurrent moves cluster-wide (`cluster_concurrent_rebalance` default).
const MAX_RELOCATIONS: usize = 2;

impl World {
    /// Applies everything due at the current instant.
    pub(super) fn settle(&mut self) {
        self.finish_boots();
        self.elect_master();
        self.expire_queued_deletions();
        if self.master.is_none() {
            return;
        }
        self.run_deletions();
        self.finish_recoveries();
        self.forget_stale_data();
        let enable = self.settings.allocation_enable();
        for position in 0..self.indices.len() {
            self.place_primary(position, enable);
            self.place_replica(position, enable);
        }
        self.move_off_excluded(enable);
    }

    fn finish_recoveries(&mut self) {
        let now = self.now_ms;
        for index in &mut self.indices {
            for slot in 0..index.copies.len() {
                let (recovery, source) = match &index.copies[slot].state {
                    CopyState::Initializing(recovery) if recovery.done_ms <= now => {
                        (recovery.clone(), None)
                    }
                    CopyState::Relocating { node, to } if to.done_ms <= now => {
                        (to.clone(), Some(*node))
                    }
                    _ => continue,
                };
                // A finished relocation frees the source's disk.
                if let Some(source) = source {
                    index.disk.retain(|disk| disk.node != source);
                }
                index.store_on(recovery.target);
                let copy = &mut index.copies[slot];
                copy.state = CopyState::Started {
                    node: recovery.target,
                };
                copy.last_recovery = Some(recovery);
            }
        }
    }

    /// Once every copy is started, ES deletes leftover shard data on other nodes.
    fn forget_stale_data(&mut self) {
        for index in &mut self.indices {
            if index
                .copies
                .iter()
                .all(|copy| matches!(copy.state, CopyState::Started { .. }))
            {
                let copies = &index.copies;
                index
                    .disk
                    .retain(|disk| copies.iter().any(|copy| copy.node() == Some(disk.node)));
            }
        }
    }

    fn is_up(&self, node: NodeId) -> bool {
        self.nodes[node].status == NodeStatus::Up
    }

    fn is_excluded(&self, node: NodeId) -> bool {
        self.settings.is_excluded(self.nodes[node].ip)
    }

    /// Ongoing recoveries onto `node` of the given kinds.
    fn recoveries_onto(&self, node: NodeId, peer: bool) -> usize {
        self.indices
            .iter()
            .flat_map(|index| index.copies.iter())
            .filter_map(|copy| copy.ongoing_recovery())
            .filter(|recovery| {
                recovery.target == node && (recovery.kind == RecoveryKind::Peer) == peer
            })
            .count()
    }

    /// Among allowed nodes, the one holding the fewest copies (ties: lowest IP).
    fn least_loaded(&self, allowed: impl Fn(NodeId) -> bool) -> Option<NodeId> {
        (0..self.nodes.len())
            .filter(|&node| allowed(node))
            .min_by_key(|&node| self.copies_on(node))
    }

    fn start_recovery(
        &mut self,
        position: usize,
        slot: usize,
        kind: RecoveryKind,
        source: Option<NodeId>,
        target: NodeId,
    ) {
        let reused = self.indices[position].disk_on(target).is_some();
        let duration = match kind {
            RecoveryKind::EmptyStore => EMPTY_STORE_MS,
            RecoveryKind::ExistingStore => STORE_RECOVERY_MS,
            RecoveryKind::Peer if reused => REUSED_PEER_RECOVERY_MS,
            RecoveryKind::Peer => PEER_RECOVERY_MS,
        };
        self.indices[position].copies[slot].state = CopyState::Initializing(Recovery {
            kind,
            source,
            target,
            start_ms: self.now_ms,
            done_ms: self.now_ms.saturating_add(duration),
            reused,
        });
    }

    /// An existing index's primary can only come back where an in-sync copy of its data lies.
    /// That recovery ignores `allocation.enable` (ES docs: "does not affect the recovery of local
    /// primary shards when restarting a node") and filters; a new index's empty primary obeys both.
    fn place_primary(&mut self, position: usize, enable: Allocation) {
        let index = &self.indices[position];
        let slot = index.primary_slot();
        if !matches!(index.copies[slot].state, CopyState::Unassigned { .. }) {
            return;
        }
        let room = |node: NodeId| {
            self.is_up(node) && self.recoveries_onto(node, false) < MAX_INITIAL_PRIMARY_RECOVERIES
        };
        let placement = if index.disk.is_empty() {
            if enable == Allocation::None {
                return;
            }
            self.least_loaded(|node| room(node) && !self.is_excluded(node))
                .map(|node| (RecoveryKind::EmptyStore, node))
        } else {
            index
                .disk
                .iter()
                .find(|disk| disk.in_sync && room(disk.node))
                .map(|disk| (RecoveryKind::ExistingStore, disk.node))
        };
        if let Some((kind, node)) = placement {
            self.start_recovery(position, slot, kind, None, node);
        }
    }

    /// Replicas need `enable: all` and an active primary to copy from. A node that still has the
    /// copy's files is preferred; while the node-left delay runs, it is the only choice.
    fn place_replica(&mut self, position: usize, enable: Allocation) {
        if enable != Allocation::All {
            return;
        }
        let index = &self.indices[position];
        let primary = index.primary();
        let slot = 1 - index.primary_slot();
        let replica = &index.copies[slot];
        let (Some(source), CopyState::Unassigned { .. }) = (primary.node(), &replica.state) else {
            return;
        };
        if !primary.is_active() {
            return;
        }
        let allowed = |node: NodeId| {
            self.is_up(node)
                && !self.is_excluded(node)
                && !primary.occupies(node)
                && self.recoveries_onto(node, true) < MAX_INCOMING_RECOVERIES
        };
        let target = match index
            .disk
            .iter()
            .map(|disk| disk.node)
            .find(|&node| allowed(node))
        {
            Some(node) => Some(node),
            None if self.is_delayed(&replica.state) => None,
            None => self.least_loaded(allowed),
        };
        if let Some(target) = target {
            self.start_recovery(position, slot, RecoveryKind::Peer, Some(source), target);
        }
    }

    /// Started copies on excluded nodes move elsewhere, a few at a time. `enable` gates moves
    /// like any allocation; nothing moves back when the exclusion is lifted.
    fn move_off_excluded(&mut self, enable: Allocation) {
        // Read the exclusion setting once per node, not once per copy.
        let excluded: Vec<bool> = (0..self.nodes.len())
            .map(|node| self.is_excluded(node))
            .collect();
        if !excluded.contains(&true) {
            return;
        }
        // Counted once and kept up to date: a count per copy made every request quadratic in
        // the number of indices (seconds per request with 30,000).
        let mut relocating = self
            .indices
            .iter()
            .flat_map(|index| index.copies.iter())
            .filter(|copy| matches!(copy.state, CopyState::Relocating { .. }))
            .count();
        for position in 0..self.indices.len() {
            for slot in 0..2 {
                if relocating >= MAX_RELOCATIONS {
                    return;
                }
                let copies = &self.indices[position].copies;
                let copy = &copies[slot];
                let CopyState::Started { node } = copy.state else {
                    continue;
                };
                let may_move = match enable {
                    Allocation::All => true,
                    Allocation::Primaries => copy.primary,
                    Allocation::NewPrimaries | Allocation::None => false,
                };
                if !may_move || !excluded[node] {
                    continue;
                }
                let other = &copies[1 - slot];
                let target = self.least_loaded(|target| {
                    target != node
                        && self.is_up(target)
                        && !excluded[target]
                        && !other.occupies(target)
                        && self.recoveries_onto(target, true) < MAX_INCOMING_RECOVERIES
                });
                if let Some(target) = target {
                    let to = Recovery {
                        kind: RecoveryKind::Peer,
                        source: Some(node),
                        target,
                        start_ms: self.now_ms,
                        done_ms: self.now_ms.saturating_add(RELOCATION_MS),
                        reused: false,
                    };
                    self.indices[position].copies[slot].state = CopyState::Relocating { node, to };
                    relocating += 1;
                }
            }
        }
    }
}
