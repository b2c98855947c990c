//! `/cluster remove-node`: spec 3.1 "Remove a node" under the two-person rule, checked against
//! what the simulated cluster received and how its shards moved.

use std::net::Ipv4Addr;
use std::time::Duration;

use opsbot::config::NodeControlConfig;
use opsbot_commands::run::{Outcome, StepState};
use opsbot_search_sim::{FaultRule, Flavor, NodeStatus};
use opsbot_tests::{Harness, Setup};
use serde_json::json;

const NODE: &str = "10.0.0.14";
const REMOVE: &str = "/cluster remove-node cluster:logs node:10.0.0.14";
const EXCLUDE_IP: &str = "cluster.routing.allocation.exclude._ip";

fn node() -> Ipv4Addr {
    NODE.parse().unwrap()
}

/// The transient exclusion the simulated cluster holds now ("" or absent when clear).
fn exclusion(h: &Harness) -> String {
    h.sim
        .state()
        .settings
        .transient
        .get(EXCLUDE_IP)
        .cloned()
        .unwrap_or_default()
}

/// Bodies of the settings updates the cluster received, in order.
fn settings_puts(h: &Harness) -> Vec<serde_json::Value> {
    h.calls_to("PUT", "/_cluster/settings")
        .iter()
        .map(|c| serde_json::from_str(&c.body).unwrap())
        .collect()
}

#[tokio::test]
async fn an_approved_removal_drains_the_node_before_stopping_it_on_every_flavour() {
    for flavor in [Flavor::Es6, Flavor::Es7, Flavor::Es8, Flavor::Os2] {
        let h = Harness::start(Setup {
            flavor,
            days_of_indices: 30,
            // A drain that lasts several polls even on a loaded machine: at the default speed
            // it can end before the first poll sees a count, and nothing is there to show.
            sim_speed: 100.0,
            ..Setup::default()
        })
        .await;
        let held = h
            .sim
            .state()
            .nodes
            .iter()
            .find(|n| n.ip == node())
            .unwrap()
            .shards;
        assert!(held > 0, "{flavor:?}: the node must hold shards to drain");

        let reply = h.slash("alice", REMOVE).await;
        assert!(
            reply.text.starts_with("r-1 waits for approval"),
            "{flavor:?}: {}",
            reply.text
        );
        assert!(
            settings_puts(&h).is_empty(),
            "{flavor:?}: nothing changes before the approval"
        );
        let approved = h.approve("bob", "r-1").await.text;
        assert!(
            approved.starts_with("r-1 approved by bob (plan digest "),
            "{approved}"
        );
        let run = h.finished(opsbot_commands::name::RunId::new(1)).await;
        assert_eq!(
            run.outcome(),
            Some(&Outcome::Succeeded),
            "{flavor:?}: {:?}",
            run.state
        );

        assert_eq!(
            settings_puts(&h),
            vec![
                json!({"transient": {EXCLUDE_IP: NODE}}),
                json!({"transient": {EXCLUDE_IP: ""}}),
            ],
            "{flavor:?}: exclude, then clear (spec 3.1 steps 1 and 5)"
        );
        let state = h.sim.state();
        let removed = state.nodes.iter().find(|n| n.ip == node()).unwrap();
        assert_eq!(removed.state, NodeStatus::Stopped, "{flavor:?}");
        assert_eq!(removed.stops, 1, "{flavor:?}: stopped once");
        assert_eq!(
            removed.shards_at_stop, 0,
            "{flavor:?}: the node held no shard copy when it stopped"
        );
        assert!(
            state
                .nodes
                .iter()
                .filter(|n| n.ip != node())
                .all(|n| n.state == NodeStatus::Up && n.stops == 0),
            "{flavor:?}: only the removed node stops"
        );
        assert_eq!(exclusion(&h), "", "{flavor:?}");

        // The count is shown while the node drains, and the end says what is left to do.
        let texts = &h.chat().messages()[0].texts;
        let counts: Vec<u64> = texts
            .iter()
            .filter_map(|t| {
                let (_, rest) = t.rsplit_once(&format!("{NODE} holds "))?;
                rest.split(' ').next()?.parse().ok()
            })
            .collect();
        // (The drain's last look, none left, is not shown with the steps after it: an
        // observation belongs to the step that made it.)
        assert!(!counts.is_empty(), "{flavor:?}: {texts:#?}");
        assert!(
            counts.windows(2).all(|w| w[1] <= w[0]) && counts.first() > Some(&0),
            "{flavor:?}: {counts:?}"
        );
        assert!(
            texts
                .iter()
                .filter(|t| t.contains("step 3/7"))
                .all(|t| !t.contains(&format!("{NODE} holds "))),
            "{flavor:?}: {texts:#?}"
        );
        let last = texts.last().unwrap();
        assert!(
            last.contains(
                "next: remove 10.0.0.14 from the nodes of cluster `logs` in opsbot's config"
            ),
            "{flavor:?}: {last}"
        );
        let status = h.slash("alice", "/cluster status cluster:logs").await;
        assert!(
            status.text.contains("exclude._ip none"),
            "{flavor:?}: {}",
            status.text
        );
    }
}

