//! Index deletion as the elected master runs it: a cluster-state task queued behind the others,
//! executed (each index looked up by name and uuid), published and applied after a while, and
//! the client's answer decided by its `timeout` and `master_timeout` in between.
//!
//! From `TransportDeleteIndexAction` and `MetadataDeleteIndexService` (ES 6.8-8.11, OpenSearch
//! 2.11 alike here): names resolve against the state the master has applied when the request
//! arrives and are bound to `Index(name, uuid)`; the task's source is `"delete-index " +
//! Arrays.toString(indices)`; it runs at `URGENT` priority; `execute` calls
//! `Metadata.getIndexSafe`, which fails with `index_not_found_exception` (carrying the uuid) for
//! an index already gone or re-created, and refuses a data stream's write index; a task still
//! queued after `master_timeout` fails with `process_cluster_event_timeout_exception` and never
//! runs; once executing, the request answers `acknowledged: false` after its ack `timeout`
//! while the deletion goes on. Closing the HTTP connection cancels nothing: the task is not
//! cancellable.

use std::collections::{BTreeSet, VecDeque};

use super::javaorder::{hash_set_order, index_hash};
use super::{NodeId, World};

/// Answers kept for requests that have not read theirs yet (a client that hung up never does).
const KEPT_ANSWERS: usize = 10_000;

/// What a `DELETE` hands to the master: the concrete indices it resolved, bound to their uuids.
#[derive(Debug, Clone)]
pub(crate) struct DeleteRequest {
    /// `(name, uuid)` in resolution order.
    pub targets: Vec<(String, String)>,
    /// The request's `X-Opaque-Id` header, copied into its tasks' headers.
    pub opaque_id: Option<String>,
    /// `timeout`: how long to wait for the applied state to be acknowledged.
    pub ack_timeout_ms: u64,
    /// `master_timeout`: how long the task may wait in the master's queue.
    pub master_timeout_ms: u64,
}

/// Why a deletion failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DeleteFailure {
    /// `getIndexSafe`: no index with this name and uuid any more.
    NotFound { name: String, uuid: String },
    /// The write index of a data stream cannot be deleted.
    WriteIndex { index: String, stream: String },
    /// Still queued after `master_timeout`: never executed.
    QueueTimeout { source: String, timeout_ms: u64 },
    /// A running snapshot copies these `(name, uuid)`, in `HashSet<Index>` order: the whole
    /// request fails, none of its indices deleted.
    Snapshotting { indices: Vec<(String, String)> },
}

/// What the client of a deletion is answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// `{"acknowledged": true}` once applied; `false` when the ack timeout passed first.
    Acknowledged(bool),
    /// An error.
    Failed(DeleteFailure),
}

/// One task in the master's queue, as `GET _cluster/pending_tasks` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PendingTask {
    pub insert_order: u64,
    pub source: String,
    pub executing: bool,
    pub time_in_queue_ms: u64,
    /// The indices, `(name, uuid)`, in the order the source names them.
    pub indices: Vec<(String, String)>,
    /// The `X-Opaque-Id` of the request that queued it.
    pub opaque_id: Option<String>,
}

/// The transport tasks of one request: on the node that received it, and, when that node is
/// not the master, the child task the master runs for it.
#[derive(Debug, Clone)]
pub(super) struct Transport {
    pub coordinator: (NodeId, u64),
    pub on_master: Option<(NodeId, u64)>,
    pub opaque_id: Option<String>,
}

#[derive(Debug, Clone)]
pub(super) struct Queued {
    ticket: u64,
    insert_order: u64,
    source: String,
    targets: Vec<(String, String)>,
    pub received_ms: u64,
    ack_timeout_ms: u64,
    master_timeout_ms: u64,
    /// When the master started executing it, and when its state will have been applied.
    running: Option<(u64, u64)>,
    /// The client has been answered (`acknowledged: false` after the ack timeout).
    answered: bool,
    pub transport: Transport,
}

