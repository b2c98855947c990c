//! Indices and their shard copies: where each copy is, what it is doing, and which disks hold its data.

use super::index_settings::{self, IndexSettings};
use crate::hash::in_range;

/// Position of a node in the world's node list.
pub(crate) type NodeId = usize;

/// How a copy gets its data, as `_cat/recovery` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecoveryKind {
    /// A brand-new primary with no data.
    EmptyStore,
    /// A primary reopened from the data on its own node's disk.
    ExistingStore,
    /// A replica (or relocation target) copied from another node.
    Peer,
}

impl RecoveryKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RecoveryKind::EmptyStore => "empty_store",
            RecoveryKind::ExistingStore => "existing_store",
            RecoveryKind::Peer => "peer",
        }
    }
}

/// One recovery, ongoing or finished.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Recovery {
    pub kind: RecoveryKind,
    pub source: Option<NodeId>,
    pub target: NodeId,
    pub start_ms: u64,
    pub done_ms: u64,
    /// The target already had (possibly stale) files on disk, so none had to be copied.
    pub reused: bool,
}

/// Routing state of one shard copy, as in ES's `ShardRouting`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CopyState {
    Unassigned {
        since_ms: u64,
        /// Unassigned because its node left: replicas then wait out
        /// `index.unassigned.node_left.delayed_timeout` before going anywhere but that node.
        node_left: bool,
    },
    Initializing(Recovery),
    Started {
        node: NodeId,
    },
    /// Still active on `node` while a copy is built on the recovery's target.
    Relocating {
        node: NodeId,
        to: Recovery,
    },
}

/// A primary or replica copy of the index's single shard.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ShardCopy {
    pub primary: bool,
    pub state: CopyState,
    /// The recovery that brought the copy onto its current node (`_cat/recovery` shows it as done).
    pub last_recovery: Option<Recovery>,
}

impl ShardCopy {
    pub(crate) fn unassigned(primary: bool, since_ms: u64, node_left: bool) -> Self {
        ShardCopy {
            primary,
            state: CopyState::Unassigned {
                since_ms,
                node_left,
            },
            last_recovery: None,
        }
    }

    /// Started or relocating: serving searches, counted in `active_shards`.
    pub(crate) fn is_active(&self) -> bool {
        matches!(
            self.state,
            CopyState::Started { .. } | CopyState::Relocating { .. }
        )
    }

    /// The node the copy is (or is being recovered) on; not a relocation target.
    pub(crate) fn node(&self) -> Option<NodeId> {
        match &self.state {
            CopyState::Unassigned { .. } => None,
            CopyState::Initializing(recovery) => Some(recovery.target),
            CopyState::Started { node } | CopyState::Relocating { node, .. } => Some(*node),
        }
    }

    /// Every node the copy occupies, relocation target included.
    pub(crate) fn occupies(&self, node: NodeId) -> bool {
        self.node() == Some(node)
            || matches!(&self.state, CopyState::Relocating { to, .. } if to.target == node)
    }

    /// Recoveries currently copying data onto some node.
    pub(crate) fn ongoing_recovery(&self) -> Option<&Recovery> {
        match &self.state {
            CopyState::Initializing(recovery) | CopyState::Relocating { to: recovery, .. } => {
                Some(recovery)
            }
            CopyState::Unassigned { .. } | CopyState::Started { .. } => None,
        }
    }
}

/// Shard data left on a node's disk (kept while the node is down, as a real data directory is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DiskCopy {
    pub node: NodeId,
    /// In the index's in-sync set: may become primary. A copy lost while its partner stayed
    /// active misses later writes, so ES marks it stale and will only reuse its files.
    pub in_sync: bool,
}

/// What makes one incarnation of an index: its name, the uuid the server gave it, and every
/// setting the settings API shows (the uuid and creation date among them).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Identity {
    pub name: String,
    pub uuid: String,
    pub settings: IndexSettings,
}

/// An index with one primary shard and one replica (Kolla's log index template).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Index {
    pub name: String,
    pub uuid: String,
    pub settings: IndexSettings,
    pub docs: u64,
    pub primary_bytes: u64,
    pub files: u64,
    pub copies: [ShardCopy; 2],
    pub disk: Vec<DiskCopy>,
    /// Receives the log shippers' writes (today's daily index).
    pub written: bool,
}

/// Size of a freshly created empty Lucene index, as `_cat/indices` reports it.
const EMPTY_INDEX_BYTES: u64 = 208;

