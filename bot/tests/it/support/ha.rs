//! High availability on PostgreSQL, with the real binary: instances of `opsbot run` sharing one
//! store (a schema of a throwaway PostgreSQL), each with its own console socket and metrics
//! address; `/healthz` says which one is active. bob approves from a second OS account (the
//! `postgres` one, which the throwaway server already needs under root) at the console socket of
//! whichever instance is active, as a person would.

use std::collections::BTreeSet;
use std::fs::File;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use opsbot_commands::name::RunId;
use opsbot_commands::run::{Outcome, Run};
use opsbot_state::Store;

use super::PATIENCE;

/// How soon a standby takes over: the least the config accepts, so that a kill costs ~2 s.
pub const TAKEOVER: &str = "3s";

/// The OS account bob speaks from at the console; alice's is the one running the tests.
pub const BOB_ACCOUNT: &str = "postgres";

/// The throwaway PostgreSQL this test process shares among its tests; a missing PostgreSQL is
/// a failure, never a skip.
pub fn shared_pg() -> &'static opsbot_tmp_postgres::Server {
    match opsbot_tmp_postgres::shared() {
        Ok(server) => server,
        Err(error) => panic!("these tests need PostgreSQL: {error}"),
    }
}

/// A schema no other round or test uses.
pub fn fresh_schema(what: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "t_{what}_{}_{}_{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A loopback address free now, for an instance's `/metrics`, and never handed out before in
/// this test process: a port freed here is free for the next caller too, and two instances
/// of tests running side by side were given one port (the second could not listen, and the
/// first answered its health checks).
pub fn free_addr() -> SocketAddr {
    static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    loop {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        if HANDED_OUT.lock().unwrap().insert(addr.port()) {
            return addr;
        }
    }
}

/// Writes `opsbot-NAME.toml` in `dir`: the PostgreSQL store `url`/`schema` (takeover 3 s), its
/// own console socket and metrics address, `body` (clusters, clouds, engine), and the people:
/// bob (operator and approver) at the console from [`BOB_ACCOUNT`], alice (operator) from the
/// account running the tests. `dir` is opened to the group, so that bob reaches the socket.
pub fn instance_config(
    dir: &Path,
    name: &str,
    url: &str,
    schema: &str,
    body: &str,
) -> (PathBuf, PathBuf, SocketAddr) {
    assert!(
        nix::unistd::Uid::effective().is_root(),
        "bob approves from a second OS account ({BOB_ACCOUNT}), which takes root to become"
    );
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o750)).unwrap();
    let me = opsbot::chat::console::running_account().unwrap();
    let socket = dir.join(format!("{name}.sock"));
    let metrics = free_addr();
    let config = dir.join(format!("opsbot-{name}.toml"));
    let text = format!(
        r#"[store]
kind = "postgres"
url = "{url}"
schema = "{schema}"
takeover = "{TAKEOVER}"

[console]
socket = "{socket}"

[metrics]
listen = "{metrics}"

{body}

[[people]]
name = "bob"
roles = ["operator", "approver"]
accounts = ["{BOB_ACCOUNT}"]

[[people]]
name = "alice"
roles = ["operator"]
accounts = ["{me}"]
"#,
        socket = socket.display(),
    );
    std::fs::write(&config, text).unwrap();
    (config, socket, metrics)
}

/// One `opsbot run` of a pair (or more): its config, and the process of its current
/// incarnation, whose standard error goes to a file of its own (read when it ends, printed
/// when a test fails). Killed when dropped.
pub struct Instance {
    pub name: String,
    pub config: PathBuf,
    pub socket: PathBuf,
    pub metrics: SocketAddr,
    dir: PathBuf,
    child: Option<Child>,
    incarnation: u32,
    http: reqwest::Client,
}

/// What `/healthz` answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// No answer (not started, dead, stopped, or not listening yet).
    Silent,
    Answer(u16, String),
}

impl Health {
    pub fn is_active(&self) -> bool {
        matches!(self, Health::Answer(200, body) if body.starts_with("ok: active"))
    }

