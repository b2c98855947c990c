//! Backups taken while runs are written, checked, and put back.

use std::fs;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::common::{finished_run, new_run};
use opsbot_commands::audit::AuditKind;
use opsbot_commands::name::RunId;
use opsbot_state::StoreError;

#[test]
fn a_backup_taken_while_runs_are_written_is_one_point_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::common::open(dir.path()).unwrap();
    let stop = AtomicBool::new(false);
    let backups = tempfile::tempdir().unwrap();
    std::thread::scope(|scope| {
        for writer in 0..2 {
            let (store, stop) = (&store, &stop);
            scope.spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    // Each run on its own cluster: a run and its audit event in one write.
                    store
                        .create_run(finished_run(&format!("w{writer}c{i}")), None)
                        .unwrap();
                    i += 1;
                }
            });
        }
        // Backups while the writers run, each checked whole (every record decoded).
        for n in 0..3 {
            while store.runs().unwrap().len() < 5 * (n + 1) {
                std::thread::yield_now();
            }
            let summary = store.backup(&backups.path().join(format!("b{n}"))).unwrap();
            // Every run created has its audit event, and no more: between two writes.
            assert_eq!(summary.runs as u64, summary.last_run, "{summary}");
            assert_eq!(
                summary.audit_entries as u64, summary.last_audit,
                "{summary}"
            );
            assert_eq!(summary.last_run, summary.last_audit, "{summary}");
        }
        stop.store(true, Ordering::Relaxed);
    });
    let first = opsbot_state::check(&backups.path().join("b0")).unwrap();
    let last = opsbot_state::check(&backups.path().join("b2")).unwrap();
    assert!(first.last_run < last.last_run, "{first} / {last}");
}

/// Compaction moves runs and audit entries from the store to its archives while the backup
/// copies both: each record is in the backup's store or in its archives, once.
#[test]
fn a_backup_taken_while_compaction_runs_holds_each_record_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::common::open(dir.path()).unwrap();
    let stop = AtomicBool::new(false);
    let backups = tempfile::tempdir().unwrap();
    // Past every record: all of them are compacted, as soon as they are written.
    let cutoff = time::OffsetDateTime::now_utc() + time::Duration::days(1);
    // The lines of an archive of a backup, each whole.
    let lines = |path: std::path::PathBuf| {
        fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .inspect(|line| assert!(line.ends_with('}'), "a torn line: {line}"))
            .count()
    };
    // The live archive, which compaction may be appending to as it is read.
    let archived_runs = || {
        let archive = fs::read(store.archive_paths().unwrap().runs).unwrap_or_default();
        archive.iter().filter(|&&byte| byte == b'\n').count()
    };
    std::thread::scope(|scope| {
        // A failed assertion below stops the threads, rather than waiting for them forever.
        let _stop = StopOnDrop(&stop);
        let (writer, compactor) = ((&store, &stop), (&store, &stop));
        let writing = scope.spawn(move || {
            for i in 0.. {
                if writer.1.load(Ordering::Relaxed) {
                    break;
                }
                writer
                    .0
                    .create_run(finished_run(&format!("c{i}")), None)
                    .unwrap();
            }
        });
        let compacting = scope.spawn(move || {
            while !compactor.1.load(Ordering::Relaxed) {
                compactor.0.compact(cutoff, 1).unwrap();
            }
        });
        for n in 0..3 {
            while archived_runs() < 5 * (n + 1) {
                let stopped = writing.is_finished() || compacting.is_finished();
                assert!(!stopped, "the writer or the compaction failed");
                std::thread::yield_now();
            }
            let backup = backups.path().join(format!("b{n}"));
            let summary = store.backup(&backup).unwrap();
            let archived = |suffix| lines(backup.join(format!("store.{suffix}.jsonl")));
            assert_eq!(
                (summary.runs + archived("runs")) as u64,
                summary.last_run,
                "{summary}"
            );
            assert_eq!(
                (summary.audit_entries + archived("audit")) as u64,
                summary.last_audit,
                "{summary}"
            );
        }
    });
}

/// Tells the threads of a test to stop when it ends, passed or failed.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A mistyped path is not a damaged store: nothing tells the operator to restore.
#[test]
fn a_path_that_holds_no_store_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let nothing = dir.path().join("typo");
    let error = opsbot_state::check(&nothing).unwrap_err();
    assert!(matches!(error, StoreError::NotAStore { .. }), "{error:?}");
    assert!(!error.to_string().contains("restore"), "{error}");
    fs::create_dir(&nothing).unwrap();
    let store = crate::common::store_in(dir.path());
    let error = opsbot_state::restore(&store, &nothing).unwrap_err();
    assert!(matches!(error, StoreError::NotAStore { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .contains("is not an opsbot store (it has no marker"),
        "{error}"
    );
}

#[test]
fn a_backup_goes_to_a_new_directory_only() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::common::open(dir.path()).unwrap();
    let dest = tempfile::tempdir().unwrap();
    fs::write(dest.path().join("notes"), "mine").unwrap();
    let error = store.backup(dest.path()).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("it exists and is not empty; name a new directory"),
        "{error}"
    );
    assert_eq!(fs::read_dir(dest.path()).unwrap().count(), 1);
}

