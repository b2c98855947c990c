//! Plans: the ordered steps a run will take, typed by the target they act on, and the digest
//! that binds an approval to them.

mod cloud;
mod cluster;
mod digest;
mod hosts;
mod step;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::consent::Consent;

pub use cloud::{CloudDestructive, CloudSafe, CloudWait};
pub use cluster::{ClusterDestructive, ClusterSafe, ClusterWait, MAX_DELETE_PATH};
pub use digest::{DigestPrefix, PlanDigest};
pub use hosts::{HostCommand, HostDestructive, HostSafe, HostWait, OutputWait};
pub use step::{
    Action, CloudStep, ClusterStep, HostStep, Kind, OnCloud, OnCluster, OnHosts, Part, StepRef,
    Steps,
};

use crate::index::{IndexName, PlannedIndex};
use crate::name::{CloudName, ClusterName};
use crate::openstack::ids::ConsumerId;
use crate::request::ProcedureRequest;
use crate::runbook::RunbookRequest;
use crate::target::Target;

/// What a run will do, computed before it starts and shown to the operators. Its steps are of
/// its request's kind of target: [`Plan::new`] and the decoder check that once, so nothing that
/// reads a plan meets a step that does not belong in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    request: ProcedureRequest,
    targeted: Targeted,
    /// Facts the plan was computed from that an operator should see (server version, flush choice).
    notes: Vec<String>,
    /// Who must agree before its first step, as the operators' policy said for its procedure.
    /// A destructive step or a runbook's gate asks an approver whatever it says.
    consent: Consent,
}

/// A plan's steps with the target they act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Targeted {
    Cluster {
        cluster: ClusterName,
        steps: Vec<Action<OnCluster>>,
    },
    Cloud {
        cloud: CloudName,
        steps: Vec<Action<OnCloud>>,
    },
    /// A runbook's steps name their hosts one by one.
    Hosts { steps: Vec<Action<OnHosts>> },
}

/// Steps planned for another kind of target than the request's: a planner's mistake.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("internal error: {steps} steps were planned for {target}; nothing was done")]
pub struct Misfit {
    steps: &'static str,
    target: Target,
}

impl Plan {
    /// The plan of `request`: `steps` must be for its kind of target.
    pub fn new(
        request: ProcedureRequest,
        steps: impl Into<Steps>,
        notes: Vec<String>,
    ) -> Result<Self, Misfit> {
        let targeted = match (request.target(), steps.into()) {
            (Target::Cluster(cluster), Steps::Cluster(steps)) => {
                Targeted::Cluster { cluster, steps }
            }
            (Target::Cloud(cloud), Steps::Cloud(steps)) => Targeted::Cloud { cloud, steps },
            (Target::Hosts(_), Steps::Hosts(steps)) => Targeted::Hosts { steps },
            (target, steps) => {
                return Err(Misfit {
                    steps: steps.kind(),
                    target,
                });
            }
        };
        Ok(Self {
            request,
            targeted,
            notes,
            consent: Consent::None,
        })
    }

    /// A runbook's plan: its steps are host steps whatever they do.
    pub fn runbook(
        request: RunbookRequest,
        steps: Vec<Action<OnHosts>>,
        notes: Vec<String>,
    ) -> Self {
        Self {
            request: ProcedureRequest::Runbook(request),
            targeted: Targeted::Hosts { steps },
            notes,
            consent: Consent::None,
        }
    }

    pub fn request(&self) -> &ProcedureRequest {
        &self.request
    }

    pub fn targeted(&self) -> &Targeted {
        &self.targeted
    }

    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The plan under the operators' policy for its procedure (see [`Consent`]).
    pub fn under(mut self, consent: Consent) -> Self {
        self.consent = consent;
        self
    }

    /// Who must agree before the first step: an approver when a step is destructive or the
    /// policy says so (a runbook: at its gate), else the policy's word.
    pub fn consent(&self) -> Consent {
        if self.needs_approval() {
            Consent::SecondPerson
        } else {
            self.consent
        }
    }

