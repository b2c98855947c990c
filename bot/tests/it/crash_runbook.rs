//! SIGKILL the real binary while an approved `nested-virt` runbook run executes its steps on the
//! simulated host `compute-01`, restart it until the run completes, and check the host and the
//! audit trail: the non-idempotent `modprobe -r` never replayed blindly, the module loaded again
//! with `nested` = `Y`, the option file written, no other host touched, exactly one approval.
//!
//! Kill points. host-sim has no switch that makes a command slow (only `hang`, which never
//! ends), and its fakes take a few milliseconds, so a fixed kill moment plus 0..150 ms would
//! mostly land after the run. Instead the kill point is randomised over the observed sequence
//! of commands: each kill picks a line that the run leaves in compute-01's log after the
//! approval (a command as the launcher starts it, or a `=> …` line as the fake makes its
//! change), fires when that line appears, plus 0..5 ms. A kill thus lands while a fake runs,
//! after its change but before the bot recorded the step done, or between steps. The point
//! "approval" fires 40..130 ms after the approving console started (the unload starts about
//! 80..130 ms after it): before the approval is handled, or between it and the unload. Half the
//! kills aim at the unload (the approval point and the unload's two lines), the others at any
//! point. The simulated commands outlive the bot that started them (their own process group),
//! as they would on a real host behind ssh.
//!
//! The approving console's input is held open until the kill: a console at the end of its input
//! can exit before the run it has just woken counts as executing (see `complete`), and the run
//! would then stop on its own rather than at the kill point.
//!
//! After the kill the console is started again, approving again (harmless), until the run has
//! finished. Between two consoles the test reads the stopped bot's store; when the run waits for
//! an operator (an unload found started), the test does what the prompt asks of a person: it
//! looks at the host, unloads the module by hand when the bot's command never took effect, and
//! confirms with `/run done id:r-1`.
//!
//! Kill points come from a printed seed; `OPSBOT_CRASH_SEED` replays a failure.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{
    COMPUTE, CONTROL, Dice, approve, console, console_held, output, runbook_config,
    shipped_runbooks, until,
};
use opsbot_commands::audit::AuditKind;
use opsbot_commands::name::RunId;
use opsbot_commands::render;
use opsbot_commands::run::{Outcome, Run};
use opsbot_host_sim::TestHosts;
use opsbot_state::Store;

/// Kills per run of the test suite, one per run of the runbook: this many in each of two
/// parts, side by side.
const PER_PART: u64 = 5;

const RUN: &str = "/runbook run name:nested-virt host:compute-01";
const DONE: &str = "/run done id:r-1\n";

/// The run may touch compute-01 only.
const HOST: &str = "compute-01";

const UNLOAD: &str = "modprobe -r kvm_amd";
const NESTED: &str = "/sys/module/kvm_amd/parameters/nested";
const OPTION_FILE: &str = "/etc/modprobe.d/kvm-nested.conf";

/// What compute-01's log gains after the approval, in order: the kill points after `approval`.
const POINTS: [&str; 8] = [
    UNLOAD,
    "=> unloaded kvm_amd",
    "modprobe kvm_amd",
    "=> loaded kvm_amd (nested=Y)",
    "cat /sys/module/kvm_amd/parameters/nested",
    "docker restart nova_compute",
    "=> restarted nova_compute",
    "docker ps --filter name=^nova_compute$ --filter status=running --quiet",
];

/// Most consoles a run may need after the kill: one that resumes it and asks for the operator,
/// one after `/run done`, and spares for consoles that exit before the run they woke.
const RESTARTS: usize = 8;

crate::in_parts!(
    sigkill_during_an_approved_nested_virt_run_never_replays_the_module_unload
    => runbook_kills: part_1 = 0, part_2 = 1
);

/// Part `part` of the torture: [`PER_PART`] of its kills.
async fn runbook_kills(part: u64) {
    let mut dice = Dice::for_part(part);
    let seed = dice.seed();
    let started = Instant::now();
    for kill in part * PER_PART..(part + 1) * PER_PART {
        // Half the kills aim at the unload (before it, while it runs, just after it), the
        // others at any point.
        let points = if dice.below(2) == 0 {
            3
        } else {
            POINTS.len() + 1
        };
        let point = dice.below(points as u64) as usize;
        let jitter = Duration::from_millis(if point == 0 {
            40 + dice.below(90)
        } else {
            dice.below(6)
        });
        round(kill, point, jitter, seed).await;
    }
    println!("{PER_PART} kills in {:?}", started.elapsed());
}

async fn round(kill: u64, point: usize, jitter: Duration, seed: u64) {
    let at = match point {
        0 => "the resuming console started".to_owned(),
        n => format!("`{}` appeared in {HOST}'s log", POINTS[n - 1]),
    };
    let what = format!(
        "kill {kill} (seed {seed}, replay with OPSBOT_CRASH_SEED={seed}): {jitter:?} after {at}"
    );
    let dir = tempfile::tempdir().unwrap();
    let all: Vec<&str> = COMPUTE.iter().chain(&CONTROL).copied().collect();
    let hosts = TestHosts::install(&dir.path().join("hosts"), &all).unwrap();
    let config = runbook_config(dir.path(), &hosts, &shipped_runbooks());

    // Alice asks; the run does the steps before its gate and parks there.
    let out = output(console(&config, &format!("{RUN}\n"))).await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains("waiting for approval"),
        "{what}: the run did not park at its gate: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !commands(&hosts, HOST)
            .iter()
            .any(|l| l.starts_with("modprobe")),
        "{what}: a step after the gate ran before the approval: {:?}",
        hosts.log(HOST)
    );

    // Bob approves (from Discord, as the store records it); a console resumes the run and is
    // killed somewhere in the steps after the gate. Its input stays open: a console at the end
    // of its input may exit before a run it just woke executes.
    approve(&config, RunId::new(1)).await;
    let mut approving = console_held(&config, "");
    if point > 0 {
        let line = POINTS[point - 1];
        until(&what, || {
            hosts.log(HOST).iter().any(|l| l == line) || matches!(approving.try_wait(), Ok(Some(_)))
        })
        .await;
    }
    tokio::time::sleep(jitter).await;
    let _ = approving.kill(); // SIGKILL; it may have finished already
    approving.wait().unwrap();
    let at_kill = hosts.log(HOST).len();

    let (run, story) = complete(&config, &hosts, &what).await;
    println!("{what}: {story} ({HOST}'s log had {at_kill} lines at the kill)");
    check(&config, &hosts, &run, &what);
}

