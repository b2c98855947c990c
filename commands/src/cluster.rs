//! Facts about a search cluster as the planners and the progress text need them, parsed from the
//! server's own answers elsewhere (the bot's backend) into these plain types.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::name::NodeAddr;

mod version;
pub use version::{Distribution, FlushMode, ServerVersion};

/// Health status, ordered from worst to best so that "at least yellow" is `>= Yellow`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HealthStatus {
    Red,
    Yellow,
    Green,
}

impl HealthStatus {
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "red" => Some(Self::Red),
            "yellow" => Some(Self::Yellow),
            "green" => Some(Self::Green),
            _ => None,
        }
    }
}

impl fmt::Display for HealthStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Red => "red",
            Self::Yellow => "yellow",
            Self::Green => "green",
        })
    }
}

/// `_cluster/health`, the numbers progress and waits look at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterHealth {
    pub cluster_name: String,
    pub status: HealthStatus,
    pub number_of_nodes: usize,
    pub active_shards: u64,
    pub relocating_shards: u64,
    pub initializing_shards: u64,
    pub unassigned_shards: u64,
}

/// Who is in the cluster, as far as the API can tell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Membership {
    /// `_cat/nodes` answered: these nodes have joined, `master` is the elected one.
    Formed {
        nodes: Vec<NodeAddr>,
        master: Option<NodeAddr>,
    },
    /// Nodes answer but no master is elected: too few master-eligible nodes are up.
    NoMaster,
    /// Nothing answers (connection refused, or the load balancer has no server up).
    Unreachable,
}

impl Membership {
    pub fn has(&self, node: NodeAddr) -> bool {
        matches!(self, Self::Formed { nodes, .. } if nodes.contains(&node))
    }

    pub fn joined(&self) -> usize {
        match self {
            Self::Formed { nodes, .. } => nodes.len(),
            Self::NoMaster | Self::Unreachable => 0,
        }
    }
}

/// What a running step last observed; rendered as `nodes 3/5 joined · status yellow · ...`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observation {
    /// While a node is drained: the shard copies it still holds.
    pub node_shards: Option<(NodeAddr, u64)>,
    pub nodes_joined: Option<(usize, usize)>,
    /// Nodes of the inventory the cluster does not show, by name: which node left is seen, not
    /// assumed from which one was stopped.
    pub missing: Vec<NodeAddr>,
    pub status: Option<HealthStatus>,
    pub relocating_shards: Option<u64>,
    pub initializing_shards: Option<u64>,
    pub unassigned_shards: Option<u64>,
    /// Anything else worth a word: `no elected master yet`, `retrying (2/5): ... answered 503`.
    pub note: Option<String>,
}

impl Observation {
    /// The observation of a membership, against the `inventory` of nodes expected, and, when
    /// the cluster answered, its health.
    pub fn of(
        membership: &Membership,
        inventory: &[NodeAddr],
        health: Option<&ClusterHealth>,
    ) -> Self {
        let note = match membership {
            Membership::Formed { .. } => None,
            Membership::NoMaster => Some("no elected master (too few nodes up)".to_owned()),
            Membership::Unreachable => Some("cluster unreachable".to_owned()),
        };
        let missing = match membership {
            Membership::Formed { .. } => inventory
                .iter()
                .filter(|node| !membership.has(**node))
                .copied()
                .collect(),
            // Without a master nobody can say who is in the cluster.
            Membership::NoMaster | Membership::Unreachable => Vec::new(),
        };
        Self {
            node_shards: None,
            nodes_joined: Some((membership.joined(), inventory.len())),
            missing,
            status: health.map(|h| h.status),
            relocating_shards: health.map(|h| h.relocating_shards),
            initializing_shards: health.map(|h| h.initializing_shards),
            unassigned_shards: health.map(|h| h.unassigned_shards),
            note,
        }
    }
}

impl Observation {
    /// `last`, noting that a transient fault is being retried: `retrying (2/5): <what happened>`.
    pub fn retrying(last: &Self, tries: u32, attempts: u32, fault: &impl fmt::Display) -> Self {
        Self {
            note: Some(format!("retrying ({tries}/{attempts}): {fault}")),
            ..last.clone()
        }
    }
}

