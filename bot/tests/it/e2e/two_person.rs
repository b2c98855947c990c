//! One person, one identity: the two-person rule compares people, whatever surface or account
//! they speak from; every decision on a plan is one compare-and-swap whose loser is told what
//! won; the requester may withdraw; and every refusal is in the audit log.

use std::sync::Arc;
use std::time::Duration;

use opsbot::config::Role;
use opsbot_commands::audit::AuditKind;
use opsbot_commands::name::{Reason, RunId};
use opsbot_commands::people::{Actor, People, Speaker, Surface};
use opsbot_commands::run::{Outcome, RunState};
use opsbot_tests::{Harness, Setup, actor};
use tokio::sync::Barrier;

const PRUNE: &str = "/indices prune cluster:logs older_than_days:30";

/// The harness's people, with alice also at a second account and bob's roles as configured.
fn people() -> People {
    let mut people = opsbot_tests::people();
    people[0].accounts.push("alice-admin".to_owned());
    assert_eq!(people[1].roles, [Role::Operator, Role::Approver]);
    let config = opsbot::config::Config {
        people,
        ..opsbot::config::Config::parse(
            "[store]\npath = \"/x\"\n[runbooks]\ndir = \"/r\"\n[runbooks.inventory]\nc = [\"h\"]\n",
        )
        .unwrap()
    };
    config.people().unwrap()
}

