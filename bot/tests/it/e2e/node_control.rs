//! Cancellation, and the node-control kinds other than the simulator's: an operator's manual
//! step confirmed with `/run done`, and argv commands whose output lands in the run log.

use std::time::Duration;

use opsbot::config::NodeControlConfig;
use opsbot::process::CommandTemplate;
use opsbot_commands::plan::{Action, ClusterSafe};
use opsbot_commands::run::{Outcome, StepState};
use opsbot_tests::{Harness, Setup};

fn slow() -> Setup {
    // Slow enough that a run is still waiting when the test acts.
    // At this speed a cluster without a master holds a request 1.25 s (`master_timeout=5s`)
    // before its 503: the client must wait longer than that, as production's 30 s does.
    let default = Setup::default();
    Setup {
        sim_speed: 4.0,
        engine: opsbot::config::EngineConfig {
            request_timeout: Duration::from_secs(5),
            ..default.engine
        },
        ..default
    }
}

#[tokio::test]
async fn a_cancelled_restart_stops_at_a_safe_point_and_says_what_is_left() {
    let h = Harness::start(slow()).await;
    let id = h.start_run("alice", "/cluster restart cluster:logs").await;
    h.wait_for(id, "stopping nodes", |r| {
        matches!(
            r.steps().get(4),
            Some(StepState::Started { .. } | StepState::Done { .. })
        )
    })
    .await;
    let reply = h.slash("bob", &format!("/run cancel id:{id}")).await;
    assert_eq!(
        reply.text,
        format!("{id} will stop at its next safe point (cancel requested by bob)")
    );
    let run = h.finished(id).await;
    let Some(Outcome::Cancelled { by, note }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert_eq!(by.name.as_str(), "bob");
    assert!(
        note.starts_with("left in place: shard allocation is disabled"),
        "{note}"
    );
    assert!(
        note.ends_with("to bring the cluster back: /cluster start cluster:logs"),
        "{note}"
    );
    // The report names the nodes the cluster shows gone, not opsbot's bookkeeping; nothing
    // more happens after the cancel.
    let gone: Vec<String> = h
        .sim
        .state()
        .nodes
        .iter()
        .filter(|n| format!("{:?}", n.state) != "Up")
        .map(|n| n.ip.to_string())
        .collect();
    assert!(!gone.is_empty() && gone.len() <= 3, "{gone:?}");
    // With three of five nodes gone the cluster has no master and cannot list its nodes (the
    // cancel may land after the third stop): the report then says so, and what this run did.
    let shown = if gone.len() < 3 {
        format!("not in the cluster: {}", gone.join(", "))
    } else {
        format!(
            "the cluster could not be asked where its nodes stand; this run stopped {}",
            gone.join(", ")
        )
    };
    assert!(note.contains(&shown), "{note} / {gone:?}");
    let start = h.start_run("alice", "/cluster start cluster:logs").await;
    assert_eq!(h.finished(start).await.outcome(), Some(&Outcome::Succeeded));
}

#[tokio::test]
async fn a_manual_step_waits_for_an_operator_and_is_verified_through_the_api() {
    let h = Harness::start(Setup {
        node_control: |_| NodeControlConfig::Manual {
            container: "opensearch".into(),
        },
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", "/cluster stop cluster:logs").await;
    for _ in 0..5 {
        let run = h
            .wait_for(id, "waiting for an operator", |r| {
                r.awaiting_operator().is_some() || r.state.is_finished()
            })
            .await;
        let step = run.awaiting_operator().expect("a manual step");
        let StepState::AwaitingOperator { prompt, .. } = &run.steps()[step] else {
            unreachable!()
        };
        assert!(
            prompt.ends_with(&format!(", then type /run done id:{id}")),
            "{prompt}"
        );
        // The run is parked: the engine counts as idle while it waits for a person.
        tokio::time::timeout(Duration::from_secs(5), h.engine.idle())
            .await
            .expect("idle");
        let Action::Safe(ClusterSafe::StopNode { node }) = run.plan().cluster_steps()[step] else {
            panic!("step {step} is {:?}", run.plan().step(step))
        };
        assert!(
            prompt.starts_with(&format!("stop the `opensearch` container on {node}")),
            "{prompt}"
        );
        h.sim.stop_node(node.ip()).unwrap();
        let reply = h.slash("bob", &format!("/run done id:{id}")).await;
        assert!(
            reply.text.contains("manual step confirmed by bob"),
            "{}",
            reply.text
        );
    }
    assert_eq!(h.finished(id).await.outcome(), Some(&Outcome::Succeeded));
}

#[tokio::test]
async fn a_manual_step_confirmed_but_not_done_fails_its_verification() {
    let h = Harness::start(Setup {
        node_control: |_| NodeControlConfig::Manual {
            container: "opensearch".into(),
        },
        engine: opsbot::config::EngineConfig {
            node_timeout: Duration::from_millis(300),
            ..Setup::default().engine
        },
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", "/cluster stop cluster:logs").await;
    h.wait_for(id, "waiting for an operator", |r| {
        r.awaiting_operator().is_some()
    })
    .await;
    h.slash("alice", &format!("/run done id:{id}")).await;
    let run = h.finished(id).await;
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert!(
        error.starts_with("gave up after 0s waiting until 10.0.0.12 has left the cluster; last observed: nodes 5/5 joined"),
        "{error}"
    );
}

#[tokio::test]
async fn command_node_control_runs_argv_and_keeps_its_output() {
    let h = Harness::start(Setup {
        node_control: |url| {
            let curl = |verb: &str| {
                argv(&[
                    "curl",
                    "-sf",
                    "-X",
                    "POST",
                    &format!("{url}/_sim/nodes/{{node}}/{verb}"),
                ])
            };
            command(curl("stop"), curl("start"))
        },
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", "/cluster stop cluster:logs").await;
    assert_eq!(h.finished(id).await.outcome(), Some(&Outcome::Succeeded));
    let log = h.engine.store().run_log(id).unwrap();
    assert_eq!(log.len(), 5, "{log:?}");
    assert!(log[0].contains("\"changed\":true"), "{log:?}");
}

#[tokio::test]
async fn a_failing_command_fails_the_step_with_its_exit_code() {
    let h = Harness::start(Setup {
        node_control: |_| command(argv(&["ls", "/nonexistent/{container}"]), argv(&["true"])),
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", "/cluster stop cluster:logs").await;
    let run = h.finished(id).await;
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert!(
        error.starts_with("node control on 10.0.0.12: `ls` exited 2: "),
        "{error}"
    );
    assert!(
        error.contains("10.0.0.12 may be half-way (stop the search container on 10.0.0.12)"),
        "{error}"
    );
    // A failed command's output is kept for the post-mortem too.
    let log = h.engine.store().run_log(id).unwrap();
    assert!(
        log.iter().any(|l| l.contains("/nonexistent/opensearch")),
        "{log:?}"
    );
}

/// Command node control for the `opensearch` container with these templates.
fn command(stop: CommandTemplate, start: CommandTemplate) -> NodeControlConfig {
    NodeControlConfig::Command {
        stop,
        start,
        container: "opensearch".into(),
        hosts: Default::default(),
        timeout: Duration::from_secs(10),
        unlist: None,
        redeploy: None,
        redeploy_timeout: Duration::from_secs(10),
    }
}

fn argv(argv: &[&str]) -> CommandTemplate {
    argv.iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .try_into()
        .unwrap()
}