/// The master's queue of delete tasks, front first (the front one may be executing).
#[derive(Debug, Default)]
pub(super) struct Deletions {
    apply_ms: u64,
    queue: VecDeque<Queued>,
    answers: VecDeque<(u64, Answer)>,
    next_ticket: u64,
    next_insert_order: u64,
}

/// `(name, uuid)` pairs as Java prints a collection of `Index`: `[[a/uuid], [b/uuid]]`.
pub(crate) fn java_indices(indices: &[(String, String)]) -> String {
    let named: Vec<String> = indices
        .iter()
        .map(|(name, uuid)| format!("[{name}/{uuid}]"))
        .collect();
    format!("[{}]", named.join(", "))
}

impl Deletions {
    /// Deadlines and completions ahead; without a master only queue timeouts run.
    pub(super) fn next_event_ms(&self, master: bool) -> impl Iterator<Item = u64> + '_ {
        self.queue.iter().flat_map(move |task| {
            let timeout = task
                .running
                .is_none()
                .then(|| task.received_ms.saturating_add(task.master_timeout_ms));
            let (applied, acked) = match task.running {
                Some((started, done)) if master => (
                    Some(done),
                    (!task.answered).then(|| started.saturating_add(task.ack_timeout_ms)),
                ),
                _ => (None, None),
            };
            [timeout, applied, acked].into_iter().flatten()
        })
    }

    /// Requests whose answer is not decided yet: their transport tasks still run.
    pub(super) fn unanswered(&self) -> impl Iterator<Item = &Queued> {
        self.queue.iter().filter(|task| !task.answered)
    }

    fn answer(&mut self, ticket: u64, answer: Answer) {
        if self.answers.len() == KEPT_ANSWERS {
            self.answers.pop_front();
        }
        self.answers.push_back((ticket, answer));
    }
}

impl World {
    /// Simulated time a deletion takes from execution to applied state.
    pub(crate) fn set_delete_apply(&mut self, apply_ms: u64) {
        self.deletions.apply_ms = apply_ms;
    }

    /// Queues a deletion on the master; returns the ticket to read its answer with.
    pub(crate) fn submit_delete(&mut self, request: DeleteRequest) -> u64 {
        let targets = hash_set_order(request.targets, |(name, uuid)| index_hash(name, uuid));
        let coordinator = self.coordinating_node().unwrap_or_default();
        let master = self.master().unwrap_or(coordinator);
        let transport = Transport {
            coordinator: (coordinator, self.tasks.take(coordinator)),
            on_master: (master != coordinator).then(|| (master, self.tasks.take(master))),
            opaque_id: request.opaque_id,
        };
        let deletions = &mut self.deletions;
        deletions.next_ticket += 1;
        deletions.next_insert_order += 1;
        deletions.queue.push_back(Queued {
            ticket: deletions.next_ticket,
            insert_order: deletions.next_insert_order,
            source: format!("delete-index {}", java_indices(&targets)),
            targets,
            received_ms: self.now_ms,
            ack_timeout_ms: request.ack_timeout_ms,
            master_timeout_ms: request.master_timeout_ms,
            running: None,
            answered: false,
            transport,
        });
        let ticket = deletions.next_ticket;
        self.settle();
        ticket
    }

    /// The answer of a submitted deletion, once decided.
    pub(crate) fn delete_answer(&self, ticket: u64) -> Option<Answer> {
        self.deletions
            .answers
            .iter()
            .rev()
            .find(|(answered, _)| *answered == ticket)
            .map(|(_, answer)| answer.clone())
    }

    /// `GET _cluster/pending_tasks`: the executing task first, then the queue.
    pub(crate) fn pending_tasks(&self) -> Vec<PendingTask> {
        self.deletions
            .queue
            .iter()
            .map(|task| PendingTask {
                insert_order: task.insert_order,
                source: task.source.clone(),
                executing: task.running.is_some(),
                time_in_queue_ms: self.now_ms.saturating_sub(task.received_ms),
                indices: task.targets.clone(),
                opaque_id: task.transport.opaque_id.clone(),
            })
            .collect()
    }

