//! Maintenance announcements: what the announcement channel is told when a maintenance run
//! starts and ends, and the notice operators post themselves with `/maintenance announce`.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::name::{Notice, RunId};
use crate::people::PersonRef;
use crate::render;
use crate::run::{Outcome, Run, RunState, StepState};

/// An operator's own announcement, in force until `/maintenance end`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaintenanceNotice {
    pub text: Notice,
    pub by: PersonRef,
    #[serde(with = "time::serde::rfc3339")]
    pub since: OffsetDateTime,
}

impl MaintenanceNotice {
    /// What the announcement channel is told when the notice is posted.
    pub fn announcement(&self) -> Announcement {
        Announcement {
            key: self.key('n'),
            run: None,
            text: format!("📣 maintenance: {} ({})", self.text, self.by.name),
        }
    }

    /// What it is told when `by` ends the notice: one end per notice, whoever ends it.
    pub fn ending(&self, by: &PersonRef) -> Announcement {
        Announcement {
            key: self.key('e'),
            run: None,
            text: format!(
                "✅ maintenance over ({}, announced by {} at {}); ended by {}",
                self.text,
                self.by.name,
                render::utc(self.since),
                by.name
            ),
        }
    }

    /// Derived from the notice itself, so a repeated send is recognised as the same one.
    fn key(&self, phase: char) -> String {
        format!("{phase}{}", self.since.unix_timestamp_nanos() / 1_000_000)
    }
}

/// One announcement: `key` names it for good (at most 25 characters, Discord's nonce), so that
/// a bot restarted right after sending it does not send it twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    pub key: String,
    /// The run it is about, for the audit record of its delivery.
    pub run: Option<RunId>,
    pub text: String,
}

impl Announcement {
    /// The longest key: Discord refuses a longer nonce.
    pub const MAX_KEY: usize = 25;

    /// An announcement named for good by `name`, which may be longer than a key: a longer one
    /// is replaced by a digest of it (`schedule/nightly-prune/fire/2026-11-24T02:00Z` names
    /// one fire of one schedule, and is too long for a nonce).
    pub fn named(name: &str, text: String) -> Self {
        let key = if name.len() <= Self::MAX_KEY {
            name.to_owned()
        } else {
            let digest = crate::plan::PlanDigest::of(&name);
            format!("h{}", &digest.as_str()[..Self::MAX_KEY - 1])
        };
        Self {
            key,
            run: None,
            text,
        }
    }
}

/// What a maintenance run announces in its current state: its booking once it is booked, its
/// start once its first step has begun, its end once it has finished. A booked run is
/// maintenance announced ahead, whatever it does; other runs that are not maintenance announce
/// nothing.
pub fn announcement(run: &Run) -> Option<Announcement> {
    if !run.plan().request().is_maintenance() && run.booking.is_none() {
        return None;
    }
    let stamp = run.created_at.unix_timestamp();
    let what = format!("{} ({})", run.plan().request(), run.id);
    let (phase, text) = match &run.state {
        RunState::Running if !matches!(run.steps().first(), None | Some(StepState::Pending)) => (
            "s",
            format!("🔧 maintenance started by {}: {what}", run.requester.name),
        ),
        RunState::Finished {
            at,
            outcome: Outcome::Succeeded,
        } => (
            "e",
            format!(
                "✅ maintenance over: {what} succeeded in {}",
                render::duration(*at - run.started_at())
            ),
        ),
        RunState::Finished {
            outcome: Outcome::Failed { .. },
            ..
        } => (
            "e",
            format!(
                "❌ maintenance failed: {what}; /run status id:{} says where and what is left",
                run.id
            ),
        ),
        RunState::Finished {
            outcome: Outcome::Cancelled { by, .. },
            ..
        } => (
            "e",
            format!("⏹ maintenance cancelled by {}: {what}", by.name),
        ),
        RunState::Booked => (
            "b",
            format!(
                "📅 maintenance booked by {} for {}: {what}",
                run.requester.name,
                render::utc(run.booking.map_or(run.created_at, |b| b.at))
            ),
        ),
        // Booked and announced, then planned again at its time: the new plan was not approved.
        RunState::Finished {
            outcome: Outcome::Rejected { .. } | Outcome::Withdrawn { .. } | Outcome::Expired,
            ..
        } if run.booking.is_some_and(|b| !b.is_ahead()) => (
            "e",
            format!(
                "❌ booked maintenance did not start: {what} was {} after its plan changed",
                run.state.label()
            ),
        ),
        // Never started: nothing was announced, so nothing ends.
        RunState::AwaitingApproval { .. }
        | RunState::Running
        | RunState::Finished {
            outcome: Outcome::Rejected { .. } | Outcome::Withdrawn { .. } | Outcome::Expired,
            ..
        } => return None,
    };
    Some(Announcement {
        key: format!("m{}{phase}-{stamp}", run.id.get()),
        run: Some(run.id),
        text,
    })
}

