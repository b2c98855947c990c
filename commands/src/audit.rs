//! Audit events: what happened, when, by whom. The store appends them and never rewrites one.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::name::RunId;
use crate::people::Speaker;

/// One entry of the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEvent {
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub run: Option<RunId>,
    /// Who caused it (the person, and the surface account they spoke from); `None` for the
    /// engine's own steps.
    pub actor: Option<Speaker>,
    pub event: AuditKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AuditKind {
    /// A run was created from this command line and plan.
    RunRequested {
        command: String,
        digest: String,
    },
    /// A second operator approved the plan with this digest.
    ApprovalGranted {
        digest: String,
    },
    /// The requester confirmed their own plan with this digest (the `confirm` policy).
    Confirmed {
        digest: String,
    },
    /// Something was refused to someone, and why: an unknown person, a missing role, a wrong
    /// channel, a self-approval, an expired, decided or changed plan. `request` is what they
    /// tried (empty in records from before it was kept).
    #[serde(alias = "approval_refused")]
    Refused {
        #[serde(default)]
        request: String,
        reason: String,
    },
    /// A second operator rejected the plan.
    Rejected {
        reason: String,
    },
    /// The requester took their plan back before anyone approved it.
    Withdrawn {
        reason: Option<String>,
    },
    /// An operator asked the run to stop.
    CancelRequested,
    /// An operator confirmed a manual step.
    OperatorConfirmed {
        step: usize,
    },
    /// The write-ahead record of a side effect about to be attempted.
    StepStarted {
        step: usize,
        action: String,
    },
    StepDone {
        step: usize,
        note: String,
    },
    StepFailed {
        step: usize,
        error: String,
    },
    /// The bot restarted and picked the run up again.
    Resumed {
        step: Option<usize>,
    },
    /// The run ended in this state.
    RunFinished {
        state: String,
    },
    /// A booked run reached its time and was planned again: the same plan (it goes on under
    /// its approval) or a changed one (`digest`, which needs a fresh approval if it deletes).
    BookedTimeReached {
        digest: String,
        changed: bool,
    },
    /// A schedule fired (or its fire was missed, skipped or failed); recorded once per fire.
    ScheduleFired {
        schedule: String,
        fire_at: String,
        outcome: String,
    },
    /// Something happened to a schedule or its standing approval: paused, resumed, a standing
    /// approval asked for, approved or voided.
    ScheduleChanged {
        schedule: String,
        what: String,
    },
    /// The announcement channel was told this (a booking, a reminder, a start or an end of
    /// maintenance, a notice): recorded once it was delivered, so the log shows who was warned
    /// and when.
    Announced {
        text: String,
    },
}

/// Where an audit listing starts: `2h` ago, or at an RFC 3339 instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    Ago(time::Duration),
    At(OffsetDateTime),
}

impl Since {
    /// A year: older history is for the exported log, not for chat.
    const MAX_AGO: time::Duration = time::Duration::days(366);

    /// `30m`, `2h`, `3d`, or `2026-11-21T03:00:00Z`.
    pub fn parse(value: &str) -> Result<Self, crate::name::NameError> {
        let bad = || crate::name::NameError::BadSince {
            value: crate::echo::visible(value, 40),
        };
        if let Ok(at) = OffsetDateTime::parse(value, &time::format_description::well_known::Rfc3339)
        {
            return Ok(Self::At(at));
        }
        // The unit is the last character, whatever its width: a multi-byte one is refused
        // like any other unknown unit, never split in the middle.
        let mut chars = value.chars();
        let unit = chars.next_back().ok_or_else(bad)?;
        let n: i64 = chars.as_str().parse().map_err(|_| bad())?;
        let ago = match unit {
            'm' => time::Duration::minutes(n),
            'h' => time::Duration::hours(n),
            'd' => time::Duration::days(n),
            _ => return Err(bad()),
        };
        if ago <= time::Duration::ZERO || ago > Self::MAX_AGO {
            return Err(bad());
        }
        Ok(Self::Ago(ago))
    }

    pub fn start(self, now: OffsetDateTime) -> OffsetDateTime {
        match self {
            Self::Ago(ago) => now - ago,
            Self::At(at) => at,
        }
    }
}

