//! Compaction with a cutoff the test chooses (the clock is the test's), and a crash between
//! archiving a batch and removing it.

use opsbot_commands::audit::{AuditEvent, AuditKind};
use opsbot_commands::name::{ClusterName, PersonName, RunId};
use opsbot_commands::page::Page;
use opsbot_commands::people::{PersonRef, Surface};
use opsbot_commands::plan::{ClusterStep, Plan};
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::run::{ChannelId, Outcome, Run};
use time::macros::datetime;
use time::{Duration, OffsetDateTime};

use crate::sled::Sled;

const YEAR_AGO: OffsetDateTime = datetime!(2024-01-01 00:00 UTC);
const CUTOFF: OffsetDateTime = datetime!(2025-01-01 00:00 UTC);

/// A restart of `cluster` requested a year before the cutoff, finished at `finished` if given.
pub(crate) fn run(id: RunId, cluster: &str, finished: Option<OffsetDateTime>) -> Run {
    let plan = Plan::new(
        ProcedureRequest::ClusterRestart {
            cluster: ClusterName::parse(cluster).unwrap(),
        },
        Vec::<ClusterStep>::new(),
        vec![],
    )
    .unwrap();
    let alice = PersonRef {
        name: PersonName::parse("alice").unwrap(),
        via: Surface::Discord { user: 1 },
    };
    let mut run = Run::new(
        id,
        plan,
        alice,
        ChannelId("ops".into()),
        YEAR_AGO,
        Duration::minutes(30),
    );
    if let Some(at) = finished {
        run.finish(Outcome::Succeeded, at);
    }
    run
}

fn event(at: OffsetDateTime, run: Option<RunId>) -> AuditEvent {
    AuditEvent {
        at,
        run,
        actor: None,
        event: AuditKind::CancelRequested,
    }
}

/// r-1 finished before the cutoff (with a log), r-2 finished after it, r-3 unfinished since
/// long before it; audit entries on both sides of it.
fn history(store: &Sled) {
    let finished = [
        Some(YEAR_AGO + Duration::days(1)),
        Some(CUTOFF + Duration::days(1)),
        None,
    ];
    for (n, finished) in (1..).zip(finished) {
        let cluster = format!("c{n}");
        store
            .create(|id| run(id, &cluster, finished), None, None)
            .unwrap();
    }
    store
        .append_run_log(RunId::new(1), &["one", "two"])
        .unwrap();
    store.append_audit(&event(YEAR_AGO, None)).unwrap();
    store
        .append_audit(&event(YEAR_AGO, Some(RunId::new(3))))
        .unwrap();
    store.append_audit(&event(CUTOFF, None)).unwrap();
}

fn lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn audit_at(store: &Sled) -> Vec<OffsetDateTime> {
    store
        .audit()
        .unwrap()
        .into_iter()
        .map(|event| event.at)
        .collect()
}

