//! Why a step failed. Each variant's `Display` is the text the operator reads in the run's
//! message, its log and the audit record: what happened, what was (not) done, where to look.

use opsbot_commands::approval::ApprovalRefusal;
use opsbot_commands::name::{CloudName, ClusterName, HostName, RunId};
use opsbot_commands::openstack::ids::ImageId;
use opsbot_state::StoreError;

use super::step::StepOutcome;
use crate::backend::BackendError;
use crate::process::CommandError;

#[derive(Debug, thiserror::Error)]
pub(super) enum StepFailure {
    /// A call that still failed after its retries, or one that is not retried. (Boxed, as
    /// the next: a failure is rare, and a small `Result` is passed on every step.)
    #[error(transparent)]
    Backend(Box<BackendError>),
    /// The server refused the step's change before acting on it (a 4xx to the step's first
    /// request that changes anything): nothing of the step was done.
    #[error(transparent)]
    Refused(Box<BackendError>),
    /// A call that failed while the step was doing something it names.
    #[error("{error}; while {doing}")]
    During {
        error: Box<BackendError>,
        doing: String,
    },
    /// The stored approval does not hold for the plan as it is.
    #[error(transparent)]
    Approval(#[from] ApprovalRefusal),
    /// This instance may not start a side effect now: its tenure may have lapsed.
    #[error(transparent)]
    NotActing(StoreError),
    /// The run's cluster or cloud was taken out of the config while the run was under way.
    #[error("{kind} `{name}` is no longer in the config; add it back to finish this run")]
    TargetGone { kind: &'static str, name: String },
    /// A program on a node or a host, or the simulator standing in for one, that failed.
    #[error("{on}: {error}")]
    Command { on: String, error: CommandError },
    /// A runbook command that ended with an exit code its step does not accept.
    #[error("on {host}, `{cmd}` {ending}: {last}; the whole output is in /run log id:{run}")]
    Exited {
        host: HostName,
        cmd: String,
        ending: String,
        last: String,
        run: RunId,
    },
    /// A runbook's output check that is no regular expression (checked at load; an old store).
    #[error("the runbook's /{pattern}/ is no regular expression")]
    NoRegex { pattern: String },
    /// A runbook command whose output does not match what its step expects.
    #[error("on {host}, the output of `{cmd}` does not match /{expected}/; it ended with: {last}")]
    Unexpected {
        host: HostName,
        cmd: String,
        expected: String,
        last: String,
    },
    /// A placeholder whose value no earlier step captured.
    #[error(
        "{{{name}}} was never captured (the step that captures it was confirmed by hand?); run \
         the rest by hand"
    )]
    NeverCaptured { name: String },
    /// A wait whose condition did not come within its time.
    #[error("gave up after {waited} waiting {waiting}; last observed: {last}")]
    GaveUp {
        waited: String,
        waiting: String,
        last: String,
    },
    /// A runbook's wait for a command's output that did not come within its time.
    #[error(
        "gave up after {waited} waiting until `{cmd}` on {host} prints /{until}/; last seen: {last}"
    )]
    NeverPrinted {
        waited: String,
        cmd: String,
        host: HostName,
        until: String,
        last: String,
    },
    /// A restarted nova-compute that did not report up in time.
    #[error(
        "nova-compute on {host} has not reported up since its restart (waited {waited}; last \
         seen: {last}); the run stops here and restarts no other host. Look at the \
         `nova_compute` container on {host}"
    )]
    ComputeDown {
        host: HostName,
        waited: String,
        last: String,
    },
    /// A migration at the host that a restart of nova-compute would break.
    #[error(
        "{what}: {in_flight}, and a restart would break it (a starting nova-compute sets a \
         live migration in progress to `error` and rolls back a resize caught copying). The \
         run stops here and restarts no other host; run /compute rpc-cap cloud:{cloud} again \
         once {have} finished"
    )]
    Migrating {
        what: String,
        in_flight: String,
        cloud: CloudName,
        have: &'static str,
    },
    /// An earlier deletion of the chunk's indices the cluster has not finished applying.
    #[error(
        "cluster `{cluster}` is still applying an earlier deletion of these indices after \
         {waited} ({what}); nothing was sent again. Look at GET /_cluster/pending_tasks, and \
         prune again once it is done"
    )]
    StillApplying {
        cluster: ClusterName,
        waited: String,
        what: String,
    },
    /// Indices the cluster answered it deleted, still there under their approved UUID with no
    /// deletion of them pending. The DELETE is not sent again: it was answered, and opsbot never
    /// sends a second DELETE of a name. Every count is the listing's, per index: what a chunk
    /// found gone before its DELETE is counted as gone, never as deleted by opsbot.
    #[error(
        "{stayed_count} of the {selected} selected indices {verb} still there with the approved \
         UUID although the cluster answered every DELETE, and no deletion of {pronoun} is \
         pending: {stayed}. Gone now: {gone}; re-created since the plan and kept: {recreated}. \
         opsbot sends no DELETE twice; look for a snapshot in progress or an index block (GET \
         /_snapshot/_status, GET /{first}/_settings), then /indices list cluster:{cluster}",
        verb = if *.stayed_count == 1 { "is" } else { "are" },
        pronoun = if *.stayed_count == 1 { "it" } else { "them" },
    )]
    Stayed {
        selected: usize,
        stayed: String,
        stayed_count: usize,
        gone: usize,
        recreated: usize,
        first: String,
        cluster: ClusterName,
    },
    /// Allocations still there after placement acknowledged their deletion.
    #[error(
        "still allocated after the delete: {consumers}; placement acknowledged it, so check its \
         log, then /placement allocations"
    )]
    StillAllocated { consumers: String },
    /// The image a step was to change is gone.
    #[error("image `{name}` ({image}) is gone")]
    ImageGone { name: String, image: ImageId },
}

impl From<BackendError> for StepFailure {
    fn from(error: BackendError) -> Self {
        Self::Backend(Box::new(error))
    }
}

/// A failure ends the step with its text, as the run records it.
impl From<StepFailure> for StepOutcome {
    fn from(failure: StepFailure) -> Self {
        match failure {
            StepFailure::Refused(_) => StepOutcome::Refused(failure.to_string()),
            _ => StepOutcome::Failed(failure.to_string()),
        }
    }
}
