//! Restarting a host's `nova_compute` container, as an operator's `docker restart` does, with
//! the two ways it goes wrong: the service never reports again, or the restart itself fails.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::World;

/// How a host's compute restarts go wrong, switched on per host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RestartFault {
    /// The restart is accepted but the service never reports again (it crashes on start-up):
    /// `updated_at` stays where it was and `state` turns `down` after `service_down_time`.
    StaysDown,
    /// The restart itself fails, as a failed `docker restart` does; the service keeps running.
    Fails,
}

/// One restart request for a host's compute service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComputeRestart {
    /// The host whose `nova-compute` was restarted.
    pub host: String,
    /// When, by the simulator's clock.
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    /// When the service reports again (a fresh `updated_at`); `None` if it never does or the
    /// restart failed.
    #[serde(with = "time::serde::rfc3339::option")]
    pub reports_again_at: Option<OffsetDateTime>,
    /// Whether the restart itself failed ([`RestartFault::Fails`]).
    pub failed: bool,
}

/// Why a compute restart was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestartError {
    /// No `nova-compute` service is registered for the host.
    #[error(
        "Error response from daemon: No such container: nova_compute (no nova-compute service on host {0})"
    )]
    NoComputeService(String),
    /// The host's [`RestartFault::Fails`] switch is on.
    #[error(
        "Error response from daemon: Cannot restart container nova_compute: tried to kill container, but did not receive an exit event (host {0})"
    )]
    Failed(String),
}

/// Restart switches and the log of every restart request.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Restarts {
    faults: BTreeMap<String, RestartFault>,
    log: Vec<ComputeRestart>,
}

impl World {
    /// Restarts the host's compute service: it stops reporting now and reports again `down_for`
    /// (the configured downtime if `None`) after the restart call has answered, unless a fault
    /// switch says other. A service that starts again resets the live migrations it was
    /// running (see [`World::reset_live_migrations`]; Nova does it in `init_host`, folded into
    /// the restart here).
    pub(crate) fn restart_compute(
        &mut self,
        host: &str,
        down_for: Option<std::time::Duration>,
    ) -> Result<ComputeRestart, RestartError> {
        if !self
            .services
            .iter()
            .any(|service| service.is_compute_on(host))
        {
            return Err(RestartError::NoComputeService(host.to_owned()));
        }
        let now = self.now();
        let fault = self.restarts.faults.get(host).copied();
        let back_after = match fault {
            Some(_) => None,
            // The container is up once the restart call answers; the service is quiet from
            // the stop until its first report after that.
            None => Some(
                time::Duration::try_from(
                    self.settings.restart_call + down_for.unwrap_or(self.settings.restart_downtime),
                )
                .unwrap_or(time::Duration::MAX),
            ),
        };
        let failed = fault == Some(RestartFault::Fails);
        if !failed {
            for service in &mut self.services {
                if service.is_compute_on(host) {
                    service.heartbeat.restart(now, back_after);
                }
            }
        }
        let restart = ComputeRestart {
            host: host.to_owned(),
            at: now,
            reports_again_at: back_after.and_then(|after| now.checked_add(after)),
            failed,
        };
        if fault.is_none() {
            self.reset_live_migrations(host);
        }
        self.restarts.log.push(restart.clone());
        if failed {
            Err(RestartError::Failed(host.to_owned()))
        } else {
            Ok(restart)
        }
    }

    /// How long a restart call takes to answer ([`crate::CloudSimConfig::compute_restart_call`]).
    pub(crate) fn restart_call(&self) -> std::time::Duration {
        self.settings.restart_call
    }

    /// Sets or clears a host's restart fault switch.
    pub(crate) fn set_restart_fault(&mut self, host: &str, fault: Option<RestartFault>) {
        match fault {
            Some(fault) => self.restarts.faults.insert(host.to_owned(), fault),
            None => self.restarts.faults.remove(host),
        };
    }

    /// Every restart request so far, failed ones included, oldest first.
    pub(crate) fn compute_restarts(&self) -> &[ComputeRestart] {
        &self.restarts.log
    }
}
