//! Plans: what each step does, in a few words, and the plan as shown before a run.

use std::fmt::Write as _;

use super::{compact, fit, hhmm};
use crate::cluster::{EXCLUDE_IP, FlushMode};
use crate::echo::visible;
use crate::plan::{Action, DestructiveAction, HostCommand, Plan, PlanDigest, SafeAction, Wait};
use crate::run::{Run, RunState};
use crate::runbook::Word;

/// What a step does, in a few words.
pub fn step_label(action: &Action) -> String {
    match action {
        Action::Safe(safe) => match safe {
            SafeAction::DisableAllocation => {
                "disable shard allocation (persistent cluster.routing.allocation.enable: none)"
                    .to_owned()
            }
            SafeAction::EnableAllocation => {
                "re-enable shard allocation (persistent cluster.routing.allocation.enable: null)"
                    .to_owned()
            }
            SafeAction::Flush {
                mode: FlushMode::Synced,
            } => "synced flush (POST /_flush/synced)".to_owned(),
            SafeAction::Flush {
                mode: FlushMode::Plain,
            } => "flush (POST /_flush)".to_owned(),
            SafeAction::StopNode { node } => format!("stop the search container on {node}"),
            SafeAction::StartNode { node } => format!("start the search container on {node}"),
            SafeAction::Report => "report _cat/health, _cat/recovery and _cat/nodes".to_owned(),
            SafeAction::VerifyDeleted => {
                "list the indices and verify that none of the deleted ones remains".to_owned()
            }
            SafeAction::ExcludeNode { node } => {
                format!("exclude {node} from allocation (transient {EXCLUDE_IP}: {node})")
            }
            SafeAction::ClearExclusion { node } => {
                format!("clear the exclusion of {node} (transient {EXCLUDE_IP}: \"\")")
            }
            SafeAction::Redeploy { removed } => {
                format!("redeploy the search service with serial 1, without {removed}")
            }
            SafeAction::VerifyReleased { .. } => {
                "list the provider's allocations and verify that none of the deleted ones remains"
                    .to_owned()
            }
            SafeAction::RestartCompute { host } => {
                format!("restart the compute container on {host}")
            }
            SafeAction::SetImageProperties { name, changes, .. } => {
                let set: Vec<String> = changes.iter().map(|c| c.property.to_string()).collect();
                format!("set {} on image `{name}` (JSON patch)", set.join(" "))
            }
            SafeAction::HostCommand(command) => host_command(command),
            SafeAction::Confirm { prompt } => format!("ask an operator: {prompt}"),
        },
        Action::Wait(wait) => match wait {
            Wait::NodeLeft { node } => format!("wait until {node} has left the cluster"),
            Wait::NodeJoined { node } => format!("wait until {node} has joined"),
            Wait::ClusterFormed { nodes, status } => {
                format!("wait until all {nodes} nodes have joined and status is {status} or better")
            }
            Wait::NodeDrained { node } => {
                format!("wait until {node} holds no shards and none is relocating")
            }
            Wait::ComputeUp { host } => {
                format!("wait until nova-compute on {host} reports up again after the restart")
            }
            Wait::HostOutput(wait) => {
                let what = wait
                    .title
                    .as_ref()
                    .map_or_else(|| "wait".to_owned(), |title| format!("{title}:"));
                format!(
                    "{what} until `{}` on {} prints /{}/ (every {}s, up to {})",
                    command_line(&wait.argv),
                    wait.host,
                    wait.until,
                    wait.interval_secs,
                    super::duration(secs(wait.timeout_secs)),
                )
            }
        },
        Action::Gate { reason } => format!("a second operator approves here: {reason}"),
        Action::Destructive(DestructiveAction::DeleteIndices { indices }) => {
            let noun = if indices.len() == 1 {
                "index"
            } else {
                "indices"
            };
            format!("delete {} {noun}: {}", indices.len(), compact(indices))
        }
        Action::Destructive(DestructiveAction::RetireNode { node }) => {
            format!("stop the search container on {node} for good")
        }
        Action::Destructive(DestructiveAction::UnlistNode { node }) => {
            format!("remove {node} from the search group of the deployment inventory")
        }
        Action::Destructive(DestructiveAction::DeleteAllocation {
            consumer,
            resources,
            ..
        }) => format!("delete the allocations of instance {consumer} ({resources})"),
        Action::Destructive(DestructiveAction::DeleteComputeService { id, host }) => {
            format!("delete the compute service record of {host} ({id})")
        }
        Action::Destructive(DestructiveAction::HostCommand(command)) => host_command(command),
    }
}

