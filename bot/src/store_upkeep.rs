//! Keeping the store's size flat: the running bot archives the finished runs and the audit
//! entries older than `[store] retention` (see `opsbot_state::Store::compact`), once at
//! start-up and then every hour, through `StoreWrites` so that the async workers never wait
//! for the disk.

use std::time::Duration;

use opsbot_state::{Compacted, StoreError};
use time::OffsetDateTime;
use tokio::task::JoinHandle;

use crate::clock::Clock;
use crate::config::Retention;
use crate::store_writes::StoreWrites;

/// How often the running bot compacts: the retention is counted in days, so an hour late is
/// nothing, and each round reads only what is past it.
const EVERY: Duration = Duration::from_secs(60 * 60);
/// Runs and audit entries archived per batch (per transaction and fsync).
const BATCH: usize = 500;

/// Compacts now and then every hour until the bot stops (abort the handle), by `clock` (the
/// engine's): the retention's cut-off is counted from its time.
pub fn spawn(store: StoreWrites, retention: Retention, clock: Clock) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let _ = compact(&store, retention, clock.now()).await;
            // An hour after the round ended rather than began: an hour late is nothing.
            clock.sleep(EVERY).await;
        }
    })
}

/// One round at `now`, off the async threads; failures are logged (the next round tries
/// again) and returned.
pub async fn compact(
    store: &StoreWrites,
    retention: Retention,
    now: OffsetDateTime,
) -> Result<Compacted, StoreError> {
    let cutoff = retention.cutoff(now);
    let result = store.compact(cutoff, BATCH).await;
    match &result {
        Ok(done) if *done != Compacted::default() => tracing::info!(
            runs = done.runs,
            audit = done.audit,
            %cutoff,
            "archived the history past the retention"
        ),
        Ok(_) => {}
        Err(error) => tracing::warn!(%error, "could not archive old history; retrying in an hour"),
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_round_archives_what_finished_before_the_retention() {
        let dir = tempfile::tempdir().unwrap();
        let store = opsbot_state::Store::open(&dir.path().join("store")).unwrap();
        let writes = StoreWrites::new(store.clone());
        let event = opsbot_commands::audit::AuditEvent {
            at: OffsetDateTime::now_utc(),
            run: None,
            actor: None,
            event: opsbot_commands::audit::AuditKind::CancelRequested,
        };
        writes.append_audit(event).await.unwrap();
        let retention: Retention = serde_json::from_str(r#""1d""#).unwrap();
        let now = OffsetDateTime::now_utc();
        let kept = compact(&writes, retention, now).await.unwrap();
        assert_eq!(kept, Compacted::default());
        let later = now + time::Duration::days(2);
        let done = compact(&writes, retention, later).await.unwrap();
        assert_eq!(done.audit, 1);
        assert!(store.audit().unwrap().is_empty());
        assert!(store.archive_paths().unwrap().audit.exists());
    }
}
