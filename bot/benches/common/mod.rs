//! What the benchmarks read of the bot process they measure.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, anyhow};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};

use crate::support::deployed;

/// A `kB` field of /proc/<pid>/status (`VmRSS:`, `VmHWM:`, `RssAnon:`).
pub fn proc_status_kib(pid: u32, field: &str) -> anyhow::Result<u64> {
    let path = Path::new("/proc").join(pid.to_string()).join("status");
    let status = std::fs::read_to_string(&path)?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no {field} in {}", path.display()))
}

pub fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Whether the bot runs as `deploy/opsbot.service` runs it, with the unit's `Environment=`
/// settings (the default), or with only the environment the benchmark was started with
/// (`-- --bare` after the bench's name), to see what those settings change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Environment {
    Deployed(Vec<(String, String)>),
    Bare,
}

impl Environment {
    pub fn from_args() -> anyhow::Result<Self> {
        Ok(if std::env::args().any(|arg| arg == "--bare") {
            Self::Bare
        } else {
            Self::Deployed(deployed::unit_environment()?)
        })
    }

    /// What the bot's environment adds, to print with the figures.
    pub fn describe(&self) -> String {
        match self {
            Self::Bare => "the benchmark's own environment (--bare)".to_owned(),
            Self::Deployed(settings) => {
                let settings: Vec<String> = settings
                    .iter()
                    .map(|(name, value)| format!("{name}={value}"))
                    .collect();
                format!(
                    "deploy/opsbot.service's environment: {}",
                    settings.join(" ")
                )
            }
        }
    }
}

/// `opsbot console --config CONFIG`, the real binary in the given environment, typed into on
/// its stdin; killed when dropped, so that an error on the way out leaves no bot running. Its
/// stdin stays open: the console exits at the end of its input.
pub struct Console {
    pub pid: u32,
    stdin: tokio::process::ChildStdin,
    stdout: Lines<BufReader<tokio::process::ChildStdout>>,
    _child: tokio::process::Child,
}

impl Console {
    pub fn start(config: &Path, environment: &Environment) -> anyhow::Result<Self> {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_opsbot"));
        if let Environment::Deployed(settings) = environment {
            command.envs(settings.iter().cloned());
        }
        let mut child = command
            .args(["console", "--config"])
            .arg(config)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        Ok(Self {
            pid: child.id().context("the bot exited at once")?,
            stdin: child.stdin.take().context("no stdin")?,
            stdout: BufReader::new(child.stdout.take().context("no stdout")?).lines(),
            _child: child,
        })
    }

    /// Types `line` and reads the console's output until a line contains `marker`, for at
    /// most `patience`.
    pub async fn until(
        &mut self,
        line: &str,
        marker: &str,
        patience: Duration,
    ) -> anyhow::Result<()> {
        self.stdin.write_all(format!("{line}\n").as_bytes()).await?;
        self.stdin.flush().await?;
        tokio::time::timeout(patience, async {
            while let Some(shown) = self.stdout.next_line().await? {
                if shown.contains(marker) {
                    return Ok(());
                }
            }
            Err(anyhow!("the console's output ended before `{marker}`"))
        })
        .await
        .with_context(|| format!("`{line}`: no `{marker}` within {patience:?}"))?
    }
}
