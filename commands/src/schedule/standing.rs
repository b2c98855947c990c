//! Standing approvals: the two-person rule for a schedule rather than for one plan. One person
//! asks, a second (an approver, not the asker) approves the schedule's digest (its command and
//! bounds) until a date they choose; each run of the schedule whose plan stays within the bounds
//! then goes ahead without a per-run approval, and carries a copy of the grant so that the
//! engine's approval check can verify it from the run alone.

use std::fmt;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::{Bounds, Exceeded, Schedule, ScheduleName};
use crate::name::NameError;
use crate::people::{Actor, PersonRef};
use crate::plan::{Plan, PlanDigest};
use crate::render::utc;

/// A standing approval's id: `sa-3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StandingId(u64);

impl StandingId {
    pub fn new(n: u64) -> Self {
        Self(n)
    }

    pub fn get(self) -> u64 {
        self.0
    }

    pub fn parse(value: &str) -> Result<Self, NameError> {
        let bad = || NameError::NotStandingId {
            value: crate::echo::visible(value, 24),
        };
        let digits = value.strip_prefix("sa-").ok_or_else(bad)?;
        if digits.is_empty() || digits.len() > 18 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        digits.parse().map(Self).map_err(|_| bad())
    }
}

impl fmt::Display for StandingId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sa-{}", self.0)
    }
}

/// Where a standing approval is in its life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum StandingState {
    /// Waits for a second person until `expires_at`.
    Asked {
        #[serde(with = "time::serde::rfc3339")]
        expires_at: OffsetDateTime,
    },
    /// In force until `until`.
    Approved {
        by: PersonRef,
        #[serde(with = "time::serde::rfc3339")]
        at: OffsetDateTime,
        #[serde(with = "time::serde::rfc3339")]
        until: OffsetDateTime,
    },
    /// The schedule's command or bounds changed in the config: the digest no longer matches.
    Voided {
        #[serde(with = "time::serde::rfc3339")]
        at: OffsetDateTime,
    },
}

/// The stored record of a standing approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandingApproval {
    pub id: StandingId,
    pub schedule: ScheduleName,
    /// The schedule's digest when it was asked for (see [`Schedule::digest`]).
    pub digest: PlanDigest,
    pub command: String,
    pub bounds: Bounds,
    pub asked_by: PersonRef,
    #[serde(with = "time::serde::rfc3339")]
    pub asked_at: OffsetDateTime,
    pub state: StandingState,
}

/// What a scheduled run carries of the standing approval it runs under: enough to check, from
/// the run alone, that two people approved this command within these bounds until then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandingGrant {
    pub id: StandingId,
    pub command: String,
    pub bounds: Bounds,
    pub asked_by: PersonRef,
    pub approved_by: PersonRef,
    #[serde(with = "time::serde::rfc3339")]
    pub until: OffsetDateTime,
}

/// Why asking for, approving or rejecting a standing approval was refused; shown privately
/// and audited.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StandingRefusal {
    #[error(
        "schedule {schedule} cannot run unattended: its command deletes nothing a standing \
         approval covers, or it has no [schedules.bounds]; each of its runs waits for an approval"
    )]
    NoBounds { schedule: ScheduleName },
    #[error("{id} already {what}")]
    Open { id: StandingId, what: String },
    #[error("you asked for {id}; another approver must approve it")]
    OwnRequest { id: StandingId },
    #[error("approving needs the approver role; ask an approver")]
    NotApprover,
    #[error(
        "the digest of schedule {schedule} is {current}, not {shown}: its command or bounds \
         changed; look again with /schedule show name:{schedule}"
    )]
    StaleDigest {
        schedule: ScheduleName,
        shown: String,
        current: String,
    },
    #[error("{id} is {state}; ask again with /schedule approve name:{schedule}")]
    NotOpen {
        id: StandingId,
        schedule: ScheduleName,
        state: &'static str,
    },
    #[error("the request {id} expired at {at}; ask again with /schedule approve name:{schedule}")]
    Expired {
        id: StandingId,
        schedule: ScheduleName,
        at: String,
    },
    #[error("until: {until} is not in the future; give the date the approval should end")]
    UntilPast { until: String },
    #[error("until: {until} is more than {max_days} days ahead; approve for at most that long")]
    UntilTooFar { until: String, max_days: i64 },
    #[error("approving a standing approval needs until: the date it ends, e.g. until:2027-02-01")]
    NoUntil,
    #[error(
        "schedule {schedule} has no standing approval waiting for a second person; ask for one \
         with /schedule approve name:{schedule}"
    )]
    NothingAsked { schedule: ScheduleName },
}

/// The longest a standing approval may be given for: a year, so that each is looked at again.
pub const MAX_DAYS: i64 = 366;

impl StandingState {
    pub fn label(&self) -> &'static str {
        match self {
            Self::Asked { .. } => "waiting for approval",
            Self::Approved { .. } => "approved",
            Self::Voided { .. } => "void",
        }
    }
}