impl Index {
    /// An index that has been running for a while: both copies started on the given nodes
    /// (replica unassigned if there is only one node), with plausible past recoveries.
    pub(crate) fn existing(
        identity: Identity,
        primary: NodeId,
        replica: Option<NodeId>,
        written: bool,
    ) -> Self {
        let name = identity.name.as_str();
        let small = name.starts_with('.');
        let docs = if small {
            in_range("docs", name, 3, 40)
        } else {
            in_range("docs", name, 2_000_000, 9_000_000)
        };
        let per_doc = if small {
            in_range("doc-bytes", name, 600, 1_500)
        } else {
            in_range("doc-bytes", name, 420, 620)
        };
        let files = if small {
            in_range("files", name, 4, 12)
        } else {
            in_range("files", name, 20, 60)
        };
        let boot = Recovery {
            kind: RecoveryKind::ExistingStore,
            source: None,
            target: primary,
            start_ms: 0,
            done_ms: in_range("boot-ms", name, 300, 2_500),
            reused: true,
        };
        let started = |node: NodeId, primary: bool, recovery: Recovery| ShardCopy {
            primary,
            state: CopyState::Started { node },
            last_recovery: Some(recovery),
        };
        let replica_copy = match replica {
            Some(node) => started(
                node,
                false,
                Recovery {
                    kind: RecoveryKind::Peer,
                    source: Some(primary),
                    target: node,
                    start_ms: 0,
                    done_ms: in_range("peer-ms", name, 20_000, 240_000),
                    reused: false,
                },
            ),
            None => ShardCopy::unassigned(false, 0, false),
        };
        let disk = [Some(primary), replica]
            .into_iter()
            .flatten()
            .map(|node| DiskCopy {
                node,
                in_sync: true,
            })
            .collect();
        Index {
            docs,
            primary_bytes: docs * per_doc,
            files,
            copies: [started(primary, true, boot), replica_copy],
            disk,
            written,
            name: identity.name,
            uuid: identity.uuid,
            settings: identity.settings,
        }
    }

    /// A new, empty index: both copies unassigned until allocation places them.
    pub(crate) fn created(identity: Identity, now_ms: u64) -> Self {
        Index {
            name: identity.name,
            uuid: identity.uuid,
            settings: identity.settings,
            docs: 0,
            primary_bytes: EMPTY_INDEX_BYTES,
            files: 0,
            copies: [
                ShardCopy::unassigned(true, now_ms, false),
                ShardCopy::unassigned(false, now_ms, false),
            ],
            disk: Vec::new(),
            written: false,
        }
    }

    /// See [`index_settings::is_hidden`].
    pub(crate) fn is_hidden(&self) -> bool {
        index_settings::is_hidden(&self.settings)
    }

    /// Slot (0 or 1) of the primary copy.
    pub(crate) fn primary_slot(&self) -> usize {
        usize::from(!self.copies[0].primary)
    }

    pub(crate) fn primary(&self) -> &ShardCopy {
        &self.copies[self.primary_slot()]
    }

    /// Records that a copy's data now lives on `node` and is up to date.
    pub(crate) fn store_on(&mut self, node: NodeId) {
        match self.disk.iter_mut().find(|disk| disk.node == node) {
            Some(disk) => disk.in_sync = true,
            None => self.disk.push(DiskCopy {
                node,
                in_sync: true,
            }),
        }
    }

    pub(crate) fn disk_on(&self, node: NodeId) -> Option<DiskCopy> {
        self.disk.iter().copied().find(|disk| disk.node == node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(name: &str) -> Identity {
        Identity {
            name: name.to_owned(),
            uuid: crate::hash::uuid(name),
            settings: IndexSettings::new(),
        }
    }

    #[test]
    fn existing_index_is_deterministic_and_realistic() {
        let index = Index::existing(identity("flog-2026.01.01"), 0, Some(1), false);
        assert_eq!(
            index,
            Index::existing(identity("flog-2026.01.01"), 0, Some(1), false)
        );
        assert!(index.docs >= 2_000_000);
        assert!(index.primary_bytes > 800_000_000);
        assert_eq!(index.primary_slot(), 0);
        assert!(index.copies.iter().all(ShardCopy::is_active));
        let kibana = Index::existing(identity(".kibana_1"), 2, Some(3), false);
        assert!(kibana.primary_bytes < 100_000);
    }

    #[test]
    fn single_node_leaves_the_replica_unassigned() {
        let index = Index::existing(identity("flog-2026.01.01"), 0, None, false);
        assert!(!index.copies[1].is_active());
        assert_eq!(index.disk.len(), 1);
    }
}
