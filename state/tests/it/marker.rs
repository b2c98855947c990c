//! A store that contradicts its marker (a file missing or truncated, an older copy put back)
//! is refused, saying what is missing and how to restore, and nothing in it is written.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::common::{finished_run, new_run};
use opsbot_state::StoreError;

/// Every file under `dir` with its length, the CRC-32 of its bytes and its modification time.
type Files = BTreeMap<PathBuf, (u64, u32, SystemTime)>;

fn files(dir: &Path) -> Files {
    let mut found = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files(&path));
        } else {
            let meta = fs::metadata(&path).unwrap();
            let crc = crc32fast::hash(&fs::read(&path).unwrap());
            found.insert(path.clone(), (meta.len(), crc, meta.modified().unwrap()));
        }
    }
    found
}

/// A store with `runs` runs, opened twice (sled writes its first snapshot when it reopens a
/// store), closed.
fn store_with_runs(dir: &Path, runs: usize) {
    {
        let store = crate::common::open(dir).unwrap();
        for i in 0..runs {
            store
                .create_run(finished_run(&format!("c{i}")), None)
                .unwrap();
        }
    }
    drop(crate::common::open(dir).unwrap());
}

fn snapshot_of(dir: &Path) -> PathBuf {
    fs::read_dir(crate::common::store_in(dir))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("snap.")
        })
        .expect("sled wrote a snapshot when it reopened the store")
}

/// Opens the store in `dir` and expects it refused as damaged before sled opened it: no file
/// touched, not even its modification time. Returns the error's text.
fn refused_untouched(dir: &Path) -> String {
    refused(dir, |files| files)
}

/// How much of a store's files a refusal must leave as they were.
type Kept = fn(Files) -> Files;

fn refused(dir: &Path, kept: Kept) -> String {
    let before = kept(files(dir));
    let error = crate::common::open(dir).unwrap_err();
    assert!(matches!(error, StoreError::Damaged { .. }), "{error:?}");
    assert_eq!(
        kept(files(dir)),
        before,
        "opening a damaged store wrote to it"
    );
    let text = error.to_string();
    assert!(
        text.contains(
            "nothing was written to it; restore the last backup with `opsbot store restore"
        ),
        "{text}"
    );
    text
}

#[test]
fn the_first_open_writes_a_marker_beside_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::common::open(dir.path()).unwrap();
    let marker = dir.path().join("store.marker");
    assert!(marker.is_file());
    store.create_run(new_run("a"), None).unwrap();
    let text = fs::read_to_string(&marker).unwrap();
    assert!(text.contains("\"last_run\":1"), "{text}");
    assert!(text.contains("\"last_audit\":1"), "{text}");
}

/// The marker costs a write only when the store's counters moved, not on every flush.
#[test]
fn a_write_that_numbers_nothing_leaves_the_marker_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::common::open(dir.path()).unwrap();
    store.create_run(new_run("a"), None).unwrap();
    let marker = dir.path().join("store.marker");
    let before = files(dir.path()).remove(&marker).unwrap();
    assert!(store.first_delivery("interaction-1").unwrap());
    store.set_maintenance_notice(None).unwrap();
    assert_eq!(files(dir.path()).remove(&marker).unwrap(), before);
    store.create_run(new_run("b"), None).unwrap();
    assert_ne!(files(dir.path()).remove(&marker).unwrap(), before);
}

/// Once sled has flushed, the write is durable: a marker that cannot follow does not undo
/// it, and the next open, which must write the marker, is what refuses.
#[test]
fn a_write_whose_marker_cannot_be_written_is_durable_all_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("store.marker");
    let store = crate::common::open(dir.path()).unwrap();
    // A directory where the marker should be: renaming the new marker over it fails.
    fs::remove_file(&marker).unwrap();
    fs::create_dir_all(marker.join("in-the-way")).unwrap();
    let run = store.create_run(new_run("a"), None).unwrap();
    assert_eq!(store.run(run.id).unwrap(), Some(run));
    drop(store);
    assert!(matches!(
        crate::common::open(dir.path()),
        Err(StoreError::MarkerIo { .. })
    ));
}

#[test]
fn a_store_from_before_markers_gets_one_and_is_opened() {
    let dir = tempfile::tempdir().unwrap();
    store_with_runs(dir.path(), 3);
    fs::remove_file(dir.path().join("store.marker")).unwrap();
    let store = crate::common::open(dir.path()).unwrap();
    assert_eq!(store.runs().unwrap().len(), 3);
    let text = fs::read_to_string(dir.path().join("store.marker")).unwrap();
    assert!(text.contains("\"last_run\":3"), "{text}");
}

