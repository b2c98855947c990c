use super::*;
use crate::index::IndexName;
use crate::people::testing::{actor, person};
use crate::people::{Roles, Surface};
use crate::plan::{Action, ClusterDestructive, ClusterStep, OnCluster, Plan, StepRef};
use crate::run::{CancelRequest, ChannelId};
use time::macros::datetime;

const NOW: OffsetDateTime = datetime!(2026-11-21 03:00:00 UTC);
const EXPIRES: OffsetDateTime = datetime!(2026-11-21 03:30:00 UTC);

fn deletion() -> Plan {
    deletion_with(Vec::new())
}

/// The deletion of one index, after `before`.
fn deletion_with(mut before: Vec<ClusterStep>) -> Plan {
    before.push(ClusterStep::Destructive(
        ClusterDestructive::DeleteIndices {
            indices: vec![crate::index::PlannedIndex {
                name: IndexName::parse("flog-2026.10.01").unwrap(),
                uuid: None,
                bytes: None,
                created: None,
            }],
        },
    ));
    Plan::new(
        crate::request::ProcedureRequest::IndicesDelete {
            cluster: crate::name::ClusterName::parse("logs").unwrap(),
            index: IndexName::parse("flog-2026.10.01").unwrap(),
        },
        before,
        vec![],
    )
    .unwrap()
}

/// alice's run of a destructive plan, waiting for approval until 03:30.
fn awaiting() -> Run {
    Run::new(
        RunId::new(9),
        deletion(),
        person("alice"),
        ChannelId("c".into()),
        NOW,
        time::Duration::minutes(30),
    )
}

fn shown(run: &Run) -> String {
    run.digest.short().to_owned()
}

fn granted(mut run: Run, by: &str) -> Run {
    let grant = approve(&run, &actor(by, true), &shown(&run), NOW).unwrap();
    run.approval = Some(grant);
    run.state = RunState::Running;
    run
}

#[test]
fn the_requester_can_never_approve_even_as_approver() {
    let run = awaiting();
    assert_eq!(
        approve(&run, &actor("alice", true), &shown(&run), NOW),
        Err(ApprovalRefusal::OwnRun { run: run.id })
    );
}

#[test]
fn the_same_person_on_another_surface_is_still_the_requester() {
    let run = awaiting();
    let from_discord = Actor {
        person: PersonRef {
            name: person("alice").name,
            via: Surface::Discord { user: 42 },
        },
        roles: Roles {
            operator: true,
            approver: true,
        },
    };
    assert_eq!(
        approve(&run, &from_discord, &shown(&run), NOW),
        Err(ApprovalRefusal::OwnRun { run: run.id })
    );
    let refusal = ApprovalRefusal::OwnRun { run: run.id }.to_string();
    assert!(
        refusal.contains("to withdraw it: /reject id:r-9"),
        "{refusal}"
    );
}

#[test]
fn a_non_approver_is_refused() {
    let run = awaiting();
    assert_eq!(
        approve(&run, &actor("carol", false), &shown(&run), NOW),
        Err(ApprovalRefusal::NotApprover)
    );
}

#[test]
fn an_approver_gets_a_grant_bound_to_the_digest() {
    let run = awaiting();
    let grant = approve(&run, &actor("bob", true), &shown(&run), NOW).unwrap();
    assert_eq!(grant.digest, run.digest);
    assert_eq!(grant.by, person("bob"));
    assert_eq!(grant.at, NOW);
}

#[test]
fn a_digest_that_is_not_the_plans_is_refused() {
    let run = awaiting();
    let refusal = approve(&run, &actor("bob", true), "000000000000", NOW).unwrap_err();
    assert!(matches!(refusal, ApprovalRefusal::StaleDigest { .. }));
    // A prefix too short to identify a plan is refused as well.
    let short = &run.digest.short()[..4];
    assert!(approve(&run, &actor("bob", true), short, NOW).is_err());
}

#[test]
fn an_expired_request_is_refused_saying_when() {
    let run = awaiting();
    let refusal = approve(&run, &actor("bob", true), &shown(&run), EXPIRES).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "the approval request of run r-9 expired at 2026-11-21 03:30 UTC; request the run again"
    );
    assert!(reject(&run, &actor("bob", true), EXPIRES).is_err());
    assert!(expired(&run, EXPIRES));
    assert!(!expired(&run, EXPIRES - time::Duration::SECOND));
}

#[test]
fn a_second_approval_says_who_approved_and_when() {
    let run = granted(awaiting(), "bob");
    let refusal = approve(&run, &actor("dave", true), &shown(&run), NOW).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "run r-9 is already approved by bob at 2026-11-21 03:00 UTC"
    );
    // The same for bob himself, and once the run has finished.
    let mut done = run.clone();
    done.finish(Outcome::Succeeded, NOW);
    for (run, who) in [(&run, "bob"), (&done, "dave")] {
        assert!(matches!(
            approve(run, &actor(who, true), &shown(run), NOW),
            Err(ApprovalRefusal::Decided { .. })
        ));
    }
    // An approved run is no longer open to rejection or expiry.
    assert!(reject(&run, &actor("dave", true), NOW).is_err());
    assert!(!expired(&run, EXPIRES));
}

