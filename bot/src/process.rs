//! Running a local program: an argv (never a shell), optional standard input, a timeout, and the
//! last lines of its output. Node control, host control and runbook steps all run programs here.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

mod output;
mod template;

pub use output::{KEPT_LINES, Output, OutputBounds, lines};
pub use template::{CommandTemplate, check_value};

/// How long a stopped program has between SIGTERM and SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// A program (or the simulator standing in for one) that did not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("`{program}` could not be started: {detail}")]
    Spawn { program: String, detail: String },
    #[error("`{program}` did not finish within {}s and was killed", .timeout.as_secs())]
    Timeout { program: String, timeout: Duration },
    #[error("`{program}` {ending}: {last_line}")]
    Failed {
        program: String,
        /// `exited 2`, `was ended by SIGKILL`.
        ending: String,
        last_line: String,
        output: Vec<String>,
    },
    #[error("the simulator {0}")]
    Sim(String),
    /// Killed after a cancel, but something outside its process group kept its output open.
    #[error(
        "`{program}` was killed after the cancel, but its output could not be collected within \
         {}s: a process outside its group (started with setsid or daemonized) still holds it \
         open and may still run",
        .grace.as_secs()
    )]
    Uncollected { program: String, grace: Duration },
}

/// A program that ran to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// The exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// The last lines of its output (standard output, then standard error), and how much
    /// there was.
    pub output: Output,
    /// Ended because it was asked to stop (a cancel): SIGTERM, then SIGKILL after
    /// [`STOP_GRACE`].
    pub stopped: bool,
}

impl Finished {
    /// `exited 0`, `exited 124`, `was ended by SIGTERM`.
    pub fn ending(&self) -> String {
        match (self.code, self.signal) {
            (Some(code), _) => format!("exited {code}"),
            (None, Some(signal)) => match nix::sys::signal::Signal::try_from(signal) {
                Ok(signal) => format!("was ended by {signal}"),
                Err(_) => format!("was ended by signal {signal}"),
            },
            (None, None) => "ended without an exit code".to_owned(),
        }
    }
}

/// Runs `argv`, writing `stdin` to it, and keeps its output's tail within `bounds`. The program
/// runs in a process group of its own, and the whole group is killed at the timeout: a wrapper
/// like `timeout` or a launcher must not leave its child running. When `stop` resolves first,
/// the group gets SIGTERM, then SIGKILL after [`STOP_GRACE`]; its output so far is kept. Should
/// a process outside the group still hold the output open [`STOP_GRACE`] after the SIGKILL,
/// the output is given up and the stop is an error that says so.
pub async fn run(
    argv: &[String],
    stdin: Option<&str>,
    timeout: Duration,
    bounds: OutputBounds,
    stop: impl Future<Output = ()>,
) -> Result<Finished, CommandError> {
    run_with_grace(argv, stdin, timeout, bounds, stop, STOP_GRACE).await
}

