//! Every shipped runbook end to end: the real engine and service run `deploy/runbooks/` on test
//! hosts made of local scripts that behave like the real commands (`opsbot-host-sim`), including
//! their failures: a busy module, a tracer not installed, a process not found, a command that
//! hangs. And the bad input that must never reach a host.

use opsbot_commands::render::Tone;
use opsbot_commands::run::{Outcome, RunState, StepState};
use opsbot_tests::runbooks::{Hosts, shipped, test_hosts};
use opsbot_tests::{Harness, Setup};

async fn harness() -> (Harness, Hosts) {
    let (runbooks, hosts) = test_hosts(shipped());
    let h = Harness::start(Setup {
        runbooks,
        ..Setup::default()
    })
    .await;
    (h, hosts)
}

/// The commands a host ran, without the `=> …` lines that say what changed.
fn ran(hosts: &Hosts, host: &str) -> Vec<String> {
    hosts
        .hosts
        .log(host)
        .into_iter()
        .filter(|l| !l.starts_with("=>"))
        .collect()
}

fn failure(state: &RunState) -> &str {
    match state {
        RunState::Finished {
            outcome: Outcome::Failed { error },
            ..
        } => error,
        other => panic!("expected a failed run, got {other:?}"),
    }
}

#[tokio::test]
async fn nested_virt_stops_at_its_gate_then_reloads_the_module_and_restarts_nova_compute() {
    let (h, hosts) = harness().await;
    let id = h
        .start_run("alice", "/runbook run name:nested-virt host:compute-01")
        .await;
    let run = h
        .wait_for(id, "at the approval gate", |r| {
            matches!(r.state, RunState::AwaitingApproval { .. })
        })
        .await;
    // The steps before the gate ran; nothing after it did.
    assert!(matches!(run.steps()[0], StepState::Done { .. }));
    assert!(matches!(run.steps()[1], StepState::Done { .. }));
    assert_eq!(
        hosts
            .hosts
            .read("compute-01", "/etc/modprobe.d/kvm-nested.conf")
            .as_deref(),
        Some("options kvm_amd nested=y\n")
    );
    assert!(
        !ran(&hosts, "compute-01")
            .iter()
            .any(|l| l.starts_with("modprobe"))
    );
    // The progress message asks for the approval; the approver reads the steps and what the
    // ones before the gate found.
    h.message_shows(&run, "the approval asked", |tone| tone == Tone::Waiting)
        .await;
    let progress = h.chat().messages()[0].text().to_owned();
    assert!(progress.contains("waiting for approval"), "{progress}");
    let shown = h.slash("bob", &format!("/run status id:{id}")).await.text;
    assert!(shown.contains("a second operator approves here"), "{shown}");
    assert!(shown.contains("modprobe -r kvm_amd"), "{shown}");
    assert!(shown.contains("virsh list --name` exited 0"), "{shown}");

    // Not the requester: a second operator.
    let own = h.approve("alice", id).await;
    assert!(own.private, "{}", own.text);
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    assert_eq!(run.outcome(), Some(&Outcome::Succeeded), "{run:?}");
    assert_eq!(
        hosts
            .hosts
            .read("compute-01", "/sys/module/kvm_amd/parameters/nested")
            .map(|s| s.trim().to_owned())
            .as_deref(),
        Some("Y")
    );
    let commands = ran(&hosts, "compute-01");
    let position = |prefix: &str| {
        commands
            .iter()
            .position(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` in {commands:?}"))
    };
    assert!(position("tee /etc/modprobe.d/kvm-nested.conf") < position("modprobe -r kvm_amd"));
    assert!(position("modprobe -r kvm_amd") < position("modprobe kvm_amd"));
    assert!(position("modprobe kvm_amd") < position("docker restart nova_compute"));
    assert_eq!(
        commands
            .iter()
            .filter(|l| *l == "modprobe -r kvm_amd")
            .count(),
        1
    );
    // Only the named host was touched.
    assert!(ran(&hosts, "compute-02").is_empty());
    // The gate is in the audit trail as the approval.
    let audit = h.slash("alice", &format!("/audit run:{id}")).await.text;
    assert!(audit.contains("approved"), "{audit}");
}

#[tokio::test]
async fn nested_virt_with_running_vms_stops_before_its_gate_and_says_what_to_do() {
    let (h, hosts) = harness().await;
    hosts.hosts.set_running_vms("compute-02", 2).unwrap();
    let id = h
        .start_run(
            "alice",
            "/runbook run name:nested-virt host:compute-02 module:kvm_amd",
        )
        .await;
    let run = h.finished(id).await;
    let error = failure(&run.state);
    assert!(error.contains("does not match"), "{error}");
    assert!(error.contains("migrate or shut them off"), "{error}");
    // It never asked for approval and never touched the module.
    assert!(run.approval.is_none());
    assert!(
        !ran(&hosts, "compute-02")
            .iter()
            .any(|l| l.starts_with("modprobe"))
    );
}

#[tokio::test]
async fn nested_virt_fails_on_a_busy_module_after_approval_and_says_what_is_left() {
    let (h, hosts) = harness().await;
    let id = h
        .start_run("alice", "/runbook run name:nested-virt host:compute-01")
        .await;
    h.wait_for(id, "at the approval gate", |r| {
        matches!(r.state, RunState::AwaitingApproval { .. })
    })
    .await;
    // A VM started after the check.
    hosts.hosts.set_running_vms("compute-01", 1).unwrap();
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    let error = failure(&run.state);
    assert!(error.contains("modprobe -r kvm_amd` exited 1"), "{error}");
    assert!(error.contains("is in use"), "{error}");
    assert!(error.contains("not done:"), "{error}");
    assert!(!ran(&hosts, "compute-01").contains(&"modprobe kvm_amd".to_owned()));
}

#[tokio::test]
async fn debug_silent_service_traces_the_process_it_found_and_posts_the_end_of_the_trace() {
    let (h, hosts) = harness().await;
    let id = h
        .start_run(
            "alice",
            "/runbook run name:debug-silent-service host:compute-01 process:nova-compute seconds:5",
        )
        .await;
    let run = h.finished(id).await;
    assert_eq!(run.outcome(), Some(&Outcome::Succeeded), "{run:?}");
    let pid = run.captured.get("pid").expect("pid captured").clone();
    assert!(
        ran(&hosts, "compute-01").contains(&format!("timeout 5 strace -f -tt -p {pid}")),
        "{:?}",
        ran(&hosts, "compute-01")
    );
    // The end of the trace in chat, shortened; all of it in the run log.
    let shown = h.chat().messages()[0].text().to_owned();
    assert!(shown.contains("```"), "{shown}");
    assert!(
        shown.contains("epoll_wait") || shown.contains("futex"),
        "{shown}"
    );
    let log = h.engine.store().run_log(id).unwrap();
    assert!(log.len() > 10, "{log:?}");
    assert!(log.iter().any(|l| l.contains("attached")), "{log:?}");
    // `/run log` pages through every line the log keeps, the latest first.
    let mut pages = Vec::new();
    for page in 1.. {
        let text = h
            .slash("alice", &format!("/run log id:{id} page:{page}"))
            .await
            .text;
        let body = text
            .split_once("```\n")
            .and_then(|(_, rest)| rest.split_once("\n```"));
        let Some((body, _)) = body else {
            assert!(text.contains("is past the earliest"), "{text}");
            break;
        };
        pages.insert(0, body.to_owned());
    }
    assert!(pages.len() > 1, "a trace of 5 s takes pages: {pages:?}");
    // A console pages; only chat is sent the file.
    let console = h.slash("alice", &format!("/run log id:{id}")).await;
    assert_eq!(console.attachment, None);
    assert_eq!(
        pages.join("\n"),
        log.join("\n"),
        "the pages are the whole log"
    );
    let attached = h
        .slash("alice", &format!("/run log id:{id} grep:ATTACHED"))
        .await
        .text;
    let matching = log
        .iter()
        .filter(|l| l.to_ascii_lowercase().contains("attached"))
        .count();
    assert!(
        attached.contains(&format!(", {matching} containing `ATTACHED`; lines ")),
        "{attached}"
    );
}

#[tokio::test]
async fn debug_silent_service_without_strace_or_without_the_process_fails_clearly() {
    let (h, hosts) = harness().await;
    hosts.hosts.uninstall("compute-01", "strace").unwrap();
    let id = h
        .start_run(
            "alice",
            "/runbook run name:debug-silent-service host:compute-01 process:nova-compute seconds:5",
        )
        .await;
    let error = failure(&h.finished(id).await.state).to_owned();
    assert!(error.contains("exited 127"), "{error}");
    assert!(error.contains("strace"), "{error}");

    hosts
        .hosts
        .stop_process("compute-02", "nova-compute")
        .unwrap();
    let id = h
        .start_run(
            "alice",
            "/runbook run name:debug-silent-service host:compute-02 process:nova-compute",
        )
        .await;
    let error = failure(&h.finished(id).await.state).to_owned();
    assert!(
        error.contains("pgrep -o -f nova-compute` exited 1"),
        "{error}"
    );
    assert!(
        !ran(&hosts, "compute-02")
            .iter()
            .any(|l| l.contains("strace")),
        "no tracer without a process"
    );
}

#[tokio::test]
async fn workflow_db_populate_fills_an_empty_action_list_and_refuses_a_full_one() {
    let (h, hosts) = harness().await;
    let id = h
        .start_run(
            "alice",
            "/runbook run name:workflow-db-populate host:ctl-01",
        )
        .await;
    let run = h.finished(id).await;
    assert_eq!(run.outcome(), Some(&Outcome::Succeeded), "{run:?}");
    assert!(
        ran(&hosts, "ctl-01")
            .iter()
            .any(|l| l
                .contains("mistral-db-manage --config-file /etc/mistral/mistral.conf populate")),
        "{:?}",
        ran(&hosts, "ctl-01")
    );
    // Again: the list is no longer empty, so nothing is populated twice.
    let id = h
        .start_run(
            "alice",
            "/runbook run name:workflow-db-populate host:ctl-01",
        )
        .await;
    let error = failure(&h.finished(id).await.state).to_owned();
    assert!(error.contains("does not match"), "{error}");
    let populates = ran(&hosts, "ctl-01")
        .iter()
        .filter(|l| l.contains("populate"))
        .count();
    assert_eq!(populates, 1);
}

#[tokio::test]
async fn compute_rpc_cap_restart_goes_host_by_host_hypervisors_first() {
    let (h, hosts) = harness().await;
    let id = h
        .start_run("alice", "/runbook run name:compute-rpc-cap-restart")
        .await;
    let run = h.finished(id).await;
    assert_eq!(run.outcome(), Some(&Outcome::Succeeded), "{run:?}");
    let restarts: Vec<(String, String)> = hosts
        .hosts
        .journal()
        .into_iter()
        .filter(|(_, line)| line.starts_with("docker restart"))
        .collect();
    let order: Vec<&str> = restarts.iter().map(|(host, _)| host.as_str()).collect();
    assert_eq!(order.first(), Some(&"compute-01"), "{restarts:?}");
    let last_compute = order
        .iter()
        .rposition(|h| h.starts_with("compute"))
        .unwrap();
    let first_control = order.iter().position(|h| *h == "ctl-01").unwrap();
    assert!(last_compute < first_control, "{restarts:?}");
    // Host by host: compute-01 is running again before compute-02 restarts.
    let journal = hosts.hosts.journal();
    let at = |host: &str, prefix: &str| {
        journal
            .iter()
            .position(|(h, l)| h == host && l.starts_with(prefix))
            .unwrap_or_else(|| panic!("{host}: no `{prefix}`"))
    };
    assert!(at("compute-01", "docker ps") < at("compute-02", "docker restart"));
}

/// Processes of this machine whose command line contains every one of `words`.
/// The processes on this machine whose command line holds every one of `words`: pid and line.
fn processes_with(words: &[&str]) -> Vec<(u32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse().ok()?;
            let raw = std::fs::read(entry.path().join("cmdline")).ok()?;
            Some((pid, String::from_utf8_lossy(&raw).replace('\0', " ")))
        })
        .filter(|(_, line)| words.iter().all(|w| line.contains(w)))
        .collect()
}

