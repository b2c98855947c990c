//! Executing one step of a runbook run: a command on a host, a wait on a command's output, an
//! operator's manual step, or the approval gate. A command found started after a restart is run
//! again only when the runbook calls it idempotent; otherwise an operator says whether it took
//! effect, because nothing else can tell.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::time::Duration;

use opsbot_commands::approval::{Approved, ApprovedCommand};
use opsbot_commands::cluster::Observation;
use opsbot_commands::echo::visible;
use opsbot_commands::name::HostName;
use opsbot_commands::plan::{
    Action, HostCommand, HostSafe, HostStep, HostWait, OnHosts, OutputWait,
};
use opsbot_commands::render;
use opsbot_commands::run::Run;
use opsbot_state::StoreError;
use regex::Regex;
use tokio::sync::Notify;

mod words;

use super::Inner;
use super::failure::StepFailure;
use super::step::{StepOutcome, gate, mark_started};
use super::wait;
use crate::host_access::Reached;
use crate::process::CommandError;
use crate::process::{Finished, KEPT_LINES, Output, lines};
use words::{filled, line, shown};

/// How much of a posted output goes into the chat message; the rest is in `/run log`.
const POSTED_CHARS: usize = 900;
/// Lines kept of one look of a wait: only the last matters.
const WAIT_LINES: NonZeroUsize = lines(50);
/// Longest a single look of a wait may take.
const LOOK_TIMEOUT: Duration = Duration::from_secs(30);

/// A command a step may run: a safe one as its plan has it; one behind the approval gate only
/// as its approval proof names it.
#[derive(Debug, Clone, Copy)]
enum Permitted<'r> {
    Safe(&'r HostCommand),
    Approved(ApprovedCommand<'r>),
}

impl<'r> Permitted<'r> {
    fn command(self) -> &'r HostCommand {
        match self {
            Permitted::Safe(command) => command,
            Permitted::Approved(approved) => approved.command(),
        }
    }
}

pub(super) async fn execute(
    inner: &Inner,
    run: &Run,
    index: usize,
    action: &HostStep,
    resumed: bool,
    waker: &Notify,
) -> Result<StepOutcome, StoreError> {
    let permitted = match action {
        Action::Gate { .. } => return Ok(gate(run)),
        Action::Safe(HostSafe::Confirm { prompt }) => {
            return Ok(StepOutcome::AskOperator(shown(prompt, &run.captured)));
        }
        Action::Wait(HostWait::HostOutput(wait)) => {
            return until(inner, run, wait, waker).await;
        }
        Action::Safe(HostSafe::HostCommand(command)) => Permitted::Safe(command),
        Action::Destructive(_) => match Approved::<OnHosts>::verify(run, index) {
            Ok(approved) => Permitted::Approved(approved.act()),
            Err(refusal) => return Ok(StepFailure::from(refusal).into()),
        },
    };
    let command = permitted.command();
    if resumed && !command.idempotent {
        return Ok(StepOutcome::AskOperator(format!(
            "the bot stopped while this step ran: on {}, `{}` may or may not have taken \
             effect. Check on the host, finish it by hand if it did not",
            command.host,
            line(&command.argv, &run.captured)
        )));
    }
    if !resumed {
        mark_started(inner, run, index).await?;
    }
    Ok(
        match run_command(inner, run, index, permitted, waker).await {
            Ok(outcome) => outcome,
            Err(failure) => failure.into(),
        },
    )
}

/// Resolves once an operator has asked the run to stop: a running command is stopped then,
/// not waited for (a tracer runs for minutes).
async fn cancelled(inner: &Inner, run: &Run, waker: &Notify) {
    loop {
        waker.notified().await;
        match wait::cancel_requested(inner, run) {
            Ok(true) => return,
            Ok(false) => {}
            // An unreadable store does not stop a command; the run's next write meets it.
            Err(error) => tracing::error!(%error, "cannot read whether the run was cancelled"),
        }
    }
}

