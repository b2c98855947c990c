//! Deletions under the two-person rule: index retention and single deletion, approved (or not)
//! by a second operator, checked against what the cluster really received.

use std::collections::BTreeSet;

use opsbot_commands::audit::AuditKind;
use opsbot_commands::run::{Outcome, RunState};
use opsbot_tests::{Harness, Setup, actor};

const PRUNE: &str = "/indices prune cluster:logs older_than_days:30";

#[tokio::test]
async fn a_prune_approved_by_a_second_operator_deletes_exactly_the_selection() {
    let h = Harness::start(Setup::default()).await;
    let before: BTreeSet<String> = h.index_names().into_iter().collect();
    let reply = h.slash("alice", PRUNE).await;
    assert!(
        reply
            .text
            .starts_with("r-1 waits for approval by an approver (expires "),
        "{}",
        reply.text
    );
    let id = opsbot_commands::name::RunId::new(1);
    assert!(matches!(h.run(id).state, RunState::AwaitingApproval { .. }));
    assert!(
        h.calls_by("DELETE").is_empty(),
        "nothing is deleted before the approval"
    );

    let approved = h.approve("bob", "r-1").await;
    assert_eq!(
        approved.text,
        format!("r-1 approved by bob (plan digest {})", h.run(id).digest)
    );
    let run = h.finished(id).await;
    assert_eq!(run.outcome(), Some(&Outcome::Succeeded), "{:?}", run.state);

    let planned: BTreeSet<String> = run
        .plan()
        .deleted_indices()
        .map(|i| i.to_string())
        .collect();
    let deleted: BTreeSet<String> = h.deleted_names().into_iter().collect();
    assert_eq!(deleted, planned, "exactly the plan was deleted");
    assert_eq!(planned.len(), 60);
    let after: BTreeSet<String> = h.index_names().into_iter().collect();
    assert_eq!(
        before.difference(&after).cloned().collect::<BTreeSet<_>>(),
        planned
    );
    assert!(after.contains(".kibana_1"));
    for call in h.calls_by("DELETE") {
        assert!(
            !call.path.contains('*') && !call.path.contains("_all") && !call.path.contains("/."),
            "{call:?}"
        );
    }
    let shown = h.chat().messages()[0].text().to_owned();
    assert!(
        shown.starts_with("✅ r-1 · /indices prune cluster:logs older_than_days:30 · by alice"),
        "{shown}"
    );
    assert!(
        shown.contains("verified: none of the 60 selected indices remains"),
        "{shown}"
    );
}

#[tokio::test]
async fn the_requester_and_non_approvers_cannot_approve_and_are_audited() {
    let h = Harness::start(Setup::default()).await;
    h.slash("bob", PRUNE).await;
    let own = h.approve("bob", "r-1").await;
    assert!(own.private);
    assert_eq!(
        own.text,
        "you requested run r-1; another approver must approve it (to withdraw it: /reject \
         id:r-1 reason:\"...\" or /run cancel id:r-1)"
    );
    let not_approver = h.approve("alice", "r-1").await;
    assert_eq!(
        not_approver.text,
        "approving needs the approver role; ask an approver"
    );
    let watcher = h.approve("carol", "r-1").await;
    assert_eq!(watcher.text, "only operators may do that; ask an operator");
    let stale = h
        .slash("dave-approver", "/approve id:r-1 digest:000000000000")
        .await;
    assert!(stale.private);
    assert!(matches!(
        h.run(opsbot_commands::name::RunId::new(1)).state,
        RunState::AwaitingApproval { .. }
    ));
    let refused: Vec<String> = h
        .engine
        .store()
        .audit()
        .unwrap()
        .into_iter()
        .filter_map(|e| match e.event {
            AuditKind::Refused { reason, .. } => Some(format!("{}: {reason}", e.actor.unwrap())),
            _ => None,
        })
        .collect();
    assert_eq!(
        refused,
        vec![
            "bob: you requested run r-1; another approver must approve it (to withdraw it: \
             /reject id:r-1 reason:\"...\" or /run cancel id:r-1)"
                .to_owned(),
            "alice: approving needs the approver role; ask an approver".to_owned(),
            "carol: only operators may do that; ask an operator".to_owned(),
            format!(
                "dave-approver: the plan of run r-1 is not the one you name (its digest is {}, \
                 you gave 000000000000); look at it again with /run status id:r-1",
                h.run(opsbot_commands::name::RunId::new(1)).digest.short()
            ),
        ]
    );
    assert!(h.calls_by("DELETE").is_empty());
}

#[tokio::test]
async fn a_stale_digest_is_refused() {
    let h = Harness::start(Setup::default()).await;
    h.slash("alice", PRUNE).await;
    let id = opsbot_commands::name::RunId::new(1);
    let error = h
        .engine
        .approve(&actor("bob"), id, "000000000000")
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("the plan of run r-1 is not the one you name"),
        "{error}"
    );
    let digest = h.run(id).digest.short().to_owned();
    h.engine.approve(&actor("bob"), id, &digest).await.unwrap();
    assert_eq!(h.finished(id).await.outcome(), Some(&Outcome::Succeeded));
}