/// Whether `parent` has a child process: the fake strace starts one (`sleep 0.2`) only once
/// it has attached, written its first lines and set its signal handlers.
fn has_child(parent: u32) -> bool {
    processes_with(&["sleep"]).iter().any(|(pid, _)| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            // pid (comm) state ppid …: the comm may hold spaces, so read after its ')'.
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|ppid| ppid.parse::<u32>().ok())
                == Some(parent)
        })
    })
}

#[tokio::test]
async fn cancel_stops_a_long_host_command_and_keeps_its_output() {
    let (h, hosts) = harness().await;
    let id = h
        .start_run(
            "alice",
            "/runbook run name:debug-silent-service host:compute-01 process:nova-compute \
             seconds:300",
        )
        .await;
    let pid = h
        .wait_for(id, "tracing", |r| {
            matches!(r.steps().get(1), Some(StepState::Started { .. }))
        })
        .await
        .captured
        .get("pid")
        .cloned()
        .unwrap();
    let tracer = format!("strace -f -tt -p {pid}");
    let root = hosts.hosts.launcher();
    let root = root
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    // The tracer runs on the host and has written its first lines.
    h.wait_for(id, "tracing on the host", |_| {
        processes_with(&[&root, &tracer])
            .iter()
            .any(|(pid, _)| has_child(*pid))
    })
    .await;

    let reply = h.slash("bob", &format!("/run cancel id:{id}")).await;
    assert!(reply.text.contains("will stop"), "{}", reply.text);
    let run = h.finished(id).await;
    let Some(Outcome::Cancelled { note, .. }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert!(
        note.contains("stopped by the cancel") && note.contains("SIGTERM"),
        "{note}"
    );
    let StepState::Failed { error, .. } = &run.steps()[1] else {
        panic!("{:?}", run.steps()[1])
    };
    assert!(error.contains("stopped by the cancel"), "{error}");
    // Its whole process group is gone: `timeout` and the tracer under it.
    let left = processes_with(&[&root, &tracer]);
    assert!(left.is_empty(), "still running: {left:?}");
    // Its output so far is kept: from attaching to detaching at the SIGTERM.
    let log = h.engine.store().run_log(id).unwrap();
    assert!(
        log.iter().any(|l| l.contains("was ended by SIGTERM")),
        "{log:?}"
    );
    assert!(log.iter().any(|l| l.contains("attached")), "{log:?}");
    assert!(log.iter().any(|l| l.contains("detached")), "{log:?}");
    let shown = h.chat().messages()[0].text().to_owned();
    assert!(
        shown.contains("```"),
        "the end of the output is posted: {shown}"
    );
}

/// A harness whose only runbook, `quick`, restarts nova_compute on a host within `timeout`,
/// keeping its output out of chat; `docker` hangs on compute-01. The directory and the hosts
/// live as long as the values do.
async fn hanging_quick(timeout: &str) -> (tempfile::TempDir, Harness, Hosts) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("quick.toml"),
        format!(
            r#"
name = "quick"
description = "restart nova_compute with a short timeout"
[[params]]
name = "host"
kind = "host"
help = "the hypervisor"
[[steps]]
kind = "run"
on = "{{host}}"
argv = ["docker", "restart", "nova_compute"]
timeout = "{timeout}"
"#
        ),
    )
    .unwrap();
    let (runbooks, hosts) = test_hosts(dir.path().to_owned());
    let h = Harness::start(Setup {
        runbooks,
        ..Setup::default()
    })
    .await;
    hosts.hosts.hang("compute-01", "docker").unwrap();
    (dir, h, hosts)
}

