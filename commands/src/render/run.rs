//! Runs: the progress message, `/run status`, `/run list`, and what a run left behind.

use std::fmt::Write as _;

use time::OffsetDateTime;

use super::{duration, first_that_fits, fit, hhmm, on_page, step_label, step_label_at, utc};
use crate::button::{ApprovalButton, Decision};
use crate::cluster::Observation;
use crate::name::RunId;
use crate::page::Page;
use crate::request::ProcedureRequest;
use crate::run::{Outcome, Run, RunState, StepState};

/// How a run's message looks apart from its text (Discord colours its embed by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// A person must act: approve, or confirm a manual step.
    Waiting,
    Running,
    Succeeded,
    Failed,
    /// Cancelled, rejected or expired: ended by people or time, not by a fault.
    Stopped,
}

/// A run's progress message: its text, its tone, the plan while it waits for approval, and the
/// Approve and Reject buttons of a plan that needs approval (disabled once decided).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressView {
    pub run: RunId,
    /// Names the run's message for good (at most 25 characters, Discord's nonce): a front end
    /// that posts it twice, because it crashed before storing the message id, gets one message.
    pub message_key: String,
    pub text: String,
    pub tone: Tone,
    pub plan: Option<String>,
    pub buttons: Option<ApprovalButtons>,
}

/// The two buttons under a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalButtons {
    pub approve: ApprovalButton,
    pub reject: ApprovalButton,
    pub enabled: bool,
}

/// The progress message as every front end shows it; the console uses the text alone.
pub fn progress_view(
    run: &Run,
    observed: Option<&Observation>,
    now: OffsetDateTime,
) -> ProgressView {
    let awaiting = matches!(run.state, RunState::AwaitingApproval { .. });
    let tone = match &run.state {
        RunState::AwaitingApproval { .. } | RunState::Booked => Tone::Waiting,
        RunState::Running if run.awaiting_operator().is_some() => Tone::Waiting,
        RunState::Running => Tone::Running,
        RunState::Finished { outcome, .. } => match outcome {
            Outcome::Succeeded => Tone::Succeeded,
            Outcome::Failed { .. } => Tone::Failed,
            Outcome::Cancelled { .. }
            | Outcome::Rejected { .. }
            | Outcome::Withdrawn { .. }
            | Outcome::Expired => Tone::Stopped,
        },
    };
    let decision = if run.plan().needs_confirmation() {
        Decision::Confirm
    } else {
        Decision::Approve
    };
    let decided = run.plan().needs_approval() || run.plan().needs_confirmation();
    let buttons = decided.then(|| ApprovalButtons {
        approve: ApprovalButton::new(decision, run.id, &run.digest),
        reject: ApprovalButton::new(Decision::Reject, run.id, &run.digest),
        enabled: awaiting,
    });
    ProgressView {
        run: run.id,
        message_key: format!("r{}-{}", run.id.get(), run.created_at.unix_timestamp()),
        text: progress(run, observed, now),
        tone,
        plan: awaiting.then(|| super::plan(run.plan(), &run.digest)),
        buttons,
    }
}

fn icon(state: &RunState) -> &'static str {
    match state {
        RunState::AwaitingApproval { .. } => "⏸",
        RunState::Booked => "📅",
        RunState::Running => "⏳",
        RunState::Finished { outcome, .. } => match outcome {
            Outcome::Succeeded => "✅",
            Outcome::Failed { .. } => "❌",
            Outcome::Cancelled { .. } => "⏹",
            Outcome::Rejected { .. } => "🚫",
            Outcome::Withdrawn { .. } => "↩",
            Outcome::Expired => "⌛",
        },
    }
}

