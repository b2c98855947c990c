//! A plan's steps, typed by what they act on. A search cluster's plan holds cluster steps, a
//! cloud's plan cloud steps, a runbook's plan host steps: a step of one kind of target cannot
//! be put in another's plan, so no code that runs or shows a step has a case for one that does
//! not belong.
//!
//! ```compile_fail,E0308
//! use opsbot_commands::openstack::ids::{ConsumerId, ProviderId};
//! use opsbot_commands::plan::{Action, CloudDestructive, Steps};
//! # fn wrong(consumer: ConsumerId, provider: ProviderId) -> Steps {
//! // A cloud's allocation delete in a search cluster's plan:
//! Steps::Cluster(vec![Action::Destructive(CloudDestructive::DeleteAllocation {
//!     consumer,
//!     provider,
//!     resources: Default::default(),
//! })])
//! # }
//! ```

use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::cloud::{CloudDestructive, CloudSafe, CloudWait};
use super::cluster::{ClusterDestructive, ClusterSafe, ClusterWait};
use super::hosts::{HostDestructive, HostSafe, HostWait};

/// What one kind of target's steps are: a sealed set of three ([`OnCluster`], [`OnCloud`],
/// [`OnHosts`]), each naming its own safe actions, waits and destructive actions.
pub trait Kind: fmt::Debug + Clone + PartialEq + Eq + sealed::Sealed + 'static {
    /// Side effects that need no approval.
    type Safe: Part;
    /// Conditions a run waits for, with no side effect.
    type Wait: Part;
    /// Side effects that destroy something; each runs only with an approval proof.
    type Destructive: Part;

    /// True when `undo` undoes `change`, so that it must run even when the run ends early: a
    /// change like an allocation exclusion must not outlive the run that made it.
    fn undoes(undo: &Self::Safe, change: &Action<Self>) -> bool {
        let _ = (undo, change);
        false
    }
}

/// What the three parts of a step have in common: plain data, stored as JSON.
pub trait Part: fmt::Debug + Clone + PartialEq + Eq + Serialize + DeserializeOwned {}

impl<T: fmt::Debug + Clone + PartialEq + Eq + Serialize + DeserializeOwned> Part for T {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::OnCluster {}
    impl Sealed for super::OnCloud {}
    impl Sealed for super::OnHosts {}
}

/// The steps of a search cluster's plan. A marker: no value of it exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnCluster {}

/// The steps of a cloud's plan. A marker: no value of it exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnCloud {}

/// The steps of a runbook's plan, on the hosts of its inventory. A marker: no value of it exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnHosts {}

impl Kind for OnCluster {
    type Safe = ClusterSafe;
    type Wait = ClusterWait;
    type Destructive = ClusterDestructive;

    fn undoes(undo: &ClusterSafe, change: &Action<Self>) -> bool {
        match (undo, change) {
            (
                ClusterSafe::ClearExclusion { node },
                Action::Safe(ClusterSafe::ExcludeNode { node: excluded }),
            ) => node == excluded,
            _ => false,
        }
    }
}

impl Kind for OnCloud {
    type Safe = CloudSafe;
    type Wait = CloudWait;
    type Destructive = CloudDestructive;
}

impl Kind for OnHosts {
    type Safe = HostSafe;
    type Wait = HostWait;
    type Destructive = HostDestructive;
}

/// One step of a plan of kind `K`. The three kinds of effect are types, so that a destructive
/// call cannot be written without going through the approval check (see
/// [`crate::approval::Approved`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", bound = "")]
pub enum Action<K: Kind> {
    /// A side effect that needs no approval.
    Safe(K::Safe),
    /// Observe until a condition holds or the wait times out; no side effect.
    Wait(K::Wait),
    /// A side effect that destroys something; runs only with an `Approved` proof.
    Destructive(K::Destructive),
    /// An approval gate: the run stops here until a second operator approves; every step after
    /// it is destructive (a runbook's steps after its gate, a procedure's disruptive restarts).
    Gate { reason: String },
}

/// A search cluster's step; the alias names the kind where a step is made, which its parts
/// cannot tell the compiler.
pub type ClusterStep = Action<OnCluster>;
/// A cloud's step.
pub type CloudStep = Action<OnCloud>;
/// A runbook's step.
pub type HostStep = Action<OnHosts>;

impl<K: Kind> Action<K> {
    pub fn is_destructive(&self) -> bool {
        matches!(self, Self::Destructive(_))
    }

    pub fn is_gate(&self) -> bool {
        matches!(self, Self::Gate { .. })
    }

    pub fn is_wait(&self) -> bool {
        matches!(self, Self::Wait(_))
    }
}

/// A plan's steps, as a planner makes them; [`super::Plan::new`] pairs them with the request's
/// target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Steps {
    Cluster(Vec<Action<OnCluster>>),
    Cloud(Vec<Action<OnCloud>>),
    Hosts(Vec<Action<OnHosts>>),
}

impl Steps {
    /// The kind of target the steps act on, in words for an error.
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Self::Cluster(_) => "a search cluster's",
            Self::Cloud(_) => "a cloud's",
            Self::Hosts(_) => "a runbook's",
        }
    }
}

impl From<Vec<Action<OnCluster>>> for Steps {
    fn from(steps: Vec<Action<OnCluster>>) -> Self {
        Self::Cluster(steps)
    }
}

impl From<Vec<Action<OnCloud>>> for Steps {
    fn from(steps: Vec<Action<OnCloud>>) -> Self {
        Self::Cloud(steps)
    }
}

impl From<Vec<Action<OnHosts>>> for Steps {
    fn from(steps: Vec<Action<OnHosts>>) -> Self {
        Self::Hosts(steps)
    }
}

/// One step of a plan of any kind, for what every kind shares: its words, whether it is
/// destructive or a gate. Serialized as the step itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum StepRef<'p> {
    Cluster(&'p Action<OnCluster>),
    Cloud(&'p Action<OnCloud>),
    Hosts(&'p Action<OnHosts>),
}

impl StepRef<'_> {
    pub fn is_destructive(self) -> bool {
        match self {
            Self::Cluster(action) => action.is_destructive(),
            Self::Cloud(action) => action.is_destructive(),
            Self::Hosts(action) => action.is_destructive(),
        }
    }

    pub fn is_gate(self) -> bool {
        match self {
            Self::Cluster(action) => action.is_gate(),
            Self::Cloud(action) => action.is_gate(),
            Self::Hosts(action) => action.is_gate(),
        }
    }

    pub fn is_wait(self) -> bool {
        match self {
            Self::Cluster(action) => action.is_wait(),
            Self::Cloud(action) => action.is_wait(),
            Self::Hosts(action) => action.is_wait(),
        }
    }
}
