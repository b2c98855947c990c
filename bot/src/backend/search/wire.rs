//! The search cluster's JSON shapes, as recorded from real servers (`tests/fixtures/search/`).
//! `_cat` endpoints with `format=json` give every value as a string (or null).

use std::collections::BTreeMap;

use opsbot_commands::cluster::{ClusterHealth, HealthStatus};
use serde::Deserialize;
use serde_json::Value;

use crate::backend::Fault;

#[derive(Debug, Deserialize)]
pub(super) struct Info {
    pub version: InfoVersion,
}

#[derive(Debug, Deserialize)]
pub(super) struct InfoVersion {
    /// Only OpenSearch sends it (`"opensearch"`).
    pub distribution: Option<String>,
    pub number: String,
    /// Elasticsearch 6.3 and later: `oss` or `default`.
    #[serde(default)]
    pub build_flavor: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct NodeIdentity {
    pub ip: String,
    /// `*` for the elected master, `-` otherwise. OpenSearch 2 calls the column
    /// `cluster_manager`.
    #[serde(alias = "cluster_manager")]
    pub master: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct Health {
    cluster_name: String,
    status: String,
    number_of_nodes: usize,
    active_shards: u64,
    relocating_shards: u64,
    initializing_shards: u64,
    unassigned_shards: u64,
}

impl Health {
    pub fn into_health(self) -> Option<ClusterHealth> {
        Some(ClusterHealth {
            status: HealthStatus::parse(&self.status)?,
            cluster_name: self.cluster_name,
            number_of_nodes: self.number_of_nodes,
            active_shards: self.active_shards,
            relocating_shards: self.relocating_shards,
            initializing_shards: self.initializing_shards,
            unassigned_shards: self.unassigned_shards,
        })
    }
}

/// `GET /_cluster/settings?flat_settings=true`.
#[derive(Debug, Deserialize)]
pub(super) struct Settings {
    #[serde(default)]
    pub persistent: BTreeMap<String, Value>,
    #[serde(default)]
    pub transient: BTreeMap<String, Value>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Acknowledged {
    pub acknowledged: bool,
}

#[derive(Debug, Deserialize)]
pub(super) struct ShardsEnvelope {
    #[serde(rename = "_shards")]
    pub shards: Shards,
}

#[derive(Debug, Deserialize)]
pub(super) struct Shards {
    pub total: u64,
    pub successful: u64,
    pub failed: u64,
}

/// Classifies an error answer. ES errors are `{"error":{"type":...},"status":N}`, or a bare
/// string for unknown routes; a load balancer with no server up sends HTML; the OpenSearch
/// security plugin refuses credentials in plain text (`Unauthorized`).
pub(crate) fn status_fault(status: u16, body: &str) -> Fault {
    let reason = match serde_json::from_str::<Value>(body) {
        Ok(json) => match &json["error"] {
            Value::String(text) => text.chars().take(120).collect(),
            // Security's own words: who could not authenticate, or which privilege grants the
            // refused action (`... this action is granted by the cluster privileges [monitor,
            // manage,all]`).
            error if matches!(status, 401 | 403) => security_reason(error),
            error => error["type"].as_str().unwrap_or_default().to_owned(),
        },
        Err(_) if status == 401 => body.trim().chars().take(REASON_CHARS).collect(),
        Err(_) => String::new(),
    };
    if status == 503 && reason.ends_with("_not_discovered_exception") {
        return Fault::NoMaster;
    }
    // Whoever answered 401, and however: it is the credentials opsbot sent.
    let reason = match (status, reason.is_empty()) {
        (401, true) => CREDENTIALS_HINT.to_owned(),
        (401, false) => format!("{reason}; {CREDENTIALS_HINT}"),
        _ => reason,
    };
    Fault::Status { status, reason }
}

/// What to do about a 401.
const CREDENTIALS_HINT: &str = "check the cluster's username and password, or its API key";

/// The longest reason kept from an error answer: security's reasons name a user and privileges.
const REASON_CHARS: usize = 400;

/// The reason of a 401 or 403 of Elasticsearch/OpenSearch security: the index list a refused
/// delete names is shortened, so that what to grant (named after it) is kept.
fn security_reason(error: &Value) -> String {
    let reason = error["reason"]
        .as_str()
        .or_else(|| error["type"].as_str())
        .unwrap_or_default();
    ends_kept(&indices_shortened(reason), REASON_CHARS)
}

/// How many names of a refused request's index list are kept.
const LISTED: usize = 3;

/// `… on indices [a,b,c,d,e], this action …` with the list cut to its first few names and a
/// count: `on indices [a,b,c, … 5 in all]`.
fn indices_shortened(reason: &str) -> String {
    const LIST: &str = "on indices [";
    let Some(start) = reason.find(LIST).map(|at| at + LIST.len()) else {
        return reason.to_owned();
    };
    let Some(end) = reason[start..].find(']').map(|at| start + at) else {
        return reason.to_owned();
    };
    let names: Vec<&str> = reason[start..end].split(',').collect();
    if names.len() <= LISTED {
        return reason.to_owned();
    }
    format!(
        "{}{}, … {} in all{}",
        &reason[..start],
        names[..LISTED].join(","),
        names.len(),
        &reason[end..]
    )
}

/// `text` within `limit` characters, keeping its start and its end: a reason says what was
/// refused first and what would grant it last.
fn ends_kept(text: &str, limit: usize) -> String {
    let count = text.chars().count();
    if count <= limit {
        return text.to_owned();
    }
    let half = (limit - 1) / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(count - half).collect();
    format!("{head}…{tail}")
}
