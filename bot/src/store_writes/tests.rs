//! Store writes run off the async threads, hold tokio's paused clock while they run, and keep
//! the store's results.

use std::time::Duration;

use opsbot_commands::index::{IndexName, PlannedIndex};
use opsbot_commands::name::{ClusterName, PersonName};
use opsbot_commands::people::{PersonRef, Surface};
use opsbot_commands::plan::{ClusterDestructive, ClusterStep, Plan};
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::run::{ChannelId, Outcome};

use super::*;

fn opened() -> (tempfile::TempDir, Store, StoreWrites) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    let writes = StoreWrites::new(store.clone());
    (dir, store, writes)
}

/// A builder for alice's run of one index deletion on `logs` (the engine's tests use it too).
pub(crate) fn deletion(id: RunId) -> Run {
    let index = IndexName::parse("flog-2026.01.01").unwrap();
    let plan = Plan::new(
        ProcedureRequest::IndicesDelete {
            cluster: ClusterName::parse("logs").unwrap(),
            index: index.clone(),
        },
        vec![ClusterStep::Destructive(
            ClusterDestructive::DeleteIndices {
                indices: vec![PlannedIndex {
                    name: index,
                    uuid: None,
                    bytes: None,
                    created: None,
                }],
            },
        )],
        vec![],
    )
    .unwrap();
    let alice = PersonRef {
        name: PersonName::parse("alice").unwrap(),
        via: Surface::Demo,
    };
    let now = OffsetDateTime::now_utc();
    Run::new(
        id,
        plan,
        alice,
        ChannelId("c".into()),
        now,
        time::Duration::minutes(30),
    )
}

#[tokio::test(flavor = "current_thread")]
async fn a_write_runs_off_the_runtime_thread() {
    let (_dir, store, writes) = opened();
    let runtime_thread = std::thread::current().id();
    let (tx, rx) = std::sync::mpsc::channel();
    let run = writes
        .create_run(
            move |id| {
                tx.send(std::thread::current().id()).unwrap();
                deletion(id)
            },
            None,
        )
        .await
        .unwrap();
    assert_ne!(rx.recv().unwrap(), runtime_thread);
    assert_eq!(store.run(run.id).unwrap(), Some(run));
}

/// A write that takes a while (a slow fsync) must not let the paused clock jump ahead, or every
/// timer of a test would fire while the store writes.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_slow_write_holds_the_paused_clock() {
    let (_dir, _store, writes) = opened();
    let slow = writes.create_run(
        |id| {
            // Stands in for a slow disk: the write is still under way when the runtime idles.
            std::thread::sleep(Duration::from_millis(20));
            deletion(id)
        },
        None,
    );
    let written = tokio::time::timeout(Duration::from_secs(3600), slow).await;
    assert!(written.is_ok(), "the paused clock ran past an hour");
}

#[tokio::test]
async fn a_transition_keeps_its_refusal_and_its_audit() {
    let (_dir, store, writes) = opened();
    let run = writes.create_run(deletion, None).await.unwrap();
    let refused = writes
        .update_run(run.id, None, |_| Err::<Vec<AuditKind>, _>("not now"))
        .await;
    assert!(matches!(refused, Err(UpdateError::Refused("not now"))));
    let expired = writes
        .update_run(run.id, None, |run| {
            run.finish(Outcome::Expired, OffsetDateTime::now_utc());
            Ok::<_, std::convert::Infallible>(vec![AuditKind::RunFinished {
                state: "expired".into(),
            }])
        })
        .await
        .unwrap();
    assert_eq!(store.run(run.id).unwrap(), Some(expired));
    assert_eq!(store.audit().unwrap().len(), 2);
}

#[tokio::test]
#[should_panic(expected = "the write's own panic")]
async fn a_panic_in_a_write_is_the_callers() {
    let (_dir, _store, writes) = opened();
    let _ = writes
        .off_thread(|_| -> Result<(), StoreError> { panic!("the write's own panic") })
        .await;
}

#[test]
fn a_write_after_the_runtime_stopped_is_not_written_and_says_why() {
    let (_dir, store, writes) = opened();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let handle = runtime.handle().clone();
    drop(runtime);
    let _entered = handle.enter();
    let event = AuditEvent {
        at: OffsetDateTime::now_utc(),
        run: None,
        actor: None,
        event: AuditKind::CancelRequested,
    };
    let written = futures::executor::block_on(writes.append_audit(event));
    assert!(
        matches!(written, Err(StoreError::ShuttingDown)),
        "{written:?}"
    );
    assert!(store.audit().unwrap().is_empty());
}
