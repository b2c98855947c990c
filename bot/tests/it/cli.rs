//! The binary as a user meets it: `opsbot plan`, config errors, `opsbot sim`, and the console's
//! end of input while a run waits for a person.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use opsbot_search_sim::SimConfig;

use crate::support::{
    COMPUTE, Scene, console_until, output, runbook_config, scene, serve_with, spawn,
};
use opsbot_host_sim::TestHosts;

fn small() -> SimConfig {
    SimConfig {
        speed: 200.0,
        days_of_indices: 10,
        ..SimConfig::default()
    }
}

/// Runs `opsbot ARGS` to its end.
async fn run(args: Vec<String>, input: &str) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    output(spawn(&args, input)).await
}

fn config_of(scene: &Scene) -> String {
    scene.config.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_prints_the_steps_without_running_them() {
    let scene = scene(small(), r#"kind = "sim""#).await;
    let (sim, config) = (&scene.sim, config_of(&scene));
    let text = run(
        vec![
            "plan".into(),
            "--config".into(),
            config.clone(),
            "/cluster stop cluster:logs".into(),
        ],
        "",
    )
    .await;
    assert!(
        text.status.success(),
        "{}",
        String::from_utf8_lossy(&text.stderr)
    );
    insta::assert_snapshot!(String::from_utf8_lossy(&text.stdout));

    let json = run(
        vec![
            "plan".into(),
            "--config".into(),
            config,
            "--json".into(),
            "--now".into(),
            "2026-11-21T03:00:00Z".into(),
            "/cluster stop cluster:logs".into(),
        ],
        "",
    )
    .await;
    assert!(json.status.success());
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["computed_at"], "2026-11-21T03:00:00Z");
    assert_eq!(value["needs_approval"], false);
    assert_eq!(value["steps"].as_array().unwrap().len(), 12);
    assert_eq!(
        value["steps"][0]["action"],
        serde_json::json!({"safe": {"kind": "disable_allocation"}})
    );
    // Planning only reads.
    assert!(
        sim.calls().iter().all(|c| c.method == "GET"),
        "{:?}",
        sim.calls()
    );
    assert_eq!(sim.state().nodes.iter().map(|n| n.stops).sum::<u32>(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_refuses_what_is_not_a_procedure_and_bad_flags() {
    let scene = scene(small(), r#"kind = "sim""#).await;
    let config = config_of(&scene);
    let status = run(
        vec![
            "plan".into(),
            "--config".into(),
            config.clone(),
            "/cluster status cluster:logs".into(),
        ],
        "",
    )
    .await;
    assert_eq!(status.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&status.stderr),
        "error: `/cluster status cluster:logs` runs no steps, so it has no plan; plans are for procedures such as /cluster restart and for /runbook run\n"
    );
    let bad_now = run(
        vec![
            "plan".into(),
            "--config".into(),
            config,
            "--now".into(),
            "yesterday".into(),
            "/cluster stop cluster:logs".into(),
        ],
        "",
    )
    .await;
    assert_eq!(bad_now.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad_now.stderr)
            .contains("`yesterday` is not a time such as 2026-11-28T02:00Z")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_config_is_refused_naming_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("opsbot.toml");
    std::fs::write(&path, "[store]\npath = \"/tmp/x\"\n[[clusters]]\nname = \"logs\"\nurl = \"http://127.0.0.1:9\"\nnodes = [\"10.0.0.300\"]\n[clusters.node_control]\nkind = \"sim\"\n").unwrap();
    let out = run(
        vec![
            "console".into(),
            "--config".into(),
            path.display().to_string(),
        ],
        "",
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error: config file {}: TOML parse error at line 6",
            path.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("`10.0.0.300` is not an IPv4 address"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_exits_at_end_of_input_leaving_a_parked_run_for_later() {
    let scene = scene(small(), "kind = \"manual\"\ncontainer = \"opensearch\"").await;
    let config = config_of(&scene);
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        run(
            vec!["console".into(), "--config".into(), config.clone()],
            "/cluster stop cluster:logs\nyes\n",
        ),
    )
    .await
    .expect("the console waited for a person at end of input");
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("alice> /cluster stop cluster:logs"),
        "{stdout}"
    );
    // The answer first, then the progress of the run it started.
    let answer = stdout.find("opsbot: r-1 waits for alice to confirm it");
    let progress = stdout.find("opsbot [m1]: ");
    assert!(
        answer.is_some() && progress.is_some() && answer < progress,
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "👉 stop the `opensearch` container on 10.0.0.12, then type /run done id:r-1"
        ),
        "{stdout}"
    );
    // `store status` says what the run waits for, not just that it runs.
    let status = run(
        vec![
            "store".into(),
            "status".into(),
            "--config".into(),
            config.clone(),
        ],
        "",
    )
    .await;
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.contains("r-1 waiting for an operator at step 3: /cluster stop cluster:logs"),
        "{status}"
    );
    // The next console picks the run up where it waits.
    let next = run(
        vec!["console".into(), "--config".into(), config],
        "/run status id:r-1\n",
    )
    .await;
    let stdout = String::from_utf8_lossy(&next.stdout);
    assert!(stdout.contains("resumed 1 unfinished run(s)"), "{stdout}");
    assert!(
        stdout.contains("👉  3. stop the search container on 10.0.0.12 (waiting for /run done)"),
        "{stdout}"
    );
}

/// `--now`: `opsbot console` and `opsbot run` go by a clock that starts then, whatever the
/// system's says, and `opsbot run` fires a schedule when that clock reaches its time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_and_console_go_by_the_clock_of_now_and_run_fires_schedules_on_it() {
    let scene = scene(
        SimConfig {
            days_of_indices: 40,
            today: time::macros::date!(2027 - 02 - 10),
            ..small()
        },
        r#"kind = "sim""#,
    )
    .await;
    let socket = scene.dir.path().join("console.sock");
    crate::support::add_nightly_prune(&scene.config, &socket, 20);
    let config = config_of(&scene);

    let console = run(
        vec![
            "console".into(),
            "--config".into(),
            config.clone(),
            "--now".into(),
            "2027-02-10T01:00:00Z".into(),
        ],
        "/schedule show name:nightly-prune\n",
    )
    .await;
    let stdout = String::from_utf8_lossy(&console.stdout);
    assert!(console.status.success(), "{stdout}");
    assert!(
        stdout.contains("next: 2027-02-10 03:00 UTC, 2027-02-11 03:00 UTC, 2027-02-12 03:00 UTC"),
        "{stdout}"
    );

    // A second before the fire: the scheduler arms, and fires a second later.
    let bot = serve_with(&scene.config, &socket, &["--now", "2027-02-10T02:59:59Z"]).await;
    console_until(
        &socket,
        "/schedule show name:nightly-prune\n",
        "last: 2027-02-10 03:00 UTC · started r-1",
    )
    .await;
    // No standing approval: the scheduled run waits for an ordinary one, which expires half an
    // hour after the fire on the same clock.
    let status = console_until(&socket, "/run status id:r-1\n", "r-1").await;
    assert!(
        status
            .contains("by nightly-prune · waiting for approval by an approver (expires 03:30 UTC)"),
        "{status}"
    );
    crate::support::stop(bot);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sim_help_describes_every_option() {
    let help = run(vec!["sim".into(), "-h".into()], "").await;
    let stdout = String::from_utf8_lossy(&help.stdout);
    let options: Vec<&str> = stdout
        .lines()
        .map(str::trim_start)
        .filter(|line| line.starts_with("--"))
        .collect();
    assert!(options.len() >= 7, "{stdout}");
    for option in options {
        // `--flag <VALUE>  what it does [default: ...]`
        let described = option
            .split_once("  ")
            .map(|(_, text)| text.trim_start())
            .is_some_and(|text| !text.is_empty() && !text.starts_with('['));
        assert!(described, "undescribed: {option}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_on_a_pipe_have_no_colour_and_can_be_json() {
    // An empty runbooks directory is logged as a warning on the way to the refusal.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("books")).unwrap();
    let config = dir.path().join("opsbot.toml");
    std::fs::write(
        &config,
        format!(
            "[store]\npath = \"{0}/store\"\n[runbooks]\ndir = \"{0}/books\"\n\
             [runbooks.inventory]\ncompute = [\"compute-01\"]\n\
             [[people]]\nname = \"alice\"\nroles = [\"operator\"]\naccounts = [\"alice\"]\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let plan = |format: &str| {
        let args = [
            "--log-format",
            format,
            "plan",
            "--config",
            config.to_str().unwrap(),
            "/runbook run name:x host:compute-01",
        ]
        .map(str::to_owned);
        run(args.to_vec(), "")
    };
    let text = plan("text").await;
    let stderr = String::from_utf8_lossy(&text.stderr);
    assert!(
        stderr.contains("WARN opsbot::runbooks: the runbooks directory holds no *.toml file"),
        "{stderr}"
    );
    assert!(
        !stderr.contains('\x1b'),
        "colour codes in a pipe: {stderr:?}"
    );
    let json = plan("json").await;
    let stderr = String::from_utf8_lossy(&json.stderr);
    let line = stderr.lines().next().unwrap();
    let event: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(event["level"], "WARN", "{line}");
    assert_eq!(
        event["fields"]["message"],
        "the runbooks directory holds no *.toml file"
    );
    // The error that ends the command is for the person, after the log lines.
    assert!(
        stderr.ends_with(
            "error: there is no runbook `x`; none is loaded (see [runbooks] in the config)\n"
        ),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_that_is_not_utf8_is_refused_mid_run_and_the_console_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store").display().to_string();
    let input = b"/cluster restart cluster:logs\nyes\n\xff\xfe\n/run list\n";
    let out = output(spawn(&["demo", "--speed", "200", "--store", &store], input)).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let after = |earlier: &str, later: &str| {
        let at = stdout
            .find(earlier)
            .unwrap_or_else(|| panic!("{earlier}:\n{stdout}"));
        assert!(
            stdout[at..].contains(later),
            "`{later}` after `{earlier}`:\n{stdout}"
        );
    };
    // The run's progress message may be posted between any two lines, so the test checks
    // order, not adjacency.
    after(
        "alice> \u{FFFD}\u{FFFD}\n",
        "opsbot (only you): that line is not UTF-8 text, so it was not read; type it again",
    );
    // The run was executing when the line came, and the console read on.
    after("that line is not UTF-8 text", "alice> /run list\n");
    after("alice> /run list\n", "opsbot: ⏳ r-1 · /cluster restart");
    // At the end of the input the console says it waits, and waits: the restart ends (and
    // with it, allocation is enabled again).
    after(
        "end of input: waiting for r-1 to finish",
        "✅ r-1 · /cluster restart cluster:logs",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_woken_on_the_last_line_is_carried_out_before_the_console_exits() {
    // When the input ends, the run that `/run done` woke is not yet executing: the console must
    // still wait for it, and not drop it mid-command.
    let dir = tempfile::tempdir().unwrap();
    let books = dir.path().join("runbooks");
    std::fs::create_dir(&books).unwrap();
    std::fs::write(
        books.join("slow.toml"),
        "name = \"slow\"\ndescription = \"a command that takes a second, after a manual step\"\n\
         [[steps]]\nkind = \"confirm\"\nprompt = \"look at compute-01\"\n\
         [[steps]]\nkind = \"run\"\non = \"compute-01\"\nargv = [\"sleep\", \"1\"]\n",
    )
    .unwrap();
    let hosts = TestHosts::install(&dir.path().join("hosts"), &COMPUTE).unwrap();
    let config = runbook_config(dir.path(), &hosts, &books)
        .display()
        .to_string();
    let console = |input: &str| {
        let input = input.to_owned();
        let args = vec!["console".into(), "--config".into(), config.clone()];
        async move { run(args, &input).await }
    };
    // Three runs: the window was a few milliseconds wide.
    for round in 1..=3 {
        let asked = console("/runbook run name:slow\n").await;
        let stdout = String::from_utf8_lossy(&asked.stdout);
        assert!(
            stdout.contains(&format!(
                "look at compute-01, then type /run done id:r-{round}"
            )),
            "{stdout}"
        );
        let done = console(&format!("/run done id:r-{round}\n")).await;
        let stdout = String::from_utf8_lossy(&done.stdout);
        assert!(
            stdout.contains(&format!("✅ r-{round}")),
            "round {round}: the console left the run running: {stdout}"
        );
    }
    assert_eq!(hosts.log("compute-01"), ["sleep 1", "sleep 1", "sleep 1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sim_serves_the_chosen_flavour_with_its_faults() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_opsbot"))
        .args([
            "sim",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--flavor",
            "os2",
            "--fault",
            "status=503,count=1",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = reqwest::Client::new();
    let url = format!("http://127.0.0.1:{port}/");
    let mut first = None;
    for _ in 0..200 {
        if let Ok(response) = client.get(&url).send().await {
            first = Some(response.status().as_u16());
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let second: serde_json::Value = client.get(&url).send().await.unwrap().json().await.unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(first, Some(503));
    assert_eq!(second["version"]["distribution"], "opensearch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_export_writes_json_lines_and_refuses_a_store_in_use() {
    let scene = scene(small(), r#"kind = "sim""#).await;
    let config = config_of(&scene);
    let console_run = run(
        vec!["console".into(), "--config".into(), config.clone()],
        "/cluster stop cluster:logs\nyes\n",
    )
    .await;
    assert!(console_run.status.success());
    let export_of = |id: &str| {
        let args = ["audit", "export", "--config", &config, "--run", id];
        run(args.iter().map(|a| (*a).to_owned()).collect(), "")
    };
    let export = export_of("r-1").await;
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&export.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(events[0]["event"]["kind"], "run_requested");
    // Runs, steps and digests as chat shows them.
    assert_eq!(events[0]["run"], "r-1");
    assert_eq!(events[0]["event"]["digest"].as_str().unwrap().len(), 12);
    // The requester's `yes` under the `confirm` policy, bound to the plan shown.
    assert_eq!(events[1]["event"]["kind"], "confirmed");
    assert_eq!(events[1]["event"]["digest"], events[0]["event"]["digest"]);
    assert_eq!(events[1]["actor"]["person"], "alice");
    let first_step = events
        .iter()
        .find(|e| e["event"]["kind"] == "step_started")
        .unwrap();
    assert_eq!(first_step["event"]["step"], 1);
    assert_eq!(events[0]["actor"]["person"], "alice");
    assert_eq!(events[0]["actor"]["via"]["surface"], "console");
    // The run's end, then the announcement of it once the announcement channel had it.
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| e["event"]["kind"].as_str())
        .collect();
    assert_eq!(kinds[kinds.len() - 2..], ["run_finished", "announced"]);
    assert_eq!(
        events[events.len() - 2]["event"],
        serde_json::json!({"kind": "run_finished", "state": "succeeded"})
    );
    assert!(
        events.last().unwrap()["event"]["text"]
            .as_str()
            .unwrap()
            .starts_with("✅ maintenance over: /cluster stop cluster:logs (r-1)")
    );

    // A run that does not exist is an error, not an empty export.
    let missing = export_of("r-99").await;
    assert!(!missing.status.success());
    assert!(missing.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("there is no run r-99"), "{stderr}");

    // While a console holds the store, the export says so instead of failing obscurely.
    // The console has opened the store once it has answered a command; its input stays open, so it
    // holds the store until it is killed.
    let mut holder = Command::new(env!("CARGO_BIN_EXE_opsbot"))
        .args(["console", "--config", &config])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = holder.stdin.take().unwrap();
    writeln!(input, "/run list").unwrap();
    let mut answer = BufReader::new(holder.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("r-1") {
        line.clear();
        assert_ne!(answer.read_line(&mut line).unwrap(), 0, "the console ended");
    }
    let busy = run(
        vec![
            "audit".into(),
            "export".into(),
            "--config".into(),
            config.clone(),
        ],
        "",
    )
    .await;
    drop(input);
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert!(!busy.status.success());
    let stderr = String::from_utf8_lossy(&busy.stderr);
    assert!(
        stderr.contains("is in use by another opsbot process"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planning_on_a_cluster_needs_no_cloud_credentials() {
    let scene = scene(small(), r#"kind = "sim""#).await;
    let mut text = std::fs::read_to_string(&scene.config).unwrap();
    text.push_str(
        "\n[[clouds]]\nname = \"prod\"\nauth_url = \"http://127.0.0.1:9/identity/v3\"\n\
         username = \"admin\"\nproject = \"admin\"\npassword_file = \"/nonexistent/prod-password\"\n",
    );
    std::fs::write(&scene.config, text).unwrap();
    let plan = |line: &str| {
        run(
            vec![
                "plan".into(),
                "--config".into(),
                config_of(&scene),
                line.to_owned(),
            ],
            "",
        )
    };
    let cluster = plan("/cluster stop cluster:logs").await;
    assert!(
        cluster.status.success(),
        "{}",
        String::from_utf8_lossy(&cluster.stderr)
    );
    // Planning on the cloud itself says which file it cannot read.
    let cloud = plan("/compute rpc-cap cloud:prod").await;
    let stderr = String::from_utf8_lossy(&cloud.stderr);
    assert!(
        !cloud.status.success() && stderr.contains("/nonexistent/prod-password"),
        "{stderr}"
    );
}

/// A console on a terminal keeps its log lines off the screen it shares with the operator: they
/// go to a file under the XDG state directory, which it names once at start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interactive_console_logs_to_a_file_and_not_to_its_screen() {
    let home = tempfile::tempdir().unwrap();
    let mut terminal = crate::support::Terminal::spawn(
        Command::new(env!("CARGO_BIN_EXE_opsbot"))
            .args(["demo", "--speed", "200"])
            .env("HOME", home.path())
            .env_remove("XDG_STATE_HOME")
            // "store opened" is logged at info.
            .env("RUST_LOG", "info"),
    );
    // A line typed at the prompt, then Ctrl-D: the end of the input on a terminal.
    terminal
        .until("the prompt", |shown| shown.contains("alice> "))
        .await;
    terminal.type_keys(b"/help topic:zzz\r");
    terminal
        .prompted_after("no commands about `zzz`", "alice> ")
        .await;
    terminal.type_keys(b"\x04");
    let (status, shown) = terminal.exit().await;
    assert!(status.success(), "{shown}");
    let log = home.path().join(".local/state/opsbot/console.log");
    assert!(
        shown.contains(&format!("opsbot: log lines go to {}", log.display())),
        "{shown}"
    );
    assert!(!shown.contains("store opened"), "{shown}");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("store opened"), "{logged}");
    assert!(!logged.contains('\u{1b}'), "no colour in a file: {logged}");
}

/// `opsbot run-log export` writes every line the run's log keeps, and names a run that never
/// was instead of printing nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_log_export_writes_every_line_of_a_runs_output() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = TestHosts::install(&dir.path().join("hosts"), &COMPUTE).unwrap();
    let config = runbook_config(dir.path(), &hosts, &crate::support::shipped_runbooks())
        .display()
        .to_string();
    let asked = run(
        vec!["console".into(), "--config".into(), config.clone()],
        "/runbook run name:debug-silent-service host:compute-01 process:nova-compute seconds:5\n",
    )
    .await;
    let shown = String::from_utf8_lossy(&asked.stdout);
    assert!(shown.contains("✅ r-1"), "{shown}");
    let export = |id: &str| {
        let args = ["run-log", "export", "--config", &config, "--run", id];
        run(args.iter().map(|a| (*a).to_owned()).collect(), "")
    };
    let out = export("r-1").await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert!(lines.len() > 20, "{lines:?}");
    assert!(
        lines[0].starts_with("── step 1 on compute-01: `pgrep"),
        "{lines:?}"
    );
    assert!(
        lines.last().is_some_and(|l| l.contains("detached")),
        "{lines:?}"
    );
    let none = export("r-9").await;
    assert!(!none.status.success());
    assert!(
        String::from_utf8_lossy(&none.stderr).contains("r-9"),
        "{}",
        String::from_utf8_lossy(&none.stderr)
    );
}

/// A binary installed without its source tree carries its documented example config, and
/// reads /etc/opsbot/opsbot.toml when no --config is given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_prints_its_example_config_and_defaults_to_etc() {
    let out = run(vec!["example-config".into()], "").await;
    assert!(out.status.success());
    let shipped = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/opsbot.example.toml"
    ))
    .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), shipped);
    let help = run(vec!["check".into(), "--help".into()], "").await;
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("[default: /etc/opsbot/opsbot.toml]"),
        "{}",
        String::from_utf8_lossy(&help.stdout)
    );
}

/// `opsbot slack manifest` prints the manifest an admin pastes into Slack: JSON, one command
/// per group (or `/opsbot` alone), and a bad flag refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_prints_the_slack_app_manifest() {
    let out = run(vec!["slack".into(), "manifest".into()], "").await;
    assert!(out.status.success());
    let manifest: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(manifest, opsbot::chat::slack::manifest(false));
    assert_eq!(
        manifest["features"]["slash_commands"][0]["command"],
        "/cluster"
    );
    let single = run(
        vec!["slack".into(), "manifest".into(), "--single".into()],
        "",
    )
    .await;
    let single: serde_json::Value = serde_json::from_slice(&single.stdout).unwrap();
    assert_eq!(
        single["features"]["slash_commands"][0]["command"],
        "/opsbot"
    );
    let bad = run(vec!["slack".into(), "manifest".into(), "--yaml".into()], "").await;
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("unexpected argument '--yaml'"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

/// A command whose backend is retried says so at the console as it happens, instead of
/// seconds of silence then the failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_says_what_a_slow_command_waits_for() {
    let (_held, closed) = crate::support::refusing_address();
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        "[engine.retry]\nattempts = 3\nbase_delay = \"50ms\"\nmax_delay = \"100ms\"\n\
         [[clusters]]\nname = \"old\"\nurl = \"http://{closed}\"\nnodes = [\"10.0.0.11\"]\n\
         [clusters.node_control]\nkind = \"manual\"\ncontainer = \"opensearch\"\n"
    );
    let config = crate::support::config_file(dir.path(), &body)
        .display()
        .to_string();
    let out = run(
        vec!["console".into(), "--config".into(), config],
        "/indices list cluster:old\n",
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let tries: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            l.starts_with(
                "opsbot (only you): still waiting: search cluster `old`: GET /_cat/indices could \
                 not be reached at http://",
            )
        })
        .collect();
    assert_eq!(tries.len(), 2, "{stdout}");
    assert!(
        tries[0].ends_with("connection refused; trying again (1 of 3)"),
        "{stdout}"
    );
    assert!(
        stdout.find("trying again (2 of 3)") < stdout.find("connection refused after 3 tries"),
        "the retries are said before the answer: {stdout}"
    );
}

/// At the `yes` prompt, a near miss (`Y`) says the plan still waits and how to decide it; `no`
/// leaves it waiting, saying how to decide later. Neither starts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_answer_at_the_yes_prompt_leaves_the_plan_waiting_and_says_how() {
    let scene = scene(small(), r#"kind = "sim""#).await;
    let out = run(
        vec!["console".into(), "--config".into(), config_of(&scene)],
        "/cluster stop cluster:logs\nY\nno\n",
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "opsbot (only you): r-1 still waits: type `yes` exactly to run it, or later /run \
             confirm id:r-1 digest:"
        ) && stdout.contains("opsbot (only you): r-1 is left waiting; later: /run confirm id:r-1"),
        "{stdout}"
    );
    assert!(
        scene.sim.calls().iter().all(|c| c.method == "GET"),
        "nothing was changed"
    );
}
