//! OpenSearch Index State Management: policies kept in the hidden `.opendistro-ism-config`
//! index, and the indices attached to one with `POST _plugins/_ism/add/{index}`.
//!
//! From index-management 2.11.1.0 (`TransportAddPolicyAction`, `TransportExplainAction`): the
//! add API reads the policy from the config index (which does not exist before the first policy
//! is stored), skips indices matching the restricted pattern
//! `\.opendistro_security|\.kibana.*|\.opendistro-ism-config` and those already managed, and
//! writes one managed-index document per index uuid. It does not set the index setting
//! `index.plugins.index_state_management.policy_id`, which 2.x still registers but no longer
//! reads: only the explain API tells which indices are managed.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::World;
use super::index_settings::{HIDDEN, IndexSettings};

/// ISM's configuration index (`IndexManagementPlugin.INDEX_MANAGEMENT_INDEX`).
pub(crate) const CONFIG_INDEX: &str = ".opendistro-ism-config";

/// A stored policy.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Policy {
    pub id: String,
    /// The `policy` object as stored (validated by the caller).
    pub body: Map<String, Value>,
    pub seq_no: u64,
    pub primary_term: u64,
    pub last_updated_ms: i64,
}

/// An index attached to a policy (its managed-index document, keyed by the index uuid).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Managed {
    pub index: String,
    pub uuid: String,
    pub policy_id: String,
}

/// What `POST _plugins/_ism/add` did: `updated_indices` and `failed_indices`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct AddOutcome {
    pub updated: usize,
    /// `(index_name, index_uuid, reason)`.
    pub failed: Vec<(String, String, String)>,
}

/// Why the add API failed as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AddError {
    /// No policy was ever stored: reading one fails on the missing config index.
    NoConfigIndex,
    /// `Could not find policy=<id>` (404 `status_exception`).
    NoPolicy(String),
}

#[derive(Debug, Default)]
pub(super) struct Ism {
    policies: Vec<Policy>,
    managed: Vec<Managed>,
    seq_no: u64,
}

impl Ism {
    /// The managed-index document of a deleted index goes with it (the coordinator sweeps it).
    pub(super) fn forget(&mut self, uuid: &str) {
        self.managed.retain(|managed| managed.uuid != uuid);
    }
}

/// `ManagedIndexSettings.DEFAULT_RESTRICTED_PATTERN`.
fn restricted(index: &str) -> bool {
    index == ".opendistro_security" || index.starts_with(".kibana") || index == CONFIG_INDEX
}

impl World {
    pub(crate) fn policy(&self, id: &str) -> Option<&Policy> {
        self.ism.policies.iter().find(|policy| policy.id == id)
    }

    /// Managed indices, in the order they were attached.
    pub(crate) fn managed_indices(&self) -> &[Managed] {
        &self.ism.managed
    }

    /// Stores a new policy (creating the hidden config index the first time). `Err` with the
    /// current version if the id is taken (the write is a create).
    pub(crate) fn put_policy(&mut self, id: &str, body: Map<String, Value>) -> Result<Policy, u64> {
        if let Some(existing) = self.policy(id) {
            return Err(existing.seq_no + 1);
        }
        if self.index(CONFIG_INDEX).is_none() {
            let settings = IndexSettings::from([(HIDDEN.to_owned(), "true".to_owned())]);
            // Cannot clash: checked just above.
            let _ = self.create_index(CONFIG_INDEX, &settings);
        }
        let policy = Policy {
            id: id.to_owned(),
            body,
            seq_no: self.ism.seq_no,
            primary_term: 1,
            last_updated_ms: self.wall_ms(self.now_ms),
        };
        self.ism.seq_no += 1;
        self.ism.policies.push(policy.clone());
        Ok(policy)
    }

    /// Attaches the indices at `positions` to a policy.
    pub(crate) fn ism_add(
        &mut self,
        positions: &[usize],
        policy_id: &str,
    ) -> Result<AddOutcome, AddError> {
        let targets: Vec<(String, String)> = positions
            .iter()
            .filter_map(|&position| self.indices().get(position))
            .map(|index| (index.name.clone(), index.uuid.clone()))
            .collect();
        if targets.is_empty() {
            return Ok(AddOutcome::default());
        }
        if self.index(CONFIG_INDEX).is_none() {
            return Err(AddError::NoConfigIndex);
        }
        if self.policy(policy_id).is_none() {
            return Err(AddError::NoPolicy(policy_id.to_owned()));
        }
        let mut outcome = AddOutcome::default();
        let (refused, allowed): (Vec<_>, Vec<_>) =
            targets.into_iter().partition(|(name, _)| restricted(name));
        for (name, uuid) in refused {
            let reason = "Matches restricted index pattern defined in the cluster setting";
            outcome.failed.push((name, uuid, reason.to_owned()));
        }
        let mut managed: HashSet<String> = self
            .ism
            .managed
            .iter()
            .map(|managed| managed.uuid.clone())
            .collect();
        for (name, uuid) in allowed {
            if !managed.insert(uuid.clone()) {
                let reason = "This index already has a policy, use the update policy API to update index policies";
                outcome.failed.push((name, uuid, reason.to_owned()));
            } else {
                self.ism.managed.push(Managed {
                    index: name,
                    uuid,
                    policy_id: policy_id.to_owned(),
                });
                outcome.updated += 1;
            }
        }
        Ok(outcome)
    }
}