/// Runs the command and judges it: its exit code, then its output; named groups of the output
/// expression are captured for the steps after it.
async fn run_command(
    inner: &Inner,
    run: &Run,
    index: usize,
    permitted: Permitted<'_>,
    waker: &Notify,
) -> Result<StepOutcome, StepFailure> {
    let command = permitted.command();
    let access = &inner.targets.library.access;
    let host = &command.host;
    let argv = if access.is_automatic() {
        filled(&command.argv, &run.captured)?
    } else {
        command
            .argv
            .iter()
            .map(|w| shown(w, &run.captured))
            .collect()
    };
    let stdin = command.stdin.as_ref().map(|w| shown(w, &run.captured));
    let cmd = argv.join(" ");
    // A posted output (a tracer's minutes) keeps what `[runbooks.output]` allows.
    let bounds = if command.post_output {
        access.output()
    } else {
        access.output().at_most_lines(KEPT_LINES)
    };
    let timeout = Duration::from_secs(command.timeout_secs);
    let reached = match access
        .run(
            host,
            &argv,
            stdin.as_deref(),
            timeout,
            bounds,
            cancelled(inner, run, waker),
        )
        .await
    {
        Ok(reached) => reached,
        Err(error @ CommandError::Uncollected { .. }) => return Ok(uncollected(host, &error)),
        Err(error) => {
            return Err(StepFailure::Command {
                on: format!("on {host}"),
                error,
            });
        }
    };
    let finished = match reached {
        Reached::AskOperator(prompt) => {
            let checks = manual_checks(command);
            return Ok(StepOutcome::AskOperator(format!("{prompt}{checks}")));
        }
        Reached::Ran(finished) => finished,
    };
    keep_output(inner, run, index, host.as_str(), &cmd, &finished).await;
    if finished.stopped {
        let mut note = format!(
            "stopped by the cancel: on {host}, `{cmd}` got SIGTERM (SIGKILL after {}) and {}; \
             what it printed so far is in /run log id:{}",
            wait::shown(crate::process::STOP_GRACE),
            finished.ending(),
            run.id,
        );
        // An output the runbook keeps out of chat stays out of it when stopped too.
        if command.post_output {
            note.push_str(&posted(&finished.output, run));
        }
        return Ok(StepOutcome::Interrupted(note));
    }
    let ending = finished.ending();
    if !finished
        .code
        .is_some_and(|c| command.exit_codes.contains(&c))
    {
        let last = finished.output.last().unwrap_or("(no output)");
        return Err(StepFailure::Exited {
            host: host.clone(),
            cmd,
            ending,
            last: last.to_owned(),
            run: run.id,
        });
    }
    let mut captured = BTreeMap::new();
    if let Some(expected) = &command.output {
        let Ok(regex) = Regex::new(expected) else {
            return Err(StepFailure::NoRegex {
                pattern: expected.clone(),
            });
        };
        let text = finished.output.lines.join("\n");
        let Some(found) = regex.captures(&text) else {
            let last = finished.output.last().unwrap_or("(no output)");
            return Err(StepFailure::Unexpected {
                host: host.clone(),
                cmd,
                expected: expected.clone(),
                last: last.to_owned(),
            });
        };
        for name in regex.capture_names().flatten() {
            if let Some(value) = found.name(name) {
                captured.insert(name.to_owned(), value.as_str().to_owned());
            }
        }
    }
    let mut note = format!("on {host}, `{cmd}` {ending}");
    if !captured.is_empty() {
        let values: Vec<String> = captured.iter().map(|(k, v)| format!("{k}={v}")).collect();
        note.push_str(&format!(" · captured {}", values.join(" ")));
    }
    if command.post_output {
        note.push_str(&posted(&finished.output, run));
    }
    Ok(if captured.is_empty() {
        StepOutcome::Done(note)
    } else {
        StepOutcome::Captured {
            note,
            values: captured,
        }
    })
}

/// A command the cancel stopped whose output a process outside its group still holds open:
/// only a cancel stops a command, so the run ends interrupted, saying what may still run.
fn uncollected(host: &HostName, error: &CommandError) -> StepOutcome {
    StepOutcome::Interrupted(format!("stopped by the cancel: on {host}, {error}"))
}

/// What the operator who runs a command by hand must check before `/run done`, as the bot
/// would have: the exit codes that count as success, and what its output must match.
fn manual_checks(command: &HostCommand) -> String {
    let codes: Vec<String> = command.exit_codes.iter().map(ToString::to_string).collect();
    let exit = match codes.as_slice() {
        [only] => format!("it must exit {only}"),
        _ => format!("it must exit with one of {}", codes.join(", ")),
    };
    match &command.output {
        Some(pattern) => format!("; {exit}, and its output must match /{pattern}/"),
        None => format!("; {exit}"),
    }
}