    pub fn is_standby(&self) -> bool {
        matches!(self, Health::Answer(200, body) if body.starts_with("ok: standby"))
    }
}

impl Instance {
    pub fn new(dir: &Path, name: &str, url: &str, schema: &str, body: &str) -> Self {
        let (config, socket, metrics) = instance_config(dir, name, url, schema, body);
        Self {
            name: name.to_owned(),
            config,
            socket,
            metrics,
            dir: dir.to_owned(),
            child: None,
            incarnation: 0,
            http: reqwest::Client::builder()
                .timeout(Duration::from_millis(500))
                .build()
                .unwrap(),
        }
    }

    /// Sets `[store] takeover` in the config (to take effect at the next start).
    pub fn set_takeover(&self, takeover: &str) {
        let text = std::fs::read_to_string(&self.config).unwrap();
        let usual = format!("takeover = \"{TAKEOVER}\"");
        assert!(text.contains(&usual), "{}: {usual}", self.config.display());
        let text = text.replace(&usual, &format!("takeover = \"{takeover}\""));
        std::fs::write(&self.config, text).unwrap();
    }

    fn log_path(&self, incarnation: u32) -> PathBuf {
        self.dir.join(format!("{}-{incarnation}.log", self.name))
    }

    /// Starts a new incarnation (the previous one must have ended).
    pub fn start(&mut self) {
        assert!(self.child.is_none(), "{} is running already", self.name);
        self.incarnation += 1;
        let log = File::create(self.log_path(self.incarnation)).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_opsbot"))
            .args(["run", "--config", &self.config.display().to_string()])
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
    }

    pub fn pid(&self) -> Pid {
        Pid::from_raw(i32::try_from(self.child.as_ref().unwrap().id()).unwrap())
    }

    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
    }

    /// SIGKILLs the current incarnation and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            child.wait().unwrap();
        }
    }

    pub fn signal(&self, signal: Signal) {
        kill(self.pid(), signal).unwrap();
    }

    /// Waits (bounded) for the current incarnation to exit by itself; how, and its log.
    pub async fn exited(&mut self, what: &str) -> (ExitStatus, String) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                self.child = None;
                return (status, self.log());
            }
            assert!(
                Instant::now() < deadline,
                "{what}: {} never exited; its log:\n{}",
                self.name,
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The log of the current (or last) incarnation.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path(self.incarnation)).unwrap_or_default()
    }

    /// Every incarnation's log, for a failure's message.
    pub fn logs(&self) -> String {
        (1..=self.incarnation)
            .map(|n| {
                format!(
                    "----- {} #{n} -----\n{}",
                    self.name,
                    std::fs::read_to_string(self.log_path(n)).unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub async fn health(&self) -> Health {
        let url = format!("http://{}/healthz", self.metrics);
        match self.http.get(url).send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                Health::Answer(status, response.text().await.unwrap_or_default())
            }
            Err(_) => Health::Silent,
        }
    }

    /// Polls `/healthz` (bounded) until it meets `wanted`; when that happened. Fails at once if
    /// the process ended.
    pub async fn until_health(&mut self, what: &str, wanted: impl Fn(&Health) -> bool) -> Instant {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let health = self.health().await;
            if wanted(&health) {
                return Instant::now();
            }
            assert!(
                self.is_running(),
                "{what}: {} ended; it said {health:?}; its log:\n{}",
                self.name,
                self.log()
            );
            assert!(
                Instant::now() < deadline,
                "{what}: {} last said {health:?}; its log:\n{}",
                self.name,
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The text of `/metrics`.
    pub async fn metrics(&self) -> String {
        let url = format!("http://{}/metrics", self.metrics);
        let response = self.http.get(url).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 200, "{} /metrics", self.name);
        response.text().await.unwrap()
    }

    /// Whether something answers a connection to this instance's console socket.
    pub async fn console_listens(&self) -> bool {
        tokio::net::UnixStream::connect(&self.socket).await.is_ok()
    }

    pub async fn until_active(&mut self, what: &str) -> Instant {
        self.until_health(what, Health::is_active).await
    }

    pub async fn until_standby(&mut self, what: &str) -> Instant {
        self.until_health(what, Health::is_standby).await
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            // A stopped process is killed all the same.
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// What bob's console said, from [`BOB_ACCOUNT`], after typing `input` at `socket` (then the
/// line that ends a session, whose answer ends it).
pub async fn bob_session(socket: &Path, input: &str) -> String {
    const CLIENT: &str = r#"
use IO::Socket::UNIX;
my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0])
    or die "cannot connect to $ARGV[0]: $!\n";
$s->autoflush(1);
print $s $ARGV[1];
while (my $line = <$s>) {
    print $line;
    last if $line =~ /no commands about `zzz`/;
}
"#;
    let user = nix::unistd::User::from_name(BOB_ACCOUNT).unwrap().unwrap();
    let mut command = Command::new("perl");
    command
        .args(["-e", CLIENT])
        .arg(socket)
        .arg(format!("{input}/help topic:zzz\n"))
        // The socket is the owner's and the group's: root's group lets bob's account in.
        .uid(user.uid.as_raw())
        .gid(0)
        .stdin(Stdio::null());
    let out = tokio::time::timeout(PATIENCE, tokio::process::Command::from(command).output())
        .await
        .unwrap_or_else(|_| panic!("bob's console went quiet"))
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "bob's console client failed: {}\n{said}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}

/// The store of `config`, read from the test (a client of its own, which never takes the
/// lease). Opened off the async threads: the PostgreSQL store blocks.
pub async fn open(config: &Path) -> Store {
    let config = opsbot::config::Config::load(config).unwrap();
    tokio::task::spawn_blocking(move || config.store.open().unwrap())
        .await
        .unwrap()
}

/// Run `id` as the store has it now.
pub async fn run(store: &Store, id: RunId) -> Option<Run> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || store.run(id))
        .await
        .unwrap()
        .unwrap()
}

/// The whole audit log.
pub async fn audit(store: &Store) -> Vec<opsbot_commands::audit::AuditEvent> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || store.audit())
        .await
        .unwrap()
        .unwrap()
}

