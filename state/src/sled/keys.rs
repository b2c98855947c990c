//! Tree names and key layouts. Numbers are big-endian so that sled's byte order is numeric order:
//! runs iterate by id, audit entries by sequence, run log lines by run then line. Times in the
//! `index` tree are too (see [`time_key`]), so that a listing of the newest or of those since a
//! time is one range read that stops where the listing does.

use opsbot_commands::name::RunId;
use opsbot_commands::run::Run;
use time::OffsetDateTime;

use crate::record::RunRecord;

pub(crate) const META: &str = "meta";
pub(crate) const RUNS: &str = "runs";
pub(crate) const PLANS: &str = "plans";
pub(crate) const LOCKS: &str = "locks";
pub(crate) const AUDIT: &str = "audit";
pub(crate) const RUN_LOGS: &str = "run_logs";
pub(crate) const DELIVERIES: &str = "deliveries";
/// The time-ordered indexes of runs and audit entries: one tree (a transaction can span only
/// six), each index under its own one-byte prefix. Values are empty: the key says it all.
pub(crate) const INDEX: &str = "index";

/// `u` + run id: the unfinished runs, the ones the bot resumes and `/run list` always shows.
pub(crate) const UNFINISHED: u8 = b'u';
/// `f` + finished time + run id: finished runs in the order they finished.
pub(crate) const FINISHED: u8 = b'f';
/// `t` + time + audit sequence: the audit log in time order.
pub(crate) const AUDIT_BY_TIME: u8 = b't';
/// `r` + run id + time + audit sequence: one run's audit entries in time order.
pub(crate) const AUDIT_BY_RUN: u8 = b'r';

/// The layout of trees and keys (values carry their own format version in their envelope).
pub(crate) const SCHEMA: &[u8] = b"schema";
/// The next run id to hand out; ids are dense because only `create_run` advances it.
pub(crate) const NEXT_RUN: &[u8] = b"next_run_id";
/// The operators' maintenance notice, when one is in force.
pub(crate) const MAINTENANCE: &[u8] = b"maintenance_notice";
/// The next audit sequence number.
pub(crate) const NEXT_AUDIT: &[u8] = b"next_audit_seq";
/// The archive files' lengths before a compaction batch was appended to them, while the batch
/// is not yet removed from the store (see `compact`).
pub(crate) const PENDING_ARCHIVE: &[u8] = b"pending_archive";
/// Prefix of the per-run counters of run log lines, followed by the run id.
const NEXT_LOG_LINE: &[u8] = b"next_log_line/";
/// Prefix of the per-run sizes of run logs (bytes of their lines), followed by the run id.
const LOG_BYTES: &[u8] = b"log_bytes/";

pub(crate) fn number_key(n: u64) -> [u8; 8] {
    n.to_be_bytes()
}

pub(crate) fn run_key(id: RunId) -> [u8; 8] {
    number_key(id.get())
}

/// The number an 8-byte key holds, `None` for any other length.
pub(crate) fn key_number(key: &[u8]) -> Option<u64> {
    <[u8; 8]>::try_from(key).ok().map(u64::from_be_bytes)
}

/// Run then line, so that one run's lines are one contiguous, ordered prefix.
pub(crate) fn log_key(run: RunId, line: u64) -> [u8; 16] {
    let mut key = [0; 16];
    key[..8].copy_from_slice(&run_key(run));
    key[8..].copy_from_slice(&number_key(line));
    key
}

pub(crate) fn next_log_line_key(run: RunId) -> Vec<u8> {
    [NEXT_LOG_LINE, &run_key(run)].concat()
}

/// A time as 16 bytes that sort as the times do: its nanoseconds since the epoch with the sign
/// bit flipped (so that times before 1970 sort first), big-endian.
pub(crate) fn time_key(at: OffsetDateTime) -> [u8; 16] {
    (at.unix_timestamp_nanos() ^ i128::MIN).to_be_bytes()
}

