//! Booked runs against the simulated cluster: planned and approved at booking, planned again
//! at their time; a plan that changed in between waits for a fresh approval instead of running.
//! The booked times are a few seconds ahead of the bot's clock, which the tests move on to them
//! instead of waiting; then they wait for what the store shows, never for a fixed time.

use std::collections::BTreeSet;
use std::time::Duration;

use opsbot_commands::name::RunId;
use opsbot_commands::run::{Outcome, Run, RunState};
use opsbot_tests::{Harness, Setup};
use time::format_description::well_known::Rfc3339;

const PRUNE: &str = "/indices prune cluster:logs older_than_days:30";

/// A time `seconds` ahead of the bot's clock, as an operator types it.
fn ahead(h: &Harness, seconds: i64) -> String {
    (h.clock.now() + time::Duration::seconds(seconds))
        .format(&Rfc3339)
        .unwrap()
}

/// How far the tests book ahead, and then move the clock on.
const LEAD: i64 = 4;

/// Moves the bot's clock on to the booked time.
fn skip_to_the_booked_time(h: &Harness) {
    h.clock.skip(Duration::from_secs(LEAD.unsigned_abs()));
}

async fn harness() -> Harness {
    Harness::start(Setup {
        days_of_indices: 35,
        ..Setup::default()
    })
    .await
}

/// Books `line` for `at` as alice; bob approves it if it needs approval. Returns the run once
/// it is booked.
async fn book_approved(h: &Harness, line: &str, at: &str) -> Run {
    let id = h.start_run("alice", &format!("{line} at:{at}")).await;
    if h.run(id).plan().needs_approval() {
        let booked = h.run(id);
        assert!(
            matches!(booked.state, RunState::AwaitingApproval { .. }),
            "{:?}",
            booked.state
        );
        let approved = h.approve("bob", id).await;
        assert!(approved.text.contains("approved"), "{}", approved.text);
    }
    let run = h.run(id);
    assert_eq!(run.state, RunState::Booked, "approved ahead of its time");
    run
}

/// The announcements, once one says `what`; fails the test after [`opsbot_tests::PATIENCE`].
async fn announced(h: &Harness, what: &str) -> Vec<String> {
    tokio::time::timeout(opsbot_tests::PATIENCE, h.chat().announced(what))
        .await
        .unwrap_or_else(|_| panic!("never announced {what}: {:?}", h.chat().announcements()))
}

fn deleted(h: &Harness) -> BTreeSet<String> {
    h.sim.state().deleted.into_iter().collect()
}

fn planned(run: &Run) -> BTreeSet<String> {
    run.plan()
        .deleted_indices()
        .map(|i| i.to_string())
        .collect()
}

#[tokio::test]
async fn a_booked_prune_waits_without_the_lock_and_runs_at_its_time_under_its_approval() {
    let h = harness().await;
    let reply = h
        .slash("alice", &format!("{PRUNE} at:{}", ahead(&h, LEAD)))
        .await
        .text;
    assert!(reply.contains("📅 starts at"), "{reply}");
    let id = RunId::parse(reply.split_whitespace().next().unwrap()).unwrap();
    h.approve("bob", id).await;
    let booked = h.run(id);
    assert_eq!(booked.state, RunState::Booked);
    assert!(deleted(&h).is_empty(), "nothing is deleted before its time");

    // The cluster is free for other runs while the booked one waits.
    let index = booked.plan().deleted_indices().next().unwrap().to_string();
    let other = h
        .start_run(
            "alice",
            &format!("/indices delete cluster:logs index:{index}"),
        )
        .await;
    assert_ne!(other, id);
    h.slash("alice", &format!("/run cancel id:{other}")).await;

    skip_to_the_booked_time(&h);
    let run = h.finished(id).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{:?}",
        run.steps()
    );
    assert_eq!(
        run.digest, booked.digest,
        "the plan approved is the plan run"
    );
    assert_eq!(deleted(&h), planned(&booked));
    announced(&h, "📅 maintenance booked by alice for").await;
    let status = h.slash("alice", &format!("/audit run:{id}")).await.text;
    assert!(
        status.contains("booked time reached; the plan is unchanged"),
        "{status}"
    );
}