impl fmt::Display for Observation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some((node, shards)) = self.node_shards {
            parts.push(format!("{node} holds {shards} shards"));
        }
        if let Some((joined, expected)) = self.nodes_joined {
            parts.push(format!("nodes {joined}/{expected} joined"));
        }
        if !self.missing.is_empty() {
            let missing: Vec<String> = self.missing.iter().map(ToString::to_string).collect();
            parts.push(format!("not in the cluster: {}", missing.join(", ")));
        }
        if let Some(status) = self.status {
            parts.push(format!("status {status}"));
        }
        let counts = [
            ("relocating_shards", self.relocating_shards),
            ("initializing_shards", self.initializing_shards),
            ("unassigned_shards", self.unassigned_shards),
        ];
        for (name, value) in counts {
            if let Some(n) = value.filter(|n| *n > 0) {
                parts.push(format!("{name} {n}"));
            }
        }
        if let Some(note) = &self.note {
            parts.push(note.clone());
        }
        f.write_str(&parts.join(" · "))
    }
}

/// Where a cluster setting is set. A transient setting is lost when the whole cluster restarts;
/// opsbot sets its exclusions transient, as the spec does, so that none outlives a full restart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SettingScope {
    Transient,
    Persistent,
}

impl SettingScope {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Transient => "transient",
            Self::Persistent => "persistent",
        }
    }
}

/// `cluster.routing.allocation.exclude._ip`: the nodes shards must leave.
pub const EXCLUDE_IP: &str = "cluster.routing.allocation.exclude._ip";

/// A non-empty `cluster.routing.allocation.exclude._ip` and where it is set (transient wins).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exclusion {
    pub scope: SettingScope,
    /// As the server holds it: comma-separated addresses, possibly with wildcards.
    pub value: String,
}

impl Exclusion {
    /// True when the setting excludes exactly this node and nothing else.
    pub fn is_only(&self, node: NodeAddr) -> bool {
        self.names(node) && self.without(node).is_empty()
    }

    /// The value without `node`: what is left once a removal clears its own exclusion.
    pub fn without(&self, node: NodeAddr) -> String {
        let node = node.to_string();
        let rest: Vec<&str> = self
            .value
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty() && *e != node)
            .collect();
        rest.join(",")
    }

    /// True when `node` is one of the excluded addresses, written out.
    pub fn names(&self, node: NodeAddr) -> bool {
        let node = node.to_string();
        self.value.split(',').any(|e| e.trim() == node)
    }

    /// The settings body that clears this exclusion where it is set.
    pub fn clearing_body(&self) -> String {
        let value = match self.scope {
            SettingScope::Transient => "\"\"",
            SettingScope::Persistent => "null",
        };
        format!(
            "{{\"{}\":{{\"{EXCLUDE_IP}\":{value}}}}}",
            self.scope.as_str()
        )
    }
}

impl fmt::Display for Exclusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {EXCLUDE_IP}: {}", self.scope.as_str(), self.value)
    }
}

/// The allocation settings the procedures read: `None` means not set (the default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllocationSettings {
    /// Effective `cluster.routing.allocation.enable`.
    pub enable: Option<String>,
    pub exclusion: Option<Exclusion>,
}

/// A row of `_cat/allocation?format=json&h=shards,ip`: shard copies per node. Unassigned copies
/// come as a row with no address.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CatAllocationRow {
    pub shards: String,
    pub ip: Option<String>,
}

/// A row of `_cat/health?format=json` (every value is a string, as the servers send it).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CatHealthRow {
    pub cluster: String,
    pub status: String,
    #[serde(rename = "node.total")]
    pub node_total: String,
    pub shards: String,
    pub unassign: String,
    pub init: String,
    pub relo: String,
    pub active_shards_percent: String,
}

/// A row of `_cat/nodes?format=json`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CatNodeRow {
    pub ip: String,
    pub name: String,
    /// `cluster_manager` on OpenSearch 2.
    #[serde(alias = "cluster_manager")]
    pub master: String,
    #[serde(rename = "heap.percent")]
    pub heap_percent: Option<String>,
}

/// A row of `_cat/recovery?format=json&active_only=true&h=...`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CatRecoveryRow {
    pub index: String,
    pub shard: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub stage: String,
    pub source_node: String,
    pub target_node: String,
    pub bytes_percent: String,
}

/// A row of `_cat/indices?format=json&bytes=b&h=index,uuid,health,status,docs.count,store.size`.
/// A closed index has no health, document count or size (null).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CatIndexRow {
    pub index: String,
    pub uuid: Option<String>,
    pub health: Option<String>,
    pub status: Option<String>,
    #[serde(rename = "docs.count")]
    pub docs_count: Option<String>,
    /// Bytes, as asked with `bytes=b`.
    #[serde(rename = "store.size")]
    pub store_size: Option<String>,
}