/// `/maintenance status`: the operators' notice and the maintenance runs under way.
pub fn status(notice: Option<&MaintenanceNotice>, runs: &[Run]) -> String {
    let mut lines = Vec::new();
    match notice {
        Some(notice) => lines.push(format!(
            "📣 {} (announced by {} at {})",
            notice.text,
            notice.by.name,
            render::utc(notice.since)
        )),
        None => lines.push("no maintenance announced".to_owned()),
    }
    let active: Vec<String> = runs
        .iter()
        .filter(|run| run.plan().request().is_maintenance() && !run.state.is_finished())
        .map(|run| {
            format!(
                "{} {} {} (by {})",
                run.id,
                run.label(),
                run.plan().request(),
                run.requester.name
            )
        })
        .collect();
    if active.is_empty() {
        lines.push("no maintenance run under way".to_owned());
    } else {
        lines.extend(active);
    }
    render::fit(&lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::people::Surface;

    #[test]
    fn a_long_name_becomes_a_key_a_nonce_can_carry_and_stays_itself() {
        let name = "schedule/nightly-prune/fire/2026-11-24 02:00:00.0 +00:00:00";
        let one = Announcement::named(name, "a".into());
        assert_eq!(one.key.len(), Announcement::MAX_KEY);
        assert_eq!(
            Announcement::named(name, "b".into()).key,
            one.key,
            "the same name, the same key"
        );
        let other = Announcement::named(
            "schedule/nightly-prune/fire/2026-11-25 02:00:00.0 +00:00:00",
            "a".into(),
        );
        assert_ne!(other.key, one.key);
        assert_eq!(
            Announcement::named("m3s-1764", "a".into()).key,
            "m3s-1764",
            "short names are kept"
        );
    }

    fn person(name: &str) -> PersonRef {
        PersonRef {
            name: crate::name::PersonName::parse(name).unwrap(),
            via: Surface::Demo,
        }
    }

    #[test]
    fn a_notice_announces_and_ends_under_keys_of_its_own() {
        let notice = MaintenanceNotice {
            text: Notice::parse("log cluster upgrade until 04:00 UTC").unwrap(),
            by: person("alice"),
            since: time::macros::datetime!(2026-11-21 03:00 UTC),
        };
        let bob = person("bob");
        let posted = notice.announcement();
        let ended = notice.ending(&bob);
        assert_eq!(
            posted.text,
            "📣 maintenance: log cluster upgrade until 04:00 UTC (alice)"
        );
        assert_eq!(
            ended.text,
            "✅ maintenance over (log cluster upgrade until 04:00 UTC, announced by alice at \
             2026-11-21 03:00 UTC); ended by bob"
        );
        assert_ne!(posted.key, ended.key);
        assert!(posted.key.len() <= 25 && ended.key.len() <= 25);
    }
}
