//! Backend faults: transient ones are retried with bounded backoff and the run recovers; the
//! rest fail the step with what happened and what to do next.

use std::time::Duration;

use opsbot_commands::run::{Outcome, StepState};
use opsbot_search_sim::FaultRule;
use opsbot_tests::{Harness, Setup};

fn rule(text: &str) -> FaultRule {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

async fn restart_with(faults: &[&str]) -> Harness {
    let setup = Setup {
        engine: opsbot::config::EngineConfig {
            request_timeout: Duration::from_millis(500),
            ..Setup::default().engine
        },
        ..Setup::default()
    };
    let h = Harness::start(setup).await;
    h.sim.set_faults(faults.iter().map(|f| rule(f)).collect());
    h
}

#[tokio::test]
async fn each_transient_fault_on_an_action_is_retried_and_the_run_recovers() {
    for fault in [
        "status=503,count=2,method=PUT,path=/_cluster/settings",
        "status=429,count=2,method=PUT,path=/_cluster/settings",
        "status=502,count=2,method=PUT,path=/_cluster/settings",
        "timeout=1500ms,count=2,method=PUT,path=/_cluster/settings",
        "malformed,count=2,method=PUT,path=/_cluster/settings",
        "drop,count=2,method=PUT,path=/_cluster/settings",
        "latency=100ms,count=2,method=PUT,path=/_cluster/settings",
    ] {
        let h = restart_with(&[fault]).await;
        let id = h.start_run("alice", "/cluster restart cluster:logs").await;
        let run = h.finished(id).await;
        assert_eq!(
            run.outcome(),
            Some(&Outcome::Succeeded),
            "{fault}: {:?}",
            run.state
        );
        let state = h.sim.state();
        assert!(
            !state
                .settings
                .persistent
                .contains_key("cluster.routing.allocation.enable"),
            "{fault}: allocation left disabled"
        );
    }
}

#[tokio::test]
async fn transient_faults_during_a_wait_are_retried() {
    for fault in [
        "status=503,count=2,method=GET,path=/_cat/nodes",
        "drop,count=2,method=GET,path=/_cluster/health",
        "malformed,count=2,method=GET,path=/_cluster/health",
    ] {
        let h = restart_with(&[]).await;
        let id = h.start_run("alice", "/cluster stop cluster:logs").await;
        h.sim.set_faults(vec![rule(fault)]);
        let run = h.finished(id).await;
        assert_eq!(
            run.outcome(),
            Some(&Outcome::Succeeded),
            "{fault}: {:?}",
            run.state
        );
    }
}

#[tokio::test]
async fn a_passing_master_election_does_not_block_planning() {
    let h = restart_with(&["status=503,count=2,method=GET,path=/_cat/nodes"]).await;
    let id = h.start_run("alice", "/cluster stop cluster:logs").await;
    assert_eq!(h.finished(id).await.outcome(), Some(&Outcome::Succeeded));
}

#[tokio::test]
async fn a_persistent_server_error_fails_the_step_saying_what_to_do_next() {
    let h = restart_with(&["status=500,method=POST,path=/_flush"]).await;
    let id = h.start_run("alice", "/cluster restart cluster:logs").await;
    let run = h.finished(id).await;
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert_eq!(
        error,
        "search cluster `logs`: POST /_flush answered 500 (exception) after 4 tries\n\
         left in place: shard allocation is disabled (persistent cluster.routing.allocation.enable: none)\n\
         to bring the cluster back: /cluster start cluster:logs"
    );
    // Bounded: exactly the configured number of tries, and no node was touched after the failure.
    assert_eq!(h.calls_to("POST", "/_flush").len(), 4);
    assert!(
        h.sim
            .state()
            .nodes
            .iter()
            .all(|n| format!("{:?}", n.state) == "Up")
    );
    let shown = h.chat().messages()[0].text().to_owned();
    assert!(shown.starts_with("❌ r-1"), "{shown}");
    assert!(
        shown.contains("at step 2/25: flush (POST /_flush)"),
        "{shown}"
    );
}

#[tokio::test]
async fn a_client_error_is_not_retried() {
    let h = restart_with(&["status=400,method=PUT,path=/_cluster/settings"]).await;
    let id = h.start_run("alice", "/cluster stop cluster:logs").await;
    let run = h.finished(id).await;
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert!(
        error.starts_with("search cluster `logs`: PUT /_cluster/settings answered 400"),
        "{error}"
    );
    assert!(error.contains("nothing was left changed"), "{error}");
    assert_eq!(h.calls_to("PUT", "/_cluster/settings").len(), 1);
}

#[tokio::test]
async fn an_unreachable_cluster_is_refused_before_any_plan() {
    let h = restart_with(&[]).await;
    h.sim.set_faults(vec![rule("status=500")]);
    let reply = h.slash("alice", "/cluster restart cluster:logs").await;
    assert!(reply.private);
    assert!(
        reply
            .text
            .starts_with("search cluster `logs`: GET /_cat/nodes answered 500"),
        "{}",
        reply.text
    );
    assert!(h.engine.store().runs().unwrap().is_empty());
}

/// A DELETE the cluster refused before acting on it (no master, too many requests, a request
/// timeout) is sent again after the policy's delay; one that may be applying never is.
#[tokio::test]
async fn a_delete_refused_before_the_cluster_acted_is_sent_again() {
    for fault in [
        "status=503,count=2,method=DELETE",
        "status=429,count=2,method=DELETE",
        "status=408,count=2,method=DELETE",
    ] {
        let h = restart_with(&[fault]).await;
        let id = h.start_run("alice", "/indices prune cluster:logs").await;
        h.approve("bob", id).await;
        let run = h.finished(id).await;
        assert_eq!(
            run.outcome(),
            Some(&Outcome::Succeeded),
            "{fault}: {:?}",
            run.steps()
        );
        let left = h.index_names();
        assert!(
            run.plan()
                .deleted_indices()
                .all(|n| !left.contains(&n.to_string())),
            "{fault}: {left:?}"
        );
        // One chunk: two refusals, then the DELETE that worked.
        assert_eq!(h.calls_by("DELETE").len(), 3, "{fault}");
    }
}

#[tokio::test]
async fn a_delete_refused_every_time_fails_after_the_policy_s_attempts() {
    let h = restart_with(&["status=429,method=DELETE"]).await;
    let id = h.start_run("alice", "/indices prune cluster:logs").await;
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert!(error.contains("429"), "{error}");
    let attempts = Setup::default().engine.retry.attempts as usize;
    assert_eq!(h.calls_by("DELETE").len(), attempts, "{error}");
    let left = h.index_names();
    assert!(
        run.plan()
            .deleted_indices()
            .all(|n| left.contains(&n.to_string())),
        "nothing was deleted"
    );
}

/// `/cluster status` of a cluster that does not answer names where it was asked and why.
#[tokio::test]
async fn the_status_of_an_unreachable_cluster_names_its_address_and_the_cause() {
    let h = restart_with(&[]).await;
    h.sim.set_faults(vec![rule("drop")]);
    let reply = h.slash("alice", "/cluster status cluster:logs").await;
    let origin = h.sim.base_url().trim_end_matches('/').to_owned();
    assert!(
        reply.text.contains("nodes: the cluster does not answer\n")
            && reply.text.contains(&format!(
                "search cluster `logs`: GET / lost the connection to {origin} before a complete \
                 answer"
            )),
        "{}",
        reply.text
    );
}

/// A DELETE the cluster answered as done while the index stays is never sent again: the step
/// fails saying how many were deleted and which stayed.
#[tokio::test]
async fn a_delete_answered_while_the_index_stays_is_not_sent_again() {
    let h = restart_with(&["lost,count=1,method=DELETE"]).await;
    let id = h.start_run("alice", "/indices prune cluster:logs").await;
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert_eq!(h.calls_by("DELETE").len(), 1, "{error}");
    let selected = run.plan().deleted_indices().count();
    assert!(
        error.starts_with(&format!(
            "{selected} of the {selected} selected indices are still there with the approved \
             UUID although the cluster answered every DELETE, and no deletion of them is \
             pending: "
        )) && error.contains(
            ". Gone now: 0; re-created since the plan and kept: 0. opsbot sends no DELETE twice"
        ),
        "{error}"
    );
    let left = h.index_names();
    assert!(
        run.plan()
            .deleted_indices()
            .all(|n| left.contains(&n.to_string())),
        "{left:?}"
    );
}

/// A DELETE the cluster refuses (403) deleted nothing: the report says which indices were not
/// deleted, not that they "may be partly deleted".
#[tokio::test]
async fn a_refused_delete_is_reported_as_nothing_deleted() {
    let h = restart_with(&["status=403,method=DELETE"]).await;
    let id = h.start_run("alice", "/indices prune cluster:logs").await;
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    let selected = run.plan().deleted_indices().count();
    assert!(
        error.contains(&format!(
            "deleted 0 of {selected} selected indices; not deleted: "
        )),
        "{error}"
    );
    assert!(!error.contains("may be partly deleted"), "{error}");
    assert_eq!(h.calls_by("DELETE").len(), 1, "{error}");
    assert!(
        matches!(
            run.steps()
                .iter()
                .find(|s| matches!(s, StepState::Failed { .. })),
            Some(StepState::Failed {
                unchanged: true,
                ..
            })
        ),
        "{:?}",
        run.steps()
    );
}

/// When a DELETE is answered while its indices stay, every count is the cluster's per index:
/// an index re-created since the plan was kept, and one gone before its chunk is counted as
/// gone, neither as deleted nor as asked for.
#[tokio::test]
async fn what_stayed_is_counted_without_the_indices_re_created_since_the_plan() {
    let h = restart_with(&[]).await;
    let id = h.start_run("alice", "/indices prune cluster:logs").await;
    let run = h.run(id);
    let plan = run.plan();
    let selected = plan.deleted_indices().count();
    let http = reqwest::Client::new();
    let index = |n: usize| {
        let name = plan.deleted_indices().nth(n).unwrap();
        format!("{}/{name}", h.sim.base_url())
    };
    // The first index re-created under its name (another UUID), the second gone already.
    for (url, recreate) in [(index(0), true), (index(1), false)] {
        let deleted = http.delete(&url).send().await.unwrap();
        assert!(deleted.status().is_success());
        if recreate {
            assert!(http.put(&url).send().await.unwrap().status().is_success());
        }
    }
    h.sim.set_faults(vec![rule("lost,count=1,method=DELETE")]);

    h.approve("bob", id).await;
    let run = h.finished(id).await;
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    let stayed = selected - 2;
    assert!(
        error.starts_with(&format!(
            "{stayed} of the {selected} selected indices are still there"
        )) && error.contains(". Gone now: 1; re-created since the plan and kept: 1.")
            && error.contains("; 2 were gone before their delete or re-created since the plan"),
        "{error}"
    );
}