/// The three `_cat` answers the start procedure reports at its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatReport {
    pub health: Vec<CatHealthRow>,
    pub recovery: Vec<CatRecoveryRow>,
    pub nodes: Vec<CatNodeRow>,
}

/// Everything `/cluster status` shows. Parts are `None` when the cluster did not answer them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterStatus {
    pub cluster: crate::name::ClusterName,
    pub inventory: Vec<NodeAddr>,
    pub version: Option<ServerVersion>,
    pub membership: Membership,
    pub health: Option<ClusterHealth>,
    pub allocation: Option<AllocationSettings>,
    /// Why some part is missing, e.g. the cluster's error answer.
    pub problem: Option<String>,
    /// Unfinished runs on this cluster: `r-4 running /cluster restart cluster:logs`.
    pub runs: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flush_mode_follows_the_server_version() {
        let es = |n| ServerVersion::parse(Distribution::Elasticsearch, n).unwrap();
        assert_eq!(es("6.8.23").flush_mode(), FlushMode::Synced);
        assert_eq!(es("7.5.2").flush_mode(), FlushMode::Synced);
        assert_eq!(es("7.6.0").flush_mode(), FlushMode::Plain);
        assert_eq!(es("7.10.2").flush_mode(), FlushMode::Plain);
        assert_eq!(es("8.11.3").flush_mode(), FlushMode::Plain);
        let os = ServerVersion::parse(Distribution::OpenSearch, "2.11.1").unwrap();
        assert_eq!(os.flush_mode(), FlushMode::Plain);
    }

    #[test]
    fn versions_with_suffixes_parse() {
        let v = ServerVersion::parse(Distribution::Elasticsearch, "8.12.0-SNAPSHOT").unwrap();
        assert_eq!((v.major, v.minor, v.patch), (8, 12, 0));
        assert!(ServerVersion::parse(Distribution::Elasticsearch, "eight").is_none());
    }

    #[test]
    fn a_retry_keeps_what_was_last_seen_and_says_why() {
        let last = Observation {
            nodes_joined: Some((4, 5)),
            ..Observation::default()
        };
        let retrying = Observation::retrying(&last, 2, 5, &"GET /_cat/nodes answered 503");
        assert_eq!(
            retrying.to_string(),
            "nodes 4/5 joined · retrying (2/5): GET /_cat/nodes answered 503"
        );
    }

    #[test]
    fn an_exclusion_names_its_nodes_and_how_to_clear_it() {
        let node = NodeAddr::parse("10.0.0.14").unwrap();
        let transient = |value: &str| Exclusion {
            scope: SettingScope::Transient,
            value: value.to_owned(),
        };
        assert!(transient("10.0.0.14").is_only(node));
        assert!(transient(" 10.0.0.14 ,").is_only(node));
        assert!(!transient("10.0.0.14,10.0.0.15").is_only(node));
        assert!(!transient("10.0.0.1*").is_only(node));
        assert_eq!(transient("10.0.0.12, 10.0.0.14").without(node), "10.0.0.12");
        assert!(transient("10.0.0.12, 10.0.0.14").names(node));
        assert!(!transient("10.0.0.141").names(node));
        assert_eq!(
            transient("10.0.0.14").clearing_body(),
            r#"{"transient":{"cluster.routing.allocation.exclude._ip":""}}"#
        );
        let persistent = Exclusion {
            scope: SettingScope::Persistent,
            value: "10.0.0.12".to_owned(),
        };
        assert_eq!(
            persistent.clearing_body(),
            r#"{"persistent":{"cluster.routing.allocation.exclude._ip":null}}"#
        );
        assert_eq!(
            persistent.to_string(),
            "persistent cluster.routing.allocation.exclude._ip: 10.0.0.12"
        );
    }

    #[test]
    fn observations_show_only_what_matters() {
        let o = Observation {
            nodes_joined: Some((3, 5)),
            status: Some(HealthStatus::Yellow),
            relocating_shards: Some(0),
            unassigned_shards: Some(48),
            ..Observation::default()
        };
        assert_eq!(
            o.to_string(),
            "nodes 3/5 joined · status yellow · unassigned_shards 48"
        );
        let draining = Observation {
            node_shards: Some((NodeAddr::parse("10.0.0.14").unwrap(), 31)),
            relocating_shards: Some(4),
            ..Observation::default()
        };
        assert_eq!(
            draining.to_string(),
            "10.0.0.14 holds 31 shards · relocating_shards 4"
        );
    }
}
