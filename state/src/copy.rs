//! Copying a whole store to another backend (`opsbot store migrate`), verified: the records
//! are exported from the source (see `dump`), imported into an empty destination a batch per
//! transaction, and then both are exported again and compared entry by entry, so that a copy
//! that returned is one every read answers the same on.

use std::fmt;

use crate::dump::{Counters, Entry};
use crate::error::StoreError;
use crate::store::Store;

/// Entries written per transaction: big enough that a long history is not one round trip
/// (and one sled flush) per record, small enough that no transaction holds much in memory.
const BATCH: usize = 500;

/// What a copy carried over, counted as it was imported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Copied {
    pub runs: u64,
    pub unfinished: u64,
    pub locks: u64,
    pub audit_entries: u64,
    pub run_logs: u64,
    pub log_lines: u64,
    pub deliveries: u64,
    pub fires: u64,
    pub pauses: u64,
    pub standing_approvals: u64,
    pub notice: bool,
    /// The id the next run gets, on the copy as on the source.
    pub next_run: u64,
}

impl Copied {
    fn count(&mut self, entry: &Entry) {
        match entry {
            Entry::Counters(counters) => self.next_run = counters.next_run,
            Entry::Notice(_) => self.notice = true,
            Entry::Run { run, .. } => {
                self.runs += 1;
                self.unfinished += u64::from(!run.state.is_finished());
            }
            Entry::RunLog { lines, .. } => {
                self.run_logs += 1;
                self.log_lines += lines.len() as u64;
            }
            Entry::Lock { .. } => self.locks += 1,
            Entry::Audit { .. } => self.audit_entries += 1,
            Entry::Delivery { .. } => self.deliveries += 1,
            Entry::Fire { .. } => self.fires += 1,
            Entry::Pause { .. } => self.pauses += 1,
            Entry::Standing(_) => self.standing_approvals += 1,
        }
    }
}

impl fmt::Display for Copied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "runs: {} ({} unfinished, holding {} locks); audit entries: {}; run logs: {} ({} \
             lines); chat deliveries: {}; schedule fires: {}; pauses: {}; standing approvals: \
             {}; maintenance notice: {}; next run: r-{}",
            self.runs,
            self.unfinished,
            self.locks,
            self.audit_entries,
            self.run_logs,
            self.log_lines,
            self.deliveries,
            self.fires,
            self.pauses,
            self.standing_approvals,
            if self.notice { "yes" } else { "none" },
            self.next_run
        )
    }
}

/// Copies everything `from` holds into `to`, which must be empty, then verifies the copy:
/// both are exported again and compared entry by entry, and the first entry that differs is
/// an error ([`StoreError::CopyDiffers`]). A record of `from` that does not decode stops the
/// copy with the error a read of it gives. Neither store may be written by anyone else
/// meanwhile (stop the bots first; sled's own file lock keeps them out of a sled store).
pub fn copy(from: &Store, to: &Store) -> Result<Copied, StoreError> {
    let copied = to.import(from.export())?;
    verify(from, to)?;
    Ok(copied)
}

/// Compares the exports of `from` and `to` entry by entry.
fn verify(from: &Store, to: &Store) -> Result<(), StoreError> {
    let (mut source, mut copy) = (from.export(), to.export());
    loop {
        let detail = match (source.next().transpose()?, copy.next().transpose()?) {
            (None, None) => return Ok(()),
            (Some(a), Some(b)) if a.reads_back_as(&b) => continue,
            (Some(a), Some(b)) if a.name() == b.name() => format!("{} differs", a.name()),
            (Some(a), Some(b)) => format!(
                "the source has {} where the copy has {}",
                a.name(),
                b.name()
            ),
            (Some(a), None) => format!("the copy lacks {}", a.name()),
            (None, Some(b)) => format!("the copy has {} the source lacks", b.name()),
        };
        return Err(StoreError::CopyDiffers {
            from: from.describe(),
            to: to.describe(),
            detail,
        });
    }
}

impl Store {
    /// Imports `entries` (an export, see [`Store::export`]) into this store, which must be
    /// empty: a copy never merges two histories, and ids taken in both would collide. Written
    /// a batch per transaction (durable, on sled, before the next batch: its marker moves
    /// forward as after any write). Refused with [`StoreError::NotEmpty`] before anything is
    /// written when the store holds any record or a counter past 1. An import that fails
    /// half-way leaves a store that is neither: remove it and copy again.
    pub fn import(
        &self,
        entries: impl IntoIterator<Item = Result<Entry, StoreError>>,
    ) -> Result<Copied, StoreError> {
        self.refuse_unless_empty()?;
        let (mut copied, mut batch) = (Copied::default(), Vec::with_capacity(BATCH));
        for entry in entries {
            let entry = entry?;
            copied.count(&entry);
            batch.push(entry);
            if batch.len() == BATCH {
                self.import_batch(&batch)?;
                batch.clear();
            }
        }
        if !batch.is_empty() {
            self.import_batch(&batch)?;
        }
        Ok(copied)
    }

    /// [`StoreError::NotEmpty`] unless the store's export is its new counters alone.
    fn refuse_unless_empty(&self) -> Result<(), StoreError> {
        let found = self.export().find_map(|entry| match entry {
            Ok(Entry::Counters(Counters::NEW)) => None,
            Ok(Entry::Counters(counters)) => Some(Ok(format!(
                "counters past 1: next run r-{}, next audit entry #{}, next standing approval \
                 sa-{}",
                counters.next_run, counters.next_audit, counters.next_standing
            ))),
            Ok(other) => Some(Ok(other.name())),
            Err(error) => Some(Err(error)),
        });
        match found.transpose()? {
            None => Ok(()),
            Some(found) => Err(StoreError::NotEmpty {
                place: self.describe(),
                found,
            }),
        }
    }
}
