//! Ctrl-C at `opsbot console` in the middle of a restart: the first one says what stopping
//! would leave and changes nothing; the second stops, saying the run resumes at the next start;
//! and the next start resumes it to the end.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use opsbot_search_sim::{SimConfig, SimHandle};

use crate::support::{console, console_held, output, scene, until};

fn stopped_nodes(sim: &SimHandle) -> u32 {
    sim.state().nodes.iter().map(|n| n.stops).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_ctrl_c_warns_and_the_second_stops_leaving_the_run_to_resume() {
    let scene = scene(
        SimConfig {
            speed: 10.0,
            days_of_indices: 5,
            ..SimConfig::default()
        },
        r#"kind = "sim""#,
    )
    .await;
    let child = console_held(&scene.config, "/cluster restart cluster:logs\nyes\n");
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap());
    until("a node stopped", || stopped_nodes(&scene.sim) >= 1).await;

    kill(pid, Signal::SIGINT).unwrap();
    // The run goes on after the first Ctrl-C.
    let at_warning = stopped_nodes(&scene.sim);
    until("another node stopped", || {
        stopped_nodes(&scene.sim) > at_warning
    })
    .await;

    kill(pid, Signal::SIGINT).unwrap();
    let ended = output(child).await;
    let stdout = String::from_utf8_lossy(&ended.stdout);
    let stderr = String::from_utf8_lossy(&ended.stderr);
    assert!(
        stdout.contains(
            "Ctrl-C: runs are executing here, and stopping now leaves them where they are:"
        ) && stdout.contains("r-1 · /cluster restart cluster:logs · by alice · running")
            && stdout.contains("if stopped now: left in place: shard allocation is disabled")
            && stdout.contains(
                "Ctrl-C again stops the console now; r-1 resumes at the next start of opsbot"
            ),
        "{stdout}"
    );
    assert_eq!(ended.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("error: stopped by Ctrl-C: r-1 resumes at the next start of opsbot"),
        "{stderr}"
    );

    let resumed = output(console(&scene.config, "")).await;
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(resumed.status.success(), "{stdout}");
    assert!(stdout.contains("resumed 1 unfinished run(s)"), "{stdout}");
    assert!(
        scene
            .sim
            .state()
            .nodes
            .iter()
            .all(|n| format!("{:?}", n.state) == "Up"),
        "{stdout}"
    );
}
