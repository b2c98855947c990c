//! The proof a destructive call requires, bound to one run, its digest and one destructive step:
//! what the call acts on (the indices and their UUIDs, the consumer, the service, the host
//! command) is read from the proof, so a proof for one run or step cannot authorize another.
//! The backends' destructive calls take these values, never a bare name or id.
//!
//! A proof cannot be made but by [`Approved::verify`]:
//!
//! ```compile_fail,E0451
//! # use opsbot_commands::approval::Approved;
//! # use opsbot_commands::plan::OnCluster;
//! # fn forge<'r>(run: &'r opsbot_commands::run::Run) -> Approved<'r, OnCluster> {
//! Approved { run, step: 0, action: todo!() }
//! # }
//! ```
//!
//! and what a call deletes cannot be written but by narrowing the proof's own:
//!
//! ```compile_fail,E0451
//! # use opsbot_commands::approval::ApprovedIndices;
//! # use opsbot_commands::index::PlannedIndex;
//! # fn forge(names: &[PlannedIndex]) -> ApprovedIndices<'_> {
//! ApprovedIndices { run: todo!(), indices: names.iter().collect() }
//! # }
//! ```
//!
//! A proof borrows its run: it cannot outlive it, nor be kept for a later, re-planned record.
//!
//! ```compile_fail,E0515
//! # use opsbot_commands::approval::Approved;
//! # use opsbot_commands::run::Run;
//! # fn keep(run: Run) -> Approved<'static> {
//! Approved::verify(&run, 0).unwrap()
//! # }
//! ```

use crate::index::PlannedIndex;
use crate::name::{HostName, NodeAddr, RunId};
use crate::openstack::ids::{ConsumerId, ServiceId};
use crate::openstack::placement::Resources;
use crate::plan::{
    Action, CloudDestructive, ClusterDestructive, HostCommand, HostDestructive, Kind, OnCloud,
    OnCluster, OnHosts, Plan, PlanDigest,
};
use crate::run::Run;

use super::{ApprovalRefusal, holds};

/// Proof that destructive step `step` of one run may act now: the run's approval holds for its
/// current plan ([`holds`]), and the step is a destructive step of kind `K`.
#[derive(Debug, Clone, Copy)]
pub struct Approved<'r, K: Approvable> {
    run: &'r Run,
    step: usize,
    action: &'r K::Destructive,
}

impl<'r, K: Approvable> Approved<'r, K> {
    /// Re-checks the run's stored approval (also after a restart) for its step `step`.
    pub fn verify(run: &'r Run, step: usize) -> Result<Self, ApprovalRefusal> {
        holds(run)?;
        let Some(Action::Destructive(action)) = K::steps(run.plan()).get(step) else {
            return Err(ApprovalRefusal::NotDestructive { run: run.id, step });
        };
        Ok(Self { run, step, action })
    }

    pub fn run(&self) -> RunId {
        self.run.id
    }

    pub fn digest(&self) -> &'r PlanDigest {
        &self.run.digest
    }

    /// The step's index in the plan.
    pub fn step(&self) -> usize {
        self.step
    }

    /// What the step acts on, read from the approved plan: the only values the destructive
    /// calls take.
    pub fn act(&self) -> K::Act<'r> {
        K::act(self.run.id, self.action)
    }
}

/// A kind of target whose destructive steps an approval proof carries out.
pub trait Approvable: Kind {
    /// What an approved destructive step acts on, as the calls that carry it out take it.
    type Act<'r>;

    /// The plan's steps; none when they are of another kind.
    fn steps(plan: &Plan) -> &[Action<Self>];

    fn act(run: RunId, action: &Self::Destructive) -> Self::Act<'_>;
}

impl Approvable for OnCluster {
    type Act<'r> = ClusterAct<'r>;

    fn steps(plan: &Plan) -> &[Action<Self>] {
        plan.cluster_steps()
    }

    fn act(run: RunId, action: &ClusterDestructive) -> ClusterAct<'_> {
        match action {
            ClusterDestructive::DeleteIndices { indices } => {
                ClusterAct::DeleteIndices(ApprovedIndices {
                    run,
                    indices: indices.iter().collect(),
                })
            }
            ClusterDestructive::RetireNode { node } => ClusterAct::RetireNode(*node),
            ClusterDestructive::UnlistNode { node } => ClusterAct::UnlistNode(*node),
        }
    }
}

impl Approvable for OnCloud {
    type Act<'r> = CloudAct<'r>;

    fn steps(plan: &Plan) -> &[Action<Self>] {
        plan.cloud_steps()
    }

    fn act(_run: RunId, action: &CloudDestructive) -> CloudAct<'_> {
        match action {
            CloudDestructive::DeleteAllocation {
                consumer,
                resources,
                ..
            } => CloudAct::DeleteAllocation {
                consumer: ApprovedConsumer(*consumer),
                resources,
            },
            CloudDestructive::DeleteComputeService { id, host } => CloudAct::DeleteComputeService {
                service: ApprovedService(*id),
                host,
            },
        }
    }
}

impl Approvable for OnHosts {
    type Act<'r> = ApprovedCommand<'r>;

    fn steps(plan: &Plan) -> &[Action<Self>] {
        plan.host_steps()
    }

    fn act(_run: RunId, action: &HostDestructive) -> ApprovedCommand<'_> {
        match action {
            HostDestructive::HostCommand(command) => ApprovedCommand(command),
        }
    }
}

/// An approved destructive step of a search cluster's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterAct<'r> {
    /// Delete these indices (or fewer of them: those still there as approved).
    DeleteIndices(ApprovedIndices<'r>),
    /// Stop the search container of this drained node for good.
    RetireNode(NodeAddr),
    /// Remove this node from the deployment inventory's search group.
    UnlistNode(NodeAddr),
}

/// An approved destructive step of a cloud's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloudAct<'r> {
    /// Delete every allocation of this consumer.
    DeleteAllocation {
        consumer: ApprovedConsumer,
        resources: &'r Resources,
    },
    /// Delete this compute service record.
    DeleteComputeService {
        service: ApprovedService,
        host: &'r HostName,
    },
}

/// Indices a deletion may name: a subset of one approved step's, never more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovedIndices<'r> {
    run: RunId,
    indices: Vec<&'r PlannedIndex>,
}

impl<'r> ApprovedIndices<'r> {
    /// The run whose approval these come from.
    pub fn run(&self) -> RunId {
        self.run
    }

    pub fn iter(&self) -> impl Iterator<Item = &'r PlannedIndex> + '_ {
        self.indices.iter().copied()
    }

    pub fn as_slice(&self) -> &[&'r PlannedIndex] {
        &self.indices
    }

    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// Fewer of them: those `keep` keeps.
    pub fn retain(&mut self, keep: impl Fn(&PlannedIndex) -> bool) {
        self.indices.retain(|index| keep(index));
    }
}

/// A runbook's command behind its approval gate, as approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovedCommand<'r>(&'r HostCommand);

impl<'r> ApprovedCommand<'r> {
    pub fn command(&self) -> &'r HostCommand {
        self.0
    }
}

/// A consumer whose allocations one approved step deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovedConsumer(ConsumerId);

impl ApprovedConsumer {
    pub fn id(&self) -> ConsumerId {
        self.0
    }
}

/// A compute service one approved step deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovedService(ServiceId);

impl ApprovedService {
    pub fn id(&self) -> ServiceId {
        self.0
    }
}