/// `⏳ r-3 · /cluster restart cluster:logs · by alice · running 1m12s`.
fn headline(run: &Run, now: OffsetDateTime) -> String {
    let took = duration(now - run.started_at());
    let when = match &run.state {
        RunState::AwaitingApproval { expires_at } if run.plan().needs_confirmation() => format!(
            "waiting for {} to confirm (expires {})",
            run.requester.name,
            hhmm(*expires_at)
        ),
        RunState::AwaitingApproval { expires_at } => {
            format!(
                "waiting for approval by an approver (expires {})",
                hhmm(*expires_at)
            )
        }
        RunState::Booked => match &run.approval {
            Some(grant) => format!(
                "{} by {}, waiting for its time",
                decided_how(run),
                grant.by.name
            ),
            None => "waiting for its time".to_owned(),
        },
        RunState::Running if run.awaiting_operator().is_some() => {
            format!("waiting for an operator · {took}")
        }
        RunState::Running => format!("running {took}"),
        RunState::Finished { at, outcome } => {
            let took = duration(*at - run.started_at());
            match outcome {
                Outcome::Succeeded => format!("succeeded in {took}"),
                Outcome::Failed { .. } => format!("failed after {took}"),
                Outcome::Cancelled { by, .. } => format!("cancelled by {} after {took}", by.name),
                Outcome::Rejected { by, .. } => format!("rejected by {}", by.name),
                Outcome::Withdrawn { by, .. } => {
                    format!("withdrawn by {} before approval", by.name)
                }
                Outcome::Expired => format!("expired: not {} in time", decided_how(run)),
            }
        }
    };
    format!(
        "{} {} · {} · by {} · {when}",
        icon(&run.state),
        run.id,
        run.plan().request(),
        run.requester.name
    )
}

/// The one progress message of a run, edited in place while it runs.
pub fn progress(run: &Run, observed: Option<&Observation>, now: OffsetDateTime) -> String {
    let mut text = headline(run, now);
    // A scheduled deletion that went ahead without a per-run approval says which one it ran
    // under, so the channel sees who answers for it.
    let standing = run.scheduled.as_ref().and_then(|s| s.standing.as_ref());
    if let Some(standing) =
        standing.filter(|_| run.approval.is_none() && run.plan().needs_approval())
    {
        if !matches!(run.state, RunState::AwaitingApproval { .. }) {
            let _ = write!(text, "\n{}", standing.describe());
        }
    }
    match &run.state {
        RunState::Running => {
            if let Some(i) = run.cursor() {
                let _ = write!(text, "\nstep {}", step_of(run, i));
                if let Some(StepState::AwaitingOperator { prompt, .. }) = run.steps().get(i) {
                    let _ = write!(text, "\n👉 {prompt}");
                }
            }
            if let Some(observed) = observed.filter(|o| **o != Observation::default()) {
                let _ = write!(text, "\n{observed}");
            }
        }
        RunState::AwaitingApproval { .. } => {
            // A scheduled run says which bound its plan exceeds, wherever it is shown.
            if let Some(why) = run.scheduled_wait() {
                let _ = write!(text, "\n⏰ {why}");
            }
            if run.booking.is_some_and(|b| !b.is_ahead()) {
                text.push_str(
                    "\nplanned again at its booked time, the plan differs from the one approved: \
                     it needs a fresh approval",
                );
            }
            let _ = if run.plan().needs_confirmation() {
                write!(
                    text,
                    "\nconfirm with /run confirm id:{id} digest:{} or withdraw with /run cancel \
                     id:{id}",
                    run.digest,
                    id = run.id
                )
            } else {
                write!(
                    text,
                    "\napprove with /approve id:{id} digest:{} or reject with /reject id:{id} \
                     reason:\"...\"",
                    run.digest,
                    id = run.id
                )
            };
        }
        RunState::Finished { outcome, .. } => match outcome {
            Outcome::Succeeded => {
                // Each deletion's result, then the final word (a report or the verification).
                for (step, state) in run.planned_steps() {
                    if let (true, StepState::Done { note, .. }) = (step.is_destructive(), state) {
                        let _ = write!(text, "\n{note}");
                    }
                }
                if let Some(note) = last_note(run) {
                    let _ = write!(text, "\n{note}");
                }
                if let Some(next) = follow_up(run.plan().request()) {
                    let _ = write!(text, "\n{next}");
                }
            }
            Outcome::Failed { error } => {
                if let Some(i) = run.cursor() {
                    let _ = write!(text, "\nat step {}", step_of(run, i));
                }
                let _ = write!(text, "\n{error}");
            }
            Outcome::Cancelled { note, .. } => {
                let _ = write!(text, "\n{note}");
            }
            Outcome::Rejected { reason, .. }
            | Outcome::Withdrawn {
                reason: Some(reason),
                ..
            } => {
                let _ = write!(text, "\nreason: {reason}");
            }
            Outcome::Withdrawn { reason: None, .. } | Outcome::Expired => {}
        },
        RunState::Booked => {}
    }
    if let Some(booking) = run
        .booking
        .filter(|b| b.is_ahead() && !run.state.is_finished())
    {
        let _ = write!(
            text,
            "\n📅 booked for {} (in {}); /run cancel id:{} cancels it",
            utc(booking.at),
            duration(booking.at - now),
            run.id
        );
    }
    fit(&text)
}

