//! `opsbot check` as an operator runs it: one line per target, and the exit code says whether
//! everything can be used.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod support;

use opsbot_sim::SimConfig;
use support::{config_file, output, spawn};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_prints_a_line_per_target_and_fails_when_one_fails() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let sim = opsbot_sim::spawn(
        SimConfig {
            days_of_indices: 2,
            ..SimConfig::default()
        },
        listener,
    )
    .await
    .unwrap();
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let cluster = |name: &str, url: &str| {
        format!(
            "[[clusters]]\nname = \"{name}\"\nurl = \"{url}\"\nnodes = [\"10.0.0.11\"]\n\
             [clusters.node_control]\nkind = \"manual\"\ncontainer = \"opensearch\"\n"
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let down = format!("http://{closed}");
    let body = format!(
        "{}{}",
        cluster("logs", &sim.base_url()),
        cluster("old", &down)
    );
    let config = config_file(dir.path(), &body).display().to_string();

    let out = output(spawn(&["check", "--config", &config], "")).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            format!(
                "ok    cluster `logs` at {}: Elasticsearch 7.10.2, health green",
                sim.base_url()
            ),
            format!(
                "FAIL  cluster `old` at {down}: GET / could not be reached at {down}: connection \
                 refused"
            ),
        ]
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("some targets cannot be used; see the FAIL lines above"),
        "{stderr}"
    );

    let healthy = config_file(dir.path(), &cluster("logs", &sim.base_url()));
    let out = output(spawn(
        &["check", "--config", &healthy.display().to_string()],
        "",
    ))
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
