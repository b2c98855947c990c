//! The Elasticsearch security privileges opsbot's procedures need, asked of the cluster with
//! the has-privileges API, so that `opsbot check` names a missing one before a run meets its
//! 403 halfway through a maintenance.

use std::collections::BTreeMap;

use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use super::SearchClient;
use crate::backend::BackendError;

/// Where a privilege applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Cluster,
    /// On every index: a prune may name any.
    Index,
}

/// A privilege opsbot needs, and what needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needed {
    pub scope: Scope,
    pub privilege: &'static str,
    pub for_what: &'static str,
}

impl std::fmt::Display for Needed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scope = match self.scope {
            Scope::Cluster => "cluster",
            Scope::Index => "index",
        };
        write!(f, "{scope} `{}` ({})", self.privilege, self.for_what)
    }
}

const fn needed(scope: Scope, privilege: &'static str, for_what: &'static str) -> Needed {
    Needed {
        scope,
        privilege,
        for_what,
    }
}

/// Every privilege a procedure uses; ES's `manage` and `all` imply them.
pub const NEEDED: &[Needed] = &[
    needed(
        Scope::Cluster,
        "monitor",
        "health, nodes, tasks and recovery",
    ),
    needed(
        Scope::Cluster,
        "manage",
        "the allocation and exclusion settings of restart, stop and remove-node",
    ),
    needed(Scope::Index, "monitor", "the index list"),
    needed(
        Scope::Index,
        "view_index_metadata",
        "the settings and lifecycle policies a prune keeps indices for",
    ),
    needed(Scope::Index, "maintenance", "the flush before nodes stop"),
    needed(Scope::Index, "delete_index", "prune and delete"),
];

/// The has-privileges answer, as much of it as opsbot reads.
#[derive(Debug, Deserialize)]
struct Answer {
    #[serde(default)]
    cluster: BTreeMap<String, bool>,
    #[serde(default)]
    index: BTreeMap<String, BTreeMap<String, bool>>,
}

impl SearchClient {
    /// The privileges of [`NEEDED`] that the configured credentials lack (empty when they
    /// have every one). A cluster without security, or without this API (ES 6, OpenSearch),
    /// answers with an error status.
    pub async fn missing_privileges(&self) -> Result<Vec<Needed>, BackendError> {
        let of = |scope| {
            NEEDED
                .iter()
                .filter(move |needed| needed.scope == scope)
                .map(|needed| needed.privilege)
                .collect::<Vec<_>>()
        };
        let body = json!({
            "cluster": of(Scope::Cluster),
            "index": [{"names": ["*"], "privileges": of(Scope::Index)}],
        });
        let answer: Answer = self
            .json(Method::POST, "/_security/user/_has_privileges", Some(body))
            .await?;
        let held = |needed: &Needed| match needed.scope {
            Scope::Cluster => answer.cluster.get(needed.privilege).copied(),
            Scope::Index => answer
                .index
                .get("*")
                .and_then(|privileges| privileges.get(needed.privilege).copied()),
        };
        // A privilege the answer does not mention is not held: never claim what was not said.
        Ok(NEEDED
            .iter()
            .filter(|needed| held(needed) != Some(true))
            .copied()
            .collect())
    }
}