#[tokio::test]
async fn a_command_that_hangs_is_killed_at_its_timeout_and_the_run_says_so() {
    let (_dir, h, _hosts) = hanging_quick("1s").await;
    let id = h
        .start_run("alice", "/runbook run name:quick host:compute-01")
        .await;
    let error = failure(&h.finished(id).await.state).to_owned();
    assert!(
        error.contains("did not finish within 1s and was killed"),
        "{error}"
    );
}

#[tokio::test]
async fn a_cancelled_command_whose_output_is_not_posted_keeps_it_out_of_chat() {
    let (_dir, h, _hosts) = hanging_quick("60s").await;
    let id = h
        .start_run("alice", "/runbook run name:quick host:compute-01")
        .await;
    h.wait_for(id, "restarting", |r| {
        matches!(r.steps().first(), Some(StepState::Started { .. }))
    })
    .await;
    h.slash("bob", &format!("/run cancel id:{id}")).await;
    let run = h.finished(id).await;
    let Some(Outcome::Cancelled { note, .. }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert!(note.contains("stopped by the cancel"), "{note}");
    assert!(!note.contains("```"), "the output is posted: {note}");
    let shown = h.chat().messages()[0].text().to_owned();
    assert!(!shown.contains("```"), "the output is posted: {shown}");
}

#[tokio::test]
async fn bad_input_is_refused_before_anything_runs() {
    let (h, hosts) = harness().await;
    let cases = [
        (
            "/runbook run name:no-such-book host:compute-01",
            "there is no runbook `no-such-book`",
        ),
        (
            "/runbook run name:nested-virt host:ctl-01",
            "not a host of group `compute`",
        ),
        (
            "/runbook run name:nested-virt host:db-9",
            "not a host of group `compute`",
        ),
        (
            "/runbook run name:nested-virt host:compute-01 module:kvm_arm",
            "is not one of kvm_amd, kvm_intel",
        ),
        ("/runbook run name:nested-virt", "needs `host:`"),
        (
            "/runbook run name:nested-virt host:compute-01 colour:red",
            "has no parameter `colour`",
        ),
        (
            "/runbook run name:debug-silent-service host:compute-01 process:-x",
            "starts with `-`",
        ),
        (
            "/runbook run name:debug-silent-service host:compute-01 process:nova seconds:9999",
            "from 5 to 300",
        ),
        (
            "/runbook run name:debug-silent-service host:compute-01 process:a*b",
            "e.g. nova-compute",
        ),
        ("/runbook run name:Nested host:compute-01", "runbook name"),
        (
            "/runbook run name:nested-virt host:compute-01 host:compute-02",
            "given twice",
        ),
    ];
    for (line, expected) in cases {
        let reply = h.slash("alice", line).await;
        assert!(reply.private, "{line}: {}", reply.text);
        assert!(reply.text.contains(expected), "{line}: {}", reply.text);
    }
    for host in ["compute-01", "compute-02", "ctl-01"] {
        assert!(
            ran(&hosts, host).is_empty(),
            "{host} ran {:?}",
            ran(&hosts, host)
        );
    }
    assert!(h.engine.store().runs().unwrap().is_empty());
}

#[tokio::test]
async fn two_runbooks_on_one_host_do_not_run_at_once() {
    let (h, _hosts) = harness().await;
    let id = h
        .start_run("alice", "/runbook run name:nested-virt host:compute-01")
        .await;
    h.wait_for(id, "at the approval gate", |r| {
        matches!(r.state, RunState::AwaitingApproval { .. })
    })
    .await;
    let busy = h
        .slash("alice", "/runbook run name:compute-rpc-cap-restart")
        .await;
    assert!(
        busy.text.contains(&format!("busy with run {id}")),
        "{}",
        busy.text
    );
    // Another host is free.
    let other = h
        .start_run(
            "alice",
            "/runbook run name:debug-silent-service host:compute-02 process:nova-compute seconds:5",
        )
        .await;
    assert_eq!(h.finished(other).await.outcome(), Some(&Outcome::Succeeded));
}

#[tokio::test]
async fn list_and_show_describe_the_runbooks() {
    let (h, _hosts) = harness().await;
    let list = h.slash("alice", "/runbook list").await.text;
    for name in [
        "compute-rpc-cap-restart",
        "debug-silent-service",
        "nested-virt",
        "workflow-db-populate",
    ] {
        assert!(list.contains(&format!("`{name}`")), "{list}");
    }
    assert!(list.contains("(needs approval)"), "{list}");
    let show = h
        .slash("alice", "/runbook show name:nested-virt")
        .await
        .text;
    assert!(
        show.contains("usage: /runbook run name:nested-virt host:<a host of group compute>"),
        "{show}"
    );
    assert!(show.contains("modprobe -r {module}"), "{show}");
}

#[tokio::test]
async fn with_manual_access_an_operator_runs_each_command_and_confirms_it() {
    let (mut runbooks, hosts) = test_hosts(shipped());
    runbooks.access = opsbot::config::HostAccessConfig::Manual;
    let h = Harness::start(Setup {
        runbooks,
        ..Setup::default()
    })
    .await;
    let id = h
        .start_run(
            "alice",
            "/runbook run name:debug-silent-service host:compute-01 process:nova-compute seconds:5",
        )
        .await;
    // What the bot would have checked, the operator is asked to check.
    let expected = [
        "on compute-01, run `pgrep -o -f nova-compute`; it must exit 0, and its output must \
         match /^(?P<pid>[0-9]+)\\s*$/",
        // Nothing captured the pid: the operator sees where it goes.
        "on compute-01, run `timeout 5 strace -f -tt -p {pid}`; it must exit with one of 0, 124",
    ];
    for prompt in expected {
        let run = h
            .wait_for(id, "asking an operator", |r| {
                r.awaiting_operator().is_some()
            })
            .await;
        let step = run.awaiting_operator().unwrap();
        let StepState::AwaitingOperator { prompt: asked, .. } = &run.steps()[step] else {
            unreachable!()
        };
        assert!(asked.starts_with(prompt), "{asked}");
        assert!(
            asked.ends_with(&format!("then type /run done id:{id}")),
            "{asked}"
        );
        h.slash("bob", &format!("/run done id:{id}")).await;
    }
    assert_eq!(h.finished(id).await.outcome(), Some(&Outcome::Succeeded));
    assert!(
        ran(&hosts, "compute-01").is_empty(),
        "no command ran by itself"
    );
}
