//! Scheduled procedures: a command line from the config that fires at the times of a cron
//! expression, and the standing approvals under which a destructive one runs unattended.
//! Everything here is pure: the bot's scheduler keeps the time and the store keeps the record
//! of each fire.

pub mod bounds;
pub mod cron;
pub mod standing;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::name::{NameError, RunId};
use crate::plan::PlanDigest;
use crate::request::ProcedureRequest;
use crate::run::ChannelId;

pub use bounds::{Bounds, Exceeded};
pub use cron::{CronError, CronSchedule};
pub use standing::{StandingApproval, StandingGrant, StandingId, StandingRefusal, StandingState};

/// A schedule's name, as the config gives it and operators type it (`nightly-prune`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ScheduleName(String);

impl ScheduleName {
    /// As long as a person's name at most: a scheduled run's requester is the schedule.
    pub const MAX_LEN: usize = crate::name::PersonName::MAX_LEN;

    pub fn parse(value: &str) -> Result<Self, NameError> {
        let name = crate::name::config_name("schedule name", value)?;
        let len = name.chars().count();
        if len > Self::MAX_LEN {
            return Err(NameError::TooLong {
                what: "schedule name",
                value: crate::echo::visible(&name, 40),
                len,
                max: Self::MAX_LEN,
            });
        }
        Ok(Self(name))
    }

    /// The schedule as the requester of its runs: nobody's person, so that any approver may
    /// approve a plan it made that no standing approval covers.
    pub fn as_requester(&self) -> crate::people::PersonRef {
        crate::people::PersonRef {
            name: crate::name::PersonName::of_schedule(self),
            via: crate::people::Surface::Schedule {
                name: self.0.clone(),
            },
        }
    }
}
validated_string!(ScheduleName, NameError);

/// `/schedule ...`: looking at schedules, pausing them, and their standing approvals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScheduleRequest {
    /// Every schedule with its next fires.
    List,
    /// One schedule: its command, bounds, digest, fires and standing approval.
    Show {
        name: ScheduleName,
    },
    Pause {
        name: ScheduleName,
    },
    Resume {
        name: ScheduleName,
    },
    /// Without `digest`: ask for a standing approval (or see the open request). With it: a
    /// second person approves the schedule's digest until `until`.
    Approve {
        name: ScheduleName,
        digest: Option<crate::plan::DigestPrefix>,
        until: Option<OffsetDateTime>,
    },
}

impl ScheduleRequest {
    /// The subcommand in the catalogue.
    pub fn sub(&self) -> &'static str {
        match self {
            Self::List => "list",
            Self::Show { .. } => "show",
            Self::Pause { .. } => "pause",
            Self::Resume { .. } => "resume",
            Self::Approve { .. } => "approve",
        }
    }

    pub fn name(&self) -> Option<&ScheduleName> {
        match self {
            Self::List => None,
            Self::Show { name }
            | Self::Pause { name }
            | Self::Resume { name }
            | Self::Approve { name, .. } => Some(name),
        }
    }
}

/// An end date as typed: `2027-02-01` (midnight UTC) or a time with its zone, as a booked
/// time is read (`2027-02-01T00:00Z`).
pub fn parse_date(value: &str) -> Result<OffsetDateTime, NameError> {
    let value = value.trim();
    if let Ok(at) = crate::booking::parse_at(value) {
        return Ok(at);
    }
    let format = time::macros::format_description!("[year]-[month]-[day]");
    time::Date::parse(value, &format)
        .map(|date| date.midnight().assume_utc())
        .map_err(|_| NameError::NotDate {
            value: crate::echo::visible(value, 40),
        })
}

/// A schedule as the config declares it, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub name: ScheduleName,
    pub cron: CronSchedule,
    pub request: ProcedureRequest,
    /// Where its runs report.
    pub channel: ChannelId,
    /// What a run may delete under a standing approval; required when the command can delete.
    pub bounds: Option<Bounds>,
}

/// What a standing approval binds: the command and the bounds. The times it fires are not in
/// it: moving a nightly prune from 02:00 to 03:00 does not change what it may do.
#[derive(Serialize, Debug)]
struct Bound<'a> {
    schedule: &'a ScheduleName,
    command: String,
    bounds: &'a Option<Bounds>,
}

impl Schedule {
    /// The digest a standing approval is bound to; a change of the command or the bounds in
    /// the config changes it, and voids the approval.
    pub fn digest(&self) -> PlanDigest {
        PlanDigest::of(&Bound {
            schedule: &self.name,
            command: self.request.to_string(),
            bounds: &self.bounds,
        })
    }
}

/// What became of one fire of a schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum FireOutcome {
    /// The scheduler first saw the schedule at this time: only later fires count.
    Armed,
    /// A run was created for the fire (in the same transaction as this record); `waits` says
    /// why it waits for an approval, when it does (the bound its plan exceeds).
    Started {
        run: RunId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        waits: Option<String>,
    },
    /// The plan had nothing to do; its first note says why.
    NothingToDo { note: String },
    /// The schedule was paused.
    Paused,
    /// The target stayed busy with another run for longer than the scheduler waits.
    Busy { holder: RunId },
    /// The bot was down at fire time, longer than the lateness allows.
    Missed,
    /// The fire could not be planned; the error says why.
    Failed { error: String },
}

impl FireOutcome {
    /// Whether the operators are told in chat: a fire that should have run and did not. The
    /// others are in the audit log and `/schedule show` (a nightly "nothing to do" in the
    /// announcement channel would teach people to stop reading it).
    pub fn is_news(&self) -> bool {
        match self {
            Self::Busy { .. } | Self::Missed | Self::Failed { .. } => true,
            Self::Armed | Self::Started { .. } | Self::NothingToDo { .. } | Self::Paused => false,
        }
    }

    /// A short line for `/schedule show` and the audit log.
    pub fn describe(&self) -> String {
        match self {
            Self::Armed => "scheduler started; no fire yet".to_owned(),
            Self::Started { run, waits: None } => format!("started {run}"),
            Self::Started {
                run,
                waits: Some(why),
            } => format!("started {run}, which {why}"),
            Self::NothingToDo { note } => format!("nothing to do: {note}"),
            Self::Paused => "not run: the schedule is paused".to_owned(),
            Self::Busy { holder } => format!("not run: the target was busy with {holder}"),
            Self::Missed => "missed: opsbot was down at the time, longer than the lateness \
                             allows"
                .to_owned(),
            Self::Failed { error } => format!("failed: {error}"),
        }
    }
}

/// The last fire of a schedule the store recorded: the fire time and what came of it. The next
/// fire is the first cron time after `at`, so a fire is never taken twice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FireRecord {
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    #[serde(flatten)]
    pub outcome: FireOutcome,
}

/// A schedule an operator paused: it does not fire until resumed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pause {
    pub by: crate::people::PersonRef,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
}
