//! The operators' approval policy: a `confirm` procedure waits for its requester's confirmation
//! of the plan shown, a `second-person` one for an approver, whatever the policy says of a
//! deletion.

use opsbot_commands::audit::AuditKind;
use opsbot_commands::consent::ConsentPolicy;
use opsbot_commands::run::{Outcome, RunState};
use opsbot_tests::{Harness, Setup};

const STOP: &str = "/cluster stop cluster:logs";

/// The requests that change the cluster: none may reach it before the plan is agreed to.
fn changes(h: &Harness) -> usize {
    h.calls().iter().filter(|c| c.method != "GET").count()
}

#[tokio::test]
async fn a_stop_waits_for_its_requesters_confirmation_of_the_plan_shown() {
    let h = Harness::start(Setup::default()).await;
    let reply = h.slash("alice", STOP).await;
    let id = opsbot_commands::name::RunId::new(1);
    let run = h.run(id);
    assert!(run.awaits_confirmation(), "{:?}", run.state);
    assert!(
        reply
            .text
            .starts_with("r-1 waits for alice to confirm it (expires ")
            && reply.text.contains(&format!(
                "/run confirm id:r-1 digest:{}, or /run cancel id:r-1 to withdraw it",
                run.digest
            ))
            && reply
                .text
                .contains("\napproval: confirm (the requester confirms the plan before it runs)"),
        "{}",
        reply.text
    );
    let digest = run.digest.short().to_owned();
    // Nobody else confirms it, and it needs no approver.
    let bob = h
        .slash("bob", &format!("/run confirm id:r-1 digest:{digest}"))
        .await;
    assert!(bob.private);
    assert_eq!(
        bob.text,
        "only alice, who requested run r-1, confirms it; to stop it: /run cancel id:r-1"
    );
    let approved = h.approve("bob", id).await;
    assert!(
        approved
            .text
            .starts_with("run r-1 needs no approval: alice, who requested it"),
        "{}",
        approved.text
    );
    // Only the plan shown: a digest of another plan is refused.
    let stale = h
        .slash("alice", "/run confirm id:r-1 digest:000000000000")
        .await;
    assert!(
        stale
            .text
            .starts_with("the plan of run r-1 is not the one you name")
    );
    assert_eq!(changes(&h), 0, "nothing changed before the confirmation");

    let confirmed = h
        .slash("alice", &format!("/run confirm id:r-1 digest:{digest}"))
        .await;
    assert_eq!(
        confirmed.text,
        format!("r-1 confirmed by alice (plan digest {digest}); starting")
    );
    assert_eq!(h.finished(id).await.outcome(), Some(&Outcome::Succeeded));
    let audit = h.engine.store().audit().unwrap();
    assert!(audit.iter().any(|e| e.event
        == AuditKind::Confirmed {
            digest: digest.clone()
        }
        && e.actor.as_ref().is_some_and(|a| a.to_string() == "alice")));
    let refused = audit
        .iter()
        .filter(|e| matches!(e.event, AuditKind::Refused { .. }))
        .count();
    assert_eq!(
        refused, 3,
        "bob's confirmation, bob's approval, alice's stale digest"
    );
}

#[tokio::test]
async fn an_unconfirmed_plan_expires_having_done_nothing() {
    let h = Harness::start(Setup::default()).await;
    h.slash("alice", STOP).await;
    h.clock.skip(Setup::default().engine.approval_ttl);
    let id = opsbot_commands::name::RunId::new(1);
    let run = h.finished(id).await;
    assert_eq!(run.outcome(), Some(&Outcome::Expired));
    let shown = opsbot_commands::render::progress(&run, None, h.clock.clock().now());
    assert!(shown.contains("expired: not confirmed in time"), "{shown}");
    let late = h
        .slash(
            "alice",
            &format!("/run confirm id:r-1 digest:{}", run.digest),
        )
        .await;
    assert!(
        late.text.ends_with(": not confirmed in time"),
        "{}",
        late.text
    );
    assert_eq!(changes(&h), 0);
}

#[tokio::test]
async fn the_policy_can_ask_a_second_person_for_a_stop_and_then_its_requester_cannot_confirm() {
    let h = Harness::start(Setup {
        approval: ConsentPolicy::parse([("cluster stop", "second-person")]).unwrap(),
        ..Setup::default()
    })
    .await;
    let reply = h.slash("alice", STOP).await;
    assert!(
        reply
            .text
            .starts_with("r-1 waits for approval by an approver"),
        "{}",
        reply.text
    );
    let id = opsbot_commands::name::RunId::new(1);
    let digest = h.run(id).digest.short().to_owned();
    let own = h
        .slash("alice", &format!("/run confirm id:r-1 digest:{digest}"))
        .await;
    assert_eq!(
        own.text,
        "run r-1 needs an approver's approval, not its requester's confirmation (/approve id:r-1)"
    );
    assert!(matches!(h.run(id).state, RunState::AwaitingApproval { .. }));
    h.approve("bob", id).await;
    assert_eq!(h.finished(id).await.outcome(), Some(&Outcome::Succeeded));
}

#[tokio::test]
async fn with_the_policy_none_a_stop_runs_at_once() {
    let h = Harness::start(Setup {
        approval: ConsentPolicy::parse([("cluster stop", "none")]).unwrap(),
        ..Setup::default()
    })
    .await;
    let reply = h.slash("alice", STOP).await;
    assert!(reply.text.starts_with("r-1 started"), "{}", reply.text);
    assert!(
        reply.text.contains("\napproval: none (runs at once)"),
        "{}",
        reply.text
    );
    assert!(reply.awaits.is_none());
}
