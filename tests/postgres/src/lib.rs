//! A throwaway PostgreSQL server: `initdb` on a temporary directory, `postgres` on a free
//! loopback port with trust authentication for the user `opsbot`, stopped and removed when the
//! [`Server`] is dropped, or, for the one [`shared`] server a test process keeps in a static,
//! when the process ends in any way (even `SIGKILL`), by a watchdog that holds a pipe from it.
//!
//! It runs the machine's own binaries (`OPSBOT_PG_BIN`, else `postgres` on `PATH`, else the
//! newest `/usr/lib/postgresql/*/bin`). PostgreSQL refuses to run as root, so under root the
//! server runs as the `postgres` account that Debian's packages create.

mod binaries;
mod watchdog;

use std::fs;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use nix::sys::signal::{self, Signal};
use nix::unistd::{Gid, Pid, Uid, User};

use crate::binaries::Binaries;
use crate::watchdog::Watchdog;

/// How long a server may take to accept connections after it was started.
const READY_WITHIN: Duration = Duration::from_secs(60);

/// The role every server is initialised with (trust authentication, so no password).
pub const USER: &str = "opsbot";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "no PostgreSQL server binaries found: set OPSBOT_PG_BIN to the directory of `postgres` and `initdb` (Debian: apt install postgresql)"
    )]
    NoBinaries,
    #[error("PostgreSQL refuses to run as root, and there is no `postgres` account to run it as")]
    NoAccount,
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{what} failed; its output:\n{output}")]
    Failed { what: String, output: String },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
    let what = what.into();
    move |source| Error::Io { what, source }
}

/// A PostgreSQL server of its own, on `127.0.0.1:port`.
#[derive(Debug)]
pub struct Server {
    binaries: Binaries,
    /// Holds the data directory and the socket; removed on drop.
    dir: tempfile::TempDir,
    port: u16,
    account: Option<(Uid, Gid)>,
    child: Option<Child>,
    watchdog: Watchdog,
}

impl Server {
    /// Initialises a cluster in a new temporary directory and starts it.
    pub fn start() -> Result<Server, Error> {
        let binaries = Binaries::find()?;
        let account = account()?;
        let dir = tempfile::Builder::new()
            .prefix("opsbot-pg.")
            .tempdir()
            .map_err(io("cannot create a directory for PostgreSQL"))?;
        if let Some((uid, gid)) = account {
            std::os::unix::fs::chown(dir.path(), Some(uid.as_raw()), Some(gid.as_raw()))
                .map_err(io("cannot hand the directory to the postgres account"))?;
        }
        let mut initdb = Command::new(binaries.initdb());
        initdb.arg("-D").arg(data(dir.path())).args([
            "--auth=trust",
            "--encoding=UTF8",
            "--no-sync",
            "-U",
            USER,
        ]);
        run_as(&mut initdb, account);
        let output = initdb.output().map_err(io("cannot run initdb"))?;
        if !output.status.success() {
            return Err(Error::Failed {
                what: "initdb".to_owned(),
                output: String::from_utf8_lossy(&output.stderr).into_owned(),
            });
        }
        let watchdog = Watchdog::spawn(dir.path())?;
        let mut server = Server {
            binaries,
            dir,
            port: 0,
            account,
            child: None,
            watchdog,
        };
        server.start_again()?;
        Ok(server)
    }

