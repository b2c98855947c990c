//! What the real servers the tests start have in common: [`crate::openstack`]'s Keystone and
//! Placement and [`crate::matrix`]'s Synapse. Each kind is started once per test binary by the
//! project's own scripts in `tests/<kind>/`, with venvs cached under `<target>/<kind>/` and the
//! binary's data in `<target>/<kind>/run-<pid>/`, and is stopped by a watchdog script tied to the
//! binary by a pipe. Those steps live here once, so that a fix to one (the target dir a test
//! binary finds, a port clash, a script that hangs) reaches every kind of server; what differs
//! (which scripts, which environment, the retry after a clash) stays with each kind.

use std::future::Future;
use std::io::Write;
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::Context;

/// The longest one start script may take: a cold install fetches ~100 packages from PyPI
/// (Keystone's; Synapse's ~60).
const SCRIPT_PATIENCE: Duration = Duration::from_secs(20 * 60);
/// How many lines of a failed script's stderr a panic quotes.
const STDERR_TAIL: usize = 40;

/// The server(s) in `cell`, started by `start` on the first call; every later call (from any
/// test, on any runtime) gets the same ones. `name` is what the panics call them.
///
/// Async, because tests are `#[tokio::test]` and a start takes seconds (minutes on a cold
/// install): tests that ask meanwhile wait without holding their runtime's thread. The start
/// runs on a thread (and runtime) of its own, so a test that gives up waiting (a timeout, a
/// runtime shut down) cannot cancel it half-way and leave a second start to race the first.
/// A start that failed is not retried: every test that asks panics with the same reason.
pub(crate) async fn started_once<T, F>(
    cell: &'static OnceLock<Result<T, String>>,
    name: &str,
    start: fn() -> F,
) -> &'static T
where
    T: Send + Sync + 'static,
    F: Future<Output = anyhow::Result<T>> + 'static,
{
    let started = match cell.get() {
        Some(started) => started,
        None => {
            let (tell, started) = tokio::sync::oneshot::channel();
            std::thread::spawn(move || {
                let _ = tell.send(cell.get_or_init(|| on_own_runtime(start)));
            });
            match started.await {
                Ok(started) => started,
                Err(_) => panic!("the real {name}'s start-up thread died"),
            }
        }
    };
    match started {
        Ok(started) => started,
        Err(error) => panic!("the real {name} did not start: {error}"),
    }
}

fn on_own_runtime<T, F: Future<Output = anyhow::Result<T>>>(start: fn() -> F) -> Result<T, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|runtime| runtime.block_on(start()))
        .map_err(|e| format!("{e:#}"))
}

/// The helpers' HTTP client for the servers. Shared by tests on different runtimes, so it keeps
/// no idle connections: a pooled connection belongs to the runtime that opened it and dies with
/// that test.
pub(crate) fn shared_client() -> anyhow::Result<reqwest::Client> {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(60))
        .build()
        .context("HTTP client")
}

/// One kind of server's places and its watchdog, ready for the start scripts.
#[derive(Debug)]
pub(crate) struct RunDir {
    /// `<target>/<kind>`: the venvs and `watchdog.log`, kept between runs.
    pub(crate) base: PathBuf,
    /// `<base>/run-<pid>`: this test binary's data, removed by the watchdog when it ends.
    pub(crate) path: PathBuf,
    /// `tests/<kind>`: the scripts.
    pub(crate) scripts: PathBuf,
    pub(crate) watchdog: Watchdog,
}

impl RunDir {
    /// Clears a run dir left by an earlier process with our pid (stopping what `stop_script`
    /// finds in its subdirs), creates it afresh and starts the watchdog on it, which runs
    /// `stop_script` `grace` seconds after it stopped any start script still running.
    pub(crate) fn prepare(
        kind: &'static str,
        stop_script: &str,
        grace: u32,
    ) -> anyhow::Result<Self> {
        let target = target_dir()?;
        let base = target.join(kind);
        let path = base.join(format!("run-{}", std::process::id()));
        let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join(kind);
        if path.exists() {
            // left by an earlier process with our pid whose watchdog could not finish
            let _ = std::process::Command::new(scripts.join(stop_script))
                .args(subdirs(&path))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            std::fs::remove_dir_all(&path)
                .with_context(|| format!("cannot clear {}", path.display()))?;
        }
        std::fs::create_dir_all(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        let stop = scripts.join(stop_script);
        let watchdog = Watchdog::spawn(kind, &stop, grace, &base, &path)?;
        Ok(Self {
            base,
            path,
            scripts,
            watchdog,
        })
    }
}

/// The cargo target dir: `CARGO_TARGET_DIR` if set (and absolute), else the one this test
/// binary was built into: `<target>/[<triple>/]<profile>/deps/<binary>`, the nearest ancestor
/// holding the `CACHEDIR.TAG` cargo writes.
fn target_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from) {
        if dir.is_absolute() {
            return Ok(dir);
        }
    }
    let exe = std::env::current_exe().context("cannot find the test binary")?;
    if let Some(dir) = exe
        .ancestors()
        .skip(1)
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
    {
        return Ok(dir.to_owned());
    }
    exe.ancestors()
        .nth(3)
        .map(Path::to_owned)
        .with_context(|| format!("no target dir above {}", exe.display()))
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default()
}