/// alice asks for `request` at `socket`, and bob approves it there: the run waits for approval
/// in between, and is approved after (checked in the store).
pub async fn ask_and_approve(socket: &Path, store: &Store, request: &str, id: RunId, what: &str) {
    ask(socket, request, id, what).await;
    approve(socket, store, id, what).await;
}

/// alice asks for `request` at `socket`; it becomes run `id`, waiting for approval.
pub async fn ask(socket: &Path, request: &str, id: RunId, what: &str) {
    let said = super::console_session(socket, &format!("{request}\n"))
        .await
        .join("\n");
    assert!(
        said.contains(&format!("{id} waits for approval")),
        "{what}: alice asked for {request}:\n{said}"
    );
}

/// bob approves run `id` at `socket` (`/approve`, which shows the plan, then `yes`); the store
/// has the approval after.
pub async fn approve(socket: &Path, store: &Store, id: RunId, what: &str) {
    let said = bob_session(socket, &format!("/approve id:{id}\nyes\n")).await;
    let approved = run(store, id).await.and_then(|run| run.approval);
    assert!(approved.is_some(), "{what}: bob approved {id}:\n{said}");
}

/// Waits (bounded) until every run of `ids` has ended, as the store says; their outcomes.
pub async fn until_finished(store: &Store, ids: &[RunId], what: &str) -> Vec<Outcome> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let mut states = Vec::new();
        for id in ids {
            states.push(run(store, *id).await.map(|run| run.state));
        }
        let outcomes: Option<Vec<Outcome>> = states
            .iter()
            .map(|state| state.as_ref()?.outcome().cloned())
            .collect();
        if let Some(outcomes) = outcomes {
            return outcomes;
        }
        assert!(Instant::now() < deadline, "{what}: runs still {states:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether every run of `ids` has ended.
pub async fn all_finished(store: &Store, ids: &[RunId]) -> bool {
    for id in ids {
        match run(store, *id).await {
            Some(run) if run.state.is_finished() => {}
            _ => return false,
        }
    }
    true
}

/// p-th percentile (nearest rank) of `samples`.
pub fn percentile(samples: &[Duration], p: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// A TCP relay in front of a server that notes when each chunk a client sent passed through,
/// so that a test can tell one instance's requests from another's (the instance behind the
/// relay is configured with its address; the others go straight to the server).
/// What clients sent through a [`Tap`], chunk by chunk, with when.
type Chunks = Arc<Mutex<Vec<(Instant, Vec<u8>)>>>;

#[derive(Clone)]
pub struct Tap {
    pub addr: SocketAddr,
    sent: Chunks,
}

impl Tap {
    pub async fn start(upstream: SocketAddr) -> Tap {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let sent: Chunks = Arc::default();
        let log = sent.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let log = log.clone();
                tokio::spawn(async move {
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    let Ok(server) = tokio::net::TcpStream::connect(upstream).await else {
                        return;
                    };
                    let (mut client_read, mut client_write) = client.into_split();
                    let (mut server_read, mut server_write) = server.into_split();
                    let up = async move {
                        let mut buf = vec![0u8; 16 * 1024];
                        loop {
                            match client_read.read(&mut buf).await {
                                Ok(0) | Err(_) => break,
                                Ok(n) => {
                                    log.lock()
                                        .unwrap()
                                        .push((Instant::now(), buf[..n].to_vec()));
                                    if server_write.write_all(&buf[..n]).await.is_err() {
                                        break;
                                    }
                                }
                            }
                        }
                        let _ = server_write.shutdown().await;
                    };
                    let down = async move {
                        let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
                        let _ = client_write.shutdown().await;
                    };
                    tokio::join!(up, down);
                });
            }
        });
        Tap { addr, sent }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The request lines (`METHOD /path HTTP/1.1`) of what clients sent after `since`.
    pub fn requests_since(&self, since: Instant) -> Vec<String> {
        let sent = self.sent.lock().unwrap();
        let text: String = sent
            .iter()
            .filter(|(at, _)| *at > since)
            .map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned())
            .collect();
        let method =
            regex::Regex::new(r"(?m)^(GET|HEAD|POST|PUT|PATCH|DELETE) \S+ HTTP/1\.[01]").unwrap();
        method
            .find_iter(&text)
            .map(|m| m.as_str().to_owned())
            .collect()
    }
}