#[test]
fn check_reads_every_record_and_finds_a_damaged_one() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = crate::common::open(dir.path()).unwrap();
        let run = store.create_run(new_run("a"), None).unwrap();
        store.append_run_log(run.id, &["line 1", "line 2"]).unwrap();
        store.create_run(finished_run("b"), None).unwrap();
    }
    let good = crate::common::check(dir.path()).unwrap();
    assert_eq!(
        good.to_string(),
        "runs: 2 (1 unfinished, last r-2), audit entries: 2 (last #2), run log lines: 2"
    );
    // An audit entry is not read when the store opens, only by a check.
    let db = crate::common::raw_open(dir.path()).unwrap();
    db.open_tree("audit")
        .unwrap()
        .insert(2_u64.to_be_bytes(), &b"{"[..])
        .unwrap();
    db.flush().unwrap();
    drop(db);
    drop(crate::common::open(dir.path()).unwrap());
    let error = crate::common::check(dir.path()).unwrap_err();
    assert!(
        matches!(&error, StoreError::Corrupt { tree: "audit", key, .. } if key == "#2"),
        "{error:?}"
    );
}

#[test]
fn a_backup_missing_its_log_is_refused_by_check() {
    let dir = tempfile::tempdir().unwrap();
    let backup = tempfile::tempdir().unwrap();
    {
        let store = crate::common::open(dir.path()).unwrap();
        store.create_run(new_run("a"), None).unwrap();
        store.backup(&backup.path().join("b")).unwrap();
    }
    fs::remove_file(backup.path().join("b/store/db")).unwrap();
    let error = opsbot_state::check(&backup.path().join("b")).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("is damaged: its `db` file is missing"),
        "{error}"
    );
}

#[test]
fn restore_puts_a_backup_back_and_keeps_the_store_that_was_there() {
    let dir = tempfile::tempdir().unwrap();
    let backups = tempfile::tempdir().unwrap();
    let backup = backups.path().join("b");
    let path = crate::common::store_in(dir.path());
    {
        let store = crate::common::open(dir.path()).unwrap();
        store.create_run(new_run("a"), None).unwrap();
        store.backup(&backup).unwrap();
        store.create_run(new_run("b"), None).unwrap();
        // Refused while the store is open: a running bot would keep writing the old one.
        assert!(matches!(
            opsbot_state::restore(&path, &backup),
            Err(StoreError::InUse { .. })
        ));
    }
    opsbot_state::wait_until_free(&path).unwrap();
    let restored = opsbot_state::restore(&path, &backup).unwrap();
    assert_eq!(restored.summary.last_run, 1);
    let aside = restored
        .kept_aside
        .expect("the store that was there is kept");
    // Named with when it was moved aside, as a person reads a time: `store.replaced-20261128T031502Z`.
    let name = aside.file_name().unwrap().to_string_lossy().into_owned();
    let stamp = name
        .rsplit_once("replaced-")
        .map(|(_, s)| s)
        .unwrap_or_default();
    assert!(
        stamp.len() == 16
            && stamp.starts_with("20")
            && stamp.as_bytes()[8] == b'T'
            && stamp.ends_with('Z'),
        "{name}"
    );
    // The store is the backup's, and opens (its marker is the backup's, not the newer one).
    let store = crate::common::open(dir.path()).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(
        runs.iter().map(|r| r.id).collect::<Vec<_>>(),
        [RunId::new(1)]
    );
    let audit = store.audit().unwrap();
    assert!(matches!(audit[0].event, AuditKind::RunRequested { .. }));
    // A new run follows the backup's last one.
    assert_eq!(
        store.create_run(new_run("c"), None).unwrap().id,
        RunId::new(2)
    );
    // The store that was there, with its marker, is whole and can be checked or put back.
    assert_eq!(opsbot_state::check(&aside).unwrap().last_run, 2);
    assert!(!dir.path().join("store.restoring").exists());
}

#[test]
fn restore_puts_the_backups_archives_back_and_keeps_the_live_ones_aside() {
    let dir = tempfile::tempdir().unwrap();
    let backups = tempfile::tempdir().unwrap();
    let backup = backups.path().join("b");
    let path = crate::common::store_in(dir.path());
    let cutoff = time::OffsetDateTime::now_utc() + time::Duration::days(1);
    let archived = |store: &std::path::Path| {
        ["runs", "audit"].map(|suffix| {
            let name = format!("{}.{suffix}.jsonl", store.file_name().unwrap().display());
            fs::read_to_string(store.with_file_name(name)).unwrap_or_default()
        })
    };
    {
        let store = crate::common::open(dir.path()).unwrap();
        store.create_run(finished_run("a"), None).unwrap();
        store.compact(cutoff, 10).unwrap();
        store.backup(&backup).unwrap();
        store.create_run(finished_run("b"), None).unwrap();
        store.compact(cutoff, 10).unwrap();
    }
    let live = archived(&path);
    let backed_up = archived(&crate::common::store_in(&backup));
    assert_eq!(
        backed_up.each_ref().map(|archive| archive.lines().count()),
        [1, 1]
    );
    assert_eq!(
        live.each_ref().map(|archive| archive.lines().count()),
        [2, 2]
    );
    opsbot_state::wait_until_free(&path).unwrap();
    let restored = opsbot_state::restore(&path, &backup).unwrap();
    assert_eq!(archived(&path), backed_up);
    let aside = restored.kept_aside.unwrap();
    assert_eq!(archived(&aside), live);
    for staged in ["restoring.runs.jsonl", "restoring.audit.jsonl"] {
        assert!(!dir.path().join(format!("store.{staged}")).exists());
    }
    // The next compaction appends to the backup's archives, as the store it ran on did.
    let store = crate::common::open(dir.path()).unwrap();
    store.create_run(finished_run("c"), None).unwrap();
    store.compact(cutoff, 10).unwrap();
    assert_eq!(
        archived(&path).map(|archive| archive.lines().count()),
        [2, 2]
    );
}
