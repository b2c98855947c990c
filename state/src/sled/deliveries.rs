//! Deliveries already handled: a chat platform may deliver the same interaction twice (a
//! gateway resume replays events), and a command must not run twice because of it.

use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

use opsbot_commands::audit::AuditEvent;
use sled::Transactional;

use crate::error::StoreError;
use crate::sled::audit::AuditTrees;
use crate::sled::{Sled, settle};

/// Seconds since the epoch, the time a delivery id is stamped with.
fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// How long a delivery id is remembered: Discord never redelivers an interaction this old (its
/// token is dead after 15 minutes).
const REMEMBERED_SECS: u64 = 24 * 60 * 60;
/// How often old ids are swept out: the sweep reads the whole tree, so not on every delivery.
const SWEEP_EVERY_SECS: u64 = 60 * 60;

impl Sled {
    /// True the first time `id` is seen, false for a repeat. Flushed before it returns, so a
    /// bot restarted right after still knows it. Ids older than a day are swept out, at most
    /// once an hour. Not held back by a backup (it takes no [`Sled::writing`]): delivery ids
    /// need no point in time, and Discord wants its answer to an interaction within 3 seconds.
    pub fn first_delivery(&self, id: &str) -> Result<bool, StoreError> {
        let now = now_secs();
        let fresh = self
            .deliveries
            .compare_and_swap(id.as_bytes(), None::<&[u8]>, Some(&now.to_be_bytes()[..]))?
            .is_ok();
        if fresh {
            let last = self.last_sweep.load(Ordering::Relaxed);
            if now.saturating_sub(last) >= SWEEP_EVERY_SECS
                && self
                    .last_sweep
                    .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            {
                self.forget_deliveries_before(now.saturating_sub(REMEMBERED_SECS))?;
            }
            self.flush()?;
        }
        Ok(fresh)
    }

    /// Records a delivered announcement: its id and its audit entry in one transaction, so a
    /// crash keeps both or neither. False, and nothing appended, when the id is already there.
    pub fn announced(&self, id: &str, event: &AuditEvent) -> Result<bool, StoreError> {
        let entry = self.encode_audit("an announcement", event)?;
        let now = now_secs().to_be_bytes();
        let _writing = self.writing()?;
        let fresh = settle(
            (&self.meta, &self.audit, &self.index, &self.deliveries).transaction(
                |(meta, audit, index, deliveries)| {
                    if deliveries.get(id.as_bytes())?.is_some() {
                        return Ok(false);
                    }
                    deliveries.insert(id.as_bytes(), &now[..])?;
                    self.put_audit(&AuditTrees { meta, audit, index }, &entry)?;
                    Ok(true)
                },
            ),
        )?;
        self.flush()?;
        Ok(fresh)
    }

    /// True when `id` was recorded by [`Sled::first_delivery`] or [`Sled::announced`]; reads
    /// only.
    pub fn delivered(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self.deliveries.contains_key(id.as_bytes())?)
    }

    fn forget_deliveries_before(&self, cutoff: u64) -> Result<(), StoreError> {
        for entry in self.deliveries.iter() {
            let (key, value) = entry?;
            let seen = <[u8; 8]>::try_from(value.as_ref()).map_or(0, u64::from_be_bytes);
            if seen < cutoff {
                self.deliveries.remove(key)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::sled::Sled;

    /// A backup holds every write back; Discord's deliveries go on (with the lock they took
    /// before, this same thread would wait for itself forever).
    #[test]
    fn a_delivery_is_recorded_while_a_backup_copies_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = Sled::open(&dir.path().join("store")).unwrap();
        let _backup = store.quiet();
        assert!(store.first_delivery("interaction-1").unwrap());
        assert!(!store.first_delivery("interaction-1").unwrap());
    }
}