#[tokio::test]
async fn an_unanswered_request_expires_and_cannot_be_approved_after() {
    let h = Harness::start(Setup::default()).await;
    h.slash("alice", PRUNE).await;
    // Past the approval's time to live, on the bot's clock: nobody waits for it.
    h.clock.skip(Setup::default().engine.approval_ttl);
    let id = opsbot_commands::name::RunId::new(1);
    assert_eq!(h.finished(id).await.outcome(), Some(&Outcome::Expired));
    let late = h.approve("bob", "r-1").await;
    assert!(
        late.text.starts_with("run r-1 already expired at ")
            && late.text.ends_with(": nobody approved in time"),
        "{}",
        late.text
    );
    assert!(late.private);
    assert!(h.calls_by("DELETE").is_empty());
    // The cluster is free again.
    assert!(
        h.slash("alice", PRUNE)
            .await
            .text
            .starts_with("r-2 waits for approval")
    );
}

#[tokio::test]
async fn a_second_approval_is_told_who_approved_and_approval_after_cancel_is_refused() {
    let h = Harness::start(Setup::default()).await;
    h.slash("alice", PRUNE).await;
    let first = h.approve("bob", "r-1").await;
    assert!(!first.private, "{}", first.text);
    assert!(
        first.text.starts_with("r-1 approved by bob (plan digest "),
        "{}",
        first.text
    );
    let again = h.approve("dave-approver", "r-1").await;
    assert!(again.private, "{}", again.text);
    assert!(
        again
            .text
            .starts_with("run r-1 is already approved by bob at "),
        "{}",
        again.text
    );
    let run = h.finished(opsbot_commands::name::RunId::new(1)).await;
    assert_eq!(run.outcome(), Some(&Outcome::Succeeded));
    assert_eq!(h.deleted_names().len(), 60, "deleted once");

    let newest = h
        .index_names()
        .into_iter()
        .filter(|n| n.starts_with("flog-"))
        .max()
        .unwrap();
    let reply = h
        .slash(
            "alice",
            &format!("/indices delete cluster:logs index:{newest}"),
        )
        .await;
    assert!(
        reply.text.starts_with("r-2 waits for approval"),
        "{}",
        reply.text
    );
    let cancelled = h.slash("bob", "/run cancel id:r-2").await;
    assert!(!cancelled.private, "{}", cancelled.text);
    assert_eq!(
        cancelled.text,
        "r-2 cancelled by bob: cancelled before approval; nothing was done"
    );
    let run = h.finished(opsbot_commands::name::RunId::new(2)).await;
    assert!(
        matches!(run.outcome(), Some(Outcome::Cancelled { .. })),
        "{:?}",
        run.state
    );
    let late = h.approve("dave-approver", "r-2").await;
    assert!(
        late.text
            .starts_with("run r-2 is already cancelled by bob at "),
        "{}",
        late.text
    );
}

#[tokio::test]
async fn a_rejected_plan_deletes_nothing() {
    let h = Harness::start(Setup::default()).await;
    h.slash("alice", PRUNE).await;
    let rejected = h
        .slash("bob", "/reject id:r-1 reason:\"not during the audit\"")
        .await;
    assert_eq!(rejected.text, "r-1 rejected by bob: not during the audit");
    let run = h.finished(opsbot_commands::name::RunId::new(1)).await;
    assert!(matches!(run.outcome(), Some(Outcome::Rejected { .. })));
    assert!(h.calls_by("DELETE").is_empty());
    assert!(
        h.chat().messages()[0]
            .text()
            .contains("reason: not during the audit")
    );
}

#[tokio::test]
async fn indices_that_vanish_are_reported_and_ones_that_appear_are_never_deleted() {
    let h = Harness::start(Setup::default()).await;
    h.slash("alice", PRUNE).await;
    let id = opsbot_commands::name::RunId::new(1);
    let planned: Vec<String> = h
        .run(id)
        .plan()
        .deleted_indices()
        .map(|i| i.to_string())
        .collect();
    let http = reqwest::Client::new();
    // Meanwhile, someone deletes one selected index and creates an old-dated one.
    let gone = &planned[0];
    http.delete(format!("{}/{gone}", h.sim.base_url()))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap();
    http.put(format!("{}/flog-2020.01.01", h.sim.base_url()))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap();
    h.sim.clear_calls();
    h.approve("bob", "r-1").await;
    let run = h.finished(id).await;
    assert_eq!(run.outcome(), Some(&Outcome::Succeeded), "{:?}", run.state);
    let deleted = h.deleted_names();
    assert!(!deleted.contains(gone));
    assert!(!deleted.iter().any(|d| d == "flog-2020.01.01"));
    assert!(h.index_names().contains(&"flog-2020.01.01".to_owned()));
    let note = h.chat().messages()[0].texts.join("\n");
    assert!(
        note.contains(&format!(
            "already gone before the delete (not an error): {gone}"
        )),
        "{note}"
    );
}

