use super::*;
use crate::run::{ChannelId, Roles};
use time::macros::datetime;

const NOW: OffsetDateTime = datetime!(2026-11-21 03:00:00 UTC);

fn user(name: &str) -> UserRef {
    UserRef {
        id: format!("u-{name}"),
        name: name.into(),
    }
}

fn actor(name: &str, approver: bool) -> Actor {
    Actor {
        user: user(name),
        roles: Roles {
            operator: true,
            approver,
        },
    }
}

/// A run waiting for approval. No procedure of this crate is destructive yet, so the state is
/// set by hand: the rules below do not depend on which steps the plan has.
fn awaiting() -> Run {
    let plan = crate::plan::Plan {
        request: crate::request::ProcedureRequest::ClusterStop {
            cluster: crate::name::ClusterName::parse("logs").unwrap(),
        },
        steps: vec![],
        notes: vec![],
    };
    let mut run = Run::new(
        RunId::new(9),
        plan,
        user("alice"),
        ChannelId("c".into()),
        NOW,
        time::Duration::minutes(30),
    );
    run.state = RunState::AwaitingApproval {
        expires_at: NOW + time::Duration::minutes(30),
    };
    run
}

#[test]
fn the_requester_can_never_approve_even_as_approver() {
    let run = awaiting();
    assert_eq!(
        approve(&run, &actor("alice", true), None, NOW),
        Err(ApprovalRefusal::OwnRun { run: run.id })
    );
}

#[test]
fn a_non_approver_is_refused() {
    assert_eq!(
        approve(&awaiting(), &actor("carol", false), None, NOW),
        Err(ApprovalRefusal::NotApprover)
    );
}

#[test]
fn an_approver_gets_a_grant_bound_to_the_digest() {
    let run = awaiting();
    let shown = run.digest.short().to_owned();
    let Ok(ApprovalOutcome::Granted(grant)) = approve(&run, &actor("bob", true), Some(&shown), NOW)
    else {
        panic!("not granted");
    };
    assert_eq!(grant.digest, run.digest);
    assert_eq!(grant.by, user("bob"));
}

#[test]
fn a_stale_digest_is_refused() {
    let run = awaiting();
    let refusal = approve(&run, &actor("bob", true), Some("000000000000"), NOW).unwrap_err();
    assert!(matches!(refusal, ApprovalRefusal::StaleDigest { .. }));
    // A prefix too short to identify a plan is refused as well.
    let short = &run.digest.short()[..4];
    assert!(approve(&run, &actor("bob", true), Some(short), NOW).is_err());
}

#[test]
fn an_expired_request_is_refused() {
    let late = NOW + time::Duration::minutes(30);
    assert_eq!(
        approve(&awaiting(), &actor("bob", true), None, late),
        Err(ApprovalRefusal::Expired { run: RunId::new(9) })
    );
    assert!(reject(&awaiting(), &actor("bob", true), late).is_err());
}

#[test]
fn approving_twice_is_harmless() {
    let mut run = awaiting();
    let Ok(ApprovalOutcome::Granted(grant)) = approve(&run, &actor("bob", true), None, NOW) else {
        panic!("not granted");
    };
    run.approval = Some(grant);
    run.state = RunState::Running;
    assert_eq!(
        approve(&run, &actor("dave", true), None, NOW),
        Ok(ApprovalOutcome::AlreadyApproved)
    );
}

#[test]
fn approval_after_cancel_is_refused() {
    let mut run = awaiting();
    run.finish(
        RunState::Cancelled {
            by: user("alice"),
            note: String::new(),
        },
        NOW,
    );
    assert_eq!(
        approve(&run, &actor("bob", true), None, NOW),
        Err(ApprovalRefusal::NotAwaiting {
            run: run.id,
            state: "cancelled"
        })
    );
}

#[test]
fn the_proof_is_only_made_from_a_valid_grant() {
    let mut run = awaiting();
    assert!(Approved::verify(&run).is_err());
    run.approval = Some(ApprovalGrant {
        by: user("alice"),
        at: NOW,
        digest: run.digest.clone(),
    });
    assert!(Approved::verify(&run).is_err(), "self-granted");
    run.approval = Some(ApprovalGrant {
        by: user("bob"),
        at: NOW,
        digest: run.digest.clone(),
    });
    let proof = Approved::verify(&run).unwrap();
    assert_eq!(proof.run(), run.id);
    assert_eq!(proof.digest(), &run.digest);
}
