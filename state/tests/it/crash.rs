//! Crash durability: a child process (this test binary, re-executed) writes transitions and is
//! killed with SIGKILL; every transition it reported as returned must be there after reopen.

use std::convert::Infallible;
use std::error::Error;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::{STEPS, T0, new_run};
use opsbot_commands::audit::AuditKind;
use opsbot_commands::name::RunId;
use opsbot_commands::run::StepState;
use time::OffsetDateTime;

const TEST_NAME: &str = "crash::a_returned_update_survives_sigkill";
/// Set to a store directory, it makes the test act as the child.
const CHILD_ENV: &str = "OPSBOT_STATE_CRASH_CHILD";

/// Update `n` (from 1) of the child: odd ones start step (n-1)/2, even ones finish it.
fn transition(n: usize, run: &mut opsbot_commands::run::Run) -> AuditKind {
    let step = (n - 1) / 2;
    if n % 2 == 1 {
        run.steps_mut()[step] = StepState::Started {
            at: OffsetDateTime::now_utc(),
        };
        AuditKind::StepStarted {
            step,
            action: "stop node".into(),
        }
    } else {
        run.steps_mut()[step] =
            StepState::done(OffsetDateTime::now_utc(), format!("step {step} done"));
        AuditKind::StepDone {
            step,
            note: "ok".into(),
        }
    }
}

/// Writes transitions as fast as it can, reporting each one after `update_run` returned, then
/// waits to be killed.
fn act_as_child(dir: &Path) -> Result<(), Box<dyn Error>> {
    let store = crate::common::open(dir)?;
    let id = store.create_run(new_run("logs"), None)?.id;
    let mut out = std::io::stdout().lock();
    for n in 1..=2 * STEPS {
        store.update_run(id, None, |run| {
            Ok::<_, Infallible>(vec![transition(n, run)])
        })?;
        writeln!(out, "updated {n}")?;
        out.flush()?;
    }
    loop {
        std::thread::park();
    }
}

/// The number of transitions a run shows.
fn transitions(steps: &[StepState]) -> usize {
    steps
        .iter()
        .map(|s| match s {
            StepState::Pending => 0,
            StepState::Started { .. } => 1,
            StepState::Done { .. } => 2,
            other => panic!("unexpected step state {other:?}"),
        })
        .sum()
}

#[test]
fn a_returned_update_survives_sigkill() {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        act_as_child(Path::new(&dir)).unwrap();
        return;
    }
    // Kill early, mid-run and after the last write (when the child waits).
    for kill_after in [1, 31, 2 * STEPS] {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([TEST_NAME, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut confirmed = 0;
        for line in BufReader::new(stdout).lines() {
            // The harness may have printed `test NAME ... ` on the same line first.
            if let Some((_, n)) = line.unwrap().split_once("updated ") {
                confirmed = n.parse().unwrap();
                if confirmed >= kill_after {
                    break;
                }
            }
        }
        assert_eq!(confirmed, kill_after, "the child stopped early");
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();

        let store = crate::common::open(dir.path()).unwrap();
        let run = store.run(RunId::new(1)).unwrap().unwrap();
        let written = transitions(run.steps());
        assert!(written >= confirmed, "{written} < {confirmed} after kill");
        // The step states are a prefix of the child's sequence: nothing torn, nothing skipped.
        let mut replay = store.run(RunId::new(1)).unwrap().unwrap();
        replay.steps_mut().fill(StepState::Pending);
        for n in 1..=written {
            transition(n, &mut replay);
        }
        for (got, want) in run.steps().iter().zip(replay.steps()) {
            assert_eq!(std::mem::discriminant(got), std::mem::discriminant(want));
        }
        // Each transition's audit event was written with it.
        let steps_audited = store
            .audit()
            .unwrap()
            .iter()
            .filter(|e| {
                matches!(
                    e.event,
                    AuditKind::StepStarted { .. } | AuditKind::StepDone { .. }
                )
            })
            .count();
        assert_eq!(steps_audited, written);
        assert_eq!(run.created_at, T0);
    }
}
