//! Running a local program: an argv (never a shell), optional standard input, a timeout, and the
//! last lines of its output. Node control, host control and runbook steps all run programs here.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

use crate::node_control::NodeControlError;

/// A program that ran to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// The exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// The last lines of its output: standard output, then standard error.
    pub lines: Vec<String>,
}

impl Finished {
    /// `0`, `124`, or `a signal`.
    pub fn code_text(&self) -> String {
        self.code
            .map_or_else(|| "a signal".to_owned(), |c| c.to_string())
    }
}

/// Runs `argv`, writing `stdin` to it, and keeps at most `kept` lines of output. The program
/// runs in a process group of its own, and the whole group is killed at the timeout: a wrapper
/// like `timeout` or a launcher must not leave its child running.
pub async fn run(
    argv: &[String],
    stdin: Option<&str>,
    timeout: Duration,
    kept: usize,
) -> Result<Finished, NodeControlError> {
    let program = argv.first().cloned().unwrap_or_default();
    let spawn_error = |e: std::io::Error| NodeControlError::Spawn {
        program: program.clone(),
        detail: e.to_string(),
    };
    let mut child = tokio::process::Command::new(&program)
        .args(argv.get(1..).unwrap_or_default())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(spawn_error)?;
    let group = child.id();
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // A program that exits without reading its input is not an error of ours; its exit
        // code says what happened.
        let _ = pipe.write_all(text.as_bytes()).await;
    }
    let Ok(finished) = tokio::time::timeout(timeout, child.wait_with_output()).await else {
        if let Some(group) = group {
            kill_group(group);
        }
        return Err(NodeControlError::Timeout { program, timeout });
    };
    let output = finished.map_err(spawn_error)?;
    let mut lines: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .chain(String::from_utf8_lossy(&output.stderr).lines())
        .map(str::to_owned)
        .collect();
    if lines.len() > kept {
        lines.drain(..lines.len() - kept);
    }
    Ok(Finished {
        code: output.status.code(),
        lines,
    })
}

/// Kills every process of the group the timed-out program leads.
fn kill_group(group: u32) {
    let Ok(group) = i32::try_from(group) else {
        return;
    };
    if let Err(error) = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(group),
        nix::sys::signal::Signal::SIGKILL,
    ) {
        // Already gone is the usual reason; nothing is left to kill then.
        tracing::debug!(%error, group, "killing a timed-out command's process group");
    }
}