#[tokio::test]
async fn bad_nodes_are_refused_before_anything_changes() {
    let h = Harness::start(Setup::default()).await;
    for (line, expected) in [
        (
            "/cluster remove-node cluster:logs node:fe80::14",
            "node: `fe80::14` is an IPv6 address; search nodes are named by the IPv4 address they have in the inventory, such as 10.0.0.14",
        ),
        (
            "/cluster remove-node cluster:logs node:10.0.0.1400",
            "node: `10.0.0.1400` is not an IPv4 address such as 10.0.0.14",
        ),
        (
            "/cluster remove-node cluster:logs node:*",
            "node: `*` is not an IPv4 address such as 10.0.0.14",
        ),
    ] {
        let reply = h.slash("alice", line).await;
        assert_eq!(reply.text, expected);
        assert!(reply.private);
    }
    assert!(h.calls().is_empty(), "malformed input reached the cluster");

    let unknown = h
        .slash("alice", "/cluster remove-node cluster:logs node:10.0.0.99")
        .await;
    assert_eq!(
        unknown.text,
        "10.0.0.99 is not a node of cluster `logs`; its nodes are 10.0.0.11, 10.0.0.12, \
         10.0.0.13, 10.0.0.14, 10.0.0.15"
    );
    let other = h
        .slash("alice", "/cluster remove-node cluster:other node:10.0.0.14")
        .await;
    assert_eq!(other.text, "unknown cluster `other`; configured: logs");

    // Somebody excluded another node by hand: that removal must be finished first.
    reqwest::Client::new()
        .put(format!("{}/_cluster/settings", h.sim.base_url()))
        .json(&json!({"transient": {EXCLUDE_IP: "10.0.0.12"}}))
        .send()
        .await
        .unwrap();
    h.sim.clear_calls();
    let excluded = h.slash("alice", REMOVE).await;
    assert!(
        excluded
            .text
            .starts_with("cluster `logs` already excludes nodes from allocation (transient cluster.routing.allocation.exclude._ip: 10.0.0.12)"),
        "{}",
        excluded.text
    );
    assert!(h.calls_by("PUT").is_empty());
    assert!(
        h.engine.store().runs().unwrap().is_empty(),
        "no run was made"
    );
}

/// A drain slow enough to be caught halfway.
fn slow() -> Setup {
    Setup {
        sim_speed: 10.0,
        days_of_indices: 30,
        ..Setup::default()
    }
}

/// Starts the removal, approves it, and waits until the drain is under way.
async fn draining(h: &Harness) -> opsbot_commands::name::RunId {
    let id = h.start_run("alice", REMOVE).await;
    h.approve("bob", id).await;
    h.wait_for(id, "draining", |run| {
        matches!(run.steps()[0], StepState::Done { .. })
            && matches!(run.steps()[1], StepState::Started { .. })
    })
    .await;
    // Under way: the cluster moves the node's shards off it (or has already).
    h.wait_for(id, "shards moving off the node", |_| {
        let state = h.sim.state();
        state.health.relocating_shards > 0
            || state
                .nodes
                .iter()
                .any(|n| n.ip.to_string() == NODE && n.shards == 0)
    })
    .await;
    assert_eq!(exclusion(h), NODE);
    id
}

