//! The simulated cluster: nodes, indices and settings, advanced lazily through simulated time.
//!
//! The world is a discrete-event simulation. Nothing runs in the background: every request first
//! calls [`World::advance`] with the current simulated time, which replays node boots, finished
//! recoveries, applied index deletions and the allocation decisions they trigger, event by
//! event, in order. The outcome therefore does not depend on how often clients poll.

mod allocation;
mod deletion;
mod health;
mod index;
pub(crate) mod index_settings;
mod ism;
mod javaorder;
mod nodes;
mod resolve;
mod settings;
mod snapshot;
mod streams;
mod tasks;

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

pub(crate) use deletion::{Answer, DeleteFailure, DeleteRequest, java_indices};
pub(crate) use index::{CopyState, Identity, Index, NodeId, Recovery, RecoveryKind};
pub(crate) use index_settings::IndexSettings;
pub(crate) use ism::{AddError, CONFIG_INDEX, Managed, Policy};
pub(crate) use nodes::{Node, node_id};
pub(crate) use resolve::{IndicesOptions, Resolution, Targets, Unresolved, glob_match};
pub(crate) use settings::{Applied, Settings, SettingsError};
pub use snapshot::{
    CopySnapshot, CopyStatus, DataStreamSnapshot, HealthSnapshot, HealthStatus, IndexSnapshot,
    NodeSnapshot, NodeStatus, PendingDeletionSnapshot, SettingsSnapshot, WorldSnapshot,
};
pub(crate) use streams::{DataStream, StreamError, Template};
pub(crate) use tasks::TaskView;

use crate::config::Flavor;
use crate::flavor::Product;
use crate::hash::uuid;

/// The whole simulated cluster.
#[derive(Debug)]
pub(crate) struct World {
    product: Product,
    cluster_name: String,
    now_ms: u64,
    /// Epoch milliseconds of simulated instant 0: wall-clock dates (creation dates, task start
    /// times) advance at the simulated pace from there.
    wall_origin_ms: i64,
    nodes: Vec<Node>,
    indices: Vec<Index>,
    /// Names of deleted indices in deletion order (a name recreated and deleted again appears
    /// twice): tests prove each selected index is deleted exactly once.
    deleted: Vec<String>,
    settings: Settings,
    master: Option<NodeId>,
    /// Indices created so far: each incarnation's uuid derives from its number, so an index
    /// deleted and created again under its name gets a new one, as `UUIDs.randomBase64UUID` gives.
    incarnations: u64,
    deletions: deletion::Deletions,
    /// Uuids of the indices a running snapshot copies: their deletion is refused.
    snapshotting: BTreeSet<String>,
    tasks: tasks::TaskIds,
    streams: streams::Streams,
    ism: ism::Ism,
}

/// An index that exists when the simulator starts.
#[derive(Debug, Clone)]
pub(crate) struct IndexSeed {
    pub name: String,
    /// Settings as a create request gives them, already validated.
    pub settings: IndexSettings,
    /// `index.creation_date` unless the settings give one.
    pub creation_ms: i64,
}

/// `PUT /{index}` for a name that exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexExists;

impl World {
    /// A healthy cluster: every node up, copies spread round-robin with primary and replica on
    /// different nodes. `written` is the index the log shippers write to.
    pub(crate) fn new(
        product: Product,
        cluster_name: &str,
        ips: &[Ipv4Addr],
        seeds: &[IndexSeed],
        written: &str,
        wall_origin_ms: i64,
    ) -> Self {
        let mut world = World {
            product,
            cluster_name: cluster_name.to_owned(),
            now_ms: 0,
            wall_origin_ms,
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
            indices: Vec::new(),
            deleted: Vec::new(),
            settings: Settings::default(),
            master: None,
            incarnations: 0,
            deletions: deletion::Deletions::default(),
            snapshotting: BTreeSet::new(),
            tasks: tasks::TaskIds::new(ips),
            streams: streams::Streams::built_in(product),
            ism: ism::Ism::default(),
        };
        for seed in seeds {
            world.push_existing(seed, seed.name == written);
        }
        world.settle();
        world
    }

    pub(crate) fn flavor(&self) -> Flavor {
        self.product.flavor
    }

    pub(crate) fn product(&self) -> Product {
        self.product
    }

    pub(crate) fn cluster_name(&self) -> &str {
        &self.cluster_name
    }

    pub(crate) fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// Epoch milliseconds of a simulated instant.
    pub(crate) fn wall_ms(&self, sim_ms: u64) -> i64 {
        self.wall_origin_ms
            .saturating_add(i64::try_from(sim_ms).unwrap_or(i64::MAX))
    }

    pub(crate) fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub(crate) fn indices(&self) -> &[Index] {
        &self.indices
    }

