//! What the tests of the real binary share: a simulated cluster, a config file pointing at it
//! (or at a simulated cloud), and `opsbot console` children fed from stdin.

#![allow(clippy::unwrap_used)] // Scaffolding: a set-up that fails must stop the test loudly.

pub mod deployed;
pub mod ha;
pub mod worlds;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use std::sync::Arc;

use opsbot_cloud_sim::CloudSimHandle;
use opsbot_commands::name::RunId;
use opsbot_commands::run::{Outcome, RunState};
use opsbot_fake_discord::{FakeConfig, FakeDiscord, FakeMessage};
use opsbot_fake_slack::{FakeSlack, Visibility};
use opsbot_host_sim::TestHosts;
use opsbot_search_sim::{SimConfig, SimHandle};

pub const PATIENCE: Duration = Duration::from_secs(60);

/// The runbook tests' inventory.
pub const COMPUTE: [&str; 2] = ["compute-01", "compute-02"];
pub const CONTROL: [&str; 1] = ["ctl-01"];

/// The runbooks the project ships.
pub fn shipped_runbooks() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/runbooks")
}

/// A simulated cluster and a config file for it, in a temporary directory.
pub struct Scene {
    pub sim: SimHandle,
    pub config: PathBuf,
    pub dir: tempfile::TempDir,
}

/// Starts `sim` and writes a config with `node_control` (TOML lines of its table) and a fast
/// poll, with alice (operator) and bob (operator and approver) at the console.
pub async fn scene(sim: SimConfig, node_control: &str) -> Scene {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let sim = opsbot_search_sim::spawn(sim, listener).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        &sim.base_url(),
        node_control,
        Duration::from_millis(50),
    );
    Scene { sim, config, dir }
}

/// A [`scene`] for a prune waiting for approval: 40 days of daily indices (about ten past the
/// default retention) and the simulator's node control. The chat front ends' binary tests
/// (a SIGKILL, a takeover) start from it.
pub async fn prune_scene() -> Scene {
    scene(
        SimConfig {
            days_of_indices: 40,
            ..SimConfig::default()
        },
        r#"kind = "sim""#,
    )
    .await
}

/// Writes `opsbot.toml` in `dir`: a store beside it, `body` (clusters, clouds, runbooks, ...),
/// and the people: alice (operator), whose console account is the one running the tests, and
/// bob (operator and approver), who approves from Discord (see [`approve`]); returns its path.
pub fn config_file(dir: &Path, body: &str) -> PathBuf {
    let config = dir.join("opsbot.toml");
    let me = opsbot::chat::console::running_account().unwrap();
    let text = format!(
        "[store]\npath = \"{}\"\n{body}\n{PEOPLE}accounts = [\"{me}\"]\n",
        dir.join("store").display()
    );
    std::fs::write(&config, text).unwrap();
    config
}

/// bob, then alice without her accounts (which [`config_file`] adds).
const PEOPLE: &str = "[[people]]\nname = \"bob\"\nroles = [\"operator\", \"approver\"]\n\
                      discord_user = 2\nslack_user = \"U0BOB\"\n\n[[people]]\nname = \"alice\"\n\
                      roles = [\"operator\"]\ndiscord_user = 1\nslack_user = \"U0ALICE\"\n";

/// bob approves `run`'s current plan as the bot records an approval from Discord, on the store
/// of `config` while no bot holds it (the consoles of these tests are alice's account). Nothing
/// happens when the run is already decided or missing: a restarted console may have got there.
pub async fn approve(config: &Path, run: RunId) {
    let config = opsbot::config::Config::load(config).unwrap();
    let path = config.store.sled_path().unwrap().to_owned();
    let opened = path.clone();
    let store = tokio::task::spawn_blocking(move || open_store(&opened))
        .await
        .unwrap();
    let engine = opsbot::engine::Engine::new(&config, store, Arc::new(Silent)).unwrap();
    if let Ok(stored) = engine.run(run) {
        let bob = config.people().unwrap().on_discord(2, &[]).unwrap();
        match engine.approve(&bob, run, stored.digest.as_str()).await {
            Ok(_) => {}
            Err(opsbot::refusal::EngineError::Refused(opsbot::refusal::Refusal::Approval(
                opsbot_commands::approval::ApprovalRefusal::Decided { .. },
            ))) => {}
            Err(error) => panic!("bob could not approve {run}: {error}"),
        }
    }
    drop(engine);
    released(&path);
}