fn refusals(h: &Harness) -> Vec<(Speaker, String)> {
    h.engine
        .store()
        .audit()
        .unwrap()
        .into_iter()
        .filter_map(|e| match e.event {
            AuditKind::Refused { reason, .. } => Some((e.actor.unwrap(), reason)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_requester_is_refused_from_every_account_and_surface_and_each_refusal_is_audited() {
    let h = Harness::start(Setup::default()).await;
    let people = people();
    let at_console = people.on_console("alice").unwrap();
    let at_admin_console = people.on_console("alice-admin").unwrap();
    let in_discord = people.on_discord(700_000_000_000_000_001, &[]).unwrap();
    let reply = h.say(&at_console, PRUNE).await;
    assert!(
        reply.text.starts_with("r-1 waits for approval"),
        "{}",
        reply.text
    );
    let digest = h.run(RunId::new(1)).digest.short().to_owned();
    for alice in [&at_admin_console, &in_discord, &at_console] {
        let preview = h.say(alice, "/approve id:r-1").await;
        assert!(preview.private);
        assert!(
            preview.text.starts_with("you requested run r-1;"),
            "{}",
            preview.text
        );
        let typed = h
            .say(alice, &format!("/approve id:r-1 digest:{digest}"))
            .await;
        assert!(
            typed.text.starts_with("you requested run r-1;"),
            "{}",
            typed.text
        );
    }
    assert!(matches!(
        h.run(RunId::new(1)).state,
        RunState::AwaitingApproval { .. }
    ));
    let audited = refusals(&h);
    assert_eq!(audited.len(), 6, "{audited:?}");
    for (speaker, reason) in &audited {
        assert_eq!(speaker.person.as_ref().unwrap().as_str(), "alice");
        assert!(reason.starts_with("you requested run r-1;"), "{reason}");
    }
    let surfaces: Vec<&Surface> = audited.iter().map(|(s, _)| &s.via).collect();
    assert_eq!(
        surfaces,
        [
            &Surface::Console {
                account: "alice-admin".into()
            },
            &Surface::Console {
                account: "alice-admin".into()
            },
            &Surface::Discord {
                user: 700_000_000_000_000_001
            },
            &Surface::Discord {
                user: 700_000_000_000_000_001
            },
            &Surface::Console {
                account: "alice".into()
            },
            &Surface::Console {
                account: "alice".into()
            },
        ]
    );
    // The audit trail says who, from where.
    let trail = h.slash("bob", "/audit run:r-1").await.text;
    assert!(
        trail.contains(" r-1 alice · refused /approve id:r-1: you requested run r-1;"),
        "{trail}"
    );
    assert!(h.calls_by("DELETE").is_empty());
}

#[tokio::test]
async fn the_typed_approve_shows_the_plan_and_its_digest_before_approving_it() {
    let h = Harness::start(Setup::default()).await;
    let id = h.start_run("alice", PRUNE).await;
    let digest = h.run(id).digest.short().to_owned();
    let preview = h.slash("bob", "/approve id:r-1").await;
    assert!(preview.private);
    assert!(
        preview.text.starts_with(&format!(
            "to approve exactly this plan of r-1: /approve id:r-1 digest:{digest}\nPlan for \
             /indices prune cluster:logs"
        )),
        "{}",
        preview.text
    );
    assert!(matches!(h.run(id).state, RunState::AwaitingApproval { .. }));
    let approved = h.approve("bob", "r-1").await;
    assert_eq!(
        approved.text,
        format!("r-1 approved by bob (plan digest {digest})")
    );
    assert_eq!(h.finished(id).await.outcome(), Some(&Outcome::Succeeded));
}

#[tokio::test]
async fn the_requester_withdraws_a_pending_plan_with_reject_or_cancel() {
    let h = Harness::start(Setup::default()).await;
    h.start_run("alice", PRUNE).await;
    let withdrawn = h
        .slash("alice", "/reject id:r-1 reason:\"wrong cluster\"")
        .await;
    assert!(!withdrawn.private);
    assert_eq!(withdrawn.text, "r-1 withdrawn by alice: wrong cluster");
    let run = h.finished(RunId::new(1)).await;
    assert!(
        matches!(run.outcome(), Some(Outcome::Withdrawn { by, reason: Some(r) }) if by.name.as_str() == "alice" && r == "wrong cluster"),
        "{:?}",
        run.state
    );
    assert!(
        h.chat().messages()[0].text().starts_with("↩ r-1 · "),
        "{}",
        h.chat().messages()[0].text()
    );
    h.start_run("alice", PRUNE).await;
    let cancelled = h.slash("alice", "/run cancel id:r-2").await;
    assert_eq!(
        cancelled.text,
        "r-2 withdrawn by alice before approval; nothing was done"
    );
    assert!(matches!(
        h.finished(RunId::new(2)).await.outcome(),
        Some(Outcome::Withdrawn { reason: None, .. })
    ));
    let late = h.approve("bob", "r-2").await;
    assert!(
        late.text
            .starts_with("run r-2 is already withdrawn by alice at "),
        "{}",
        late.text
    );
    let kinds: Vec<String> = h
        .engine
        .store()
        .audit()
        .unwrap()
        .into_iter()
        .map(|e| e.event.describe())
        .collect();
    assert!(
        kinds.contains(&"withdrew the plan: wrong cluster".to_owned()),
        "{kinds:?}"
    );
    assert!(kinds.contains(&"withdrew the plan".to_owned()), "{kinds:?}");
    assert!(h.calls_by("DELETE").is_empty());
}

/// What one concurrent attempt was told.
#[derive(Debug)]
struct Told {
    who: &'static str,
    what: &'static str,
    answer: Result<RunState, String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_decisions_have_one_winner_and_everyone_is_told_what_won() {
    let h = Harness::start(Setup {
        days_of_indices: 40,
        ..Setup::default()
    })
    .await;
    let lines = deletes(&h);
    for (round, line) in (1..=12_u64).zip(&lines) {
        let id = h.start_run("alice", line).await;
        assert_eq!(id, RunId::new(round));
        let digest = h.run(id).digest.short().to_owned();
        let barrier = Arc::new(Barrier::new(6));
        let attempts: Vec<(&'static str, &'static str)> = vec![
            ("bob", "approve"),
            ("dave-approver", "approve"),
            ("dave-approver", "reject"),
            ("bob", "reject"),
            ("alice", "cancel"),
            ("bob", "cancel"),
        ];
        let tasks: Vec<_> = attempts
            .into_iter()
            .map(|(who, what)| {
                let engine = h.engine.clone();
                let barrier = Arc::clone(&barrier);
                let digest = digest.clone();
                tokio::spawn(async move {
                    let actor: Actor = actor(who);
                    let reason = Reason::parse("race").unwrap();
                    barrier.wait().await;
                    let result = match what {
                        "approve" => engine.approve(&actor, id, &digest).await,
                        "reject" => engine.reject(&actor, id, &reason).await,
                        _ => engine.cancel(&actor, id).await,
                    };
                    Told {
                        who,
                        what,
                        answer: result.map(|run| run.state).map_err(|e| e.to_string()),
                    }
                })
            })
            .collect();
        let mut told = Vec::new();
        for task in tasks {
            told.push(task.await.unwrap());
        }
        let run = h.finished(id).await;
        check_one_winner(&run, &told, round);
    }
}

/// A `/indices delete` for each flog index, oldest first: one per round, so that every round
/// has an index to delete whatever the rounds before did.
fn deletes(h: &Harness) -> Vec<String> {
    let mut names: Vec<String> = h
        .index_names()
        .into_iter()
        .filter(|name| name.starts_with("flog-"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| format!("/indices delete cluster:logs index:{name}"))
        .collect()
}

/// Exactly one decision landed; the others were refused naming it, or (a cancel after an
/// approval) asked the approved run to stop.
fn check_one_winner(run: &opsbot_commands::run::Run, told: &[Told], round: u64) {
    let won: Vec<&Told> = told
        .iter()
        .filter(|t| t.answer.is_ok() && t.what != "cancel")
        .collect();
    let approved = run.approval.is_some();
    match run.outcome() {
        Some(Outcome::Cancelled { by, .. }) if approved => {
            // Approved first, then a cancel stopped the run at a safe point.
            assert_eq!(won.len(), 1, "round {round}: {told:#?}");
            assert_eq!(won[0].what, "approve", "round {round}");
            assert!(
                told.iter()
                    .any(|t| t.what == "cancel" && t.who == by.name.as_str() && t.answer.is_ok()),
                "round {round}: {told:#?}"
            );
        }
        Some(Outcome::Succeeded) => {
            assert_eq!(won.len(), 1, "round {round}: {told:#?}");
            assert_eq!(won[0].what, "approve", "round {round}");
        }
        Some(Outcome::Rejected { by, .. }) => {
            assert!(!approved);
            assert_eq!(won.len(), 1, "round {round}: {told:#?}");
            assert_eq!((won[0].what, won[0].who), ("reject", by.name.as_str()));
        }
        Some(Outcome::Withdrawn { .. } | Outcome::Cancelled { .. }) => {
            assert!(!approved, "round {round}");
            assert!(won.is_empty(), "round {round}: {told:#?}");
        }
        other => panic!("round {round}: {other:?}"),
    }
    let grant = run.approval.as_ref().map(|g| g.by.name.to_string());
    for t in told
        .iter()
        .filter(|t| t.answer.is_err() && t.what != "cancel")
    {
        let said = t.answer.as_ref().unwrap_err();
        let truthful = match (run.outcome(), &grant) {
            (_, Some(by)) => {
                said.starts_with(&format!("run {} is already approved by {by} at ", run.id))
            }
            (Some(Outcome::Rejected { by, .. }), None) => said.starts_with(&format!(
                "run {} is already rejected by {} at ",
                run.id, by.name
            )),
            (Some(Outcome::Withdrawn { by, .. }), None) => said.starts_with(&format!(
                "run {} is already withdrawn by {} at ",
                run.id, by.name
            )),
            (Some(Outcome::Cancelled { by, .. }), None) => said.starts_with(&format!(
                "run {} is already cancelled by {} at ",
                run.id, by.name
            )),
            _ => false,
        };
        assert!(
            truthful,
            "round {round}: {} {} was told {said:?}; the run is {:?}",
            t.who, t.what, run.state
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_racing_the_expiry_either_wins_or_is_told_it_expired() {
    let h = Harness::start(Setup {
        days_of_indices: 40,
        engine: opsbot::config::EngineConfig {
            approval_ttl: Duration::from_millis(3),
            ..Setup::default().engine
        },
        ..Setup::default()
    })
    .await;
    let (mut won, mut expired) = (0, 0);
    for (round, line) in (1..=30_u64).zip(&deletes(&h)) {
        let id = h.start_run("alice", line).await;
        let digest = h.run(id).digest.short().to_owned();
        let engine = h.engine.clone();
        let answer = engine.approve(&actor("bob"), id, &digest).await;
        let run = h.finished(id).await;
        match answer {
            Ok(_) => {
                won += 1;
                assert_ne!(
                    run.outcome(),
                    Some(&Outcome::Expired),
                    "round {round}: approved, then expired"
                );
                assert!(run.approval.is_some());
            }
            Err(error) => {
                expired += 1;
                let said = error.to_string();
                assert!(said.contains("expired at "), "round {round}: {said}");
                assert_eq!(run.outcome(), Some(&Outcome::Expired), "round {round}");
                assert!(run.approval.is_none());
            }
        }
    }
    println!("{won} approvals won the race, {expired} found the request expired");
}