#[tokio::test]
async fn a_cancelled_removal_clears_the_exclusion_it_set() {
    let h = Harness::start(slow()).await;
    let id = draining(&h).await;
    h.slash("dave-approver", &format!("/run cancel id:{id}"))
        .await;
    let run = h.finished(id).await;
    let Some(Outcome::Cancelled { note, .. }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert_eq!(
        note,
        "the exclusion of 10.0.0.14 was cleared\n10.0.0.14 still runs and stays in the deployment"
    );
    assert_eq!(exclusion(&h), "");
    let state = h.sim.state();
    assert!(
        state.nodes.iter().all(|n| n.stops == 0),
        "nothing was stopped"
    );
}

#[tokio::test]
async fn a_cancel_that_cannot_clear_says_which_setting_remains_and_how_to_clear_it() {
    let h = Harness::start(slow()).await;
    let id = draining(&h).await;
    h.sim.set_faults(vec![
        "status=503,count=1000,method=PUT,path=/_cluster/settings"
            .parse::<FaultRule>()
            .unwrap(),
    ]);
    h.slash("alice", &format!("/run cancel id:{id}")).await;
    let run = h.finished(id).await;
    let Some(Outcome::Cancelled { note, .. }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert_eq!(
        note,
        "still set: transient cluster.routing.allocation.exclude._ip: 10.0.0.14; clear it with \
         PUT /_cluster/settings {\"transient\":{\"cluster.routing.allocation.exclude._ip\":\"\"}} \
         on cluster `logs`\n10.0.0.14 still runs and stays in the deployment"
    );
    assert_eq!(exclusion(&h), NODE, "the note tells the truth");
}

#[tokio::test]
async fn a_drain_that_times_out_fails_and_clears_the_exclusion() {
    let mut setup = slow();
    setup.engine.drain_timeout = Duration::from_millis(300);
    let h = Harness::start(setup).await;
    let id = h.start_run("alice", REMOVE).await;
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert!(
        error.starts_with("gave up after 0s waiting until 10.0.0.14 holds no shards and none is relocating; last observed: 10.0.0.14 holds "),
        "{error}"
    );
    assert!(
        error.ends_with("the exclusion of 10.0.0.14 was cleared\n10.0.0.14 still runs and stays in the deployment"),
        "{error}"
    );
    assert_eq!(exclusion(&h), "");
}

#[tokio::test]
async fn manual_node_control_asks_for_the_stop_the_inventory_and_the_redeploy() {
    let h = Harness::start(Setup {
        node_control: |_| NodeControlConfig::Manual {
            container: "opensearch".into(),
        },
        days_of_indices: 10,
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", REMOVE).await;
    h.approve("bob", id).await;
    let prompts = [
        "stop the `opensearch` container on 10.0.0.14",
        "remove 10.0.0.14 from the `opensearch` group of the deployment inventory",
        "redeploy the search service with serial 1 (Kolla: kolla-ansible deploy --tags opensearch -e kolla_serial=1)",
    ];
    for prompt in prompts {
        let run = h
            .wait_for(id, "waiting for an operator", |r| {
                r.awaiting_operator().is_some()
            })
            .await;
        let Some(StepState::AwaitingOperator { prompt: asked, .. }) =
            run.awaiting_operator().map(|i| &run.steps()[i])
        else {
            unreachable!()
        };
        assert!(asked.starts_with(prompt), "{asked}");
        if prompt.starts_with("stop") {
            // Before the stop, the node was drained and it is still excluded.
            assert_eq!(exclusion(&h), NODE);
            h.sim.stop_node(node()).unwrap();
        }
        let done = h.slash("alice", &format!("/run done id:{id}")).await;
        assert!(!done.private, "{}", done.text);
    }
    let run = h.finished(id).await;
    assert_eq!(run.outcome(), Some(&Outcome::Succeeded), "{:?}", run.state);
    assert_eq!(exclusion(&h), "");
}
