//! Crash tests on the real binary: SIGKILL `opsbot console` during each kind of step (flush,
//! node stop, poll, settings update), start it again, and check that the run completes with the
//! cluster in the right state and no step's side effect applied twice.

use opsbot_search_sim::{Call, FaultRule, SimConfig, SimHandle, WorldSnapshot};

use crate::support::{console, output, scene, until};

async fn restart_scene() -> crate::support::Scene {
    let sim = SimConfig {
        speed: 20.0,
        days_of_indices: 30,
        ..SimConfig::default()
    };
    scene(sim, r#"kind = "sim""#).await
}

fn state(sim: &SimHandle, up: &str) -> usize {
    sim.state()
        .nodes
        .iter()
        .filter(|n| format!("{:?}", n.state) == up)
        .count()
}

fn arrived(calls: &[Call], method: &str, path: &str) -> bool {
    calls.iter().any(|c| c.method == method && c.path == path)
}

/// Kills the bot at the moment `kill_when` holds, restarts it, and checks the outcome.
async fn crash_and_resume(
    kill_point: &str,
    faults: &[&str],
    kill_when: impl Fn(&SimHandle) -> bool,
) {
    let scene = restart_scene().await;
    scene.sim.set_faults(
        faults
            .iter()
            .map(|f| f.parse::<FaultRule>().unwrap())
            .collect(),
    );
    let mut first = console(&scene.config, "/cluster restart cluster:logs\nyes\n");
    until(kill_point, || kill_when(&scene.sim)).await;
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    scene.sim.set_faults(vec![]);

    let output = output(console(&scene.config, "")).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{kill_point}: exit {:?}\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        stdout.contains("resumed 1 unfinished run(s)"),
        "{kill_point}:\n{stdout}"
    );
    assert!(
        stdout.contains("✅ r-1 · /cluster restart cluster:logs"),
        "{kill_point}:\n{stdout}\n{stderr}"
    );

    let world = scene.sim.state();
    check_cluster_whole(kill_point, &world);
    check_no_effect_twice(kill_point, &world, &scene.sim.calls());
}

fn check_cluster_whole(kill_point: &str, world: &WorldSnapshot) {
    assert!(
        world.nodes.iter().all(|n| format!("{:?}", n.state) == "Up"),
        "{kill_point}: {:?}",
        world.nodes
    );
    assert!(
        !world
            .settings
            .persistent
            .contains_key("cluster.routing.allocation.enable"),
        "{kill_point}: allocation left disabled"
    );
}

/// Each node stopped once and started once; allocation disabled before and re-enabled after,
/// never toggled back; the flush never repeated once a node was stopped.
fn check_no_effect_twice(kill_point: &str, world: &WorldSnapshot, calls: &[Call]) {
    for node in &world.nodes {
        assert_eq!(
            (node.stops, node.starts),
            (1, 1),
            "{kill_point}: node {}",
            node.ip
        );
    }
    let settings: Vec<&str> = calls
        .iter()
        .filter(|c| c.method == "PUT" && c.path == "/_cluster/settings")
        .map(|c| {
            if c.body.contains("null") {
                "enable"
            } else {
                "disable"
            }
        })
        .collect();
    let first_enable = settings
        .iter()
        .position(|s| *s == "enable")
        .unwrap_or(settings.len());
    assert!(
        settings[first_enable..].iter().all(|s| *s == "enable"),
        "{kill_point}: allocation disabled again after re-enabling: {settings:?}"
    );
    assert!(
        settings.contains(&"disable") && settings.contains(&"enable"),
        "{kill_point}: {settings:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_the_flush() {
    crash_and_resume(
        "the flush is in flight",
        &["latency=1500ms,count=1,method=POST,path=/_flush"],
        |sim| arrived(&sim.calls(), "POST", "/_flush"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_a_node_stop() {
    crash_and_resume("a second node was stopped", &[], |sim| {
        state(sim, "Stopped") >= 2
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_a_poll() {
    crash_and_resume("a node is booting and being waited for", &[], |sim| {
        state(sim, "Starting") >= 1
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_a_settings_update() {
    crash_and_resume(
        "the allocation update is in flight",
        &["latency=1500ms,count=1,method=PUT,path=/_cluster/settings"],
        |sim| arrived(&sim.calls(), "PUT", "/_cluster/settings"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_while_allocation_is_re_enabled() {
    crash_and_resume(
        "the re-enable is in flight",
        &["latency=1500ms,count=1,method=PUT,path=/_cluster/settings"],
        |sim| {
            sim.calls()
                .iter()
                .any(|c| c.method == "PUT" && c.body.contains("null"))
        },
    )
    .await;
}