    /// True when the requester must confirm the plan before its first step.
    pub fn needs_confirmation(&self) -> bool {
        self.consent() == Consent::Confirm
    }

    /// True when a run of the plan waits before its first step: for an approver, or for its
    /// requester's confirmation.
    pub fn asks_before_start(&self) -> bool {
        self.approval_at() == Some(0) || self.needs_confirmation()
    }

    /// Puts `note` before the others: what the operators should read first about the plan.
    pub fn note_first(&mut self, note: String) {
        self.notes.insert(0, note);
    }

    /// The digest of what the plan will do: its request (the rules it was made by) and its
    /// steps, canonically encoded. Any change to them changes it, so an approval given for one
    /// plan never carries over to another. The notes are left out: they describe the cluster
    /// as it was seen (`selected 11 of 40 indices`), and a new index the plan does not touch
    /// must not send a booked prune back for approval.
    pub fn digest(&self) -> PlanDigest {
        PlanDigest::of(&Digested {
            request: &self.request,
            steps: &self.targeted,
            consent: self.consent,
        })
    }

    pub fn len(&self) -> usize {
        match &self.targeted {
            Targeted::Cluster { steps, .. } => steps.len(),
            Targeted::Cloud { steps, .. } => steps.len(),
            Targeted::Hosts { steps } => steps.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Step `index`, whatever its kind.
    pub fn step(&self, index: usize) -> Option<StepRef<'_>> {
        match &self.targeted {
            Targeted::Cluster { steps, .. } => steps.get(index).map(StepRef::Cluster),
            Targeted::Cloud { steps, .. } => steps.get(index).map(StepRef::Cloud),
            Targeted::Hosts { steps } => steps.get(index).map(StepRef::Hosts),
        }
    }

    /// Every step in order, whatever its kind.
    pub fn steps(&self) -> impl Iterator<Item = StepRef<'_>> {
        (0..self.len()).filter_map(|index| self.step(index))
    }

    /// The steps of a search cluster's plan; none in another kind of plan.
    pub fn cluster_steps(&self) -> &[ClusterStep] {
        match &self.targeted {
            Targeted::Cluster { steps, .. } => steps,
            Targeted::Cloud { .. } | Targeted::Hosts { .. } => &[],
        }
    }

    /// The steps of a cloud's plan; none in another kind of plan.
    pub fn cloud_steps(&self) -> &[CloudStep] {
        match &self.targeted {
            Targeted::Cloud { steps, .. } => steps,
            Targeted::Cluster { .. } | Targeted::Hosts { .. } => &[],
        }
    }

    /// The steps of a runbook's plan; none in another kind of plan.
    pub fn host_steps(&self) -> &[HostStep] {
        match &self.targeted {
            Targeted::Hosts { steps } => steps,
            Targeted::Cluster { .. } | Targeted::Cloud { .. } => &[],
        }
    }

    /// True when the run needs a second operator's approval at some point.
    pub fn needs_approval(&self) -> bool {
        self.approval_at().is_some()
    }

    /// Where the run stops for approval: at a runbook's approval gate, so that the approver
    /// sees what the steps before it found; else, when any step is destructive, before the
    /// first step.
    pub fn approval_at(&self) -> Option<usize> {
        let asked = self.consent == Consent::SecondPerson;
        self.steps()
            .position(StepRef::is_gate)
            .or_else(|| (asked || self.steps().any(StepRef::is_destructive)).then_some(0))
    }

    /// Every index the plan deletes, in plan order.
    pub fn deleted_indices(&self) -> impl Iterator<Item = &IndexName> {
        self.deleted().map(|index| &index.name)
    }

    /// Every index the plan deletes, bound to its incarnation, in plan order.
    pub fn deleted(&self) -> impl Iterator<Item = &PlannedIndex> {
        self.index_deletions().flat_map(|(_, indices)| indices)
    }

