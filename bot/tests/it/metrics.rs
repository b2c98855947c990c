//! `/metrics` and `/healthz` of the real binary: what an operator's Prometheus sees after a
//! plan waits for approval, a self-approval and an unknown cluster are refused, the cluster
//! answers 503 twice, and the requester withdraws the plan.

use std::path::Path;

use opsbot_search_sim::{FaultKind, FaultRule, SimConfig};

use crate::support::{console_session, scene, serve, stop};

/// [`console_session`], as one text.
async fn session(socket: &Path, input: &str) -> String {
    console_session(socket, input).await.join("\n")
}

/// A free loopback port for the metrics (the test binds it, learns it, and lets it go).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The value of the one sample `series` (name and labels, as exposed) in `text`.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no `{series}` in:\n{text}"))
        .parse()
        .unwrap()
}

/// What Prometheus would read from the bot at `base`.
async fn scrape(base: &str) -> String {
    let response = reqwest::get(format!("{base}/metrics")).await.unwrap();
    assert_eq!(response.status(), 200);
    let kind = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
    response.text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_runs_decisions_refusals_and_backend_errors() {
    let mut sim = SimConfig {
        speed: 200.0,
        days_of_indices: 40,
        ..SimConfig::default()
    };
    sim.faults = vec![FaultRule {
        count: Some(2),
        path_prefix: Some("/_cat/indices".into()),
        ..FaultRule::new(FaultKind::Status { status: 503 })
    }];
    let scene = scene(sim, r#"kind = "sim""#).await;
    let socket = scene.dir.path().join("console.sock");
    let port = free_port();
    let mut text = std::fs::read_to_string(&scene.config).unwrap();
    text.push_str(&format!(
        "\n[console]\nsocket = \"{}\"\n\n[metrics]\nlisten = \"127.0.0.1:{port}\"\n",
        socket.display()
    ));
    std::fs::write(&scene.config, text).unwrap();
    let bot = serve(&scene.config, &socket).await;
    let base = format!("http://127.0.0.1:{port}");

    let health = reqwest::get(format!("{base}/healthz")).await.unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(health.text().await.unwrap(), "ok: active (sole instance)\n");

    let said = session(
        &socket,
        "/indices prune cluster:logs older_than_days:30\n/approve id:r-1\n/cluster status cluster:nope\n",
    )
    .await;
    assert!(said.contains("r-1 waits for approval"), "{said}");
    assert!(said.contains("another approver must approve it"), "{said}");
    let metrics = scrape(&base).await;
    let prune = r#"procedure="indices prune""#;
    assert_eq!(
        sample(
            &metrics,
            &format!(r#"opsbot_runs{{{prune},state="awaiting approval"}}"#)
        ),
        1.0
    );
    assert_eq!(
        sample(&metrics, &format!("opsbot_runs_requested_total{{{prune}}}")),
        1.0
    );
    assert_eq!(
        sample(&metrics, r#"opsbot_refusals_total{reason="self_approval"}"#),
        1.0
    );
    assert_eq!(
        sample(
            &metrics,
            r#"opsbot_refusals_total{reason="unknown_cluster"}"#
        ),
        1.0
    );
    // Both 503s (the simulator answers as a cluster without a master does) were counted,
    // though the plan succeeded on the third try.
    assert_eq!(
        sample(
            &metrics,
            r#"opsbot_backend_errors_total{target="logs",service="search",fault="no_master"}"#
        ),
        2.0
    );
    assert!(sample(&metrics, "opsbot_store_size_bytes") > 0.0);
    assert_eq!(
        sample(&metrics, r#"opsbot_progress_backlog{lane="announcements"}"#),
        0.0
    );
    assert!(metrics.ends_with("# EOF\n"), "{metrics}");

    // The requester takes the plan back: a decision, a finished run, no unfinished one.
    let said = session(&socket, "/reject id:r-1 reason:\"wrong retention\"\n").await;
    assert!(said.contains("r-1 withdrawn by alice"), "{said}");
    let metrics = scrape(&base).await;
    assert_eq!(
        sample(
            &metrics,
            r#"opsbot_approval_decisions_total{decision="withdrawn"}"#
        ),
        1.0
    );
    assert_eq!(
        sample(
            &metrics,
            &format!(r#"opsbot_runs_finished_total{{{prune},state="withdrawn"}}"#)
        ),
        1.0
    );
    assert!(!metrics.contains("opsbot_runs{"), "{metrics}");
    stop(bot);
}
