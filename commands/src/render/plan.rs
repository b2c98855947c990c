//! Plans: what each step does, in a few words, and the plan as shown before a run.

use std::fmt::Write as _;

use super::{compact, fit, hhmm};
use crate::cluster::{EXCLUDE_IP, FlushMode};
use crate::consent::Consent;
use crate::echo::visible;
use crate::plan::{
    Action, CloudDestructive, CloudSafe, CloudWait, ClusterDestructive, ClusterSafe, ClusterWait,
    HostCommand, HostDestructive, HostSafe, HostWait, Kind, Plan, PlanDigest, StepRef,
};
use crate::run::{Run, RunState};
use crate::runbook::Word;

/// What a step does, in a few words.
pub fn step_label(step: StepRef<'_>) -> String {
    match step {
        StepRef::Cluster(action) => action.label(),
        StepRef::Cloud(action) => action.label(),
        StepRef::Hosts(action) => action.label(),
    }
}

/// What step `index` of `plan` does, in a few words; nothing past its end.
pub fn step_label_at(plan: &Plan, index: usize) -> String {
    plan.step(index).map(step_label).unwrap_or_default()
}

/// What a step or a part of one does, in a few words.
pub trait Label {
    fn label(&self) -> String;
}

impl<K: Kind> Label for Action<K>
where
    K::Safe: Label,
    K::Wait: Label,
    K::Destructive: Label,
{
    fn label(&self) -> String {
        match self {
            Action::Safe(safe) => safe.label(),
            Action::Wait(wait) => wait.label(),
            Action::Destructive(destructive) => destructive.label(),
            Action::Gate { reason } => format!("a second operator approves here: {reason}"),
        }
    }
}

impl Label for ClusterSafe {
    fn label(&self) -> String {
        match self {
            Self::DisableAllocation => {
                "disable shard allocation (persistent cluster.routing.allocation.enable: none)"
                    .to_owned()
            }
            Self::EnableAllocation => {
                "re-enable shard allocation (persistent cluster.routing.allocation.enable: null)"
                    .to_owned()
            }
            Self::Flush {
                mode: FlushMode::Synced,
            } => "synced flush (POST /_flush/synced)".to_owned(),
            Self::Flush {
                mode: FlushMode::Plain,
            } => "flush (POST /_flush)".to_owned(),
            Self::StopNode { node } => format!("stop the search container on {node}"),
            Self::StartNode { node } => format!("start the search container on {node}"),
            Self::Report => "report _cat/health, _cat/recovery and _cat/nodes".to_owned(),
            Self::VerifyDeleted => {
                "list the indices and verify that none of the deleted ones remains".to_owned()
            }
            Self::ExcludeNode { node } => {
                format!("exclude {node} from allocation (transient {EXCLUDE_IP}: {node})")
            }
            Self::ClearExclusion { node } => {
                format!("clear the exclusion of {node} (transient {EXCLUDE_IP}: \"\")")
            }
            Self::Redeploy { removed } => {
                format!("redeploy the search service with serial 1, without {removed}")
            }
        }
    }
}

impl Label for ClusterWait {
    fn label(&self) -> String {
        match self {
            Self::NodeLeft { node } => format!("wait until {node} has left the cluster"),
            Self::NodeJoined { node } => format!("wait until {node} has joined"),
            Self::ClusterFormed { nodes, status } => {
                format!("wait until all {nodes} nodes have joined and status is {status} or better")
            }
            Self::NodeDrained { node } => {
                format!("wait until {node} holds no shards and none is relocating")
            }
        }
    }
}

impl Label for ClusterDestructive {
    fn label(&self) -> String {
        match self {
            Self::DeleteIndices { indices } => {
                let noun = if indices.len() == 1 {
                    "index"
                } else {
                    "indices"
                };
                format!("delete {} {noun}: {}", indices.len(), compact(indices))
            }
            Self::RetireNode { node } => format!("stop the search container on {node} for good"),
            Self::UnlistNode { node } => {
                format!("remove {node} from the search group of the deployment inventory")
            }
        }
    }
}

impl Label for CloudSafe {
    fn label(&self) -> String {
        match self {
            Self::VerifyReleased { .. } => {
                "list the provider's allocations and verify that none of the deleted ones remains"
                    .to_owned()
            }
            Self::RestartCompute { host } => format!("restart the compute container on {host}"),
            Self::SetImageProperties { name, changes, .. } => {
                let set: Vec<String> = changes.iter().map(|c| c.property.to_string()).collect();
                format!("set {} on image `{name}` (JSON patch)", set.join(" "))
            }
        }
    }
}

