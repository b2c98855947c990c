//! Transport tasks, as the task management API (`GET _tasks`) lists them: each node numbers its
//! tasks, a request forwarded to the master runs as a child task there, and a task lives until
//! its request is answered.

use std::net::Ipv4Addr;

use super::{NodeId, World};
use crate::hash::in_range;

/// Per-node task counters. A node has run many tasks before the simulation starts, so numbering
/// starts at a node-specific, stable value.
#[derive(Debug)]
pub(super) struct TaskIds {
    next: Vec<u64>,
}

impl TaskIds {
    pub(super) fn new(ips: &[Ipv4Addr]) -> Self {
        TaskIds {
            next: ips
                .iter()
                .map(|ip| in_range("task-ids", &ip.to_string(), 1_000, 90_000))
                .collect(),
        }
    }

    /// The next task id on `node`.
    pub(super) fn take(&mut self, node: NodeId) -> u64 {
        match self.next.get_mut(node) {
            Some(next) => {
                *next += 1;
                *next
            }
            None => 0,
        }
    }
}

/// One running transport task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskView {
    pub node: NodeId,
    pub id: u64,
    pub action: &'static str,
    /// Simulated instant it started.
    pub start_ms: u64,
    pub parent: Option<(NodeId, u64)>,
    /// The `X-Opaque-Id` header of the request it runs for.
    pub opaque_id: Option<String>,
}

/// `DeleteIndexAction.NAME`.
pub(crate) const DELETE_INDEX_ACTION: &str = "indices:admin/delete";

impl World {
    /// A fresh task id on `node`, for a task the HTTP layer registers itself (the list task).
    pub(crate) fn take_task_id(&mut self, node: NodeId) -> u64 {
        self.tasks.take(node)
    }

    /// The transport tasks of deletions whose requests are not answered yet.
    pub(crate) fn running_tasks(&self) -> Vec<TaskView> {
        let mut tasks = Vec::new();
        for queued in self.deletions.unanswered() {
            let transport = &queued.transport;
            let (node, id) = transport.coordinator;
            tasks.push(TaskView {
                node,
                id,
                action: DELETE_INDEX_ACTION,
                start_ms: queued.received_ms,
                parent: None,
                opaque_id: transport.opaque_id.clone(),
            });
            if let Some((master, child)) = transport.on_master {
                tasks.push(TaskView {
                    node: master,
                    id: child,
                    action: DELETE_INDEX_ACTION,
                    start_ms: queued.received_ms,
                    parent: Some((node, id)),
                    opaque_id: transport.opaque_id.clone(),
                });
            }
        }
        tasks
    }
}