/// The key of an unfinished run in the `index` tree.
pub(crate) fn unfinished_key(run: RunId) -> Vec<u8> {
    [&[UNFINISHED][..], &run_key(run)].concat()
}

/// The key of a run that finished at `at` in the `index` tree.
pub(crate) fn finished_key(at: OffsetDateTime, run: RunId) -> Vec<u8> {
    [&[FINISHED][..], &time_key(at), &run_key(run)].concat()
}

/// Where a run is filed in the `index` tree: an unfinished one by its id, a finished one by
/// when it finished (see [`RunRecord::filed_at`]), so that "unfinished" and "finished since" are
/// each one range read.
pub(crate) fn run_index_key(run: &Run) -> Vec<u8> {
    index_key_at(run.id, run.finished_at())
}

/// [`run_index_key`] of a run record.
pub(crate) fn record_index_key(record: &RunRecord) -> Vec<u8> {
    index_key_at(record.id(), record.filed_at())
}

fn index_key_at(id: RunId, filed_at: Option<OffsetDateTime>) -> Vec<u8> {
    match filed_at {
        Some(at) => finished_key(at, id),
        None => unfinished_key(id),
    }
}

/// Where the finished runs of `at` and after start in the `index` tree.
pub(crate) fn finished_from(at: OffsetDateTime) -> Vec<u8> {
    [&[FINISHED][..], &time_key(at)].concat()
}

/// The key of audit entry `seq`, stamped `at`, in the time index.
pub(crate) fn audit_time_key(at: OffsetDateTime, seq: u64) -> Vec<u8> {
    [&[AUDIT_BY_TIME][..], &time_key(at), &number_key(seq)].concat()
}

/// Where the audit entries of `at` and after (all, for `None`) start in the time index.
pub(crate) fn audit_time_from(at: Option<OffsetDateTime>) -> Vec<u8> {
    let mut key = vec![AUDIT_BY_TIME];
    key.extend(at.map(time_key).iter().flatten());
    key
}

/// The key of audit entry `seq` of `run`, stamped `at`, in the per-run index.
pub(crate) fn audit_run_key(run: RunId, at: OffsetDateTime, seq: u64) -> Vec<u8> {
    [
        &[AUDIT_BY_RUN][..],
        &run_key(run),
        &time_key(at),
        &number_key(seq),
    ]
    .concat()
}

/// Where `run`'s audit entries of `at` and after (all, for `None`) start in the per-run index.
pub(crate) fn audit_run_from(run: RunId, at: Option<OffsetDateTime>) -> Vec<u8> {
    let mut key = [&[AUDIT_BY_RUN][..], &run_key(run)].concat();
    key.extend(at.map(time_key).iter().flatten());
    key
}

/// The end (exclusive) of `run`'s entries in the per-run index.
pub(crate) fn audit_run_end(run: RunId) -> Vec<u8> {
    [&[AUDIT_BY_RUN][..], &run_key(run), &[0xff; 17]].concat()
}

/// The number in the last 8 bytes of an index key (the run id or audit sequence it points at).
pub(crate) fn indexed_number(key: &[u8]) -> Option<u64> {
    key.len()
        .checked_sub(8)
        .and_then(|start| key_number(&key[start..]))
}

pub(crate) fn log_bytes_key(run: RunId) -> Vec<u8> {
    [LOG_BYTES, &run_key(run)].concat()
}

