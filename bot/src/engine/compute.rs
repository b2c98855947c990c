//! Restarting `nova-compute` on hypervisors one at a time: after each restart the run waits
//! until the host's compute service reports up again with a fresh report (one from before the
//! restart does not count), and stops at a host that does not come back. A restart found
//! started after a crash is never done again blindly: an operator says whether it happened.
//! Right before each restart (and before asking about one a crash cut off) the run looks at the
//! host's migrations again: one started since the plan stops the run there.

use opsbot_commands::cluster::Observation;
use opsbot_commands::name::HostName;
use opsbot_commands::openstack::compute::{ComputeService, InFlight, ServiceState};
use opsbot_commands::render;
use opsbot_commands::run::{Run, StepState};
use opsbot_state::StoreError;
use time::OffsetDateTime;
use tokio::sync::Notify;

use super::Inner;
use super::failure::StepFailure;
use super::step::{StepOutcome, retried};
use super::wait;
use crate::clouds::Cloud;

/// How the host's compute service looks, for the progress message.
fn shown(services: &[ComputeService], host: &HostName, now: OffsetDateTime) -> String {
    match services.iter().find(|s| s.is_compute() && &s.host == host) {
        Some(s) => format!(
            "nova-compute on {host}: {}, last report {}",
            s.state,
            s.updated_at.map_or_else(
                || "never".to_owned(),
                |at| format!("{} ago", render::duration(now - at))
            )
        ),
        None => format!("nova-compute on {host}: not listed"),
    }
}

/// Waits until `host`'s compute service reports up with a report newer than the one it showed
/// at the first look: the wait starts once the restart is done (the old process is gone), so a
/// newer report comes from the restarted one. No clock is compared with the controllers'.
pub(super) async fn up(
    inner: &Inner,
    cloud: &Cloud,
    run: &Run,
    host: &HostName,
    waker: &Notify,
) -> Result<StepOutcome, StoreError> {
    let timeout = inner.config.compute_timeout;
    let deadline = inner.clock.instant() + timeout;
    // The report seen at the first look: `Some(None)` when the service had never reported.
    let mut baseline: Option<Option<OffsetDateTime>> = None;
    loop {
        let last = match cloud.client.services().await {
            Ok(services) => {
                let service = services.iter().find(|s| s.is_compute() && &s.host == host);
                let reported = service.and_then(|s| s.updated_at);
                match baseline {
                    None => baseline = Some(reported),
                    Some(before) => {
                        if let Some(service) =
                            service.filter(|s| s.state == ServiceState::Up && reported > before)
                        {
                            let at = service.updated_at.map_or_else(String::new, render::utc);
                            return Ok(StepOutcome::Done(format!(
                                "nova-compute on {host} reports up again (report at {at})"
                            )));
                        }
                    }
                }
                shown(&services, host, inner.clock.now())
            }
            // A look that fails for a while (a controller restarting) is one more look; the
            // timeout bounds them. A refusal (401/403, a certificate) would only be waited out
            // and then blamed on the container: it fails the wait at once, as `wait::until` does.
            Err(error) if error.fault.is_transient() => error.to_string(),
            Err(error) => {
                return Ok(StepFailure::During {
                    error: Box::new(error),
                    doing: format!("waiting for nova-compute on {host} to report up again"),
                }
                .into());
            }
        };
        inner.progress.observe(
            run,
            Observation {
                note: Some(format!("{last}; waiting for a report after the restart")),
                ..Observation::default()
            },
        );
        if inner.clock.instant() >= deadline {
            return Ok(StepFailure::ComputeDown {
                host: host.clone(),
                waited: wait::shown(timeout),
                last,
            }
            .into());
        }
        if wait::paused_for_cancel(inner, run, inner.config.poll_interval, waker).await? {
            return Ok(StepOutcome::Cancelled);
        }
    }
}

/// A restart found started after a crash: an operator says whether it happened. Nothing the
/// cloud shows can tell: a `nova-compute` that was never restarted keeps reporting up every
/// 10 s just as a restarted one does, and restarting again blindly could restart the host twice.
/// `None` when the restart had not started.
pub(super) fn settled(run: &Run, index: usize, host: &HostName) -> Option<StepOutcome> {
    matches!(run.steps()[index], StepState::Started { .. }).then(|| {
        StepOutcome::AskOperator(format!(
            "opsbot stopped while restarting nova_compute on {host} and cannot tell whether the \
             restart happened: look at the container's start time on {host} (`docker ps`) and \
             restart it by hand if it was not"
        ))
    })
}

/// The step's failure if `host` has a migration in progress that restarting its `nova-compute`
/// would break, or if its migrations cannot be read; `None` when the restart may go ahead.
///
/// The step fails rather than being skipped: the run has waited up to the approval TTL since
/// the plan, and skipping would end it "succeeded" with the cap still pinned on that host (and
/// its wait for a restart that never happened passing on the next routine report). Failing
/// stops the rolling restart where it stands, every host before it restarted and up, and says
/// what to wait for; a later `/compute rpc-cap` plans around whatever is still moving.
/// `resumed`: the restart was found started after a crash, so it may have happened already.
pub(super) async fn held_back(
    inner: &Inner,
    cloud: &Cloud,
    run: &Run,
    host: &HostName,
    resumed: bool,
) -> Option<StepOutcome> {
    let migrations = match retried(inner, run, || cloud.client.migrations(host)).await {
        Ok(migrations) => migrations,
        Err(error) => {
            return Some(
                StepFailure::During {
                    error: Box::new(error),
                    doing: format!(
                        "looking for migrations in progress at {host}, so nova_compute there \
                         was not restarted (a restart breaks a live migration)"
                    ),
                }
                .into(),
            );
        }
    };
    let in_flight = InFlight::among(&migrations)?;
    let what = if resumed {
        format!(
            "opsbot stopped while restarting nova_compute on {host} and cannot tell whether the \
             restart happened; do not restart it by hand now"
        )
    } else {
        format!("nova_compute on {host} was not restarted")
    };
    Some(
        StepFailure::Migrating {
            what,
            in_flight: in_flight.to_string(),
            cloud: cloud.name.clone(),
            have: in_flight.have(),
        }
        .into(),
    )
}