#[test]
fn runs_finished_and_entries_stamped_before_the_cutoff_are_archived_then_removed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Sled::open(&dir.path().join("store")).unwrap();
    history(&store);
    let archived_run = store.run(RunId::new(1)).unwrap().unwrap();
    // Batches of one: several rounds, each bounded.
    let done = store.compact(CUTOFF, 1).unwrap();
    // The three `RunRequested` entries are stamped now, after the cutoff: kept.
    assert_eq!(done, crate::Compacted { runs: 1, audit: 2 });
    let paths = store.archive_paths().unwrap();
    let runs = lines(&paths.runs);
    assert_eq!(runs.len(), 1);
    let back: Run = serde_json::from_value(runs[0]["run"].clone()).unwrap();
    assert_eq!(back, archived_run);
    assert_eq!(runs[0]["log"], serde_json::json!(["one", "two"]));
    let audit = lines(&paths.audit);
    let exported = |event: AuditEvent| crate::export::audit_event(&event).unwrap();
    assert_eq!(
        audit,
        vec![
            exported(event(YEAR_AGO, None)),
            exported(event(YEAR_AGO, Some(RunId::new(3))))
        ]
    );
    // Gone from the store, with their plan, log, counter and index entries; but created.
    assert_eq!(store.run(RunId::new(1)).unwrap(), None);
    assert!(store.was_created(RunId::new(1)).unwrap());
    assert!(!store.was_created(RunId::new(4)).unwrap());
    assert!(!store.was_created(RunId::new(0)).unwrap());
    assert!(store.plans.get(1_u64.to_be_bytes()).unwrap().is_none());
    assert!(store.run_logs.is_empty());
    assert!(
        store
            .meta
            .get(crate::sled::keys::next_log_line_key(RunId::new(1)))
            .unwrap()
            .is_none()
    );
    assert!(!audit_at(&store).contains(&YEAR_AGO));
    // The unfinished run and the young ones stay, and still list.
    assert!(store.run(RunId::new(2)).unwrap().is_some());
    let unfinished = store.unfinished_runs().unwrap();
    assert_eq!(unfinished.len(), 1);
    assert_eq!(unfinished[0].id, RunId::new(3));
    let listed = store.recent_runs(YEAR_AGO, Page::FIRST, 10).unwrap();
    let ids: Vec<u64> = listed.items.iter().map(|run| run.id.get()).collect();
    assert_eq!(ids, [3, 2]);
    // Nothing more to do: a second compaction archives nothing again.
    assert_eq!(
        store.compact(CUTOFF, 10).unwrap(),
        crate::Compacted::default()
    );
    assert_eq!(lines(&paths.runs).len(), 1);
    assert_eq!(lines(&paths.audit).len(), 2);
}

#[test]
fn a_batch_archived_but_not_removed_before_a_crash_is_archived_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = Sled::open(&dir.path().join("store")).unwrap();
    history(&store);
    let batch = store.gather(CUTOFF, 10).unwrap();
    store.archive(&batch).unwrap();
    // The bot dies here: archived, not removed. Half a line more, as a write cut short.
    let paths = store.archive_paths().unwrap();
    let mut torn = std::fs::read(&paths.runs).unwrap();
    torn.extend_from_slice(b"{\"run\":");
    std::fs::write(&paths.runs, torn).unwrap();
    drop(batch);
    let done = store.compact(CUTOFF, 10).unwrap();
    assert_eq!(done, crate::Compacted { runs: 1, audit: 2 });
    assert_eq!(lines(&paths.runs).len(), 1, "r-1 archived exactly once");
    assert_eq!(lines(&paths.audit).len(), 2);
    assert_eq!(store.run(RunId::new(1)).unwrap(), None);
}

#[test]
fn a_run_that_changed_while_it_was_archived_is_kept_and_the_archive_cut_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = Sled::open(&dir.path().join("store")).unwrap();
    history(&store);
    let batch = store.gather(CUTOFF, 10).unwrap();
    store.archive(&batch).unwrap();
    store.append_run_log(RunId::new(1), &["late"]).unwrap();
    assert!(!store.remove(&batch).unwrap());
    assert!(store.run(RunId::new(1)).unwrap().is_some());
    // The next compaction cuts the archive back and archives r-1 with its late line.
    store.compact(CUTOFF, 10).unwrap();
    let runs = lines(&store.archive_paths().unwrap().runs);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["log"], serde_json::json!(["one", "two", "late"]));
}

#[test]
fn a_shortened_archive_stops_compaction_before_anything_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Sled::open(&dir.path().join("store")).unwrap();
    history(&store);
    store.compact(CUTOFF, 10).unwrap();
    store.append_audit(&event(YEAR_AGO, None)).unwrap();
    let batch = store.gather(CUTOFF, 10).unwrap();
    store.archive(&batch).unwrap();
    // Someone empties the archive while the batch is pending.
    std::fs::write(store.archive_paths().unwrap().audit, b"").unwrap();
    let error = store.compact(CUTOFF, 10).unwrap_err().to_string();
    assert!(error.contains("put the archive back"), "{error}");
    assert!(
        audit_at(&store).contains(&YEAR_AGO),
        "the pending entry is still stored"
    );
}