    /// Queued tasks past their `master_timeout` fail without ever running (master or not).
    pub(super) fn expire_queued_deletions(&mut self) {
        let now = self.now_ms;
        let deletions = &mut self.deletions;
        let mut expired = Vec::new();
        deletions.queue.retain(|task| {
            let late = task.running.is_none()
                && task.received_ms.saturating_add(task.master_timeout_ms) <= now;
            if late {
                expired.push((task.ticket, task.source.clone(), task.master_timeout_ms));
            }
            !late
        });
        for (ticket, source, timeout_ms) in expired {
            let failure = DeleteFailure::QueueTimeout { source, timeout_ms };
            deletions.answer(ticket, Answer::Failed(failure));
        }
    }

    /// Runs the master's queue up to now: the executing task acknowledges late or gets applied,
    /// then the next one starts, one at a time.
    pub(super) fn run_deletions(&mut self) {
        let now = self.now_ms;
        while let Some(front) = self.deletions.queue.front() {
            match front.running {
                Some((_, done)) if done <= now => {
                    if let Some(task) = self.deletions.queue.pop_front() {
                        for (_, uuid) in &task.targets {
                            self.remove_index(uuid);
                        }
                        if !task.answered {
                            self.deletions
                                .answer(task.ticket, Answer::Acknowledged(true));
                        }
                    }
                }
                Some((started, _)) => {
                    if !front.answered && started.saturating_add(front.ack_timeout_ms) <= now {
                        let ticket = front.ticket;
                        self.deletions.answer(ticket, Answer::Acknowledged(false));
                        if let Some(task) = self.deletions.queue.front_mut() {
                            task.answered = true;
                        }
                    }
                    return;
                }
                None => {
                    let ticket = front.ticket;
                    match self.check_targets(&front.targets) {
                        Ok(()) => {
                            let done = now.saturating_add(self.deletions.apply_ms);
                            if let Some(task) = self.deletions.queue.front_mut() {
                                task.running = Some((now, done));
                            }
                        }
                        Err(failure) => {
                            self.deletions.queue.pop_front();
                            self.deletions.answer(ticket, Answer::Failed(failure));
                        }
                    }
                }
            }
        }
    }

    /// Marks the indices with these uuids as copied by a running snapshot, replacing any
    /// earlier set (empty: no snapshot runs).
    pub(crate) fn set_snapshotting(&mut self, uuids: BTreeSet<String>) {
        self.snapshotting = uuids;
    }

    /// `MetadataDeleteIndexService.deleteIndices`: every index must still be this incarnation,
    /// none may be a data stream's write index, and then none may be in a running snapshot
    /// (`SnapshotsService.snapshottingIndices`).
    fn check_targets(&self, targets: &[(String, String)]) -> Result<(), DeleteFailure> {
        for (name, uuid) in targets {
            if self.index(name).is_none_or(|index| index.uuid != *uuid) {
                return Err(DeleteFailure::NotFound {
                    name: name.clone(),
                    uuid: uuid.clone(),
                });
            }
            if let Some(stream) = self.streams.write_index_of(name) {
                return Err(DeleteFailure::WriteIndex {
                    index: name.clone(),
                    stream: stream.to_owned(),
                });
            }
        }
        let snapshotting: Vec<(String, String)> = targets
            .iter()
            .filter(|(_, uuid)| self.snapshotting.contains(uuid))
            .cloned()
            .collect();
        if snapshotting.is_empty() {
            return Ok(());
        }
        Err(DeleteFailure::Snapshotting {
            indices: hash_set_order(snapshotting, |(name, uuid)| index_hash(name, uuid)),
        })
    }
}