/// `write the modprobe option: on compute-01, `tee /etc/modprobe.d/kvm.conf` < "options …"`.
/// The command is always shown: the approver approves what runs, not a title.
fn host_command(command: &HostCommand) -> String {
    let mut label = match &command.title {
        Some(title) => format!("{title}: "),
        None => String::new(),
    };
    label.push_str(&format!(
        "on {}, `{}`",
        command.host,
        command_line(&command.argv)
    ));
    if let Some(stdin) = &command.stdin {
        let input = stdin.to_string();
        let input = input.trim_end().replace('\n', "⏎");
        label.push_str(&format!(" with input \"{}\"", visible(&input, 80)));
    }
    label
}

/// An argv as one line; a word with a space or nothing in it is quoted so the words stay visible.
fn command_line(argv: &[Word]) -> String {
    argv.iter()
        .map(|word| {
            let word = word.to_string();
            if word.is_empty() || word.contains(char::is_whitespace) {
                format!("'{word}'")
            } else {
                word
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn secs(secs: u64) -> time::Duration {
    time::Duration::seconds(i64::try_from(secs).unwrap_or(i64::MAX))
}

fn destructive_marker(action: &Action) -> &'static str {
    match action {
        Action::Destructive(_) => " (needs approval)",
        Action::Safe(_) | Action::Wait(_) | Action::Gate { .. } => "",
    }
}

/// The plan as shown before a run starts and by `opsbot plan`, with the digest an approval
/// binds to: a run's stored one, never one recomputed from a plan that a later opsbot may
/// encode differently.
pub fn plan(plan: &Plan, digest: &PlanDigest) -> String {
    let mut text = format!("Plan for {} (digest {digest})\n", plan.request);
    for (i, action) in plan.steps.iter().enumerate() {
        let _ = writeln!(
            text,
            "{:>3}. {}{}",
            i + 1,
            step_label(action),
            destructive_marker(action)
        );
    }
    for note in &plan.notes {
        let _ = writeln!(text, "note: {note}");
    }
    fit(text.trim_end())
}

/// The answer to a procedure request: the run and its plan, and who must act next.
pub fn started(run: &Run) -> String {
    let first = match &run.state {
        RunState::AwaitingApproval { expires_at } => format!(
            "{id} waits for approval by an approver (expires {}): /approve id:{id} digest:{} or \
             /reject id:{id} reason:\"...\"",
            hhmm(*expires_at),
            run.digest,
            id = run.id,
        ),
        RunState::Booked => format!("{} booked", run.id),
        _ => format!("{} started", run.id),
    };
    let booked = run.booking.map_or_else(String::new, |booking| {
        format!(
            "\n📅 starts at {}, planned again then (a plan that changed waits for a fresh \
             approval); /run cancel id:{} cancels it",
            super::utc(booking.at),
            run.id
        )
    });
    fit(&format!(
        "{first}{booked}\n{}",
        plan(&run.plan, &run.digest)
    ))
}

/// `/approve` without a digest: the command that approves exactly this plan, then the plan.
pub fn approval_preview(run: &Run) -> String {
    fit(&format!(
        "to approve exactly this plan of {id}: /approve id:{id} digest:{}\n{}",
        run.digest,
        plan(&run.plan, &run.digest),
        id = run.id,
    ))
}
