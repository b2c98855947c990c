//! Progress against a recording transport: coalescing, fairness, retries and re-attachment.

use opsbot_commands::name::ClusterName;
use opsbot_commands::people::{PersonRef, Surface};
use opsbot_commands::plan::{ClusterSafe, ClusterStep, Plan};
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::run::{Outcome, StepState};

use time::OffsetDateTime;

use super::script::Script;
use super::*;

pub(super) fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    (dir, store)
}

#[allow(
    clippy::disallowed_methods,
    reason = "set-up, written before the publisher looks"
)]
pub(super) fn new_run(store: &Store, cluster: &str) -> Run {
    let request = ProcedureRequest::ClusterStart {
        cluster: ClusterName::parse(cluster).unwrap(),
    };
    let plan = Plan::new(request, Vec::<ClusterStep>::new(), vec![]).unwrap();
    let requester = PersonRef {
        name: opsbot_commands::name::PersonName::parse("alice").unwrap(),
        via: Surface::Discord { user: 1 },
    };
    store
        .create_run(
            |id| {
                Run::new(
                    id,
                    plan,
                    requester,
                    ChannelId("ops".into()),
                    OffsetDateTime::now_utc(),
                    time::Duration::minutes(30),
                )
            },
            None,
        )
        .unwrap()
}

#[allow(
    clippy::disallowed_methods,
    reason = "set-up, written before the publisher looks"
)]
pub(super) fn finish(store: &Store, id: RunId) -> Run {
    store
        .update_run(id, None, |run| {
            run.finish(Outcome::Succeeded, OffsetDateTime::now_utc());
            Ok::<_, std::convert::Infallible>(vec![])
        })
        .unwrap()
}

/// 3 edits per 300 ms: fast enough for a test, slow enough that bursts must coalesce.
pub(super) const QUICK: ProgressConfig = ProgressConfig {
    edits_per_window: 3,
    window: Duration::from_millis(300),
};

#[tokio::test]
async fn a_burst_of_changes_coalesces_into_few_edits_and_ends_on_the_final_state() {
    let (_dir, store) = store();
    let recorder = Script::recording();
    let publisher = Publisher::new(Arc::clone(&recorder), store.clone(), QUICK);
    let run = new_run(&store, "logs");
    for i in 0..200u64 {
        publisher.observe(
            &run,
            Observation {
                unassigned_shards: Some(200 - i),
                ..Observation::default()
            },
        );
    }
    let done = finish(&store, run.id);
    publisher.changed(&done);
    publisher.flushed().await;
    let calls = recorder.messages();
    assert!(
        calls.len() <= 4,
        "{} chat calls for 201 events",
        calls.len()
    );
    assert_eq!(calls[0].kind, "post");
    assert!(
        calls
            .iter()
            .skip(1)
            .all(|c| c.kind == "edit" && c.target == "m1")
    );
    assert!(calls.last().unwrap().text.starts_with("✅"), "{calls:?}");
    assert_eq!(publisher.counters().events.load(Ordering::Relaxed), 201);
}

#[tokio::test(start_paused = true)]
async fn a_busy_run_does_not_starve_another_in_the_same_channel() {
    let (_dir, store) = store();
    let recorder = Script::recording();
    let publisher = Publisher::new(Arc::clone(&recorder), store.clone(), QUICK);
    let busy = new_run(&store, "logs");
    let quiet = new_run(&store, "other");
    publisher.changed(&quiet);
    for i in 0..50u64 {
        publisher.observe(
            &busy,
            Observation {
                relocating_shards: Some(i),
                ..Observation::default()
            },
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    publisher.flushed().await;
    let posts: Vec<_> = recorder
        .calls()
        .into_iter()
        .filter(|c| c.kind == "post")
        .collect();
    assert_eq!(posts.len(), 2, "both runs got their message");
}

#[tokio::test(start_paused = true)]
async fn a_failed_chat_call_is_retried_until_delivered() {
    let (_dir, store) = store();
    let recorder = Script::failing_first(2);
    let publisher = Publisher::new(Arc::clone(&recorder), store.clone(), QUICK);
    let run = new_run(&store, "logs");
    publisher.changed(&run);
    publisher.flushed().await;
    assert_eq!(recorder.delivered().len(), 1);
}

#[tokio::test]
async fn after_a_restart_the_same_message_is_edited() {
    let (_dir, store) = store();
    let recorder = Script::recording();
    let run = new_run(&store, "logs");
    {
        let publisher = Publisher::new(Arc::clone(&recorder), store.clone(), QUICK);
        publisher.changed(&run);
        publisher.flushed().await;
    }
    assert_eq!(
        store.run(run.id).unwrap().unwrap().progress_message,
        Some(MessageId("m1".into()))
    );
    let restarted = Publisher::new(Arc::clone(&recorder), store.clone(), QUICK);
    let done = finish(&store, run.id);
    restarted.changed(&done);
    restarted.flushed().await;
    let calls = recorder.messages();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!((calls[1].kind, calls[1].target.as_str()), ("edit", "m1"));
}

#[tokio::test(start_paused = true)]
async fn no_window_ever_holds_more_calls_than_the_quota() {
    let (_dir, store) = store();
    let clock = Script::recording();
    let publisher = Publisher::new(Arc::clone(&clock), store.clone(), QUICK);
    let runs: Vec<_> = ["a", "b", "c", "d"]
        .iter()
        .map(|c| new_run(&store, c))
        .collect();
    for i in 0..60u64 {
        for run in &runs {
            publisher.observe(
                run,
                Observation {
                    relocating_shards: Some(i),
                    ..Observation::default()
                },
            );
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    publisher.flushed().await;
    let at: Vec<_> = clock.messages().into_iter().map(|c| c.at).collect();
    assert!(at.len() > 6, "{} calls", at.len());
    for (i, start) in at.iter().enumerate() {
        let within = at[i..]
            .iter()
            .take_while(|t| **t < *start + QUICK.window)
            .count();
        assert!(
            within <= QUICK.edits_per_window as usize,
            "{within} calls within one window from call {i}"
        );
    }
}

#[tokio::test]
async fn an_observation_is_shown_with_its_step_only() {
    let (_dir, store) = store();
    let publisher = Publisher::new(Script::recording(), store.clone(), QUICK);
    let request = ProcedureRequest::ClusterStart {
        cluster: ClusterName::parse("logs").unwrap(),
    };
    let steps = [
        ClusterSafe::DisableAllocation,
        ClusterSafe::EnableAllocation,
    ];
    let plan = Plan::new(request, steps.map(ClusterStep::Safe).to_vec(), vec![]).unwrap();
    let mut run = new_run(&store, "logs");
    run.replan(Arc::new(plan));
    let seen = Observation {
        unassigned_shards: Some(3),
        ..Observation::default()
    };
    publisher.observe(&run, seen.clone());
    publisher.changed(&run);
    assert_eq!(
        publisher.observed(&run),
        Some(seen),
        "the same step still shows it"
    );

    // Read for the next step, even before the publisher is told of it (a lane reads the
    // store's latest record whenever it publishes).
    run.steps_mut()[0] = StepState::done(OffsetDateTime::now_utc(), "allocation disabled");
    assert_eq!(
        publisher.observed(&run),
        None,
        "the next step is shown without it"
    );
    publisher.changed(&run);
    assert_eq!(
        publisher.observed(&run),
        None,
        "nor once the publisher is told"
    );
}