/// The note of the last step done; for maintenance runs, the final report.
fn last_note(run: &Run) -> Option<&str> {
    run.steps().iter().rev().find_map(|s| match s {
        StepState::Done { note, .. } if !note.is_empty() => Some(note.as_str()),
        _ => None,
    })
}

/// `/run status`: the progress message, then every step. A long run that would not fit in one
/// chat message shows its leading completed steps as one line.
pub fn run_status(run: &Run, observed: Option<&Observation>, now: OffsetDateTime) -> String {
    let head = progress(run, observed, now);
    let lines: Vec<String> = run
        .planned_steps()
        .enumerate()
        .map(|(i, (step, state))| {
            let (mark, detail) = match state {
                StepState::Pending => ("·", String::new()),
                StepState::Started { .. } => ("▶", String::new()),
                StepState::AwaitingOperator { .. } => ("👉", " (waiting for /run done)".to_owned()),
                StepState::Done { note, .. } if note.is_empty() || note.contains('\n') => {
                    ("✔", String::new())
                }
                StepState::Done { note, .. } => ("✔", format!(" ({note})")),
                StepState::Failed { .. } => ("✖", String::new()),
            };
            format!("{mark} {:>2}. {}{detail}", i + 1, step_label(step))
        })
        .collect();
    let footer = format!("plan digest {}", run.digest);
    let assemble = |steps: &[String]| format!("{head}\n\n{}\n{footer}", steps.join("\n"));
    // Too long: collapse done steps from the start, keeping the last three done ones in view.
    let done = run
        .steps()
        .iter()
        .take_while(|s| matches!(s, StepState::Done { .. }))
        .count();
    let collapsed = |collapsed: usize| {
        let summary = (collapsed > 0).then(|| format!("✔  1–{collapsed}. done"));
        let steps: Vec<String> = summary
            .into_iter()
            .chain(lines[collapsed..].iter().cloned())
            .collect();
        assemble(&steps)
    };
    first_that_fits(
        std::iter::once(assemble(&lines)).chain((done.saturating_sub(3)..=done).map(collapsed)),
    )
}

/// `/run list`: one line per run, newest first, cut only as the message needs; one page
/// of them, and how to see the next one when there are more.
pub fn run_list(runs: &[Run], page: Page, more: bool, now: OffsetDateTime) -> String {
    if runs.is_empty() {
        return match page {
            Page::FIRST => "no runs in the last 24 hours".to_owned(),
            page => format!("no runs on page {page}; /run list shows the newest"),
        };
    }
    let pointer = if more {
        format!("… older runs: /run list page:{}", page.next())
    } else {
        String::new()
    };
    let mut lines = on_page(
        runs.iter().map(|run| headline(run, now)).collect(),
        &pointer,
    );
    if more {
        lines.push(pointer);
    }
    fit(&lines.join("\n"))
}

/// What a successful run leaves for the operator to do.
fn follow_up(request: &ProcedureRequest) -> Option<String> {
    match request {
        ProcedureRequest::ClusterRemoveNode { cluster, node } => Some(format!(
            "next: remove {node} from the nodes of cluster `{cluster}` in opsbot's config"
        )),
        ProcedureRequest::ComputeRpcCap { cloud, .. } => Some(format!(
            "next: check the compute logs for the chosen RPC version, and /compute services \
             cloud:{cloud}"
        )),
        ProcedureRequest::ClusterStop { .. }
        | ProcedureRequest::ClusterStart { .. }
        | ProcedureRequest::ClusterRestart { .. }
        | ProcedureRequest::IndicesPrune { .. }
        | ProcedureRequest::IndicesDelete { .. }
        | ProcedureRequest::PlacementStale { .. }
        | ProcedureRequest::ImageProperties { .. }
        | ProcedureRequest::Runbook(_) => None,
    }
}

/// `3/25: stop the search container on 10.0.0.12`: where step `index` stands in its run.
fn step_of(run: &Run, index: usize) -> String {
    format!(
        "{}/{}: {}",
        index + 1,
        run.plan().len(),
        step_label_at(run.plan(), index)
    )
}

/// How the run's plan is agreed to: `approved` by an approver, or `confirmed` by its requester.
pub(crate) fn decided_how(run: &Run) -> &'static str {
    if run.plan().needs_confirmation() {
        "confirmed"
    } else {
        "approved"
    }
}
