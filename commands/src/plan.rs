//! Plans: the ordered steps a run will take, and the digest that binds an approval to them.

use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::cluster::{FlushMode, HealthStatus};
use crate::index::{IndexName, PlannedIndex};
use crate::name::{HostName, NodeAddr};
use crate::openstack::ids::{ConsumerId, ImageId, ProviderId, ServiceId};
use crate::openstack::image::PropertyChange;
use crate::openstack::placement::Resources;
use crate::request::ProcedureRequest;
use crate::runbook::Word;

/// What a run will do, computed before it starts and shown to the operators.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub request: ProcedureRequest,
    pub steps: Vec<Action>,
    /// Facts the plan was computed from that an operator should see (server version, flush choice).
    pub notes: Vec<String>,
}

impl Plan {
    /// The digest of the canonical encoding: any change to the steps changes it, so an approval
    /// given for one plan can never carry over to another.
    pub fn digest(&self) -> PlanDigest {
        PlanDigest::of(self)
    }

    /// True when the run needs a second operator's approval at some point.
    pub fn needs_approval(&self) -> bool {
        self.approval_at().is_some()
    }

    /// Where the run stops for approval: at a runbook's approval gate, so that the approver
    /// sees what the steps before it found; else, when any step is destructive, before the
    /// first step.
    pub fn approval_at(&self) -> Option<usize> {
        self.steps
            .iter()
            .position(|a| matches!(a, Action::Gate { .. }))
            .or_else(|| {
                self.steps
                    .iter()
                    .any(|a| matches!(a, Action::Destructive(_)))
                    .then_some(0)
            })
    }
}

impl Plan {
    /// The first step that belongs to another kind of target than the request's (a cloud's
    /// step in a cluster's plan): its number and what it is. Planners never make one; a record
    /// holding one is damage (see `Run::inconsistency`).
    pub fn misfit(&self) -> Option<(usize, &'static str)> {
        let target = Fits::of(&self.request.target());
        self.steps.iter().enumerate().find_map(|(index, step)| {
            let fits = Fits::step(step)?;
            (fits != target).then_some((index + 1, fits.name()))
        })
    }
}

/// The kinds of target, for [`Plan::misfit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fits {
    Cluster,
    Cloud,
    Hosts,
}

impl Fits {
    fn of(target: &crate::target::Target) -> Self {
        match target {
            crate::target::Target::Cluster(_) => Self::Cluster,
            crate::target::Target::Cloud(_) => Self::Cloud,
            crate::target::Target::Hosts(_) => Self::Hosts,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Cluster => "a search cluster's step",
            Self::Cloud => "a cloud's step",
            Self::Hosts => "a runbook's step",
        }
    }

    /// The kind of target a step acts on; `None` for a gate, which every plan may hold.
    fn step(step: &Action) -> Option<Self> {
        Some(match step {
            Action::Safe(safe) => match safe {
                SafeAction::DisableAllocation
                | SafeAction::EnableAllocation
                | SafeAction::Flush { .. }
                | SafeAction::StopNode { .. }
                | SafeAction::StartNode { .. }
                | SafeAction::Report
                | SafeAction::VerifyDeleted
                | SafeAction::ExcludeNode { .. }
                | SafeAction::ClearExclusion { .. }
                | SafeAction::Redeploy { .. } => Self::Cluster,
                SafeAction::VerifyReleased { .. }
                | SafeAction::RestartCompute { .. }
                | SafeAction::SetImageProperties { .. } => Self::Cloud,
                SafeAction::HostCommand(_) | SafeAction::Confirm { .. } => Self::Hosts,
            },
            Action::Wait(wait) => match wait {
                Wait::NodeLeft { .. }
                | Wait::NodeJoined { .. }
                | Wait::ClusterFormed { .. }
                | Wait::NodeDrained { .. } => Self::Cluster,
                Wait::ComputeUp { .. } => Self::Cloud,
                Wait::HostOutput(_) => Self::Hosts,
            },
            Action::Destructive(destructive) => match destructive {
                DestructiveAction::DeleteIndices { .. }
                | DestructiveAction::RetireNode { .. }
                | DestructiveAction::UnlistNode { .. } => Self::Cluster,
                DestructiveAction::DeleteAllocation { .. }
                | DestructiveAction::DeleteComputeService { .. } => Self::Cloud,
                DestructiveAction::HostCommand(_) => Self::Hosts,
            },
            Action::Gate { .. } => return None,
        })
    }
}

/// Hex SHA-256 of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PlanDigest(String);

