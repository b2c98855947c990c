//! The backend-neutral form of everything a store holds, as `opsbot store migrate` moves it
//! from one backend to the other: a stream of [`Entry`]s in one deterministic order, the same
//! on both backends for the same content, so that a copy is verified by exporting both sides
//! again and comparing them entry by entry.
//!
//! Entries hold decoded values, not the stored bytes: each backend's export reads its records
//! through the same decode and consistency checks its reads use, so a damaged record stops a
//! copy with the error a read would give instead of being carried over unnoticed.
//!
//! The order: the counters, the maintenance notice, each run (followed by its log, if it has
//! one) by id, the locks by key, the audit log by sequence number, the deliveries by id, the
//! schedules' fires and pauses by schedule name, the standing approvals by id. Names sort by
//! their bytes on both backends (`COLLATE "C"` on PostgreSQL).
//!
//! Not part of the store's content, so not in a dump: the PostgreSQL lease (which instance is
//! active is decided anew on the destination), sled's marker and archives (beside the store,
//! written by it as it goes), and caches.

use opsbot_commands::audit::AuditEvent;
use opsbot_commands::maintenance::MaintenanceNotice;
use opsbot_commands::name::RunId;
use opsbot_commands::run::Run;
use opsbot_commands::schedule::{FireRecord, Pause, StandingApproval};
use time::OffsetDateTime;

/// The store's counters: the next number each hands out (all 1 in a new store).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    pub next_run: u64,
    pub next_audit: u64,
    pub next_standing: u64,
}

impl Counters {
    /// The counters of a store that never handed out a number.
    pub const NEW: Counters = Counters {
        next_run: 1,
        next_audit: 1,
        next_standing: 1,
    };
}

/// One record of a store (see the module's documentation for their order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Counters(Counters),
    Notice(MaintenanceNotice),
    /// A run, whole (record and plan, checked as a read checks it), with the times it is filed
    /// under for listings: its creation, and its finish (`None` while unfinished). Both are
    /// kept to the microsecond, as PostgreSQL's `timestamptz` keeps them.
    Run {
        run: Box<Run>,
        created_at: OffsetDateTime,
        finished_at: Option<OffsetDateTime>,
    },
    /// A run's log: its lines in order, and the bytes they count against the log's cap.
    RunLog {
        run: RunId,
        lines: Vec<String>,
        bytes: u64,
    },
    /// A lock key and the run holding it.
    Lock {
        key: String,
        run: RunId,
    },
    Audit {
        seq: u64,
        event: AuditEvent,
    },
    /// A chat delivery already handled, and when (whole seconds since the epoch: it only
    /// serves to forget the id a day later).
    Delivery {
        id: String,
        at: u64,
    },
    Fire {
        schedule: String,
        record: FireRecord,
    },
    Pause {
        schedule: String,
        pause: Pause,
    },
    Standing(StandingApproval),
}

impl Entry {
    /// A run entry, with its times filed as both backends file them.
    pub(crate) fn run(run: Run) -> Entry {
        let created_at = micros(run.created_at);
        let finished_at = run.finished_at().map(micros);
        Entry::Run {
            run: Box::new(run),
            created_at,
            finished_at,
        }
    }

    /// What the entry is, as an operator would look it up (`run r-3`, `audit entry #40`).
    pub fn name(&self) -> String {
        match self {
            Entry::Counters(_) => "the counters".to_owned(),
            Entry::Notice(_) => "the maintenance notice".to_owned(),
            Entry::Run { run, .. } => format!("run {}", run.id),
            Entry::RunLog { run, .. } => format!("the log of run {run}"),
            Entry::Lock { key, .. } => format!("the lock `{key}`"),
            Entry::Audit { seq, .. } => format!("audit entry #{seq}"),
            Entry::Delivery { id, .. } => format!("delivery {id}"),
            Entry::Fire { schedule, .. } => format!("the last fire of schedule {schedule}"),
            Entry::Pause { schedule, .. } => format!("the pause of schedule {schedule}"),
            Entry::Standing(standing) => format!("standing approval {}", standing.id),
        }
    }

    /// Whether `self` (from the source) reads back as `copy`. Equal, except that a log line's
    /// NUL characters read back as `␀` from PostgreSQL, whose `text` cannot hold NUL.
    pub fn reads_back_as(&self, copy: &Entry) -> bool {
        match (self, copy) {
            (
                Entry::RunLog { run, lines, bytes },
                Entry::RunLog {
                    run: run2,
                    lines: lines2,
                    bytes: bytes2,
                },
            ) => {
                run == run2
                    && bytes == bytes2
                    && lines.len() == lines2.len()
                    && lines
                        .iter()
                        .zip(lines2)
                        .all(|(a, b)| storable_line(a) == storable_line(b))
            }
            _ => self == copy,
        }
    }
}

/// A time as PostgreSQL's `timestamptz` keeps it: to the microsecond.
pub(crate) fn micros(at: OffsetDateTime) -> OffsetDateTime {
    at.replace_nanosecond(at.nanosecond() / 1000 * 1000)
        .unwrap_or(at)
}

/// A log line as PostgreSQL's `text` column holds it: NUL as the symbol for it, `␀`.
pub(crate) fn storable_line(line: &str) -> std::borrow::Cow<'_, str> {
    if line.contains('\0') {
        std::borrow::Cow::Owned(line.replace('\0', "\u{2400}"))
    } else {
        std::borrow::Cow::Borrowed(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_line_with_nul_reads_back_from_postgres_with_its_symbol() {
        let log = |line: &str, bytes| Entry::RunLog {
            run: RunId::new(1),
            lines: vec![line.to_owned()],
            bytes,
        };
        assert!(log("a\0b", 3).reads_back_as(&log("a\u{2400}b", 3)));
        assert!(!log("a\0b", 3).reads_back_as(&log("a b", 3)));
        assert!(!log("a\0b", 3).reads_back_as(&log("a\u{2400}b", 4)));
        assert_eq!(
            micros(time::macros::datetime!(2026-01-01 0:00:00.123456789 UTC)),
            time::macros::datetime!(2026-01-01 0:00:00.123456 UTC)
        );
    }
}