/// Who wrote to the store: a trigger on every table of `schema` notes each row written, with
/// the session's role, in a table of a schema beside it. Rolled-back writes leave no note.
pub struct WriteLog {
    client: tokio_postgres::Client,
    watch: String,
}

impl WriteLog {
    /// Installs the triggers on the tables `schema` has now (open the store first, which
    /// creates them), and creates `roles` (login, superuser), for instances to connect as.
    pub async fn install(url: &str, schema: &str, roles: &[&str]) -> WriteLog {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        for role in roles {
            // Tests side by side create the same roles: whoever comes second finds it made.
            client
                .batch_execute(&format!(
                    "DO $$ BEGIN CREATE ROLE {role} LOGIN SUPERUSER;
                     EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"
                ))
                .await
                .unwrap();
        }
        let watch = format!("{schema}_w");
        client
            .batch_execute(&format!(
                "CREATE SCHEMA {watch};
                 CREATE TABLE {watch}.writes (
                     seq bigserial PRIMARY KEY,
                     at timestamptz NOT NULL DEFAULT clock_timestamp(),
                     who text NOT NULL DEFAULT session_user,
                     tbl text NOT NULL,
                     op text NOT NULL
                 );
                 CREATE FUNCTION {watch}.note() RETURNS trigger LANGUAGE plpgsql AS $$
                 BEGIN
                     INSERT INTO {watch}.writes (tbl, op) VALUES (TG_TABLE_NAME, TG_OP);
                     RETURN NULL;
                 END $$;"
            ))
            .await
            .unwrap();
        let tables = client
            .query(
                "SELECT tablename FROM pg_tables WHERE schemaname = $1",
                &[&schema],
            )
            .await
            .unwrap();
        assert!(!tables.is_empty(), "the store made no tables in {schema}");
        for row in tables {
            let table: String = row.get(0);
            client
                .batch_execute(&format!(
                    "CREATE TRIGGER opsbot_test_note AFTER INSERT OR UPDATE OR DELETE \
                     ON {schema}.{table} FOR EACH ROW EXECUTE FUNCTION {watch}.note()"
                ))
                .await
                .unwrap();
        }
        WriteLog { client, watch }
    }

