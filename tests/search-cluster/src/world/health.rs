//! Health colours and shard counts, computed from the copies the way `ClusterShardHealth` does.

use super::World;
use super::index::{CopyState, Index, ShardCopy};
use super::snapshot::{HealthSnapshot, HealthStatus};

/// `index.unassigned.node_left.delayed_timeout` default.
pub(crate) const NODE_LEFT_DELAY_MS: u64 = 60_000;

impl World {
    /// Red without an active primary, yellow with any other copy inactive, else green.
    pub(crate) fn index_health(index: &Index) -> HealthStatus {
        if !index.primary().is_active() {
            HealthStatus::Red
        } else if index.copies.iter().all(|copy| copy.is_active()) {
            HealthStatus::Green
        } else {
            HealthStatus::Yellow
        }
    }

    /// Replicas that lost their node less than the delay ago wait for it to come back.
    pub(crate) fn is_delayed(&self, state: &CopyState) -> bool {
        matches!(state, CopyState::Unassigned { since_ms, node_left: true }
            if self.now_ms < since_ms.saturating_add(NODE_LEFT_DELAY_MS))
    }

    pub(crate) fn health(&self) -> HealthSnapshot {
        let copies = || self.indices.iter().flat_map(|index| index.copies.iter());
        let count = |keep: &dyn Fn(&ShardCopy) -> bool| copies().filter(|copy| keep(copy)).count();
        let total = copies().count();
        let active_shards = count(&|copy| copy.is_active());
        let pending = self.pending_tasks();
        HealthSnapshot {
            status: self
                .indices
                .iter()
                .map(World::index_health)
                .max()
                .unwrap_or(HealthStatus::Green),
            number_of_nodes: self.joined_nodes().count(),
            active_primary_shards: count(&|copy| copy.primary && copy.is_active()),
            active_shards,
            relocating_shards: count(&|copy| matches!(copy.state, CopyState::Relocating { .. })),
            initializing_shards: count(&|copy| matches!(copy.state, CopyState::Initializing(_))),
            unassigned_shards: count(&|copy| matches!(copy.state, CopyState::Unassigned { .. })),
            unassigned_primary_shards: count(&|copy| {
                copy.primary && matches!(copy.state, CopyState::Unassigned { .. })
            }),
            delayed_unassigned_shards: count(&|copy| !copy.primary && self.is_delayed(&copy.state)),
            number_of_pending_tasks: pending.len(),
            // `getMaxTaskWaitTime`: the oldest task still queued; the executing one does not count.
            task_max_waiting_in_queue_millis: pending
                .iter()
                .filter(|task| !task.executing)
                .map(|task| task.time_in_queue_ms)
                .max()
                .unwrap_or(0),
            active_shards_percent: if total == 0 {
                100.0
            } else {
                // Same operation order as ES, so the printed double matches digit for digit.
                active_shards as f64 / total as f64 * 100.0
            },
        }
    }
}
