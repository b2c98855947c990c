//! A run as the store keeps it, and the one way back from what is stored to a [`Run`]: checked,
//! as rust-lang/bors's decoder refuses an invalid row, so that no run task ever works from a
//! record that breaks a run's rules. (A finished run's finish time is checked by the phase's
//! own decoder.)

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::{CancelRequest, ChannelId, MessageId, Run, RunState, StepState};
use crate::approval::ApprovalGrant;
use crate::booking::Booking;
use crate::name::RunId;
use crate::people::PersonRef;
use crate::plan::{Plan, PlanDigest};
use crate::schedule::standing::Scheduled;

/// A run without its plan: what a transition rewrites (the plan is kept once, apart: a prune's
/// names thousands of indices). Unchecked; it becomes a [`Run`] only through [`Run::joined`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub id: RunId,
    pub digest: PlanDigest,
    pub requester: PersonRef,
    pub channel: ChannelId,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Stored as the two fields `finished_at` and `state` of earlier versions.
    #[serde(flatten)]
    pub state: RunState,
    pub steps: Vec<StepState>,
    pub approval: Option<ApprovalGrant>,
    pub cancel: Option<CancelRequest>,
    pub progress_message: Option<MessageId>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub captured: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<Scheduled>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booking: Option<Booking>,
}

/// What makes a stored run unfit to be one, in words for the store's damage report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Inconsistent(pub String);

/// A whole run as it is encoded (its record and its plan side by side): what a run decodes
/// from, through [`Run::joined`].
#[derive(Deserialize)]
pub(super) struct Whole {
    #[serde(flatten)]
    record: Record,
    plan: Arc<Plan>,
}

impl TryFrom<Whole> for Run {
    type Error = Inconsistent;

    fn try_from(Whole { record, plan }: Whole) -> Result<Self, Inconsistent> {
        Run::joined(record, plan)
    }
}

impl Run {
    /// The run of a stored record and its plan, if they make one: one step state per planned
    /// step, and nothing [`Run::inconsistency`] names.
    pub fn joined(record: Record, plan: Arc<Plan>) -> Result<Self, Inconsistent> {
        let Record {
            id,
            digest,
            requester,
            channel,
            created_at,
            state,
            steps,
            approval,
            cancel,
            progress_message,
            captured,
            scheduled,
            booking,
        } = record;
        if steps.len() != plan.len() {
            return Err(Inconsistent(format!(
                "it has {} step states for {} planned steps",
                steps.len(),
                plan.len()
            )));
        }
        let run = Self {
            id,
            plan,
            digest,
            requester,
            channel,
            created_at,
            state,
            steps,
            approval,
            cancel,
            progress_message,
            captured,
            scheduled,
            booking,
        };
        match run.inconsistency() {
            Some(wrong) => Err(Inconsistent(wrong)),
            None => Ok(run),
        }
    }

    /// Everything but the plan; destructured whole, so that a field added to [`Run`] does not
    /// compile until it is kept in the record too.
    pub fn record(&self) -> Record {
        let Self {
            id,
            plan: _,
            digest,
            requester,
            channel,
            created_at,
            state,
            steps,
            approval,
            cancel,
            progress_message,
            captured,
            scheduled,
            booking,
        } = self;
        Record {
            id: *id,
            digest: digest.clone(),
            requester: requester.clone(),
            channel: channel.clone(),
            created_at: *created_at,
            state: state.clone(),
            steps: steps.clone(),
            approval: approval.clone(),
            cancel: cancel.clone(),
            progress_message: progress_message.clone(),
            captured: captured.clone(),
            scheduled: scheduled.clone(),
            booking: *booking,
        }
    }

    /// What is wrong with the run, if anything: a booked run must be ahead of its time and a
    /// running one not, a run may await only an approval its plan needs and it lacks, and a
    /// destructive step may have begun only under an approval of its digest by someone other
    /// than the requester. A run task trusts these, so the store refuses to read or write a
    /// record that breaks them. The digest itself is not recomputed: it is what was shown and
    /// approved, and a later opsbot may write the same plan differently.
    pub fn inconsistency(&self) -> Option<String> {
        match self.state {
            RunState::Booked if !self.is_ahead() => {
                return Some("it is booked but has no booked time ahead".to_owned());
            }
            RunState::Running if self.is_ahead() => {
                return Some("it is running before its booked time".to_owned());
            }
            _ => {}
        }
        // The engine's own check, so that the store and the engine cannot disagree.
        let approved = crate::approval::holds(self).is_ok();
        if let RunState::AwaitingApproval { .. } = self.state {
            if !self.plan.needs_approval() && !self.plan.needs_confirmation() {
                return Some("it awaits approval of a plan that needs none".to_owned());
            }
            if approved {
                return Some("it awaits an approval it already has".to_owned());
            }
        }
        let begun_destructive = self.planned_steps().position(|(step, state)| {
            step.is_destructive() && !matches!(state, StepState::Pending)
        });
        if let Some(step) = begun_destructive.filter(|_| !approved) {
            return Some(format!(
                "destructive step {} has begun without an approval of this plan by a second person",
                step + 1
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use crate::name::ClusterName;
    use crate::people::testing::person;
    use crate::plan::{ClusterSafe, ClusterStep};
    use crate::request::ProcedureRequest;

    const T0: OffsetDateTime = datetime!(2026-11-21 03:00 UTC);

    fn two_steps() -> Run {
        let request = ProcedureRequest::ClusterStart {
            cluster: ClusterName::parse("logs").unwrap(),
        };
        let steps = [
            ClusterSafe::DisableAllocation,
            ClusterSafe::EnableAllocation,
        ];
        let plan = Plan::new(request, steps.map(ClusterStep::Safe).to_vec(), vec![]).unwrap();
        let channel = ChannelId::console();
        Run::new(
            RunId::new(7),
            plan,
            person("alice"),
            channel,
            T0,
            time::Duration::HOUR,
        )
    }

    #[test]
    fn a_run_comes_back_whole_from_its_record_and_its_plan() {
        let run = two_steps();
        let joined = Run::joined(run.record(), Arc::clone(run.shared_plan())).unwrap();
        assert_eq!(joined, run);
        let decoded: Run = serde_json::from_value(serde_json::to_value(&run).unwrap()).unwrap();
        assert_eq!(decoded, run);
    }

    #[test]
    fn a_record_with_a_state_more_or_less_than_its_plan_has_steps_is_refused() {
        let run = two_steps();
        for count in [0, 1, 3] {
            let mut record = run.record();
            record.steps = vec![StepState::Pending; count];
            let wrong = Run::joined(record, Arc::clone(run.shared_plan())).unwrap_err();
            let said = format!("it has {count} step states for 2 planned steps");
            assert_eq!(wrong.to_string(), said);

            let mut encoded = serde_json::to_value(&run).unwrap();
            encoded["steps"] = serde_json::to_value(vec![StepState::Pending; count]).unwrap();
            let refused = serde_json::from_value::<Run>(encoded).unwrap_err();
            assert_eq!(refused.to_string(), said);
        }
    }

    #[test]
    fn a_record_that_awaits_an_approval_its_plan_does_not_need_is_refused() {
        let run = two_steps();
        let mut record = run.record();
        record.state = RunState::AwaitingApproval { expires_at: T0 };
        let wrong = Run::joined(record, Arc::clone(run.shared_plan())).unwrap_err();
        assert_eq!(
            wrong.to_string(),
            "it awaits approval of a plan that needs none"
        );
    }
}