/// A key as an operator would name it in an error (`r-12`, `#40`), so that it can be found.
pub(crate) fn render(tree: &str, key: &[u8]) -> String {
    let rendered = match tree {
        RUNS | PLANS => key_number(key).map(|n| RunId::new(n).to_string()),
        AUDIT => key_number(key).map(|n| format!("#{n}")),
        RUN_LOGS => key.split_at_checked(8).and_then(|(run, line)| {
            Some(format!(
                "{} line {}",
                RunId::new(key_number(run)?),
                key_number(line)?
            ))
        }),
        LOCKS => std::str::from_utf8(key).ok().map(|c| format!("`{c}`")),
        INDEX => render_index(key),
        _ => {
            let per_run = |prefix: &[u8]| key.strip_prefix(prefix).and_then(key_number);
            match (per_run(NEXT_LOG_LINE), per_run(LOG_BYTES)) {
                (Some(run), _) => Some(format!("next log line of {}", RunId::new(run))),
                (_, Some(run)) => Some(format!("log size of {}", RunId::new(run))),
                _ => std::str::from_utf8(key).ok().map(str::to_owned),
            }
        }
    };
    rendered.unwrap_or_else(|| {
        let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
        format!("0x{hex}")
    })
}

/// An index key by what it points at (`unfinished r-3`, `audit #40`).
fn render_index(key: &[u8]) -> Option<String> {
    let (&prefix, _) = key.split_first()?;
    let number = indexed_number(key)?;
    match prefix {
        UNFINISHED => Some(format!("unfinished {}", RunId::new(number))),
        FINISHED => Some(format!("finished {}", RunId::new(number))),
        AUDIT_BY_TIME | AUDIT_BY_RUN => Some(format!("audit #{number}")),
        _ => None,
    }
}

/// What a record of `tree` is called in a sentence.
pub(crate) fn noun(tree: &str) -> &'static str {
    match tree {
        RUNS => "run record",
        PLANS => "run plan",
        LOCKS => "cluster lock",
        AUDIT => "audit entry",
        RUN_LOGS => "run log line",
        INDEX => "index entry",
        _ => "metadata entry",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_rendered_as_operators_name_them() {
        assert_eq!(render(RUNS, &run_key(RunId::new(12))), "r-12");
        assert_eq!(render(AUDIT, &number_key(40)), "#40");
        assert_eq!(render(RUN_LOGS, &log_key(RunId::new(3), 7)), "r-3 line 7");
        assert_eq!(render(LOCKS, b"logs"), "`logs`");
        assert_eq!(render(META, NEXT_RUN), "next_run_id");
        assert_eq!(
            render(META, &next_log_line_key(RunId::new(5))),
            "next log line of r-5"
        );
        assert_eq!(
            render(META, &log_bytes_key(RunId::new(5))),
            "log size of r-5"
        );
        assert_eq!(render(RUNS, &[1, 2]), "0x0102");
        assert_eq!(
            render(INDEX, &unfinished_key(RunId::new(3))),
            "unfinished r-3"
        );
        assert_eq!(
            render(
                INDEX,
                &audit_run_key(RunId::new(3), OffsetDateTime::UNIX_EPOCH, 40)
            ),
            "audit #40"
        );
    }

    #[test]
    fn big_endian_keys_sort_numerically() {
        assert!(run_key(RunId::new(2)) < run_key(RunId::new(10)));
        assert!(run_key(RunId::new(255)) < run_key(RunId::new(256)));
        assert!(log_key(RunId::new(1), u64::MAX) < log_key(RunId::new(2), 0));
    }

    #[test]
    fn time_keys_sort_as_times_do_before_and_after_1970() {
        let epoch = OffsetDateTime::UNIX_EPOCH;
        let times = [
            epoch - time::Duration::days(400),
            epoch - time::Duration::nanoseconds(1),
            epoch,
            epoch + time::Duration::nanoseconds(1),
            epoch + time::Duration::days(20_000),
        ];
        for pair in times.windows(2) {
            assert!(time_key(pair[0]) < time_key(pair[1]), "{pair:?}");
        }
        let (one, two) = (RunId::new(1), RunId::new(2));
        assert!(finished_key(times[4], one) > finished_key(times[3], two));
        assert!(finished_from(times[3]) <= finished_key(times[3], one));
        assert!(audit_run_end(one) > audit_run_key(one, times[4], u64::MAX));
        assert!(audit_run_end(one) < audit_run_key(two, times[0], 0));
    }
}