/// The tail of an output that fits a chat message, and where the rest is.
fn posted(output: &Output, run: &Run) -> String {
    let lines = &output.lines;
    let shown = render::tail(lines, POSTED_CHARS);
    let mut text = format!("\n```\n{}\n```", shown.join("\n"));
    match output.dropped() {
        Some(dropped) => text.push_str(&format!(
            "\nlast {} lines shown; {dropped}: /run log id:{}",
            shown.len(),
            run.id
        )),
        None if shown.len() < lines.len() => text.push_str(&format!(
            "\nlast {} of {} lines; all of them: /run log id:{}",
            shown.len(),
            lines.len(),
            run.id
        )),
        None => {}
    }
    text
}

/// Keeps a command's output in the run log under a header naming the step and the command.
async fn keep_output(
    inner: &Inner,
    run: &Run,
    index: usize,
    host: &str,
    cmd: &str,
    finished: &Finished,
) {
    let mut header = format!(
        "── step {} on {host}: `{cmd}` {}",
        index + 1,
        finished.ending()
    );
    if let Some(dropped) = finished.output.dropped() {
        header.push_str(&format!(" · {dropped}"));
    }
    let lines: Vec<String> = std::iter::once(header)
        .chain(finished.output.lines.iter().cloned())
        .collect();
    // The output is evidence, not the outcome: a run does not fail because it could not be kept.
    if let Err(error) = inner.writes.append_run_log(run.id, lines).await {
        tracing::error!(%error, "cannot keep command output in the run log");
    }
}

/// Runs the wait's command every interval until its output matches, showing what it printed.
async fn until(
    inner: &Inner,
    run: &Run,
    wait: &OutputWait,
    waker: &Notify,
) -> Result<StepOutcome, StoreError> {
    let access = &inner.targets.library.access;
    let host = &wait.host;
    let argv = match filled(&wait.argv, &run.captured) {
        Ok(argv) => argv,
        Err(failure) => return Ok(failure.into()),
    };
    let cmd = argv.join(" ");
    let Ok(regex) = Regex::new(&wait.until) else {
        return Ok(StepFailure::NoRegex {
            pattern: wait.until.clone(),
        }
        .into());
    };
    let timeout = Duration::from_secs(wait.timeout_secs);
    let interval = Duration::from_secs(wait.interval_secs);
    let deadline = inner.clock.instant() + timeout;
    let mut last;
    loop {
        let look = interval.max(LOOK_TIMEOUT);
        match access
            .run(
                host,
                &argv,
                None,
                look,
                access.output().at_most_lines(WAIT_LINES),
                cancelled(inner, run, waker),
            )
            .await
        {
            Ok(Reached::AskOperator(prompt)) => {
                return Ok(StepOutcome::AskOperator(format!(
                    "{prompt} until it prints /{}/",
                    wait.until
                )));
            }
            Ok(Reached::Ran(finished)) if finished.stopped => return Ok(StepOutcome::Cancelled),
            Ok(Reached::Ran(finished)) => {
                let text = finished.output.lines.join("\n");
                last = match finished
                    .output
                    .lines
                    .iter()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                {
                    Some(line) => format!("`{}`", visible(line.trim(), 80)),
                    None => format!("no output ({})", finished.ending()),
                };
                inner
                    .progress
                    .observe(run, noted(format!("{host}: {last}")));
                if regex.is_match(&text) {
                    return Ok(StepOutcome::Done(format!(
                        "on {host}, `{cmd}` printed {last}"
                    )));
                }
            }
            Err(error @ CommandError::Uncollected { .. }) => {
                return Ok(uncollected(host, &error));
            }
            // A command that cannot run yet (a container restarting) is one more look.
            Err(error) => {
                last = error.to_string();
                inner
                    .progress
                    .observe(run, noted(format!("{host}: {last}")));
            }
        }
        if inner.clock.instant() >= deadline {
            return Ok(StepFailure::NeverPrinted {
                waited: wait::shown(timeout),
                cmd,
                host: host.clone(),
                until: wait.until.clone(),
                last,
            }
            .into());
        }
        if wait::paused_for_cancel(inner, run, interval, waker).await? {
            return Ok(StepOutcome::Cancelled);
        }
    }
}

fn noted(note: String) -> Observation {
    Observation {
        note: Some(note),
        ..Observation::default()
    }
}