impl PlanDigest {
    /// Length of the prefix shown in chat and carried in button ids.
    pub const SHORT: usize = 12;

    /// The digest of `value`'s canonical (JSON) encoding.
    pub(crate) fn of(value: &(impl Serialize + fmt::Debug)) -> Self {
        // Serializing plain data (strings, numbers, enums) into a Vec cannot fail; fall back to
        // the Debug text rather than panic, which is just as canonical.
        let canonical = serde_json::to_vec(value).unwrap_or_else(|_| format!("{value:?}").into());
        let hash = Sha256::digest(&canonical);
        PlanDigest(hash.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The whole hex digest, for the audit log.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The prefix operators see next to a plan.
    pub fn short(&self) -> &str {
        self.0.get(..Self::SHORT).unwrap_or(&self.0)
    }

    /// True when `shown` is this digest or a prefix of it at least [`Self::SHORT`] long.
    pub fn matches(&self, shown: &str) -> bool {
        shown.len() >= Self::SHORT && self.0.starts_with(shown)
    }
}

/// A digest as an approver types it: the 12 hex digits shown with a plan, or more of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigestPrefix(String);

impl DigestPrefix {
    pub fn parse(value: &str) -> Result<Self, crate::name::NameError> {
        let value = value.trim().to_ascii_lowercase();
        if (PlanDigest::SHORT..=64).contains(&value.len())
            && value.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Ok(Self(value));
        }
        Err(crate::name::NameError::NotDigest {
            value: crate::echo::visible(&value, 64),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PlanDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short())
    }
}

/// One step. The three kinds are types, so that a destructive call cannot be written without
/// going through the approval check (see [`crate::approval::Approved`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A side effect that needs no approval.
    Safe(SafeAction),
    /// Observe until a condition holds or the wait times out; no side effect.
    Wait(Wait),
    /// A side effect that destroys something; runs only with an `Approved` proof.
    Destructive(DestructiveAction),
    /// An approval gate: the run stops here until a second operator approves; every step after
    /// it is destructive (a runbook's steps after its gate, a procedure's disruptive restarts).
    Gate { reason: String },
}

/// Side effects that need no approval: idempotent and reversible, or a runbook's steps before its
/// approval gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SafeAction {
    /// Persistent `cluster.routing.allocation.enable` = `none`.
    DisableAllocation,
    /// Persistent `cluster.routing.allocation.enable` = null (back to the default, `all`).
    EnableAllocation,
    /// Flush before the nodes stop, so that recovery after the start is fast.
    Flush { mode: FlushMode },
    /// Stop the search container on one node (node control).
    StopNode { node: NodeAddr },
    /// Start the search container on one node (node control).
    StartNode { node: NodeAddr },
    /// Read `_cat/health`, `_cat/recovery` and `_cat/nodes` and post a summary.
    Report,
    /// List the indices once and check that none of those the plan deletes remains.
    VerifyDeleted,
    /// Transient `cluster.routing.allocation.exclude._ip` = the node: its shards move away.
    ExcludeNode { node: NodeAddr },
    /// Transient `cluster.routing.allocation.exclude._ip` = "": undoes [`Self::ExcludeNode`],
    /// also when the run is cancelled or fails.
    ClearExclusion { node: NodeAddr },
    /// Redeploy the search service with a rolling serial of 1, once `removed` is out of the
    /// deployment inventory (node control).
    Redeploy { removed: NodeAddr },
    /// List the provider's allocations again and check that none the plan deleted remains.
    VerifyReleased { provider: ProviderId },
    /// Restart the compute container on a hypervisor, so that it chooses its RPC version cap
    /// again (host control).
    RestartCompute { host: HostName },
    /// Set image properties with one JSON patch; setting a value again changes nothing.
    SetImageProperties {
        image: ImageId,
        name: String,
        changes: Vec<PropertyChange>,
    },
    /// A runbook's command on a host, before its approval gate (if it has one).
    HostCommand(HostCommand),
    /// A runbook's manual step: an operator does it and confirms with `/run done`.
    Confirm { prompt: Word },
}

/// A command a runbook runs on a host, through host access (ssh, kolla tooling, or a person).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCommand {
    pub host: HostName,
    /// The program and its arguments; never given to a shell.
    pub argv: Vec<Word>,
    /// Text written to the program's standard input (e.g. a configuration file for `tee`).
    pub stdin: Option<Word>,
    pub timeout_secs: u64,
    /// Exit codes that count as success.
    pub exit_codes: Vec<i32>,
    /// A regular expression the output must match; its named groups are captured for the
    /// steps after it.
    pub output: Option<String>,
    /// Running it twice does no harm, so one interrupted by a restart is run again; otherwise
    /// an operator is asked whether it took effect.
    pub idempotent: bool,
    /// The output is posted in chat (shortened), not only kept in the run log.
    pub post_output: bool,
    /// The runbook's words for the step, shown before the command line.
    pub title: Option<String>,
}

