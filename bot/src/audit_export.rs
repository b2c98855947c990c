//! `opsbot audit export`: the audit log as JSON lines for the team's log system, in the format
//! compaction archives with (`opsbot_state::export`), read from the store's time index.

use anyhow::Context;
use opsbot_commands::name::RunId;
use opsbot_state::{AuditQuery, Store, StoreError};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// Which events to export (sent as is to a running bot over its console socket).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filter {
    /// Only events at or after this instant.
    #[serde(with = "time::serde::rfc3339::option")]
    pub since: Option<OffsetDateTime>,
    /// Only this run's events.
    pub run: Option<RunId>,
}

/// Calls `line` with each event `filter` keeps, oldest first, as one JSON line (without its
/// line end). A run never created is an error, not an empty export: a typo must not look like
/// a quiet run. A run compaction archived is not: its entries still in the store are exported.
pub fn write(
    store: &Store,
    filter: Filter,
    mut line: impl FnMut(String) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    if let Some(run) = filter.run {
        if !store.was_created(run)? {
            return Err(StoreError::NotFound { run }.into());
        }
    }
    let query = AuditQuery {
        since: filter.since,
        run: filter.run,
    };
    for event in store.audit_events(query) {
        let value = opsbot_state::export::audit_event(&event?)
            .context("an audit event cannot be written")?;
        line(value.to_string())?;
    }
    Ok(())
}