/// `N` distinct free loopback ports, as the kernel picks them (all bound at once, so no two
/// are the same). Each is free only until someone else takes it, hence the one retry on a
/// clash.
pub(crate) fn free_ports<const N: usize>() -> anyhow::Result<[u16; N]> {
    let mut listeners = Vec::with_capacity(N);
    let mut ports = [0; N];
    for port in &mut ports {
        let listener =
            TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("no free loopback port")?;
        *port = listener.local_addr().context("bound port")?.port();
        listeners.push(listener);
    }
    Ok(ports)
}

/// The watch script, in a session of its own (a Ctrl-C at the terminal is for the tests, not
/// for it), reading from a pipe this process holds until it ends. The kernel closes that pipe
/// when the test process ends, however it ends (even `SIGKILL`), and the watchdog then stops
/// the servers and removes the run dir: better than polling the pid (nothing to reuse, no
/// delay, no lost signal).
#[derive(Debug)]
pub(crate) struct Watchdog {
    /// Held by the servers' static, never written to after start-up, never closed.
    pub(crate) stdin: ChildStdin,
    kind: &'static str,
}

impl Watchdog {
    fn spawn(
        kind: &'static str,
        stop: &Path,
        grace: u32,
        base: &Path,
        run_dir: &Path,
    ) -> anyhow::Result<Self> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("watch-servers.sh");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(base.join("watchdog.log"))
            .context("watchdog log")?;
        let mut child = std::process::Command::new("setsid")
            .arg(&script)
            .arg(run_dir)
            .arg(stop)
            .arg(grace.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| {
                format!(
                    "cannot start the watchdog ({} under setsid)",
                    script.display()
                )
            })?;
        let stdin = child.stdin.take().context("watchdog without stdin")?;
        // Never waited for: it outlives us by design, and init reaps it.
        drop(child);
        Ok(Self { stdin, kind })
    }

    /// Tells the watchdog about a start script's process group (`script`/`done`). A watchdog
    /// that cannot be told is gone, and the servers would outlive us: that fails the start.
    fn tell(&mut self, what: &str, pgid: u32) -> anyhow::Result<()> {
        writeln!(self.stdin, "{what} {pgid}")
            .and_then(|()| self.stdin.flush())
            .with_context(|| {
                format!(
                    "the watchdog is gone (see <target>/{}/watchdog.log)",
                    self.kind
                )
            })
    }
}

/// A start script's call: `PATH PORT DATA_DIR`, with `env`.
#[derive(Debug)]
pub(crate) struct Script {
    pub(crate) path: PathBuf,
    pub(crate) port: u16,
    pub(crate) data_dir: PathBuf,
    pub(crate) env: Vec<(&'static str, String)>,
}

/// A start script that failed; `port_in_use` if only because its port was taken.
#[derive(Debug)]
pub(crate) struct ScriptFailure {
    pub(crate) error: anyhow::Error,
    pub(crate) port_in_use: bool,
}

impl From<anyhow::Error> for ScriptFailure {
    fn from(error: anyhow::Error) -> Self {
        Self {
            error,
            port_in_use: false,
        }
    }
}

impl Script {
    /// Runs the script in a process group of its own (which the watchdog stops if we die
    /// meanwhile); its stdout is the server's pid, its stderr is quoted if it fails.
    pub(crate) async fn run(&self, watchdog: &mut Watchdog) -> Result<(), ScriptFailure> {
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let child = tokio::process::Command::new(&self.path)
            .arg(self.port.to_string())
            .arg(&self.data_dir)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot run {} (is bash there?)", self.path.display()))?;
        let pgid = child.id().unwrap_or_default();
        watchdog.tell("script", pgid)?;
        let output = tokio::time::timeout(SCRIPT_PATIENCE, child.wait_with_output()).await;
        watchdog.tell("done", pgid)?;
        let output = output
            .map_err(|_| anyhow::anyhow!("{name} did not finish within {SCRIPT_PATIENCE:?}"))?
            .with_context(|| format!("{name} could not be waited for"))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if output.status.success() && stdout.trim().parse::<u32>().is_ok() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        let tail = lines[lines.len().saturating_sub(STDERR_TAIL)..].join("\n");
        Err(ScriptFailure {
            // the script's own check, or gunicorn's bind failure in the log tail it quotes
            port_in_use: tail.contains("already in use") || tail.contains("Connection in use"),
            error: anyhow::anyhow!(
                "{name} {} {} failed ({}; stdout {:?}); its stderr ends:\n{tail}",
                self.port,
                self.data_dir.display(),
                output.status,
                stdout.trim(),
            ),
        })
    }
}
