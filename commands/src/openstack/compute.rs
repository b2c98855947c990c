//! What the compute API says: its service records (spec 2.9) and whether an instance exists.

use std::fmt;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::ids::{ConsumerId, ServiceId};
use crate::name::HostName;

/// `status` of a compute service: whether the scheduler may use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceStatus {
    Enabled,
    Disabled,
}

/// `state` of a compute service: whether it reported in recently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceState {
    Up,
    Down,
}

/// One row of `GET /os-services`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComputeService {
    pub id: ServiceId,
    /// `nova-compute`, `nova-scheduler`, `nova-conductor`, ...
    pub binary: String,
    pub host: HostName,
    pub zone: String,
    pub status: ServiceStatus,
    pub state: ServiceState,
    #[serde(with = "time::serde::rfc3339::option")]
    pub updated_at: Option<OffsetDateTime>,
    pub disabled_reason: Option<String>,
}

impl ComputeService {
    /// The hypervisor agent, whose records pin the RPC version cap.
    pub const COMPUTE: &'static str = "nova-compute";

    pub fn is_compute(&self) -> bool {
        self.binary == Self::COMPUTE
    }

    /// Disabled and not reporting: a registration left behind by a host that was removed or
    /// never upgraded. Disabled services still count when the RPC version is chosen (spec 2.9).
    pub fn is_stale_registration(&self) -> bool {
        self.status == ServiceStatus::Disabled && self.state == ServiceState::Down
    }
}

impl fmt::Display for ServiceStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Enabled => "enabled",
            Self::Disabled => "disabled",
        })
    }
}

impl fmt::Display for ServiceState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Up => "up",
            Self::Down => "down",
        })
    }
}

/// Whether the compute API knows an instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "presence", rename_all = "snake_case")]
pub enum Instance {
    /// `GET /servers/{id}` answered 200.
    Exists { name: String, status: String },
    /// `GET /servers/{id}` answered 404: the instance is not in the compute database.
    Gone,
}

/// A migration as Nova lists it (`GET /os-migrations`; its UUID from microversion 2.59). A
/// resize or a migration moves the instance's allocations on the source host to a consumer
/// named by this UUID, which `GET /servers/{uuid}` does not know.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Migration {
    /// Nova's integer id, which `openstack server migration show` and `abort` take.
    pub id: u64,
    pub uuid: ConsumerId,
    pub instance: ConsumerId,
    /// `migration`, `resize`, `live-migration` or `evacuation`.
    pub kind: String,
    pub status: String,
    pub source: Option<String>,
    pub dest: Option<String>,
}

impl Migration {
    /// The statuses a migration ends in; in any other it still holds allocations (Nova's own
    /// rule, `migration_get_in_progress_by_host_and_node`: `finished` awaits a confirm or a
    /// revert, and holds them too).
    pub const ENDED: [&'static str; 7] = [
        "confirmed",
        "reverted",
        "error",
        "failed",
        "completed",
        "cancelled",
        "done",
    ];

    pub fn in_progress(&self) -> bool {
        !Self::ENDED.contains(&self.status.as_str())
    }

    /// Whether restarting `nova-compute` at either end would break it. The source's service
    /// sets a live migration it finds in progress to `error` when it starts
    /// (`ComputeManager._reset_live_migration`) and rolls back a cold migration or resize
    /// caught copying (`_init_instance`, `RESIZE_MIGRATING`); a destination that goes away
    /// fails the move. Every migration in progress counts but a resize or cold migration in
    /// `finished`: it only awaits a confirm or a revert, and nothing runs for it meanwhile.
    pub fn broken_by_restart(&self) -> bool {
        self.in_progress() && self.status != "finished"
    }

    /// Its kind as an operator says it: `live migration`, `cold migration`, `resize`, ...
    fn kind_in_words(&self) -> &str {
        match self.kind.as_str() {
            "live-migration" => "live migration",
            "migration" => "cold migration",
            other => other,
        }
    }
}

/// The migrations at a host that a restart of its `nova-compute` would break (see
/// [`Migration::broken_by_restart`]), for the plan and for the look right before each restart,
/// which both decide with it. Shown as `live migration 17 of instance <uuid> is running
/// (compute-02 → compute-03)`, several joined by `; `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InFlight<'a>(Vec<&'a Migration>);

impl<'a> InFlight<'a> {
    /// Those of `migrations` a restart would break; `None` when there are none.
    pub fn among(migrations: &'a [Migration]) -> Option<Self> {
        let breakable: Vec<&Migration> = migrations
            .iter()
            .filter(|m| m.broken_by_restart())
            .collect();
        (!breakable.is_empty()).then_some(Self(breakable))
    }

    /// `it has` or `they have`, for "once … finished".
    pub fn have(&self) -> &'static str {
        if self.0.len() == 1 {
            "it has"
        } else {
            "they have"
        }
    }
}

impl fmt::Display for InFlight<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, m) in self.0.iter().enumerate() {
            if n > 0 {
                f.write_str("; ")?;
            }
            write!(
                f,
                "{} {} of instance {} is {}",
                m.kind_in_words(),
                m.id,
                m.instance,
                m.status
            )?;
            if let (Some(source), Some(dest)) = (&m.source, &m.dest) {
                write!(f, " ({source} → {dest})")?;
            }
        }
        Ok(())
    }
}

impl Migration {
    /// What holds the allocations, in words: `migration in progress, resize … (running, …)`,
    /// or `migration awaiting a confirm or a revert, …` for one Nova reports `finished` (a
    /// resize or cold migration done but for the operator's decision).
    pub fn holding(&self) -> String {
        let standing = if self.status == "finished" {
            "awaiting a confirm or a revert"
        } else {
            "in progress"
        };
        format!("migration {standing}, {self}")
    }
}

impl fmt::Display for Migration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} of instance {} ({}",
            self.kind, self.uuid, self.instance, self.status
        )?;
        match (&self.source, &self.dest) {
            (Some(source), Some(dest)) => write!(f, ", {source} → {dest})"),
            _ => f.write_str(")"),
        }
    }
}
