//! Maintenance announcements: maintenance runs announce their start and end, operators post
//! and end their own notice, and `/maintenance status` shows both.

use opsbot_commands::run::Outcome;
use opsbot_tests::{Harness, Setup};

#[tokio::test]
async fn a_maintenance_run_announces_its_start_and_its_end_once_each() {
    let h = Harness::start(Setup {
        days_of_indices: 10,
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", "/cluster restart cluster:logs").await;
    let run = h.finished(id).await;
    assert_eq!(run.outcome(), Some(&Outcome::Succeeded));
    // Announcements have a queue of their own: the run's message can show its end first.
    let said = tokio::time::timeout(opsbot_tests::PATIENCE, async {
        loop {
            let said = h.chat().announcements();
            if said.len() >= 2 {
                break said;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("both announcements");
    assert_eq!(said.len(), 2, "{said:#?}");
    assert_eq!(
        said[0],
        "🔧 maintenance started by alice: /cluster restart cluster:logs (r-1)"
    );
    assert!(
        said[1]
            .starts_with("✅ maintenance over: /cluster restart cluster:logs (r-1) succeeded in "),
        "{}",
        said[1]
    );
}

#[tokio::test]
async fn a_cancelled_maintenance_says_so_and_other_runs_announce_nothing() {
    let h = Harness::start(Setup {
        days_of_indices: 10,
        sim_speed: 5.0,
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", "/cluster stop cluster:logs").await;
    h.wait_for(id, "started", |run| run.cursor().is_some_and(|c| c > 1))
        .await;
    h.slash("bob", &format!("/run cancel id:{id}")).await;
    h.finished(id).await;
    let prune = h
        .start_run("alice", "/indices prune cluster:logs older_than_days:5")
        .await;
    h.approve("bob", prune).await;
    h.finished(prune).await;
    assert_eq!(
        h.chat().announcements(),
        [
            "🔧 maintenance started by alice: /cluster stop cluster:logs (r-1)",
            "⏹ maintenance cancelled by bob: /cluster stop cluster:logs (r-1)",
        ]
    );
}

#[tokio::test]
async fn operators_announce_and_end_their_own_maintenance() {
    let h = Harness::start(Setup::default()).await;
    let none = h.slash("alice", "/maintenance status").await;
    assert_eq!(
        none.text,
        "no maintenance announced\nno maintenance run under way"
    );
    let announced = h
        .slash(
            "alice",
            "/maintenance announce text:\"log cluster upgrade until 04:00 UTC\"",
        )
        .await;
    assert!(!announced.private, "{}", announced.text);
    let status = h.slash("bob", "/maintenance status").await;
    assert!(
        status
            .text
            .starts_with("📣 log cluster upgrade until 04:00 UTC (announced by alice at "),
        "{}",
        status.text
    );
    let ended = h.slash("bob", "/maintenance end").await;
    assert!(
        ended.text.starts_with(
            "✅ maintenance over (log cluster upgrade until 04:00 UTC, announced by alice at "
        ),
        "{}",
        ended.text
    );
    assert!(ended.text.ends_with("; ended by bob"), "{}", ended.text);
    let again = h.slash("bob", "/maintenance end").await;
    assert!(again.private);
    assert_eq!(again.text, "no maintenance is announced");
    h.publisher.flushed().await;
    let said = h.chat().announcements();
    assert_eq!(said.len(), 2, "{said:#?}");
    assert_eq!(
        said[0],
        "📣 maintenance: log cluster upgrade until 04:00 UTC (alice)"
    );
    assert!(said[1].starts_with("✅ maintenance over ("), "{}", said[1]);
    let carol = h.slash("carol", "/maintenance announce text:hello").await;
    assert!(carol.private, "only operators announce");
}
