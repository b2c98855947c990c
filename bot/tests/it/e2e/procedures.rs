//! Each maintenance procedure end to end against the simulator, on every server flavour.

use opsbot_commands::run::Outcome;
use opsbot_search_sim::Flavor;
use opsbot_tests::{Harness, Setup};

fn harness_for(flavor: Flavor) -> Setup {
    Setup {
        flavor,
        ..Setup::default()
    }
}

/// Settings updates the cluster received, as (scope, value of allocation.enable) bodies.
fn allocation_puts(h: &Harness) -> Vec<String> {
    h.calls_to("PUT", "/_cluster/settings")
        .into_iter()
        .map(|c| c.body)
        .collect()
}

async fn restart_on(flavor: Flavor, expected_flush: &str) {
    let h = Harness::start(harness_for(flavor)).await;
    let id = h.start_run("alice", "/cluster restart cluster:logs").await;
    let run = h.finished(id).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{flavor}: {:?}",
        run.state
    );

    // Allocation: disabled once, re-enabled once, in that order, and nothing else.
    assert_eq!(
        allocation_puts(&h),
        vec![
            r#"{"persistent":{"cluster.routing.allocation.enable":"none"}}"#.to_owned(),
            r#"{"persistent":{"cluster.routing.allocation.enable":null}}"#.to_owned(),
        ],
        "{flavor}"
    );
    // The flush the server still has, exactly once.
    let flushes: Vec<String> = h
        .calls()
        .into_iter()
        .filter(|c| c.method == "POST" && c.path.starts_with("/_flush"))
        .map(|c| c.path)
        .collect();
    assert_eq!(flushes, vec![expected_flush.to_owned()], "{flavor}");
    // Nothing destructive was ever sent.
    assert!(h.calls().iter().all(|c| c.method != "DELETE"), "{flavor}");

    // The cluster is whole again: every node up, allocation at its default.
    let state = h.sim.state();
    assert!(
        state.nodes.iter().all(|n| format!("{:?}", n.state) == "Up"),
        "{flavor}: {:?}",
        state.nodes
    );
    assert!(
        !state
            .settings
            .persistent
            .contains_key("cluster.routing.allocation.enable"),
        "{flavor}"
    );

    // One progress message, edited in place, ending on the outcome and the report.
    let messages = h.chat().messages();
    assert_eq!(messages.len(), 1, "{flavor}: {messages:?}");
    let last = messages[0].text();
    assert!(
        last.starts_with("✅ r-1 · /cluster restart cluster:logs · by alice · succeeded in"),
        "{last}"
    );
    assert!(last.contains("_cat/health: status"), "{last}");
    assert!(last.contains("_cat/nodes: "), "{last}");
}

#[tokio::test]
async fn restart_on_elasticsearch_6_uses_the_synced_flush() {
    restart_on(Flavor::Es6, "/_flush/synced").await;
}

#[tokio::test]
async fn restart_on_elasticsearch_7_uses_the_plain_flush() {
    restart_on(Flavor::Es7, "/_flush").await;
}

#[tokio::test]
async fn restart_on_elasticsearch_8_uses_the_plain_flush() {
    restart_on(Flavor::Es8, "/_flush").await;
}

#[tokio::test]
async fn restart_on_opensearch_2_uses_the_plain_flush() {
    restart_on(Flavor::Os2, "/_flush").await;
}

#[tokio::test]
async fn stop_then_start_brings_the_cluster_down_and_back() {
    let h = Harness::start(Setup::default()).await;
    let stop = h.start_run("alice", "/cluster stop cluster:logs").await;
    assert_eq!(h.finished(stop).await.outcome(), Some(&Outcome::Succeeded));
    let state = h.sim.state();
    assert!(
        state
            .nodes
            .iter()
            .all(|n| format!("{:?}", n.state) == "Stopped"),
        "{:?}",
        state.nodes
    );
    assert_eq!(
        state
            .settings
            .persistent
            .get("cluster.routing.allocation.enable")
            .map(String::as_str),
        Some("none")
    );

    // A stopped cluster cannot be stopped again: the refusal says what to do instead.
    let again = h.slash("alice", "/cluster stop cluster:logs").await;
    assert!(again.private);
    assert!(
        again.text.contains("/cluster start cluster:logs"),
        "{}",
        again.text
    );

    let start = h.start_run("bob", "/cluster start cluster:logs").await;
    assert_eq!(h.finished(start).await.outcome(), Some(&Outcome::Succeeded));
    let state = h.sim.state();
    assert!(state.nodes.iter().all(|n| format!("{:?}", n.state) == "Up"));
    assert!(
        !state
            .settings
            .persistent
            .contains_key("cluster.routing.allocation.enable")
    );
}

#[tokio::test]
async fn the_elected_master_is_stopped_last() {
    let h = Harness::start(Setup::default()).await;
    let master = h.sim.state().master.expect("a master");
    let id = h.start_run("alice", "/cluster stop cluster:logs").await;
    let run = h.finished(id).await;
    let stops: Vec<String> = run
        .plan()
        .cluster_steps()
        .iter()
        .filter_map(|a| match a {
            opsbot_commands::plan::Action::Safe(opsbot_commands::plan::ClusterSafe::StopNode {
                node,
            }) => Some(node.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(stops.last(), Some(&master.to_string()));
}

#[tokio::test]
async fn cluster_status_shows_health_nodes_shards_settings_and_runs() {
    let h = Harness::start(Setup::default()).await;
    let status = h.slash("alice", "/cluster status cluster:logs").await;
    assert!(!status.private);
    for part in [
        "cluster logs · Elasticsearch 7.10.2 · status green",
        "nodes 5/5 joined: 10.0.0.11 (master)",
        "shards: ",
        "allocation: enable all (default) · exclude._ip none",
        "runs: none active",
    ] {
        assert!(
            status.text.contains(part),
            "missing `{part}` in:\n{}",
            status.text
        );
    }
}

#[tokio::test]
async fn a_second_run_on_a_busy_cluster_is_refused_naming_the_holder() {
    let h = Harness::start(Setup::default()).await;
    let first = h.start_run("alice", "/cluster restart cluster:logs").await;
    let second = h.slash("bob", "/cluster stop cluster:logs").await;
    assert!(second.private);
    assert_eq!(
        second.text,
        format!("cluster `logs` is busy with run {first}; wait for it, or /run cancel id:{first}")
    );
    h.finished(first).await;
    // Finished runs release the cluster.
    let third = h.start_run("bob", "/cluster stop cluster:logs").await;
    h.finished(third).await;
}

#[tokio::test]
async fn run_status_and_list_show_the_runs() {
    let h = Harness::start(Setup::default()).await;
    let id = h.start_run("alice", "/cluster restart cluster:logs").await;
    h.finished(id).await;
    let status = h.slash("carol", &format!("/run status id:{id}")).await;
    assert!(status.private, "carol is no operator: {}", status.text);
    let status = h.slash("bob", &format!("/run status id:{id}")).await;
    assert!(
        status.text.contains("✔ 25. report _cat/health"),
        "{}",
        status.text
    );
    let list = h.slash("bob", "/run list").await;
    assert!(
        list.text
            .starts_with("✅ r-1 · /cluster restart cluster:logs"),
        "{}",
        list.text
    );
}
