//! Nova's migration records: their types, statuses and which of them are in progress.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// Nova's `migration_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MigrationType {
    /// A cold migration: same flavor, another host.
    Migration,
    /// A resize: a new flavor (the simulator moves the same resources), another host.
    Resize,
    /// A live migration.
    LiveMigration,
}

impl MigrationType {
    /// Nova's spelling, as `migration_type` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            MigrationType::Migration => "migration",
            MigrationType::Resize => "resize",
            MigrationType::LiveMigration => "live-migration",
        }
    }
}

/// The statuses after which a migration no longer holds allocations: everything else is in
/// progress, `finished` (a resize awaiting confirmation) included. This is Nova's own list in
/// `migration_get_in_progress_by_host_and_node` (`nova/db/main/api.py`), which the resource
/// tracker and `nova-manage placement audit` use.
const MIGRATION_DONE_STATUSES: [&str; 7] = [
    "confirmed",
    "reverted",
    "error",
    "failed",
    "completed",
    "cancelled",
    "done",
];

/// The statuses in which Nova's API calls a live migration in progress (`os-migrations`
/// links, `GET /servers/{id}/migrations`): a narrower list than [`MIGRATION_DONE_STATUSES`]
/// implies (`accepted` already holds the moved allocations, for instance).
const LIVE_MIGRATION_IN_PROGRESS: [&str; 4] = ["queued", "preparing", "running", "post-migrating"];

/// A migration record as Nova's `os-migrations` knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Migration {
    /// Nova's integer id.
    pub id: u32,
    /// The migration uuid: the placement consumer of the source allocations.
    pub uuid: Uuid,
    /// The server being moved.
    pub instance_uuid: Uuid,
    /// What kind of move.
    pub migration_type: MigrationType,
    /// Nova's status string, e.g. `migrating`, `finished`, `confirmed`.
    pub status: String,
    /// The host it leaves (also `source_node`).
    pub source_compute: String,
    /// The host it goes to (also `dest_node`).
    pub dest_compute: String,
    /// The destination's IP, as `dest_host` shows it.
    pub dest_host: String,
    /// The flavor ids before and after.
    pub old_instance_type_id: u32,
    /// See `old_instance_type_id`.
    pub new_instance_type_id: u32,
    /// Who started it (microversion 2.80).
    pub project_id: String,
    /// See `project_id`.
    pub user_id: String,
    /// When it was created, by the simulator's clock.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When its status last changed.
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

impl Migration {
    /// Whether Nova counts it in progress (it still holds allocations): its status is not one
    /// of [`MIGRATION_DONE_STATUSES`].
    pub fn in_progress(&self) -> bool {
        !MIGRATION_DONE_STATUSES.contains(&self.status.as_str())
    }

    /// Whether it is a live migration the API shows as in progress.
    pub(crate) fn live_in_progress(&self) -> bool {
        self.migration_type == MigrationType::LiveMigration
            && LIVE_MIGRATION_IN_PROGRESS.contains(&self.status.as_str())
    }
}

/// Why a migration could not be started or moved on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MigrationError {
    /// No such server.
    #[error("Instance {0} could not be found.")]
    UnknownServer(Uuid),
    /// No such migration.
    #[error("Migration {0} could not be found.")]
    UnknownMigration(Uuid),
    /// No provider and compute service by that name.
    #[error("Compute host {0} could not be found.")]
    UnknownHost(String),
    /// The server is in a state Nova refuses the move in.
    #[error("Cannot move instance {0} while it is {1}")]
    InvalidState(Uuid, String),
    /// The server has no host (it never booted).
    #[error("Instance {0} is not ready (it has no host)")]
    NoHost(Uuid),
    /// The destination is the source (`allow_resize_to_same_host` is off by default).
    #[error("Unable to migrate instance ({0}) to current host ({1}).")]
    SameHost(Uuid, String),
    /// The source's compute service is down, or the destination's is down or disabled.
    #[error("No valid host: the nova-compute service on {0} is down or disabled")]
    HostUnavailable(String),
    /// The server has no allocations on its host's provider to move.
    #[error("Instance {0} has no allocations on {1} to move")]
    NoAllocations(Uuid, String),
    /// The migration is over.
    #[error("Migration {0} is not in progress (status {1})")]
    NotInProgress(Uuid, String),
    /// A step that only resizes and cold migrations have.
    #[error("Migration {0} is a live migration, which has no '{1}' step")]
    Live(Uuid, &'static str),
}

/// A migration and the server status it returns to.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Record {
    #[serde(flatten)]
    pub migration: Migration,
    /// The server's status before the move, which confirming or reverting restores.
    pub server_status: String,
}