impl StandingApproval {
    /// A new request by `actor` for `schedule`, open until `expires_at`.
    pub fn ask(
        id: StandingId,
        schedule: &Schedule,
        actor: &Actor,
        now: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> Result<Self, StandingRefusal> {
        let bounds = schedule
            .bounds
            .clone()
            .ok_or_else(|| StandingRefusal::NoBounds {
                schedule: schedule.name.clone(),
            })?;
        Ok(Self {
            id,
            schedule: schedule.name.clone(),
            digest: schedule.digest(),
            command: schedule.request.to_string(),
            bounds,
            asked_by: actor.person.clone(),
            asked_at: now,
            state: StandingState::Asked { expires_at },
        })
    }

    /// True while it is asked for or in force at `now`: a schedule has at most one such.
    pub fn is_live(&self, now: OffsetDateTime) -> bool {
        match &self.state {
            StandingState::Asked { expires_at } => now < *expires_at,
            StandingState::Approved { until, .. } => now < *until,
            _ => false,
        }
    }

    /// What it is, in words after its id: `waits for approval until …`, `is in force until …`.
    pub fn what(&self) -> String {
        match &self.state {
            StandingState::Asked { expires_at } => format!(
                "was asked for by {} and waits for approval until {}",
                self.asked_by.name,
                utc(*expires_at)
            ),
            StandingState::Approved { by, until, .. } => format!(
                "is in force ({}, {}, until {})",
                self.asked_by.name,
                by.name,
                utc(*until)
            ),
            other => format!("is {}", other.label()),
        }
    }

    /// Checks an approval of this request by `actor`, of digest `shown`, until `until`.
    pub fn approve(
        &self,
        actor: &Actor,
        shown: &str,
        until: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<StandingState, StandingRefusal> {
        let StandingState::Asked { expires_at } = self.state else {
            return Err(StandingRefusal::NotOpen {
                id: self.id,
                schedule: self.schedule.clone(),
                state: self.state.label(),
            });
        };
        if now >= expires_at {
            return Err(StandingRefusal::Expired {
                id: self.id,
                schedule: self.schedule.clone(),
                at: utc(expires_at),
            });
        }
        if actor.person.same_person(&self.asked_by) {
            return Err(StandingRefusal::OwnRequest { id: self.id });
        }
        if !actor.roles.approver {
            return Err(StandingRefusal::NotApprover);
        }
        if !self.digest.matches(shown) {
            return Err(StandingRefusal::StaleDigest {
                schedule: self.schedule.clone(),
                shown: crate::echo::visible(shown, PlanDigest::SHORT),
                current: self.digest.short().to_owned(),
            });
        }
        if until <= now {
            return Err(StandingRefusal::UntilPast { until: utc(until) });
        }
        if until - now > time::Duration::days(MAX_DAYS) {
            return Err(StandingRefusal::UntilTooFar {
                until: utc(until),
                max_days: MAX_DAYS,
            });
        }
        Ok(StandingState::Approved {
            by: actor.person.clone(),
            at: now,
            until,
        })
    }

    /// The grant a run of `digest` created at `now` carries, if this approval covers it.
    pub fn grant(&self, digest: &PlanDigest, now: OffsetDateTime) -> Option<StandingGrant> {
        match &self.state {
            StandingState::Approved { by, until, .. } if now < *until && &self.digest == digest => {
                Some(StandingGrant {
                    id: self.id,
                    command: self.command.clone(),
                    bounds: self.bounds.clone(),
                    asked_by: self.asked_by.clone(),
                    approved_by: by.clone(),
                    until: *until,
                })
            }
            _ => None,
        }
    }
}

/// Why a standing grant does not cover a run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotCovered {
    #[error("it was asked for and approved by the same person")]
    OnePerson,
    #[error("it ended at {until}")]
    Ended { until: String },
    #[error("it is for `{command}`")]
    OtherCommand { command: String },
    #[error(transparent)]
    Exceeded(#[from] Exceeded),
}

impl StandingGrant {
    /// Checks that this grant covers a run of `plan` created at `created`: two people, in
    /// force then, the same command, and the plan within the bounds.
    pub fn covers(&self, plan: &Plan, created: OffsetDateTime) -> Result<(), NotCovered> {
        if self.asked_by.same_person(&self.approved_by) {
            return Err(NotCovered::OnePerson);
        }
        if created >= self.until {
            return Err(NotCovered::Ended {
                until: utc(self.until),
            });
        }
        if plan.request().to_string() != self.command {
            return Err(NotCovered::OtherCommand {
                command: self.command.clone(),
            });
        }
        Ok(self.bounds.admit(plan, created)?)
    }

    /// `under standing approval sa-3 (alice, bob, until 2027-02-01 00:00 UTC)`.
    pub fn describe(&self) -> String {
        format!(
            "under standing approval {} ({}, {}, until {})",
            self.id,
            self.asked_by.name,
            self.approved_by.name,
            utc(self.until)
        )
    }
}

impl Scheduled {
    /// Why a run of this fire with `plan`, created at `created`, waits for an approval, in
    /// words; `None` when its standing approval covers it. Said in the plan's notes, the run's
    /// progress message (and so `/run status`) and the fire's announcement.
    pub fn uncovered(&self, plan: &Plan, created: OffsetDateTime) -> Option<String> {
        let Some(grant) = &self.standing else {
            return Some(format!(
                "waits for an approval: schedule {0} has no standing approval in force \
                 (/schedule approve name:{0})",
                self.schedule
            ));
        };
        grant.covers(plan, created).err().map(|why| {
            format!(
                "waits for an approval: standing approval {} does not cover this plan: {why}",
                grant.id
            )
        })
    }
}

/// The run a schedule's fire created: which schedule, which fire, and the standing approval it
/// runs under, if any.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scheduled {
    pub schedule: ScheduleName,
    #[serde(with = "time::serde::rfc3339")]
    pub fire_at: OffsetDateTime,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standing: Option<StandingGrant>,
}