    /// Each step that deletes indices (a chunk): its position in the plan and its indices.
    pub fn index_deletions(&self) -> impl Iterator<Item = (usize, &[PlannedIndex])> {
        self.cluster_steps()
            .iter()
            .enumerate()
            .filter_map(|(i, step)| match step {
                Action::Destructive(ClusterDestructive::DeleteIndices { indices }) => {
                    Some((i, indices.as_slice()))
                }
                Action::Destructive(
                    ClusterDestructive::RetireNode { .. } | ClusterDestructive::UnlistNode { .. },
                )
                | Action::Safe(_)
                | Action::Wait(_)
                | Action::Gate { .. } => None,
            })
    }

    /// Every consumer whose allocations the plan deletes, in plan order.
    pub fn deleted_consumers(&self) -> impl Iterator<Item = ConsumerId> + '_ {
        self.cloud_steps().iter().filter_map(|step| match step {
            Action::Destructive(CloudDestructive::DeleteAllocation { consumer, .. }) => {
                Some(*consumer)
            }
            Action::Destructive(CloudDestructive::DeleteComputeService { .. })
            | Action::Safe(_)
            | Action::Wait(_)
            | Action::Gate { .. } => None,
        })
    }
}

/// Stored and digested as `{"request": …, "steps": […], "notes": […]}`: the request says which
/// kind of step the list holds.
#[derive(Serialize)]
struct Encoded<'p> {
    request: &'p ProcedureRequest,
    steps: &'p Targeted,
    notes: &'p [String],
    /// Absent in plans made before the policy, which ran at once unless destructive.
    #[serde(skip_serializing_if = "Consent::is_none")]
    consent: Consent,
}

impl Serialize for Plan {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Encoded {
            request: &self.request,
            steps: &self.targeted,
            notes: &self.notes,
            consent: self.consent,
        }
        .serialize(serializer)
    }
}

/// What the digest covers.
#[derive(Debug, Serialize)]
struct Digested<'p> {
    request: &'p ProcedureRequest,
    steps: &'p Targeted,
    /// Left out when `none`, so that a plan made before the policy keeps its digest.
    #[serde(skip_serializing_if = "Consent::is_none")]
    consent: Consent,
}

/// As the plain list of its steps: the target is the request's, stored beside it.
impl Serialize for Targeted {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Cluster { steps, .. } => steps.serialize(serializer),
            Self::Cloud { steps, .. } => steps.serialize(serializer),
            Self::Hosts { steps } => steps.serialize(serializer),
        }
    }
}

/// A stored plan before its steps are read: they are read as the request's kind, so a step of
/// another kind (a cloud's in a cluster's plan) is refused as damage when the record is decoded.
/// The store keeps JSON, whose raw text the steps wait in.
#[derive(Deserialize)]
struct Decoded {
    request: ProcedureRequest,
    steps: Box<serde_json::value::RawValue>,
    notes: Vec<String>,
    #[serde(default)]
    consent: Consent,
}

impl<'de> Deserialize<'de> for Plan {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Decoded {
            request,
            steps,
            notes,
            consent,
        } = Decoded::deserialize(deserializer)?;
        let steps = steps.get();
        let targeted = match request.target() {
            Target::Cluster(cluster) => Targeted::Cluster {
                cluster,
                steps: read(steps, "a search cluster's")?,
            },
            Target::Cloud(cloud) => Targeted::Cloud {
                cloud,
                steps: read(steps, "a cloud's")?,
            },
            Target::Hosts(_) => Targeted::Hosts {
                steps: read(steps, "a runbook's")?,
            },
        };
        Ok(Self {
            request,
            targeted,
            notes,
            consent,
        })
    }
}

/// The steps of one kind, from their JSON text.
fn read<K: Kind, E: serde::de::Error>(steps: &str, kind: &str) -> Result<Vec<Action<K>>, E> {
    serde_json::from_str(steps)
        .map_err(|error| E::custom(format!("its steps are not all {kind} steps: {error}")))
}

#[cfg(test)]
mod tests;