    pub(crate) fn index(&self, name: &str) -> Option<&Index> {
        self.indices.iter().find(|index| index.name == name)
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

    /// The node haproxy hands a request to: the first one up (the one `GET /` names).
    pub(crate) fn coordinating_node(&self) -> Option<NodeId> {
        self.joined_nodes().map(|(node, _)| node).next()
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
        boots
            .chain(decided)
            .chain(self.deletions.next_event_ms(self.master.is_some()))
            .filter(|&at| at > self.now_ms)
            .min()
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

    /// Resolves an index expression against the current cluster state.
    pub(crate) fn resolve(
        &self,
        expression: &str,
        options: &IndicesOptions,
        targets: Targets,
    ) -> Result<Resolution, Unresolved> {
        let candidates: Vec<resolve::Candidate> = self
            .indices
            .iter()
            .map(|index| resolve::Candidate {
                name: &index.name,
                hidden: index.is_hidden(),
            })
            .collect();
        let streams: Vec<resolve::StreamCandidate> = self
            .streams
            .data_streams()
            .iter()
            .map(|stream| resolve::StreamCandidate {
                name: &stream.name,
                backing: stream
                    .indices
                    .iter()
                    .filter_map(|backing| self.indices.iter().position(|i| i.name == *backing))
                    .collect(),
            })
            .collect();
        resolve::resolve(
            &candidates,
            &streams,
            expression,
            options,
            targets,
            resolve::Dialect::of(self.product.flavor),
        )
    }

    /// The identity of a new incarnation of `name`: a fresh uuid and the settings the server
    /// stores for it.
    fn new_identity(
        &mut self,
        name: &str,
        requested: &IndexSettings,
        creation_ms: i64,
    ) -> Identity {
        self.incarnations += 1;
        let uuid = uuid(&format!("{name}#{}", self.incarnations));
        let settings = index_settings::complete(self.product, name, &uuid, creation_ms, requested);
        Identity {
            name: name.to_owned(),
            uuid,
            settings,
        }
    }

    /// Adds an index that has been running for a while, placed round-robin.
    fn push_existing(&mut self, seed: &IndexSeed, written: bool) {
        let count = self.nodes.len();
        let position = self.indices.len();
        let replica = (count > 1).then(|| (position + 1) % count);
        let identity = self.new_identity(&seed.name, &seed.settings, seed.creation_ms);
        self.indices.push(Index::existing(
            identity,
            position % count,
            replica,
            written,
        ));
    }

    /// Creates an empty index with the (validated) requested settings; allocation places its
    /// primary if `enable` allows.
    pub(crate) fn create_index(
        &mut self,
        name: &str,
        requested: &IndexSettings,
    ) -> Result<(), IndexExists> {
        if self.index(name).is_some() {
            return Err(IndexExists);
        }
        let creation_ms = self.wall_ms(self.now_ms);
        let identity = self.new_identity(name, requested, creation_ms);
        self.indices.push(Index::created(identity, self.now_ms));
        self.settle();
        Ok(())
    }

    /// Makes a just-created index look as if it had been running since `creation_ms`: both
    /// copies started, placed round-robin (for indices that exist at start).
    fn start_at_once(&mut self, name: &str, creation_ms: i64) {
        let count = self.nodes.len();
        let Some(position) = self.indices.iter().position(|index| index.name == name) else {
            return;
        };
        let replica = (count > 1).then(|| (position + 1) % count);
        let index = &self.indices[position];
        let mut identity = Identity {
            name: index.name.clone(),
            uuid: index.uuid.clone(),
            settings: index.settings.clone(),
        };
        identity.settings.insert(
            index_settings::CREATION_DATE.to_owned(),
            creation_ms.to_string(),
        );
        self.indices[position] = Index::existing(identity, position % count, replica, false);
    }

    /// Removes an index at once (the cluster state without it has been applied).
    fn remove_index(&mut self, uuid: &str) {
        if let Some(position) = self.indices.iter().position(|index| index.uuid == uuid) {
            let index = self.indices.remove(position);
            self.streams.forget_backing_index(&index.name);
            self.ism.forget(&index.uuid);
            self.deleted.push(index.name);
        }
    }
}

#[cfg(test)]
impl World {
    /// A world of plain indices created at instant 0, for unit tests.
    pub(crate) fn plain(flavor: Flavor, ips: &[Ipv4Addr], names: &[String], written: &str) -> Self {
        let seeds: Vec<IndexSeed> = names
            .iter()
            .map(|name| IndexSeed {
                name: name.clone(),
                settings: IndexSettings::new(),
                creation_ms: 0,
            })
            .collect();
        let product = Product::new(flavor, crate::flavor::Distribution::Oss);
        World::new(product, "kolla_logging", ips, &seeds, written, 0)
    }
}

#[cfg(test)]
mod tests;