#[tokio::test]
async fn a_cancelled_prune_stops_between_chunks_and_reports_what_was_deleted() {
    let h = Harness::start(Setup {
        days_of_indices: 420,
        ..Setup::default()
    })
    .await;
    h.slash("alice", PRUNE).await;
    let id = opsbot_commands::name::RunId::new(1);
    let run = h.run(id);
    let chunks = run.steps().len() - 1;
    assert!(chunks >= 2, "{chunks} chunks");
    h.sim
        .set_faults(vec!["latency=400ms,method=DELETE".parse().unwrap()]);
    h.approve("bob", "r-1").await;
    h.wait_for(id, "deleting", |r| {
        matches!(
            r.steps()[0],
            opsbot_commands::run::StepState::Started { .. }
        )
    })
    .await;
    h.slash("alice", "/run cancel id:r-1").await;
    let run = h.finished(id).await;
    let Some(Outcome::Cancelled { note, .. }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    let first = match &run.plan().cluster_steps()[0] {
        opsbot_commands::plan::Action::Destructive(
            opsbot_commands::plan::ClusterDestructive::DeleteIndices { indices },
        ) => indices.len(),
        other => panic!("{other:?}"),
    };
    let total = run.plan().deleted_indices().count();
    assert!(
        note.starts_with(&format!(
            "deleted {first} of {total} selected indices; not deleted: "
        )),
        "{note}"
    );
    assert_eq!(
        h.deleted_names().len(),
        first,
        "only the first chunk went out"
    );
}

#[tokio::test]
async fn nothing_to_delete_is_a_success_that_says_so() {
    let h = Harness::start(Setup {
        days_of_indices: 10,
        ..Setup::default()
    })
    .await;
    let reply = h.slash("alice", PRUNE).await;
    assert!(!reply.private);
    assert!(
        reply
            .text
            .contains("nothing to delete: no index of `logs` is older than 30 days"),
        "{}",
        reply.text
    );
    assert!(h.engine.store().runs().unwrap().is_empty());
}

#[tokio::test]
async fn the_audit_trail_shows_who_asked_approved_and_what_each_step_did() {
    let h = Harness::start(Setup::default()).await;
    h.slash("alice", PRUNE).await;
    h.approve("alice", "r-1").await;
    h.approve("bob", "r-1").await;
    h.finished(opsbot_commands::name::RunId::new(1)).await;
    let trail = h.slash("carol", "/audit run:r-1").await;
    assert!(trail.private, "only operators read the audit trail");
    let trail = h.slash("bob", "/audit run:r-1").await.text;
    let events: Vec<&str> = trail
        .lines()
        .map(|l| l.split_once(" · ").map_or(l, |(_, e)| e))
        .collect();
    assert!(
        events[0].starts_with("requested /indices prune cluster:logs older_than_days:30 (digest "),
        "{trail}"
    );
    assert_eq!(
        events[1],
        "refused /approve id:r-1: you requested run r-1; another approver must approve it (to \
         withdraw it: /reject id:r-1 reason:\"...\" or /run cancel id:r-1)"
    );
    assert!(events[2].starts_with("approved (digest "), "{trail}");
    assert!(events.contains(&"step 1 done: deleted 60"), "{trail}");
    // carol's look at the trail was refused, and that is in the trail too.
    assert_eq!(
        events[events.len() - 2..],
        [
            "finished: succeeded",
            "refused /audit: only operators may do that; ask an operator"
        ]
    );
    assert!(
        trail.lines().nth(1).unwrap().contains(" r-1 alice · "),
        "{trail}"
    );
    let bad = h.slash("bob", "/audit since:yesterday").await;
    assert_eq!(
        bad.text,
        "since: `yesterday` is no time; write since: as 30m, 2h, 3d or 2026-11-21T03:00:00Z"
    );
}

#[tokio::test]
async fn a_button_from_another_plan_or_a_decided_one_is_refused_privately() {
    use opsbot_commands::button::{ApprovalButton, Decision};

    let h = Harness::start(Setup::default()).await;
    let id = h.start_run("alice", PRUNE).await;
    let stale = ApprovalButton {
        decision: Decision::Approve,
        run: id,
        digest: "0123456789ab".to_owned(),
    };
    let refused = h.service.decide(&actor("bob"), &stale).await.unwrap_err();
    assert!(refused.private);
    assert!(refused.text.contains("0123456789ab"), "{}", refused.text);
    assert!(matches!(h.run(id).state, RunState::AwaitingApproval { .. }));

    let run = h.run(id);
    let reject = ApprovalButton::new(Decision::Reject, id, &run.digest);
    let approve = ApprovalButton::new(Decision::Approve, id, &run.digest);
    h.service.decide(&actor("bob"), &approve).await.unwrap();
    let late = h
        .service
        .decide(&actor("dave-approver"), &reject)
        .await
        .unwrap_err();
    assert!(late.private, "{}", late.text);
    h.finished(id).await;
    let events = h.engine.store().audit().unwrap();
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.event, AuditKind::Refused { .. })),
        "refusals are audited"
    );
}