#[test]
fn decisions_by_others_are_named_truthfully() {
    let cases = [
        (
            Outcome::Rejected {
                by: person("bob"),
                reason: "not tonight".into(),
            },
            "run r-9 is already rejected by bob at 2026-11-21 03:00 UTC",
        ),
        (
            Outcome::Withdrawn {
                by: person("alice"),
                reason: None,
            },
            "run r-9 is already withdrawn by alice at 2026-11-21 03:00 UTC",
        ),
        (
            Outcome::Cancelled {
                by: person("carol"),
                note: String::new(),
            },
            "run r-9 is already cancelled by carol at 2026-11-21 03:00 UTC",
        ),
        (
            Outcome::Expired,
            "run r-9 already expired at 2026-11-21 03:00 UTC: nobody approved in time",
        ),
    ];
    for (state, said) in cases {
        let mut run = awaiting();
        run.finish(state, NOW);
        let refusal = approve(&run, &actor("bob", true), &shown(&run), NOW).unwrap_err();
        assert_eq!(refusal.to_string(), said);
        assert!(reject(&run, &actor("bob", true), NOW).is_err());
    }
}

#[test]
fn a_cancel_in_progress_closes_the_request() {
    let mut run = awaiting();
    run.cancel = Some(CancelRequest {
        by: person("carol"),
        at: NOW,
    });
    let refusal = approve(&run, &actor("bob", true), &shown(&run), NOW).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "run r-9 is being cancelled (asked by carol at 2026-11-21 03:00 UTC)"
    );
    assert!(
        !expired(&run, EXPIRES),
        "the cancel finishes it, not the clock"
    );
}

#[test]
fn a_plan_without_destructive_steps_needs_no_approval_even_from_its_requester() {
    let mut run = awaiting();
    run.replan(std::sync::Arc::new(
        Plan::new(
            run.plan().request().clone(),
            Vec::<ClusterStep>::new(),
            vec![],
        )
        .unwrap(),
    ));
    run.state = RunState::Running;
    for who in ["alice", "bob"] {
        assert_eq!(
            approve(&run, &actor(who, true), &shown(&run), NOW),
            Err(ApprovalRefusal::NoApprovalNeeded { run: run.id }),
            "{who}"
        );
    }
}

#[test]
fn the_requester_withdraws_and_an_approver_rejects() {
    let run = awaiting();
    assert_eq!(
        reject(&run, &actor("alice", false), NOW),
        Ok(Rejection::Withdrawn)
    );
    assert_eq!(
        reject(&run, &actor("bob", true), NOW),
        Ok(Rejection::Rejected)
    );
    assert_eq!(
        reject(&run, &actor("carol", false), NOW),
        Err(ApprovalRefusal::NotApprover)
    );
}