    /// `postgres://opsbot@127.0.0.1:<port>/<database>`; the database `postgres` exists.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{database}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether the server process is running.
    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
    }

    /// Stops the server with a fast shutdown (clients are disconnected, what was committed
    /// stays) and waits until it has exited.
    pub fn stop(&mut self) -> Result<(), Error> {
        self.signal_and_wait(Signal::SIGINT)
    }

    /// Kills the server at once (`SIGQUIT`: no checkpoint, recovery at the next start), as a
    /// crashed database host would leave it.
    pub fn crash(&mut self) -> Result<(), Error> {
        self.signal_and_wait(Signal::SIGQUIT)
    }

    /// Starts the server again on its data directory (and, after the first start, its port),
    /// and waits until it accepts connections.
    pub fn start_again(&mut self) -> Result<(), Error> {
        if self.is_running() {
            return Ok(());
        }
        if self.port == 0 {
            self.port = free_port()?;
        }
        let log = fs::File::create(self.log_path()).map_err(io("cannot create postgres.log"))?;
        let mut postgres = Command::new(self.binaries.postgres());
        postgres
            .arg("-D")
            .arg(data(self.dir.path()))
            .arg("-k")
            .arg(self.dir.path())
            .args(["-p", &self.port.to_string()])
            .args(["-c", "listen_addresses=127.0.0.1"])
            .args(["-c", "max_connections=200"])
            // A throwaway server: what it has written survives any process killed, its own
            // included (the kernel keeps it), so only a power cut could lose it. No test cuts
            // the power; every commit's disk sync would cost every test.
            .args(["-c", "fsync=off", "-c", "full_page_writes=off"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            // Its own process group: a Ctrl-C at the terminal is for the tests, not for it.
            .process_group(0);
        run_as(&mut postgres, self.account);
        let child = postgres.spawn().map_err(io("cannot start postgres"))?;
        self.watchdog.watch(child.id())?;
        self.child = Some(child);
        self.wait_ready()
    }

    fn signal_and_wait(&mut self, signal: Signal) -> Result<(), Error> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        if let Ok(pid) = i32::try_from(child.id()) {
            // Already gone is as good as stopped.
            let _ = signal::kill(Pid::from_raw(pid), signal);
        }
        child.wait().map_err(io("cannot wait for postgres"))?;
        Ok(())
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("postgres.log")
    }

    /// Waits for `postmaster.pid` to say `ready` (its last line, written once the server
    /// accepts connections), or for the server to exit.
    fn wait_ready(&mut self) -> Result<(), Error> {
        let pid_file = data(self.dir.path()).join("postmaster.pid");
        let started = Instant::now();
        loop {
            let ready = fs::read_to_string(&pid_file)
                .is_ok_and(|text| text.lines().last().is_some_and(|l| l.trim() == "ready"));
            if ready {
                return Ok(());
            }
            if !self.is_running() || started.elapsed() > READY_WITHIN {
                let _ = self.signal_and_wait(Signal::SIGQUIT);
                return Err(Error::Failed {
                    what: format!("starting postgres on port {}", self.port),
                    output: fs::read_to_string(self.log_path()).unwrap_or_default(),
                });
            }
            // Nothing to wait on: the server announces readiness only in this file.
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Err(error) = self.signal_and_wait(Signal::SIGQUIT) {
            tracing::warn!(%error, "the throwaway PostgreSQL did not stop");
        }
    }
}

/// One server for the whole test process, started at first use and stopped by its watchdog
/// when the process ends. Each test takes a schema (or a database) of its own on it.
pub fn shared() -> Result<&'static Server, String> {
    static SHARED: OnceLock<Result<Server, String>> = OnceLock::new();
    SHARED
        .get_or_init(|| Server::start().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(Clone::clone)
}

fn data(dir: &Path) -> PathBuf {
    dir.join("data")
}

/// The account to run PostgreSQL as: `None` (ourselves) unless we are root.
fn account() -> Result<Option<(Uid, Gid)>, Error> {
    if !Uid::effective().is_root() {
        return Ok(None);
    }
    match User::from_name("postgres") {
        Ok(Some(user)) => Ok(Some((user.uid, user.gid))),
        _ => Err(Error::NoAccount),
    }
}

fn run_as(command: &mut Command, account: Option<(Uid, Gid)>) {
    if let Some((uid, gid)) = account {
        command.uid(uid.as_raw()).gid(gid.as_raw());
    }
}

/// A port free on loopback now (the server binds it a moment later; a clash shows as a start
/// that fails, with the reason in the log).
fn free_port() -> Result<u16, Error> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(io("cannot find a free port"))?;
    Ok(listener
        .local_addr()
        .map_err(io("cannot find a free port"))?
        .port())
}
