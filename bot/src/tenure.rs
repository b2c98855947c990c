//! Where this bot stands among the bots on one store (alone, active under the lease, standing
//! by, stepped down), and how the lease is timed. The lease keeper (`lease`) changes it; the
//! store's writes and the engine check it before each write and side effect; metrics and
//! `/healthz` read it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use opsbot_state::{LeaseStatus, StoreError};
use tokio::time::Instant;

/// How the lease is timed, from `[store] takeover`: how soon a standby must have taken over
/// after the active bot died.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// How long a renewal holds the lease, by the database's clock.
    pub ttl: Duration,
    /// How often the active bot renews.
    pub renew_every: Duration,
    /// How often a standby asks for the lease.
    pub ask_every: Duration,
    /// Taken off the tenure on this side, for clocks that run at different rates.
    pub margin: Duration,
}

impl Timing {
    /// A standby takes over at most `ttl + ask_every` after the last renewal, plus the time it
    /// takes to resume the runs: `takeover` leaves a sixth of itself for that.
    pub fn within(takeover: Duration) -> Self {
        let ttl = takeover * 2 / 3;
        Self {
            ttl,
            renew_every: ttl / 4,
            ask_every: takeover / 6,
            margin: ttl / 5,
        }
    }
}

/// Where this bot stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// The only bot on its store (sled admits one process): always active, no lease.
    Alone,
    /// Waiting for the lease; `active` is who holds it now, if anyone does.
    Standby { active: Option<LeaseStatus> },
    /// Holding the lease at `epoch`; side effects may start until `until`.
    Active {
        holder: String,
        epoch: u64,
        until: Instant,
    },
    /// Lost the lease (or could not renew it in time): does nothing more, and exits.
    SteppedDown { epoch: u64, why: String },
}

impl Role {
    /// Active at `epoch` under a lease renewed (or taken) by a request sent at `sent`: side
    /// effects may start until the lease's length, less the margin, after that.
    pub(crate) fn active(holder: &str, epoch: u64, sent: Instant, timing: Timing) -> Self {
        Role::Active {
            holder: holder.to_owned(),
            epoch,
            until: sent + timing.ttl - timing.margin,
        }
    }

    /// Active under a tenure that has run out.
    pub(crate) fn lapsed(&self) -> bool {
        matches!(self, Role::Active { until, .. } if Instant::now() >= *until)
    }

    /// Whether a write or a side effect may start now: always when alone, only within the
    /// tenure when active, never otherwise; the error says why not.
    pub fn acting(&self) -> Result<(), String> {
        match self {
            Role::Alone => Ok(()),
            Role::Active { epoch, .. } if self.lapsed() => Err(format!(
                "the lease of epoch {epoch} was not renewed in time"
            )),
            Role::Active { .. } => Ok(()),
            Role::Standby { .. } | Role::SteppedDown { .. } => Err(self.describe()),
        }
    }

    /// For `/healthz` and the log.
    pub fn describe(&self) -> String {
        match self {
            Role::Alone => "active (sole instance)".to_owned(),
            Role::Standby {
                active: Some(lease),
            } => format!(
                "standby (active: {} at epoch {})",
                lease.holder, lease.epoch
            ),
            Role::Standby { active: None } => "standby (no active instance yet)".to_owned(),
            Role::Active { holder, epoch, .. } => format!("active ({holder} at epoch {epoch})"),
            Role::SteppedDown { epoch, why } => format!("stepped down from epoch {epoch}: {why}"),
        }
    }
}

/// This bot's standing, shared by the lease keeper (which changes it), the store's writes and
/// the engine (which check it before each write and side effect), and `/healthz`.
#[derive(Debug, Clone)]
pub struct Tenure(Arc<Mutex<Role>>);

impl Default for Tenure {
    fn default() -> Self {
        Self(Arc::new(Mutex::new(Role::Alone)))
    }
}

impl Tenure {
    pub fn role(&self) -> Role {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set(&self, role: Role) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = role;
    }

    /// Whether a write or a side effect may start now ([`Role::acting`]).
    pub fn check(&self) -> Result<(), StoreError> {
        self.role()
            .acting()
            .map_err(|detail| StoreError::NotActive { detail })
    }
}