/// A runbook's wait: run a command every `interval_secs` until its output matches `until`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostWait {
    pub host: HostName,
    pub argv: Vec<Word>,
    pub until: String,
    pub interval_secs: u64,
    pub timeout_secs: u64,
    pub title: Option<String>,
}

impl SafeAction {
    /// True when this action undoes `other`, so that it must run even when the run ends early:
    /// a change like an allocation exclusion must not outlive the run that made it.
    pub fn undoes(&self, other: &Action) -> bool {
        match (self, other) {
            (Self::ClearExclusion { node }, Action::Safe(Self::ExcludeNode { node: excluded })) => {
                node == excluded
            }
            _ => false,
        }
    }
}

/// Conditions a run waits for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Wait {
    /// The node is no longer listed in `_cat/nodes` (or the cluster lost its quorum, which is
    /// expected once a majority of nodes is stopped).
    NodeLeft { node: NodeAddr },
    /// The node is listed in `_cat/nodes`; while the cluster has no elected master this cannot be
    /// seen yet, and the wait moves on: `ClusterFormed` checks every node afterwards.
    NodeJoined { node: NodeAddr },
    /// All `nodes` have joined and the health status is at least `status`.
    ClusterFormed { nodes: usize, status: HealthStatus },
    /// No shard is relocating and the node holds no shard copy any more.
    NodeDrained { node: NodeAddr },
    /// A runbook's command on a host prints what `until` matches.
    HostOutput(HostWait),
    /// The host's `nova-compute` reports up, with an `updated_at` after the restart step before
    /// this wait (a report from before the restart does not count).
    ComputeUp { host: HostName },
}

/// Destructive side effects: each runs only with an `Approved` proof for the run's digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DestructiveAction {
    /// `DELETE /a,b,c` of these exact indices: one chunk, its path under [`MAX_DELETE_PATH`].
    /// Right before, the indices are listed again and only those still present are deleted.
    DeleteIndices { indices: Vec<PlannedIndex> },
    /// Stop the search container of a drained node that is leaving the cluster for good.
    RetireNode { node: NodeAddr },
    /// Remove the node from the search group of the deployment inventory (node control).
    UnlistNode { node: NodeAddr },
    /// `DELETE /allocations/{consumer}` of an instance the compute API does not know. Right
    /// before, the instance is looked up again: one that exists is never deleted.
    DeleteAllocation {
        consumer: ConsumerId,
        provider: ProviderId,
        resources: Resources,
    },
    /// `DELETE /os-services/{id}` of a disabled compute service that is down. Right before, the
    /// services are listed again: one that came back up or was enabled is kept.
    DeleteComputeService { id: ServiceId, host: HostName },
    /// A runbook's command on a host after its approval gate.
    HostCommand(HostCommand),
}

/// Longest `DELETE` path, in bytes: well under the 4 KB request-line limit of common proxies.
pub const MAX_DELETE_PATH: usize = 3000;

impl Plan {
    /// Every index the plan deletes, in plan order.
    pub fn deleted_indices(&self) -> impl Iterator<Item = &IndexName> {
        self.deleted().map(|index| &index.name)
    }

    /// Every index the plan deletes, bound to its incarnation, in plan order.
    pub fn deleted(&self) -> impl Iterator<Item = &PlannedIndex> {
        self.steps.iter().flat_map(|step| match step {
            Action::Destructive(DestructiveAction::DeleteIndices { indices }) => indices.as_slice(),
            Action::Destructive(
                DestructiveAction::RetireNode { .. }
                | DestructiveAction::UnlistNode { .. }
                | DestructiveAction::DeleteAllocation { .. }
                | DestructiveAction::DeleteComputeService { .. }
                | DestructiveAction::HostCommand(_),
            )
            | Action::Safe(_)
            | Action::Wait(_)
            | Action::Gate { .. } => &[],
        })
    }
}

impl Plan {
    /// Every consumer whose allocations the plan deletes, in plan order.
    pub fn deleted_consumers(&self) -> impl Iterator<Item = ConsumerId> + '_ {
        self.steps.iter().filter_map(|step| match step {
            Action::Destructive(DestructiveAction::DeleteAllocation { consumer, .. }) => {
                Some(*consumer)
            }
            _ => None,
        })
    }
}