impl std::fmt::Display for Since {
    /// As `since:` takes it, so that a pointer to the next page repeats the filter: `90m`,
    /// `2h`, `3d`, `2026-11-21T03:00:00Z`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Self::Ago(ago) if ago.whole_minutes() % (24 * 60) == 0 => {
                write!(f, "{}d", ago.whole_days())
            }
            Self::Ago(ago) if ago.whole_minutes() % 60 == 0 => write!(f, "{}h", ago.whole_hours()),
            Self::Ago(ago) => write!(f, "{}m", ago.whole_minutes()),
            Self::At(at) => {
                let at = at.to_offset(time::UtcOffset::UTC);
                write!(
                    f,
                    "{}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
                    at.year(),
                    u8::from(at.month()),
                    at.day(),
                    at.hour(),
                    at.minute(),
                    at.second()
                )
            }
        }
    }
}

impl AuditKind {
    /// What happened, in a few words for chat.
    pub fn describe(&self) -> String {
        match self {
            Self::RunRequested { command, digest } => {
                format!("requested {command} (digest {})", short(digest))
            }
            Self::ApprovalGranted { digest } => format!("approved (digest {})", short(digest)),
            Self::Confirmed { digest } => format!("confirmed (digest {})", short(digest)),
            Self::Refused { request, reason } if request.is_empty() => {
                format!("refused: {reason}")
            }
            Self::Refused { request, reason } => format!("refused {request}: {reason}"),
            Self::Rejected { reason } => format!("rejected: {reason}"),
            Self::Withdrawn { reason: None } => "withdrew the plan".to_owned(),
            Self::Withdrawn {
                reason: Some(reason),
            } => format!("withdrew the plan: {reason}"),
            Self::CancelRequested => "asked to cancel".to_owned(),
            Self::OperatorConfirmed { step } => format!("confirmed manual step {}", step + 1),
            Self::StepStarted { step, action } => format!("step {} started: {action}", step + 1),
            Self::StepDone { step, note } if note.is_empty() => format!("step {} done", step + 1),
            Self::StepDone { step, note } => format!("step {} done: {note}", step + 1),
            Self::StepFailed { step, error } => format!("step {} failed: {error}", step + 1),
            Self::Resumed { step: Some(step) } => format!("resumed at step {}", step + 1),
            Self::Resumed { step: None } => "resumed".to_owned(),
            Self::RunFinished { state } => format!("finished: {state}"),
            Self::BookedTimeReached {
                digest,
                changed: false,
            } => format!(
                "booked time reached; the plan is unchanged (digest {})",
                short(digest)
            ),
            Self::BookedTimeReached {
                digest,
                changed: true,
            } => format!(
                "booked time reached; the plan changed (digest {})",
                short(digest)
            ),
            Self::ScheduleFired {
                schedule,
                fire_at,
                outcome,
            } => format!("schedule {schedule} fire of {fire_at}: {outcome}"),
            Self::ScheduleChanged { schedule, what } => format!("schedule {schedule}: {what}"),
            Self::Announced { text } => format!("announced: {text}"),
        }
    }
}

fn short(digest: &str) -> &str {
    digest
        .get(..crate::plan::PlanDigest::SHORT)
        .unwrap_or(digest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn since_reads_durations_and_instants() {
        let now = datetime!(2026-11-21 03:00:00 UTC);
        assert_eq!(
            Since::parse("2h").unwrap().start(now),
            datetime!(2026-11-21 01:00:00 UTC)
        );
        assert_eq!(
            Since::parse("3d").unwrap().start(now),
            datetime!(2026-11-18 03:00:00 UTC)
        );
        assert_eq!(
            Since::parse("2026-11-20T00:00:00Z").unwrap().start(now),
            datetime!(2026-11-20 00:00:00 UTC)
        );
        for bad in [
            "",
            "h",
            "0h",
            "-2h",
            "2w",
            "367d",
            "yesterday",
            "2026-11-20",
            "12\u{AD}",
            "3é",
            "ß",
        ] {
            assert!(Since::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn since_is_shown_as_it_is_typed() {
        for typed in ["30m", "90m", "2h", "36h", "3d", "2026-11-20T00:00:00Z"] {
            let since = Since::parse(typed).unwrap();
            assert_eq!(since.to_string(), typed);
            assert_eq!(Since::parse(&since.to_string()), Ok(since));
        }
        assert_eq!(Since::parse("120m").unwrap().to_string(), "2h");
    }
}