#[test]
fn a_store_missing_its_snapshot_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    store_with_runs(dir.path(), 3);
    let snapshot = snapshot_of(dir.path());
    fs::remove_file(&snapshot).unwrap();
    let text = refused_untouched(dir.path());
    assert!(
        text.contains("its `snap.*` snapshot file is missing"),
        "{text}"
    );
}

#[test]
fn a_snapshot_put_back_after_a_refusal_opens_whole() {
    let dir = tempfile::tempdir().unwrap();
    store_with_runs(dir.path(), 3);
    let snapshot = snapshot_of(dir.path());
    let saved = fs::read(&snapshot).unwrap();
    fs::remove_file(&snapshot).unwrap();
    refused_untouched(dir.path());
    fs::write(&snapshot, saved).unwrap();
    assert_eq!(
        crate::common::open(dir.path())
            .unwrap()
            .runs()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn truncated_files_are_refused_untouched() {
    type FileOf = fn(&Path) -> PathBuf;
    let cases: [(&str, FileOf); 3] = [
        ("its snapshot `snap.", snapshot_of),
        ("its `conf` file is truncated or damaged", |dir| {
            crate::common::store_in(dir).join("conf")
        }),
        ("its `db` file is empty", |dir| {
            crate::common::store_in(dir).join("db")
        }),
    ];
    for (expected, file) in cases {
        let dir = tempfile::tempdir().unwrap();
        store_with_runs(dir.path(), 3);
        let file = file(dir.path());
        let length = fs::metadata(&file).unwrap().len();
        let to = if expected.contains("`db`") {
            0
        } else {
            length / 2
        };
        fs::OpenOptions::new()
            .write(true)
            .open(&file)
            .unwrap()
            .set_len(to)
            .unwrap();
        let text = refused_untouched(dir.path());
        assert!(text.contains(expected), "{expected}: {text}");
    }
}

#[test]
fn a_deleted_store_is_refused_rather_than_started_empty() {
    let dir = tempfile::tempdir().unwrap();
    store_with_runs(dir.path(), 2);
    fs::remove_dir_all(crate::common::store_in(dir.path())).unwrap();
    let text = refused_untouched(dir.path());
    assert!(text.contains("its directory is missing"), "{text}");
    assert!(!crate::common::store_in(dir.path()).exists());
}

#[test]
fn a_store_that_never_held_a_record_has_nothing_to_lose() {
    let dir = tempfile::tempdir().unwrap();
    drop(crate::common::open(dir.path()).unwrap());
    fs::remove_dir_all(crate::common::store_in(dir.path())).unwrap();
    let store = crate::common::open(dir.path()).unwrap();
    assert_eq!(store.runs().unwrap(), []);
}

#[test]
fn an_older_copy_put_back_by_hand_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    store_with_runs(dir.path(), 2);
    let older = tempfile::tempdir().unwrap();
    copy_dir(
        &crate::common::store_in(dir.path()),
        &older.path().join("store"),
    );
    {
        let store = crate::common::open(dir.path()).unwrap();
        store.create_run(new_run("later"), None).unwrap();
    }
    fs::remove_dir_all(crate::common::store_in(dir.path())).unwrap();
    copy_dir(
        &older.path().join("store"),
        &crate::common::store_in(dir.path()),
    );

    // An older copy has every file a store needs: it is refused from its counters, read once
    // sled has opened it. sled's recovery rewrites the end of its log with the same bytes (the
    // modification time of `db` changes), so only the content is compared.
    let content_only: Kept = |files| {
        files
            .into_iter()
            .map(|(path, (len, crc, _))| (path, (len, crc, SystemTime::UNIX_EPOCH)))
            .collect()
    };
    let text = refused(dir.path(), content_only);
    assert!(
        text.contains(
            "it is an older copy or lost records (its last run is r-2, the marker says r-3; its \
             audit log ends at #2, the marker says #3)"
        ),
        "{text}"
    );
}

#[test]
fn a_damaged_marker_is_named_and_the_store_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    store_with_runs(dir.path(), 1);
    let marker = dir.path().join("store.marker");
    fs::write(&marker, "{\"format\":1,").unwrap();
    let before = files(dir.path());
    let error = crate::common::open(dir.path()).unwrap_err();
    assert!(
        matches!(error, StoreError::MarkerDamaged { .. }),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("remove the marker and opsbot writes a new one")
    );
    assert_eq!(files(dir.path()), before);
    fs::remove_file(&marker).unwrap();
    assert_eq!(
        crate::common::open(dir.path())
            .unwrap()
            .runs()
            .unwrap()
            .len(),
        1
    );
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}