/// [`run`], with `grace` for [`STOP_GRACE`].
async fn run_with_grace(
    argv: &[String],
    stdin: Option<&str>,
    timeout: Duration,
    bounds: OutputBounds,
    stop: impl Future<Output = ()>,
    grace: Duration,
) -> Result<Finished, CommandError> {
    let program = argv.first().cloned().unwrap_or_default();
    let spawn_error = |e: std::io::Error| CommandError::Spawn {
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
    let (input, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    // The input is written alongside the reads, under the timeout and the stop: a program that
    // never reads a large input must not hold the step forever. Both output streams are read as
    // they come, so that neither fills its pipe and stalls the program, and only their tails
    // are held.
    let output = async {
        let ((), status, stdout, stderr) = tokio::try_join!(
            feed(input, stdin),
            child.wait(),
            read_tail(stdout, bounds),
            read_tail(stderr, bounds)
        )?;
        Ok::<_, std::io::Error>((status, Output::joined(stdout, stderr, bounds)))
    };
    tokio::pin!(output);
    // On tokio's real time, not the engine's clock: the program is a real process that takes
    // real time, so skipping a test's clock must not kill it before its time.
    let deadline = tokio::time::sleep(timeout);
    let mut stopped = false;
    let finished = tokio::select! {
        finished = &mut output => finished,
        () = deadline => {
            signal_group(group, nix::sys::signal::Signal::SIGKILL);
            return Err(CommandError::Timeout { program, timeout });
        }
        () = stop => {
            stopped = true;
            signal_group(group, nix::sys::signal::Signal::SIGTERM);
            match tokio::time::timeout(grace, &mut output).await {
                Ok(finished) => finished,
                Err(_) => {
                    signal_group(group, nix::sys::signal::Signal::SIGKILL);
                    // The group is dead now; only a process that left it can keep the pipes
                    // open, and nothing here can end it.
                    tokio::time::timeout(grace, &mut output)
                        .await
                        .map_err(|_| CommandError::Uncollected {
                            program: program.clone(),
                            grace,
                        })?
                }
            }
        }
    };
    let (status, output) = finished.map_err(spawn_error)?;
    Ok(Finished {
        code: status.code(),
        signal: std::os::unix::process::ExitStatusExt::signal(&status),
        output,
        stopped,
    })
}

/// Writes `text` to the program's standard input, then closes it so that the program reads
/// its end. A program that exits without reading it all is not an error of ours: its exit
/// code says what happened.
async fn feed(pipe: Option<tokio::process::ChildStdin>, text: Option<&str>) -> std::io::Result<()> {
    let (Some(mut pipe), Some(text)) = (pipe, text) else {
        return Ok(());
    };
    match pipe.write_all(text.as_bytes()).await {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(error),
        _ => Ok(()),
    }
}

/// The tail of a piped stream; none when it was not piped.
async fn read_tail(
    stream: Option<impl tokio::io::AsyncRead + Unpin>,
    bounds: OutputBounds,
) -> std::io::Result<Output> {
    match stream {
        Some(stream) => output::read_tail(stream, bounds).await,
        None => Ok(Output::default()),
    }
}

/// Signals every process of the group the program leads.
fn signal_group(group: Option<u32>, signal: nix::sys::signal::Signal) {
    let Some(group) = group.and_then(|g| i32::try_from(g).ok()) else {
        return;
    };
    if let Err(error) = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(group), signal) {
        // Already gone is the usual reason; nothing is left to signal then.
        tracing::debug!(%error, group, %signal, "signalling a command's process group");
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn a_program_that_never_reads_a_large_input_is_killed_at_the_timeout() {
        let argv: Vec<String> = ["sleep", "5"].map(str::to_owned).into();
        // Far more than a pipe holds: writing it blocks until the program reads.
        let stdin = "x".repeat(4 * 1024 * 1024);
        let timeout = Duration::from_millis(300);
        let started = std::time::Instant::now();
        let error = run(
            &argv,
            Some(&stdin),
            timeout,
            OutputBounds::default(),
            std::future::pending(),
        )
        .await
        .unwrap_err();
        assert_eq!(
            error,
            CommandError::Timeout {
                program: "sleep".into(),
                timeout
            }
        );
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "waited for the program to exit"
        );
    }

    #[tokio::test]
    async fn a_stop_gives_up_output_held_open_outside_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("escaped");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        // Opened for reading and writing, so that it never reads an end of file before the
        // daemon writes.
        let mut escaped = tokio::net::unix::pipe::OpenOptions::new()
            .read_write(true)
            .open_receiver(&fifo)
            .unwrap();
        // A daemon the command starts in a session of its own keeps its standard output open
        // after the whole group is killed; it says when it has left the group, and the stop
        // comes then.
        let argv: Vec<String> = [
            "sh",
            "-c",
            "setsid sh -c 'echo >\"$0\"; exec sleep 5' \"$0\" & exec sleep 30",
        ]
        .into_iter()
        .map(str::to_owned)
        .chain([fifo.display().to_string()])
        .collect();
        let escaped = async move {
            escaped.read_exact(&mut [0; 1]).await.unwrap();
        };
        let started = std::time::Instant::now();
        let grace = Duration::from_millis(200);
        let bounds = OutputBounds::default();
        let error = run_with_grace(&argv, None, Duration::from_secs(20), bounds, escaped, grace)
            .await
            .unwrap_err();
        assert_eq!(
            error,
            CommandError::Uncollected {
                program: "sh".into(),
                grace
            }
        );
        assert!(
            error.to_string().contains("could not be collected"),
            "{error}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "waited for the daemon"
        );
    }
}
