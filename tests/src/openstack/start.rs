//! Starting the servers: the target dir, free ports, the scripts, and the watchdog that stops
//! them when the test binary ends.

use super::*;

impl RealCloud {
    pub(super) async fn start() -> anyhow::Result<Self> {
        let target = target_dir()?;
        let base = target.join("openstack");
        let run_dir = base.join(format!("run-{}", std::process::id()));
        let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("openstack");
        if run_dir.exists() {
            // left by an earlier process with our pid whose watchdog could not finish
            let _ = std::process::Command::new(scripts.join("stop-openstack.sh"))
                .args(subdirs(&run_dir))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            std::fs::remove_dir_all(&run_dir)
                .with_context(|| format!("cannot clear {}", run_dir.display()))?;
        }
        std::fs::create_dir_all(&run_dir)
            .with_context(|| format!("cannot create {}", run_dir.display()))?;
        let mut watchdog = Watchdog::spawn(&scripts, &base, &run_dir)?;
        let venvs = [
            ("KEYSTONE_VENV", base.join("venv-keystone")),
            ("PLACEMENT_VENV", base.join("venv-placement")),
        ];
        let script = |name: &str, port: u16, dir: &str, env: Vec<(&'static str, String)>| Script {
            path: scripts.join(name),
            port,
            data_dir: run_dir.join(dir),
            env: venvs
                .iter()
                .map(|(k, v)| (*k, v.display().to_string()))
                .chain(env)
                .collect(),
        };

        // Keystone first: it registers the URL Placement is about to get.
        let began = Instant::now();
        let [keystone_port, mut placement_port] = free_ports()?;
        let keystone_env = |placement_port: u16| {
            vec![(
                "PLACEMENT_URL",
                format!("http://127.0.0.1:{placement_port}"),
            )]
        };
        let mut keystone = script(
            "start-keystone.sh",
            keystone_port,
            "keystone",
            keystone_env(placement_port),
        );
        if let Err(clash) = keystone.run(&mut watchdog).await {
            if !clash.port_in_use {
                return Err(clash.error);
            }
            // someone took the port meanwhile: another one, and a fresh data dir (the
            // bootstrap there registered Keystone's own URL with the port)
            [keystone.port] = free_ports()?;
            keystone = script(
                "start-keystone.sh",
                keystone.port,
                "keystone-retry",
                keystone_env(placement_port),
            );
            keystone.run(&mut watchdog).await.map_err(|f| f.error)?;
        }
        let keystone_start = began.elapsed();
        let keystone_url = format!("http://127.0.0.1:{}", keystone.port);

        let began = Instant::now();
        let placement_env = || {
            vec![
                ("PLACEMENT_AUTH", "keystone".to_owned()),
                ("PLACEMENT_KEYSTONE_URL", keystone_url.clone()),
            ]
        };
        let mut placement = script(
            "start-placement.sh",
            placement_port,
            "placement",
            placement_env(),
        );
        if let Err(clash) = placement.run(&mut watchdog).await {
            if !clash.port_in_use {
                return Err(clash.error);
            }
            // someone took the port meanwhile: another one, registered anew (Keystone is
            // reused as it runs, only its Placement endpoints change)
            [placement_port] = free_ports()?;
            keystone.env = keystone
                .env
                .into_iter()
                .filter(|(k, _)| *k != "PLACEMENT_URL")
                .chain(keystone_env(placement_port))
                .collect();
            keystone.run(&mut watchdog).await.map_err(|f| f.error)?;
            placement = script(
                "start-placement.sh",
                placement_port,
                "placement-retry",
                placement_env(),
            );
            placement.run(&mut watchdog).await.map_err(|f| f.error)?;
        }
        let placement_start = began.elapsed();

        let cloud = Self {
            keystone: keystone_url,
            placement: format!("http://127.0.0.1:{placement_port}"),
            run_dir,
            http: Client::builder()
                .pool_max_idle_per_host(0)
                .timeout(Duration::from_secs(60))
                .build()
                .context("HTTP client")?,
            helper_token: Mutex::new(None),
            keystone_start,
            placement_start,
            _watchdog: Mutex::new(watchdog.stdin),
        };
        eprintln!(
            "real OpenStack: Keystone {} up in {:.1?}, Placement {} in {:.1?} (data: {})",
            cloud.keystone_url(),
            keystone_start,
            cloud.placement,
            placement_start,
            cloud.run_dir.display()
        );
        Ok(cloud)
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
fn free_ports<const N: usize>() -> anyhow::Result<[u16; N]> {
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

/// `watch-openstack.sh`, in a session of its own (a Ctrl-C at the terminal is for the tests,
/// not for it), reading from a pipe this process holds until it ends.
struct Watchdog {
    stdin: ChildStdin,
}

impl Watchdog {
    fn spawn(scripts: &Path, base: &Path, run_dir: &Path) -> anyhow::Result<Self> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(base.join("watchdog.log"))
            .context("watchdog log")?;
        let mut child = std::process::Command::new("setsid")
            .arg(scripts.join("watch-openstack.sh"))
            .arg(run_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .context(
                "cannot start the watchdog (tests/openstack/watch-openstack.sh under setsid)",
            )?;
        let stdin = child.stdin.take().context("watchdog without stdin")?;
        // Never waited for: it outlives us by design, and init reaps it.
        drop(child);
        Ok(Self { stdin })
    }

    /// Tells the watchdog about a start script's process group (`script`/`done`). A watchdog
    /// that cannot be told is gone, and the servers would outlive us: that fails the start.
    fn tell(&mut self, what: &str, pgid: u32) -> anyhow::Result<()> {
        writeln!(self.stdin, "{what} {pgid}")
            .and_then(|()| self.stdin.flush())
            .context("the watchdog is gone (see <target>/openstack/watchdog.log)")
    }
}

impl std::fmt::Debug for Watchdog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watchdog")
    }
}

#[derive(Debug)]
struct Script {
    path: PathBuf,
    port: u16,
    data_dir: PathBuf,
    env: Vec<(&'static str, String)>,
}

/// A start script that failed; `port_in_use` if only because its port was taken.
#[derive(Debug)]
struct ScriptFailure {
    error: anyhow::Error,
    port_in_use: bool,
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
    async fn run(&self, watchdog: &mut Watchdog) -> Result<(), ScriptFailure> {
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
        let stderr = String::from_utf8_lossy(&output.stderr);
        if output.status.success()
            && String::from_utf8_lossy(&output.stdout)
                .trim()
                .parse::<u32>()
                .is_ok()
        {
            return Ok(());
        }
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
                String::from_utf8_lossy(&output.stdout).trim(),
            ),
        })
    }
}