#[test]
fn a_run_requested_before_people_cannot_be_approved() {
    let mut run = awaiting();
    run.requester = serde_json::from_str(r#"{"id":"console:alice","name":"alice"}"#).unwrap();
    assert_eq!(
        approve(&run, &actor("bob", true), &shown(&run), NOW),
        Err(ApprovalRefusal::Legacy { run: run.id })
    );
    // An approver may still reject it.
    assert_eq!(
        reject(&run, &actor("bob", true), NOW),
        Ok(Rejection::Rejected)
    );
}

#[test]
fn the_proof_is_only_made_from_a_valid_grant() {
    let mut run = awaiting();
    assert!(holds(&run).is_err());
    run.approval = Some(ApprovalGrant {
        by: person("alice"),
        at: NOW,
        digest: run.digest.clone(),
    });
    assert!(holds(&run).is_err(), "self-granted");
    run.approval = Some(ApprovalGrant {
        by: PersonRef {
            name: person("alice").name,
            via: Surface::Discord { user: 7 },
        },
        at: NOW,
        digest: run.digest.clone(),
    });
    assert!(holds(&run).is_err(), "self-granted from another surface");
    run.approval = Some(ApprovalGrant {
        by: person("bob"),
        at: NOW,
        digest: run.digest.clone(),
    });
    assert_eq!(holds(&run), Ok(()));
    let step = destructive_step(&run);
    let proof = Approved::<OnCluster>::verify(&run, step).unwrap();
    assert_eq!(proof.run(), run.id);
    assert_eq!(proof.digest(), &run.digest);
    assert_eq!(proof.step(), step);
}

/// The first destructive step of `run`'s plan.
fn destructive_step(run: &Run) -> usize {
    run.plan()
        .steps()
        .position(StepRef::is_destructive)
        .unwrap()
}

#[test]
fn a_proof_is_for_one_destructive_step_and_acts_only_on_what_it_approved() {
    let plan = deletion_with(vec![ClusterStep::Gate {
        reason: "look first".into(),
    }]);
    let mut run = Run::new(
        RunId::new(9),
        plan,
        person("alice"),
        ChannelId("c".into()),
        NOW,
        time::Duration::minutes(30),
    );
    run.approval = Some(ApprovalGrant {
        by: person("bob"),
        at: NOW,
        digest: run.digest.clone(),
    });
    let safe = run
        .plan()
        .steps()
        .position(|step| !step.is_destructive())
        .unwrap();
    assert_eq!(
        Approved::<OnCluster>::verify(&run, safe).unwrap_err(),
        ApprovalRefusal::NotDestructive {
            run: run.id,
            step: safe
        }
    );
    let proof = Approved::<OnCluster>::verify(&run, destructive_step(&run)).unwrap();
    let Action::Destructive(ClusterDestructive::DeleteIndices { indices }) =
        &run.plan().cluster_steps()[proof.step()]
    else {
        panic!("the plan deletes indices")
    };
    let ClusterAct::DeleteIndices(mut approved) = proof.act() else {
        panic!("the proof deletes indices")
    };
    assert_eq!(approved.run(), run.id);
    assert_eq!(
        approved.iter().collect::<Vec<_>>(),
        indices.iter().collect::<Vec<_>>()
    );
    approved.retain(|index| index.name != indices[0].name);
    assert!(approved.is_empty());
}

/// alice's run of a cluster stop under the `confirm` policy, waiting until 03:30.
fn awaiting_confirmation() -> Run {
    let stop = crate::request::ProcedureRequest::ClusterStop {
        cluster: crate::name::ClusterName::parse("logs").unwrap(),
    };
    let plan = Plan::new(
        stop,
        vec![ClusterStep::Safe(
            crate::plan::ClusterSafe::DisableAllocation,
        )],
        vec![],
    )
    .unwrap()
    .under(crate::consent::Consent::Confirm);
    Run::new(
        RunId::new(10),
        plan,
        person("alice"),
        ChannelId("c".into()),
        NOW,
        time::Duration::minutes(30),
    )
}

#[test]
fn a_confirm_plan_waits_and_only_its_requester_confirms_the_plan_shown() {
    let run = awaiting_confirmation();
    assert!(run.awaits_confirmation());
    assert_eq!(run.label(), "awaiting confirmation");
    assert_eq!(
        run.state,
        RunState::AwaitingApproval {
            expires_at: EXPIRES
        }
    );
    let grant = confirm(&run, &actor("alice", false), &shown(&run), NOW).unwrap();
    assert_eq!(grant.digest, run.digest);
    assert!(grant.by.same_person(&run.requester));
    // Bob, an approver, neither confirms nor approves it: it is alice's to confirm.
    assert_eq!(
        confirm(&run, &actor("bob", true), &shown(&run), NOW),
        Err(ApprovalRefusal::NotRequester {
            run: run.id,
            requester: "alice".into()
        })
    );
    assert_eq!(
        approve(&run, &actor("bob", true), &shown(&run), NOW)
            .unwrap_err()
            .to_string(),
        "run r-10 needs no approval: alice, who requested it, confirms its plan (the `confirm` \
         policy of /cluster stop)"
    );
    assert!(matches!(
        confirm(&run, &actor("alice", false), "000000000000", NOW),
        Err(ApprovalRefusal::StaleDigest { .. })
    ));
    assert!(matches!(
        confirm(&run, &actor("alice", false), &shown(&run), EXPIRES),
        Err(ApprovalRefusal::Expired { .. })
    ));
}

#[test]
fn a_plan_that_needs_an_approver_is_never_confirmed_by_its_requester() {
    let run = awaiting();
    assert_eq!(
        confirm(&run, &actor("alice", true), &shown(&run), NOW),
        Err(ApprovalRefusal::NeedsApprover { run: run.id })
    );
    // Even under a `confirm` policy a destructive step asks an approver.
    let plan = deletion().under(crate::consent::Consent::Confirm);
    assert!(plan.needs_approval() && !plan.needs_confirmation());
}

#[test]
fn the_policy_is_part_of_the_digest_and_a_plan_without_one_keeps_its_digest() {
    let run = awaiting_confirmation();
    let plain = Plan::new(
        run.plan().request().clone(),
        run.plan().cluster_steps().to_vec(),
        vec![],
    )
    .unwrap();
    assert_ne!(plain.digest(), run.plan().digest());
    let stored = serde_json::to_value(&plain).unwrap();
    assert!(stored.get("consent").is_none(), "{stored}");
    let confirmed = serde_json::to_value(run.plan()).unwrap();
    assert_eq!(confirmed["consent"], "confirm");
    let read: Plan = serde_json::from_value(confirmed).unwrap();
    assert_eq!(read.digest(), run.plan().digest());
    assert!(read.needs_confirmation());
}
