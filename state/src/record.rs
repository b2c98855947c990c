//! How a run is kept: its plan once, in the `plans` tree (a plan never changes: it is what was
//! approved), and the rest in the `runs` tree, rewritten by every transition. A prune's plan
//! names thousands of indices; a transition rewrites a few hundred bytes. Plans read back are
//! shared from a small cache, so a run's task does not decode its plan at every step.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use opsbot_commands::approval::ApprovalGrant;
use opsbot_commands::name::RunId;
use opsbot_commands::people::PersonRef;
use opsbot_commands::plan::{Plan, PlanDigest};
use opsbot_commands::run::{CancelRequest, ChannelId, MessageId, Run, RunState, StepState};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// A run without its plan: what a transition writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunRecord {
    id: RunId,
    digest: PlanDigest,
    requester: PersonRef,
    channel: ChannelId,
    #[serde(with = "time::serde::rfc3339")]
    created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    finished_at: Option<OffsetDateTime>,
    state: RunState,
    steps: Vec<StepState>,
    approval: Option<ApprovalGrant>,
    cancel: Option<CancelRequest>,
    progress_message: Option<MessageId>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    captured: std::collections::BTreeMap<String, String>,
}

impl RunRecord {
    /// Every field but the plan; destructured whole, so that a field added to [`Run`] does not
    /// compile until it is kept here too.
    pub(crate) fn of(run: &Run) -> Self {
        let Run {
            id,
            plan: _,
            digest,
            requester,
            channel,
            created_at,
            finished_at,
            state,
            steps,
            approval,
            cancel,
            progress_message,
            captured,
        } = run;
        Self {
            id: *id,
            digest: digest.clone(),
            requester: requester.clone(),
            channel: channel.clone(),
            created_at: *created_at,
            finished_at: *finished_at,
            state: state.clone(),
            steps: steps.clone(),
            approval: approval.clone(),
            cancel: cancel.clone(),
            progress_message: progress_message.clone(),
            captured: captured.clone(),
        }
    }

    /// The run, with its plan.
    pub(crate) fn with(self, plan: Arc<Plan>) -> Run {
        let Self {
            id,
            digest,
            requester,
            channel,
            created_at,
            finished_at,
            state,
            steps,
            approval,
            cancel,
            progress_message,
            captured,
        } = self;
        Run {
            id,
            plan,
            digest,
            requester,
            channel,
            created_at,
            finished_at,
            state,
            steps,
            approval,
            cancel,
            progress_message,
            captured,
        }
    }

    pub(crate) fn id(&self) -> RunId {
        self.id
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.state.is_finished()
    }
}

/// Plans read lately, by run: the unfinished runs' plans are read at every step.
#[derive(Debug, Default)]
pub(crate) struct PlanCache {
    inner: Mutex<Cached>,
}

#[derive(Debug, Default)]
struct Cached {
    plans: HashMap<RunId, Arc<Plan>>,
    /// Oldest first, for eviction.
    order: VecDeque<RunId>,
}

impl PlanCache {
    /// Plans kept at most: far more than runs go on at once.
    const CAPACITY: usize = 256;

    pub(crate) fn get(&self, id: RunId) -> Option<Arc<Plan>> {
        let cached = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        cached.plans.get(&id).cloned()
    }

    pub(crate) fn put(&self, id: RunId, plan: Arc<Plan>) {
        let mut cached = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if cached.plans.insert(id, plan).is_none() {
            cached.order.push_back(id);
        }
        while cached.order.len() > Self::CAPACITY {
            if let Some(oldest) = cached.order.pop_front() {
                cached.plans.remove(&oldest);
            }
        }
    }
}