/// Returns once nothing holds the sled store at `path` locked: a store dropped in this process
/// lets go of its lock only when sled's own threads have let go of the file, a moment later on
/// a loaded machine, and a bot started meanwhile would find the store in use.
pub fn released(path: &Path) {
    use nix::fcntl::{Flock, FlockArg};
    let deadline = Instant::now() + PATIENCE;
    loop {
        // sled locks its `db` file with flock(2), as this does.
        let file = std::fs::File::open(path.join("db")).unwrap();
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(_unlocked_on_drop) => return,
            Err((_, errno)) => {
                assert!(
                    Instant::now() < deadline,
                    "{}: still locked: {errno}",
                    path.display()
                );
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// The store at `path`, once the process that held it has let go of its lock.
pub fn open_store(path: &Path) -> opsbot_state::Store {
    let deadline = Instant::now() + PATIENCE;
    loop {
        match opsbot_state::Store::open(path) {
            Err(opsbot_state::StoreError::InUse { .. }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other.unwrap(),
        }
    }
}

/// Progress nobody watches, for an engine used only to record a decision.
pub struct Silent;

impl opsbot::metrics::Backlog for Silent {}

impl opsbot::progress::ProgressSink for Silent {
    fn changed(&self, _: &opsbot_commands::run::Run) {}
    fn observe(&self, _: &opsbot_commands::run::Run, _: opsbot_commands::cluster::Observation) {}
    fn observed(
        &self,
        _: &opsbot_commands::run::Run,
    ) -> Option<opsbot_commands::cluster::Observation> {
        None
    }
    fn announce(
        &self,
        _: opsbot_commands::maintenance::Announcement,
        _: opsbot_commands::run::ChannelId,
    ) {
    }
}

/// Writes `opsbot.toml` in `dir` for the 5-node simulated cluster at `url`; returns its path.
pub fn write_config(dir: &Path, url: &str, node_control: &str, poll: Duration) -> PathBuf {
    config_file(dir, &worlds::cluster_toml(url, node_control, poll))
}

/// `opsbot ARGS`, reading `input`; stdin is closed after it, so a console exits once its runs
/// are done (or parked on a person).
pub fn spawn(args: &[&str], input: impl AsRef<[u8]>) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_opsbot"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_ref()).unwrap();
    drop(stdin);
    child
}

/// `opsbot console --config CONFIG` reading `input`.
pub fn console(config: &Path, input: &str) -> Child {
    let config = config.display().to_string();
    spawn(&["console", "--config", &config], input)
}

/// `opsbot console --config CONFIG` reading `input`, with its stdin left open (until the child
/// is waited for or dropped): it never reaches the end of its input, so it keeps running its
/// runs until it is killed, however they are parked and woken.
pub fn console_held(config: &Path, input: &str) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_opsbot"))
        .args(["console", "--config", &config.display().to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.as_mut().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    stdin.flush().unwrap();
    child
}

/// `opsbot run --config CONFIG`, once its console socket exists (it listens from then on; a
/// connection made to find out would be a connection of its own, and audited).
pub async fn serve(config: &Path, socket: &Path) -> Child {
    serve_with(config, socket, &[]).await
}

/// [`serve`] with more arguments, e.g. `--now`.
pub async fn serve_with(config: &Path, socket: &Path, more: &[&str]) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_opsbot"))
        .args(["run", "--config", &config.display().to_string()])
        .args(more)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + PATIENCE;
    while !socket.exists() {
        if let Ok(Some(status)) = child.try_wait() {
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            panic!("opsbot run ended ({status}): {stderr}");
        }
        assert!(Instant::now() < deadline, "the console socket never opened");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child
}

/// The last line a [`console_session`] types: its answer says every line before it was
/// answered.
const SESSION_END: &str = "/help topic:zzz";

/// Types `input` on the console socket of `opsbot run`, then [`SESSION_END`]; every line the
/// console said until it answered that one (the greeting first).
pub async fn console_session(socket: &Path, input: &str) -> Vec<String> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let stream = tokio::net::UnixStream::connect(socket).await.unwrap();
    let (read, mut write) = stream.into_split();
    write
        .write_all(format!("{input}{SESSION_END}\n").as_bytes())
        .await
        .unwrap();
    let mut read = BufReader::new(read).lines();
    let mut said = Vec::new();
    loop {
        let line = tokio::time::timeout(PATIENCE, read.next_line())
            .await
            .unwrap_or_else(|_| panic!("the console went quiet after:\n{said:#?}"))
            .unwrap()
            .unwrap_or_else(|| panic!("the console closed after:\n{said:#?}"));
        if line.contains("no commands about `zzz`") {
            return said;
        }
        said.push(line);
    }
}

/// Appends to `config` the console socket at `socket` and the schedule `nightly-prune`: at 03:00
/// UTC, prune the `flog-` indices older than 30 days, reporting to the console, with bounds of
/// at most `max_indices` indices, none younger than 30 days, only `flog-`.
pub fn add_nightly_prune(config: &Path, socket: &Path, max_indices: u32) {
    let mut text = std::fs::read_to_string(config).unwrap();
    text.push_str(&format!(
        r#"
[console]
socket = "{}"

[[schedules]]
name = "nightly-prune"
cron = "0 3 * * *"
command = "/indices prune cluster:logs older_than_days:30 prefix:flog-"
channel = "console"

[schedules.bounds]
max_indices = {max_indices}
min_age_days = 30
prefix = "flog-"
"#,
        socket.display()
    ));
    std::fs::write(config, text).unwrap();
}

/// Types `input` on the console socket of `opsbot run` again and again until what the console
/// said contains `wanted`; all it said then.
pub async fn console_until(socket: &Path, input: &str, wanted: &str) -> String {
    console_until_with(socket, input, wanted, |said| said.contains(wanted)).await
}

/// [`console_until`] what the console said meets `done` (`what` names it).
pub async fn console_until_with(
    socket: &Path,
    input: &str,
    what: &str,
    done: impl Fn(&str) -> bool,
) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let said = console_session(socket, input).await.join("\n");
        if done(&said) {
            return said;
        }
        assert!(
            Instant::now() < deadline,
            "the console never said {what}; it last said:\n{said}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// SIGTERM, as systemd stops the bot, and its end.
pub fn stop(mut child: Child) {
    terminate(&child);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// Sends SIGTERM, as systemd does to stop the bot.
fn terminate(child: &Child) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
}

/// The channel the Discord tests serve in.
pub const DISCORD_CHANNEL: u64 = 900_000_000_000_000_001;
/// The guild roles of an operator and of an approver in the Discord tests.
pub const OPERATOR_ROLE: u64 = 800_000_000_000_000_001;
pub const APPROVER_ROLE: u64 = 800_000_000_000_000_002;

/// A progress message's text: the description of its one embed.
pub fn embed(message: &FakeMessage) -> String {
    message.embeds[0]["description"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Starts a fake Discord with [`DISCORD_CHANNEL`] and points the scene's config at it: its
/// token and CA written beside the config, a `[discord]` section appended.
pub async fn with_fake_discord(scene: &Scene) -> FakeDiscord {
    let fake = FakeDiscord::start(FakeConfig {
        channels: vec![DISCORD_CHANNEL],
        ..FakeConfig::default()
    })
    .await;
    let dir = scene.dir.path();
    std::fs::write(dir.join("token"), &fake.config().token).unwrap();
    std::fs::write(dir.join("ca.pem"), fake.ca_pem()).unwrap();
    let mut config = std::fs::read_to_string(&scene.config).unwrap();
    config.push_str(&format!(
        r#"
[discord]
token_file = "{token}"
guild = {guild}
channels = [{DISCORD_CHANNEL}]
api_address = "{address}"
ca_file = "{ca}"
"#,
        token = dir.join("token").display(),
        guild = fake.config().guild_id,
        address = fake.rest_addr(),
        ca = dir.join("ca.pem").display(),
    ));
    std::fs::write(&scene.config, config).unwrap();
    fake
}

/// A fake Slack with a channel `#ops` where the bot, alice and bob are, its minute
/// [`opsbot_tests::slack::MINUTE`], and `[slack]` for it added to the scene's config; the
/// channel's id.
pub async fn with_fake_slack(scene: &Scene) -> (FakeSlack, String) {
    let fake = FakeSlack::start(opsbot_tests::slack::fake_config()).await;
    let channel = fake.add_channel("ops", Visibility::Public, true);
    for user in ["U0ALICE", "U0BOB"] {
        fake.add_member(&channel, user);
    }
    let dir = scene.dir.path();
    std::fs::write(dir.join("slack-bot"), &fake.config().bot_token).unwrap();
    std::fs::write(dir.join("slack-app"), &fake.config().app_token).unwrap();
    let mut config = std::fs::read_to_string(&scene.config).unwrap();
    config.push_str(&format!(
        r#"
[slack]
bot_token_file = "{bot}"
app_token_file = "{app}"
team = "{team}"
channels = ["{channel}"]
api_url = "{api}"
minute = "{minute}s"
"#,
        bot = dir.join("slack-bot").display(),
        app = dir.join("slack-app").display(),
        team = fake.config().team_id,
        api = fake.base_url(),
        minute = opsbot_tests::slack::MINUTE.as_secs(),
    ));
    std::fs::write(&scene.config, config).unwrap();
    (fake, channel)
}

/// `opsbot run`, SIGKILLed (and reaped) when dropped, so a failing or timed-out test leaves
/// no bot behind.
pub struct Bot(Child);

impl Bot {
    /// `opsbot run --config CONFIG`, its warnings and errors on a pipe that
    /// [`Bot::terminated`] reads.
    pub fn run(config: &Path) -> Self {
        Self::run_with(config, &[])
    }

    /// [`Bot::run`] with more arguments, e.g. `--now`.
    pub fn run_with(config: &Path, more: &[&str]) -> Self {
        let child = Command::new(env!("CARGO_BIN_EXE_opsbot"))
            .args(["run", "--config", &config.display().to_string()])
            .args(more)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Self(child)
    }

    /// SIGTERMs the bot and, once it has exited (its log pipe closed), how and what it
    /// logged; `None` if it is still running after `within` (it is killed when dropped).
    pub async fn terminated(&mut self, within: Duration) -> Option<(ExitStatus, String)> {
        use tokio::io::AsyncReadExt;
        let stderr = self.0.stderr.take().unwrap();
        let mut stderr = tokio::process::ChildStderr::from_std(stderr).unwrap();
        terminate(&self.0);
        let mut log = String::new();
        tokio::time::timeout(within, stderr.read_to_string(&mut log))
            .await
            .ok()?
            .unwrap();
        Some((self.0.wait().unwrap(), log))
    }
}

impl Bot {
    /// Whether the bot has exited (by itself: a bot that should run until killed failed).
    pub fn has_ended(&mut self) -> bool {
        matches!(self.0.try_wait(), Ok(Some(_)))
    }

    /// SIGKILLs the bot (it may have ended already) and reaps it.
    pub fn kill(mut self) {
        let _ = self.0.kill();
        self.0.wait().unwrap();
    }
}

impl From<Child> for Bot {
    fn from(child: Child) -> Self {
        Self(child)
    }
}

impl Drop for Bot {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits for a child off the async runtime that serves the simulator.
pub async fn output(child: Child) -> Output {
    tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap()
}

pub async fn until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// xorshift64*: enough randomness to spread kill points, and replayable from the seed.
pub struct Dice(u64);

/// Declares `$test` as a module of tests `part_1`, `part_2`, … that run side by side, each
/// awaiting `$torture(n)` for its part `n` of a torture's kills: so that a torture of many
/// SIGKILLs keeps its count while no single test runs long.
#[macro_export]
macro_rules! in_parts {
    ($test:ident => $torture:ident: $($part:ident = $n:literal),+ $(,)?) => {
        mod $test {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $part() {
                    super::$torture($n).await;
                }
            )+
        }
    };
}

impl Dice {
    /// Seeded from `OPSBOT_CRASH_SEED`, or from the clock; prints the seed so that a failure
    /// can be replayed.
    pub fn from_env() -> Self {
        Self::for_part(0)
    }

    /// The dice of part `part` of a torture split by [`crate::in_parts!`]: the seed of
    /// `OPSBOT_CRASH_SEED` (or the clock's) plus the part, so that each part draws its own
    /// points and one seed replays them all.
    pub fn for_part(part: u64) -> Self {
        let base = std::env::var("OPSBOT_CRASH_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64 | 1)
            });
        println!("crash seed {base}, part {part} (replay with OPSBOT_CRASH_SEED={base})");
        Self(base.wrapping_add(part) | 1)
    }

    pub fn seed(&self) -> u64 {
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

/// Asks for `request` as alice, has bob approve run r-1, and starts a console that SIGKILLs
/// `delay` after the cluster has received `point` requests (or once it has ended).
pub async fn kill_during(scene: &Scene, request: &str, point: u64, delay: Duration, what: &str) {
    let reached = || scene.sim.calls().len() as u64 >= point;
    kill_when(&scene.config, request, reached, delay, what).await;
}

/// Asks for `request` as alice at a console, has bob approve run r-1, and starts a console
/// with `config` that resumes it; SIGKILLs that one `delay` after `reached` holds (or once it
/// has ended).
pub async fn kill_when(
    config: &Path,
    request: &str,
    reached: impl Fn() -> bool,
    delay: Duration,
    what: &str,
) {
    ask_and_approve(config, request, what).await;
    // It resumes the run at its start and exits once the run is done, if not killed before.
    let mut resuming = console(config, "");
    until(what, || {
        reached() || matches!(resuming.try_wait(), Ok(Some(_)))
    })
    .await;
    tokio::time::sleep(delay).await;
    let _ = resuming.kill(); // SIGKILL; it may have finished already
    resuming.wait().unwrap();
}

/// alice asks for `request` at a console, which exits with run r-1 waiting; bob approves it.
async fn ask_and_approve(config: &Path, request: &str, what: &str) {
    let asked = output(console(config, &format!("{request}\n"))).await;
    let stdout = String::from_utf8_lossy(&asked.stdout);
    assert!(
        asked.status.success() && stdout.contains("r-1 waits for approval"),
        "{what}: {stdout}{}",
        String::from_utf8_lossy(&asked.stderr)
    );
    approve(config, RunId::new(1)).await;
}

/// Starts the console again, reading `input`, until run r-1 has succeeded, as the store says
/// between consoles; fails at once if it has ended otherwise.
pub async fn complete(config: &Path, input: &str, what: &str) {
    let path = opsbot::config::Config::load(config)
        .unwrap()
        .store
        .sled_path()
        .unwrap()
        .to_owned();
    for _ in 0..4 {
        let out = output(console(config, input)).await;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{what}: {}\n{stdout}\n{stderr}",
            out.status
        );
        let store = open_store(&path);
        let state = store.run(RunId::new(1)).unwrap().map(|run| run.state);
        drop(store);
        released(&path);
        match state {
            Some(RunState::Finished {
                outcome: Outcome::Succeeded,
                ..
            }) => return,
            Some(RunState::Running) => {}
            other => panic!("{what}: {other:?}\n{stdout}"),
        }
    }
    panic!("{what}: the run never completed");
}

/// Writes `opsbot.toml` in `dir` for the simulated cloud `prod` (admin's password in a file
/// beside it, `nova-compute` restarted through the simulator), with `engine` (more TOML lines
/// of the `[engine]` table, and tables under it) after a 5 s request timeout; returns its path.
pub fn cloud_config(dir: &Path, cloud: &CloudSimHandle, engine: &str) -> PathBuf {
    let password = dir.join("prod-password");
    std::fs::write(&password, "adminpass\n").unwrap();
    config_file(
        dir,
        &format!(
            r#"
[engine]
request_timeout = "5s"
{engine}

[[clouds]]
name = "prod"
auth_url = "{auth}"
username = "admin"
project = "admin"
password_file = "{password}"

[clouds.compute_control]
kind = "sim"
"#,
            auth = cloud.identity_url(),
            password = password.display(),
        ),
    )
}

/// Writes `opsbot.toml` in `dir`: the runbooks of `runbooks` run on the test hosts through their
/// launcher, with alice (operator) and bob (operator and approver) at the console.
pub fn runbook_config(dir: &Path, hosts: &TestHosts, runbooks: &Path) -> PathBuf {
    let quoted = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    config_file(
        dir,
        &format!(
            r#"
[runbooks]
dir = "{runbooks}"

[runbooks.inventory]
compute = [{compute}]
control = [{control}]

[runbooks.access]
kind = "command"
prefix = ["{launcher}", "{{host}}"]

# Progress edits unthrottled: a console exits only once the run's last state is shown.
[progress]
edits_per_window = 100
window = "1s"

"#,
            runbooks = runbooks.display(),
            compute = quoted(&COMPUTE),
            control = quoted(&CONTROL),
            launcher = hosts.launcher().display(),
        ),
    )
}

/// An address that refuses connections for as long as the returned socket lives: bound, never
/// listening. A listener bound and dropped instead frees its port for a test beside this one,
/// whose server would then answer (and hang up) where a refusal was expected.
pub fn refusing_address() -> (tokio::net::TcpSocket, std::net::SocketAddr) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(([127, 0, 0, 1], 0).into()).unwrap();
    let address = socket.local_addr().unwrap();
    (socket, address)
}

/// The real binary at a terminal (a pseudo-terminal): keys typed as a person types them, and
/// the screen read as text, escape sequences left out.
pub struct Terminal {
    child: Child,
    keys: std::fs::File,
    screen: Arc<std::sync::Mutex<Vec<u8>>>,
}

impl Terminal {
    /// Starts `command` with the terminal as its stdin, stdout and stderr.
    pub fn spawn(command: &mut Command) -> Self {
        use std::io::Read;

        let pty = nix::pty::openpty(None, None).unwrap();
        let child = command
            .stdin(Stdio::from(pty.slave.try_clone().unwrap()))
            .stdout(Stdio::from(pty.slave.try_clone().unwrap()))
            .stderr(Stdio::from(pty.slave.try_clone().unwrap()))
            .spawn()
            .unwrap();
        drop(pty.slave);
        let screen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut reader = std::fs::File::from(pty.master.try_clone().unwrap());
        let filled = Arc::clone(&screen);
        // Reading ends with an error (EIO) once the program has exited and closed it.
        std::thread::spawn(move || {
            let mut buf = [0; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                filled.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Self {
            child,
            keys: std::fs::File::from(pty.master),
            screen,
        }
    }

    /// What the screen shows so far.
    pub fn shown(&self) -> String {
        Self::shown_of(&self.screen.lock().unwrap())
    }

    pub fn type_keys(&mut self, keys: &[u8]) {
        self.keys.write_all(keys).unwrap();
    }

    /// Waits until the prompt is shown again after `answer`: the line editor reads keys (a
    /// Ctrl-D typed before it does reaches a terminal in its cooked mode, which swallows it).
    pub async fn prompted_after(&self, answer: &str, prompt: &str) {
        let what = format!("the prompt after `{answer}`");
        until(&what, || {
            self.shown()
                .rsplit_once(answer)
                .is_some_and(|(_, after)| after.contains(prompt))
        })
        .await;
    }

    /// Waits until the screen satisfies `shows` (`what`, for the failure).
    pub async fn until(&self, what: &str, shows: impl Fn(&str) -> bool) {
        until(what, || shows(&self.shown())).await;
    }

    /// Waits for the program to exit: its status, and the screen it left.
    pub async fn exit(self) -> (ExitStatus, String) {
        let Self { child, screen, .. } = self;
        let out = output(child).await;
        let shown = Self::shown_of(&screen.lock().unwrap());
        (out.status, shown)
    }

    fn shown_of(raw: &[u8]) -> String {
        let text = String::from_utf8_lossy(raw);
        let escapes = regex::Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").unwrap();
        escapes.replace_all(&text, "").replace('\r', "")
    }
}
