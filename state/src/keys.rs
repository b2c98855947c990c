//! Tree names and key layouts. Numbers are big-endian so that sled's byte order is numeric order:
//! runs iterate by id, audit entries by sequence, run log lines by run then line.

use opsbot_commands::name::RunId;

pub(crate) const META: &str = "meta";
pub(crate) const RUNS: &str = "runs";
pub(crate) const PLANS: &str = "plans";
pub(crate) const LOCKS: &str = "locks";
pub(crate) const AUDIT: &str = "audit";
pub(crate) const RUN_LOGS: &str = "run_logs";
pub(crate) const DELIVERIES: &str = "deliveries";

/// The layout of trees and keys (values carry their own format version in their envelope).
pub(crate) const SCHEMA: &[u8] = b"schema";
/// The next run id to hand out; ids are dense because only `create_run` advances it.
pub(crate) const NEXT_RUN: &[u8] = b"next_run_id";
/// The operators' maintenance notice, when one is in force.
pub(crate) const MAINTENANCE: &[u8] = b"maintenance_notice";
/// The next audit sequence number.
pub(crate) const NEXT_AUDIT: &[u8] = b"next_audit_seq";
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

/// What a record of `tree` is called in a sentence.
pub(crate) fn noun(tree: &str) -> &'static str {
    match tree {
        RUNS => "run record",
        PLANS => "run plan",
        LOCKS => "cluster lock",
        AUDIT => "audit entry",
        RUN_LOGS => "run log line",
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
    }

    #[test]
    fn big_endian_keys_sort_numerically() {
        assert!(run_key(RunId::new(2)) < run_key(RunId::new(10)));
        assert!(run_key(RunId::new(255)) < run_key(RunId::new(256)));
        assert!(log_key(RunId::new(1), u64::MAX) < log_key(RunId::new(2), 0));
    }
}