/// Starts the console again until run r-1 has finished. Between two consoles, with the bot
/// stopped, reads the run from the store; when it waits for an operator, does what the prompt
/// asks: checks the host, finishes the unload by hand if the bot's never took effect, and
/// confirms. Returns the finished run and what happened, for the test's output.
async fn complete(config: &Path, hosts: &TestHosts, what: &str) -> (Run, String) {
    let mut input = String::new();
    let mut story = Vec::new();
    for restart in 1..=RESTARTS {
        let out = output(console(config, &input)).await;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{what}: restarted console {restart} failed: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let run = stored_run(config, what);
        if run.state.is_finished() {
            story.push(format!("{} after {restart} restart(s)", run.state.label()));
            return (run, story.join(", "));
        }
        input.clear();
        let Some(step) = run.awaiting_operator() else {
            // A console whose last line woke a parked run (`/run done`, `/approve`) may reach
            // the end of its input and exit before the run's task counts as busy again: the
            // run is left mid-way, as by a kill. Start again.
            story.push(format!("console exited with r-1 {}", run.state.label()));
            continue;
        };
        let action = run.plan().step(step).map(render::step_label).unwrap();
        assert!(
            action.contains(UNLOAD),
            "{what}: the run asks an operator about step {} ({action}), but only the \
             non-idempotent `{UNLOAD}` may need one; last console: {stdout}",
            step + 1
        );
        // The operator looks at the host: a module still loaded means the bot's unload never
        // ran (the bot stopped between the step's Started record and the command), so they
        // run it themselves.
        if hosts.read(HOST, NESTED).is_some() {
            let status = Command::new(hosts.launcher())
                .args([HOST, "modprobe", "-r", "kvm_amd"])
                .status()
                .unwrap();
            assert!(status.success(), "{what}: the unload by hand failed");
            story.push("operator asked, unloaded by hand".to_owned());
        } else {
            story.push("operator asked, found it unloaded".to_owned());
        }
        input.push_str(DONE);
    }
    panic!(
        "{what}: the run did not finish after {RESTARTS} restarts; {HOST} ran {:?}",
        hosts.log(HOST)
    );
}

/// The invariants once the run has finished.
fn check(config: &Path, hosts: &TestHosts, run: &Run, what: &str) {
    let log = hosts.log(HOST);
    let unloads = log.iter().filter(|l| *l == UNLOAD).count();
    assert!(
        unloads <= 1,
        "{what}: `{UNLOAD}` ran {unloads} times on {HOST}; it is not idempotent, so after a \
         restart it must go to an operator, never be replayed blindly: {log:?}"
    );
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{what}: the run did not succeed; {HOST} ran {log:?}"
    );
    assert_eq!(
        hosts.read(HOST, NESTED).as_deref().map(str::trim),
        Some("Y"),
        "{what}: kvm_amd is not loaded with nested=Y: {log:?}"
    );
    assert_eq!(
        hosts.read(HOST, OPTION_FILE).as_deref(),
        Some("options kvm_amd nested=y\n"),
        "{what}: {OPTION_FILE}: {log:?}"
    );
    let elsewhere: Vec<_> = hosts
        .journal()
        .into_iter()
        .filter(|(host, _)| host != HOST)
        .collect();
    assert!(
        elsewhere.is_empty(),
        "{what}: other hosts ran commands: {elsewhere:?}"
    );
    let trail: Vec<AuditKind> = open_store(config)
        .audit()
        .unwrap_or_else(|e| panic!("{what}: cannot read the audit trail: {e}"))
        .into_iter()
        .filter(|e| e.run == Some(RunId::new(1)))
        .map(|e| e.event)
        .collect();
    let approvals = trail
        .iter()
        .filter(|e| matches!(e, AuditKind::ApprovalGranted { .. }))
        .count();
    assert_eq!(
        approvals, 1,
        "{what}: the audit trail of r-1 has {approvals} approvals: {trail:?}"
    );
}

/// The commands `host` ran, without the `=> …` lines.
fn commands(hosts: &TestHosts, host: &str) -> Vec<String> {
    hosts
        .log(host)
        .into_iter()
        .filter(|l| !l.starts_with("=>"))
        .collect()
}

/// Run r-1 as the stopped bot left it.
fn stored_run(config: &Path, what: &str) -> Run {
    open_store(config)
        .run(RunId::new(1))
        .unwrap_or_else(|e| panic!("{what}: cannot read r-1: {e}"))
        .unwrap_or_else(|| panic!("{what}: the store has no r-1"))
}

/// The store of the config's bot, which must have exited: once sled has let go of the lock of
/// the handle this test dropped a moment ago (it does so from a background thread).
fn open_store(config: &Path) -> Store {
    crate::support::open_store(&config.with_file_name("store"))
}