#[tokio::test]
async fn a_booked_run_whose_plan_changed_waits_for_a_fresh_approval() {
    let h = harness().await;
    let booked = book_approved(&h, PRUNE, &ahead(&h, LEAD)).await;
    // Before the time, someone else deletes one of the indices the approved plan names.
    let gone = booked.plan().deleted_indices().next().unwrap().to_string();
    let status = reqwest::Client::new()
        .delete(format!("{}/{gone}", h.sim.base_url()))
        .send()
        .await
        .unwrap()
        .status();
    assert!(status.is_success(), "{status}");
    assert!(!h.index_names().contains(&gone), "{gone} is gone");
    let before = deleted(&h);

    skip_to_the_booked_time(&h);
    let waiting = h
        .wait_for(booked.id, "waiting for a fresh approval", |run| {
            run.booking.is_some_and(|b| !b.is_ahead()) || run.state.is_finished()
        })
        .await;
    assert!(
        matches!(waiting.state, RunState::AwaitingApproval { .. }),
        "{:?}",
        waiting.state
    );
    assert_ne!(waiting.digest, booked.digest);
    assert!(
        waiting.approval.is_none(),
        "the old approval does not carry over"
    );
    assert_eq!(
        deleted(&h),
        before,
        "nothing deleted under the old approval"
    );
    let text = h
        .slash("alice", &format!("/run status id:{}", booked.id))
        .await;
    assert!(
        text.text.contains("the plan differs from the one approved"),
        "{}",
        text.text
    );

    // The digest approved at booking no longer approves anything.
    let stale = h
        .slash(
            "bob",
            &format!("/approve id:{} digest:{}", booked.id, booked.digest.short()),
        )
        .await
        .text;
    assert!(stale.contains("is not the one you name"), "{stale}");
    h.approve("bob", booked.id).await;
    let run = h.finished(booked.id).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{:?}",
        run.steps()
    );
    let mut expected = planned(&waiting);
    expected.insert(gone.clone());
    assert_eq!(deleted(&h), expected);
    assert!(
        !planned(&waiting).contains(&gone),
        "{gone} in {:?}",
        planned(&waiting)
    );
}

#[tokio::test]
async fn a_booked_run_cancelled_before_its_time_does_nothing_and_says_so() {
    let h = harness().await;
    let booked = book_approved(&h, "/cluster restart cluster:logs", &ahead(&h, 60)).await;
    let reply = h
        .slash("alice", &format!("/run cancel id:{}", booked.id))
        .await;
    let run = h.run(booked.id);
    assert!(
        matches!(run.outcome(), Some(Outcome::Cancelled { note, .. }) if note.contains("before its booked time")),
        "{:?} ({})",
        run.state,
        reply.text
    );
    h.finished(booked.id).await;
    assert!(
        h.calls_by("POST").is_empty() && h.calls_by("PUT").is_empty(),
        "nothing was sent to change the cluster"
    );
    let announced = announced(&h, "⏹ maintenance cancelled by alice")
        .await
        .join("\n");
    assert!(announced.contains("📅 maintenance booked"), "{announced}");
}

#[tokio::test]
async fn a_booked_time_in_the_past_or_beyond_the_horizon_is_refused_before_the_cluster_is_asked() {
    let h = harness().await;
    for (at, says) in [
        (ahead(&h, -60), "is not ahead"),
        (ahead(&h, 91 * 24 * 3600), "more than 90 days ahead"),
    ] {
        let reply = h.slash("alice", &format!("{PRUNE} at:{at}")).await;
        assert!(reply.text.contains(says), "{}", reply.text);
        assert!(reply.private, "a refusal is for the one who typed it");
    }
    let typo = h.slash("alice", &format!("{PRUNE} at:2026-11-28")).await;
    assert!(
        typo.text
            .contains("is not a time such as 2026-11-28T02:00Z"),
        "{}",
        typo.text
    );
    assert!(h.calls().is_empty(), "{:?}", h.calls());
    assert!(h.engine.store().unfinished_runs().unwrap().is_empty());
}