    /// The last note's number (0 if none).
    pub async fn mark(&self) -> i64 {
        self.client
            .query_one(
                &format!("SELECT coalesce(max(seq), 0) FROM {}.writes", self.watch),
                &[],
            )
            .await
            .unwrap()
            .get(0)
    }

    /// The writes `who` made after note `mark`: (table, operation).
    pub async fn since(&self, mark: i64, who: &str) -> Vec<(String, String)> {
        self.client
            .query(
                &format!(
                    "SELECT tbl, op FROM {}.writes WHERE seq > $1 AND who = $2 ORDER BY seq",
                    self.watch
                ),
                &[&mark, &who],
            )
            .await
            .unwrap()
            .into_iter()
            .map(|row| (row.get(0), row.get(1)))
            .collect()
    }

    /// How many writes `who` made in all.
    pub async fn count(&self, who: &str) -> i64 {
        self.client
            .query_one(
                &format!("SELECT count(*) FROM {}.writes WHERE who = $1", self.watch),
                &[&who],
            )
            .await
            .unwrap()
            .get(0)
    }
}

/// `url` with its user replaced by `user`.
pub fn as_user(url: &str, user: &str) -> String {
    let rest = url.strip_prefix("postgres://").unwrap();
    let (_, host) = rest.split_once('@').unwrap();
    format!("postgres://{user}@{host}")
}

/// Writes `opsbot-NAME.toml` beside `config`: `config` with its sled `[store]` replaced by the
/// PostgreSQL store `url`/`schema` (takeover 3 s) and a `[metrics]` address of its own, for
/// instances that share everything else (its Discord, its people); returns the file and the
/// address.
pub fn on_postgres(config: &Path, name: &str, url: &str, schema: &str) -> (PathBuf, SocketAddr) {
    let text = std::fs::read_to_string(config).unwrap();
    let (store, rest) = text.split_once('\n').unwrap();
    assert_eq!(store, "[store]", "the config starts with its store");
    let (path, rest) = rest.split_once('\n').unwrap();
    assert!(path.starts_with("path = "), "a sled store: {path}");
    let metrics = free_addr();
    let text = format!(
        "[store]\nkind = \"postgres\"\nurl = \"{url}\"\nschema = \"{schema}\"\n\
         takeover = \"{TAKEOVER}\"\n{rest}\n[metrics]\nlisten = \"{metrics}\"\n"
    );
    let file = config.with_file_name(format!("opsbot-{name}.toml"));
    std::fs::write(&file, text).unwrap();
    (file, metrics)
}

/// Waits until `/healthz` at `metrics` starts with `wanted` (`ok: active`, `ok: standby`).
pub async fn until_healthz(metrics: SocketAddr, wanted: &str) -> String {
    let deadline = Instant::now() + super::PATIENCE;
    loop {
        let said = match reqwest::get(format!("http://{metrics}/healthz")).await {
            Ok(answer) => answer.text().await.unwrap_or_default(),
            Err(error) => error.to_string(),
        };
        if said.starts_with(wanted) {
            return said;
        }
        assert!(
            Instant::now() < deadline,
            "/healthz at {metrics} never said {wanted:?}; last: {said}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
