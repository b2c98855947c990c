//! Bad input gets a short, clear error that says what to type instead; nothing reaches the
//! cluster and nothing in the store changes.

use opsbot_commands::audit::AuditKind;
use opsbot_commands::consent::ConsentPolicy;
use opsbot_commands::run::Outcome;
use opsbot_tests::{Harness, Setup};

#[tokio::test]
async fn bad_commands_never_reach_the_cluster_nor_change_the_store() {
    let h = Harness::start(Setup::default()).await;
    let long = format!("/cluster restart cluster:{}", "a".repeat(300));
    let cases: Vec<(&str, &str, &str)> = vec![
        (
            "alice",
            "/cluster restart cluster:nope",
            "unknown cluster `nope`; configured: logs",
        ),
        (
            "alice",
            "/cluster restrat cluster:logs",
            "unknown command `/cluster restrat`; did you mean /cluster restart? try one of: /cluster status, /cluster stop, /cluster start, /cluster restart, /cluster remove-node",
        ),
        (
            "alice",
            "/cluster restart",
            "`/cluster restart` needs `cluster:`; usage: /cluster restart cluster:<cluster> [at:<time>]",
        ),
        (
            "alice",
            "/cluster restart cluster:logs force:yes",
            "`/cluster restart` has no option `force`; usage: /cluster restart cluster:<cluster> [at:<time>]",
        ),
        (
            "alice",
            "/cluster restart cluster:_all",
            "cluster: cluster name `_all` has `_`; use lower-case letters, digits, `-` and `_`",
        ),
        (
            "alice",
            &long,
            "cluster: value `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…` is too long (300 characters, at most 64)",
        ),
        (
            "alice",
            "/run cancel id:r-99",
            "no run r-99; /run list shows the recent ones",
        ),
        (
            "alice",
            "/run done id:r-1",
            "no run r-1; /run list shows the recent ones",
        ),
        (
            "alice",
            "/run status id:x",
            "id: `x` is not a run id such as r-42",
        ),
        (
            "carol",
            "/cluster restart cluster:logs",
            "only operators may do that; ask an operator",
        ),
        (
            "alice",
            "cluster restart",
            "commands start with `/`; type /help for the list",
        ),
    ];
    for (user, line, expected) in cases {
        let reply = h.slash(user, line).await;
        assert!(reply.private, "{line}");
        assert_eq!(reply.text, expected, "{line}");
    }
    assert!(
        h.calls().is_empty(),
        "requests reached the cluster: {:?}",
        h.calls()
    );
    assert!(h.engine.store().runs().unwrap().is_empty());
    // The one refusal that said no to a person rather than to the input is audited.
    let audit = h.engine.store().audit().unwrap();
    let audited: Vec<String> = audit
        .iter()
        .map(|e| format!("{} {}", e.actor.as_ref().unwrap(), e.event.describe()))
        .collect();
    assert_eq!(
        audited,
        [
            "carol refused /cluster restart cluster:logs: only operators may do that; ask an operator"
        ]
    );
}

#[tokio::test]
async fn cancelling_a_finished_run_is_refused_and_changes_nothing() {
    let h = Harness::start(Setup::default()).await;
    let id = h.start_run("alice", "/cluster restart cluster:logs").await;
    let before = h.finished(id).await;
    assert_eq!(before.outcome(), Some(&Outcome::Succeeded));
    // The end of the maintenance is announced, and audited, after the run finished.
    crate::support::until("the end of the maintenance is audited", || {
        h.engine.store().audit().unwrap().iter().any(|entry| {
            matches!(&entry.event, AuditKind::Announced { text } if text.contains("maintenance over"))
        })
    })
    .await;
    let audit = h.engine.store().audit().unwrap();
    let calls = h.calls().len();

    let reply = h.slash("bob", &format!("/run cancel id:{id}")).await;
    assert!(reply.private);
    assert_eq!(
        reply.text,
        format!("run {id} already finished (succeeded); nothing to cancel")
    );
    assert_eq!(h.run(id), before);
    assert_eq!(h.engine.store().audit().unwrap(), audit);
    assert_eq!(h.calls().len(), calls);
}

#[tokio::test]
async fn approving_a_run_that_needs_no_approval_is_refused() {
    let h = Harness::start(Setup {
        approval: ConsentPolicy::parse([("cluster stop", "none")]).unwrap(),
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", "/cluster stop cluster:logs").await;
    h.finished(id).await;
    // Its requester is told that, not that someone else must approve it.
    for who in ["alice", "bob"] {
        let reply = h.approve(who, id).await;
        assert!(reply.private);
        assert_eq!(
            reply.text,
            format!("run {id} needs no approval: its plan has no destructive step")
        );
    }
    // Refusals are audited: who tried, and why not.
    let refused = h
        .engine
        .store()
        .audit()
        .unwrap()
        .into_iter()
        .filter(|e| matches!(e.event, AuditKind::Refused { .. }))
        .count();
    assert_eq!(refused, 2);
}
