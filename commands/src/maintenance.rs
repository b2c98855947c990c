//! Maintenance announcements: what the announcement channel is told when a maintenance run
//! starts and ends, and the notice operators post themselves with `/maintenance announce`.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::name::Notice;
use crate::render;
use crate::run::{Run, RunState, StepState, UserRef};

/// An operator's own announcement, in force until `/maintenance end`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaintenanceNotice {
    pub text: Notice,
    pub by: UserRef,
    #[serde(with = "time::serde::rfc3339")]
    pub since: OffsetDateTime,
}

/// One announcement: `key` names it for good (at most 25 characters, Discord's nonce), so that
/// a bot restarted right after sending it does not send it twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    pub key: String,
    pub text: String,
}

/// What a maintenance run announces in its current state: its start once its first step has
/// begun, its end once it has finished. Runs that are not maintenance announce nothing.
pub fn announcement(run: &Run) -> Option<Announcement> {
    if !run.plan.request.is_maintenance() {
        return None;
    }
    let stamp = run.created_at.unix_timestamp();
    let what = format!("{} ({})", run.plan.request, run.id);
    let took = || render::duration(run.finished_at.unwrap_or(run.created_at) - run.created_at);
    let (phase, text) = match &run.state {
        RunState::Running if !matches!(run.steps.first(), None | Some(StepState::Pending)) => (
            "s",
            format!("🔧 maintenance started by {}: {what}", run.requester.name),
        ),
        RunState::Succeeded => (
            "e",
            format!("✅ maintenance over: {what} succeeded in {}", took()),
        ),
        RunState::Failed { .. } => (
            "e",
            format!(
                "❌ maintenance failed: {what}; /run status id:{} says where and what is left",
                run.id
            ),
        ),
        RunState::Cancelled { by, .. } => (
            "e",
            format!("⏹ maintenance cancelled by {}: {what}", by.name),
        ),
        // Never started: nothing was announced, so nothing ends.
        RunState::AwaitingApproval { .. }
        | RunState::Running
        | RunState::Rejected { .. }
        | RunState::Expired => return None,
    };
    Some(Announcement {
        key: format!("m{}{phase}-{stamp}", run.id.get()),
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
        .filter(|run| run.plan.request.is_maintenance() && !run.state.is_finished())
        .map(|run| {
            format!(
                "{} {} {} (by {})",
                run.id,
                run.state.label(),
                run.plan.request,
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