impl Label for CloudWait {
    fn label(&self) -> String {
        match self {
            Self::ComputeUp { host } => {
                format!("wait until nova-compute on {host} reports up again after the restart")
            }
        }
    }
}

impl Label for CloudDestructive {
    fn label(&self) -> String {
        match self {
            Self::DeleteAllocation {
                consumer,
                resources,
                ..
            } => format!("delete the allocations of instance {consumer} ({resources})"),
            Self::DeleteComputeService { id, host } => {
                format!("delete the compute service record of {host} ({id})")
            }
        }
    }
}

impl Label for HostSafe {
    fn label(&self) -> String {
        match self {
            Self::HostCommand(command) => host_command(command),
            Self::Confirm { prompt } => format!("ask an operator: {prompt}"),
        }
    }
}

impl Label for HostWait {
    fn label(&self) -> String {
        match self {
            Self::HostOutput(wait) => {
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
        }
    }
}

impl Label for HostDestructive {
    fn label(&self) -> String {
        match self {
            Self::HostCommand(command) => host_command(command),
        }
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

fn destructive_marker(step: StepRef<'_>) -> &'static str {
    if step.is_destructive() {
        " (needs approval)"
    } else {
        ""
    }
}

/// The plan as shown before a run starts and by `opsbot plan`, with the digest an approval
/// binds to: a run's stored one, never one recomputed from a plan that a later opsbot may
/// encode differently.
pub fn plan(plan: &Plan, digest: &PlanDigest) -> String {
    fit(&whole_plan(plan, digest))
}

/// The plan whole, as a file for chat where the answer that shows it had to be cut: every
/// step of a prune of thousands of indices. `None` when the answer shows all of it.
pub fn plan_file(run: &Run) -> Option<String> {
    let whole = whole_plan(run.plan(), &run.digest);
    (started_text(run, &whole).chars().count() > super::MESSAGE_LIMIT).then_some(whole)
}

fn whole_plan(plan: &Plan, digest: &PlanDigest) -> String {
    let mut text = format!("Plan for {} (digest {digest})\n", plan.request());
    for (i, step) in plan.steps().enumerate() {
        let _ = writeln!(
            text,
            "{:>3}. {}{}",
            i + 1,
            step_label(step),
            destructive_marker(step)
        );
    }
    let _ = writeln!(text, "{}", consent_line(plan));
    for note in plan.notes() {
        let _ = writeln!(text, "note: {note}");
    }
    text.trim_end().to_owned()
}

/// What the plan waits for before it acts, by the operators' policy and its steps:
/// `approval: confirm (the requester confirms the plan before it runs)`.
fn consent_line(plan: &Plan) -> String {
    let consent = plan.consent();
    let when = match plan.approval_at() {
        Some(gate @ 1..) => format!(" at step {}", gate + 1),
        Some(0) | None if consent == Consent::None => String::new(),
        Some(0) | None => " before it runs".to_owned(),
    };
    format!("approval: {consent} ({}{when})", consent.waits_for())
}

/// The answer to a procedure request: the run and its plan, and who must act next.
pub fn started(run: &Run) -> String {
    fit(&started_text(run, &whole_plan(run.plan(), &run.digest)))
}

/// The answer to a procedure request, whole: who must act next, then `plan`.
fn started_text(run: &Run, plan: &str) -> String {
    let first = match &run.state {
        RunState::AwaitingApproval { expires_at } if run.plan().needs_confirmation() => format!(
            "{id} waits for {} to confirm it (expires {}): /run confirm id:{id} digest:{}, or \
             /run cancel id:{id} to withdraw it",
            run.requester.name,
            hhmm(*expires_at),
            run.digest,
            id = run.id,
        ),
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
    format!("{first}{booked}\n{plan}")
}

/// `/approve` without a digest: the command that approves exactly this plan, then the plan.
pub fn approval_preview(run: &Run) -> String {
    fit(&format!(
        "to approve exactly this plan of {id}: /approve id:{id} digest:{}\n{}",
        run.digest,
        plan(run.plan(), &run.digest),
        id = run.id,
    ))
}
