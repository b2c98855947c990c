//! The end-to-end harness: starts the simulated cluster and the real engine, service and
//! progress publisher in-process, with a chat that records every message, so that tests speak to
//! opsbot as operators do (`harness.slash("alice", "/cluster restart cluster:logs")`).
//! Every wait is bounded: a test that would hang fails with what it was waiting for instead.

#![allow(clippy::expect_used, clippy::unwrap_used)] // A harness that cannot set up must stop the test loudly.

pub mod bench;
mod chat;
pub mod cloud;
pub mod console;
pub mod discord;
pub mod matrix;
pub mod openstack;
pub mod runbooks;
mod servers;
mod setups;
pub mod slack;
pub mod tls;

use std::net::Ipv4Addr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use opsbot::clock::SimulatedClock;
use opsbot::config::{
    ClusterConfig, Config, ConsoleConfig, EngineConfig, NodeControlConfig, PersonConfig,
    ProgressConfig, Role, StoreConfig, Tls,
};
use opsbot::engine::Engine;
use opsbot::progress::Publisher;
use opsbot::service::{Reply, Service};
use opsbot_commands::name::{ClusterName, NodeAddr, PersonName, RunId};
use opsbot_commands::parse::{self, Origin};
use opsbot_commands::people::{Actor, PersonRef, Roles, SlackUser, Surface};
use opsbot_commands::render::Tone;
use opsbot_commands::run::{ChannelId, Run};
use opsbot_search_sim::{Call, Flavor, SimConfig, SimHandle};

pub use chat::{Message, RecordingChat};

/// The longest any test waits for anything.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// The people every harness knows, at the console account of their name: alice operates, bob
/// (and dave-approver) also approve, carol has no role (as someone whose Discord roles lapsed).
pub fn actor(name: &str) -> Actor {
    let (operator, approver) = match name {
        "alice" => (true, false),
        "bob" | "dave-approver" => (true, true),
        _ => (false, false),
    };
    Actor {
        person: PersonRef {
            name: PersonName::parse(name).expect("person name"),
            via: Surface::Console {
                account: name.to_owned(),
            },
        },
        roles: Roles { operator, approver },
    }
}

/// The team as the config names it, each with a Discord user id (`700…001` for alice, `…002`
/// bob, `…004` dave), a Slack member id (`U0ALICE`, `U0BOB`, `U0DAVE`) and a console account
/// of their name.
pub fn people() -> Vec<PersonConfig> {
    let person = |name: &str, discord: u64, roles: &[Role]| PersonConfig {
        name: PersonName::parse(name).expect("person name"),
        roles: roles.to_vec(),
        discord_user: Some(700_000_000_000_000_000 + discord),
        discord_roles: Vec::new(),
        slack_user: Some(
            SlackUser::parse(&format!("U0{}", name.to_uppercase())).expect("slack user"),
        ),
        matrix_user: None,
        accounts: vec![name.to_owned()],
    };
    vec![
        person("alice", 1, &[Role::Operator]),
        person("bob", 2, &[Role::Operator, Role::Approver]),
        person("dave", 4, &[Role::Approver]),
    ]
}

/// How a harness is set up.
#[derive(Debug, Clone)]
pub struct Setup {
    pub flavor: Flavor,
    /// Node control for the cluster, given the simulator's URL; the simulator's own by default.
    pub node_control: fn(&str) -> NodeControlConfig,
    pub engine: EngineConfig,
    pub sim_speed: f64,
    /// Daily `flog-*` indices in the simulated cluster, ending today.
    pub days_of_indices: u32,
    /// Simulated clusters, each of its own: `logs`, then `logs2`, `logs3`, ...
    pub clusters: usize,
    /// Clouds, simulated or real, made by the test (see [`cloud::cloud_config`]).
    pub clouds: Vec<opsbot::config::CloudConfig>,
    /// Runbooks and the hosts they run on (see [`runbooks::test_hosts`]).
    pub runbooks: opsbot::config::RunbooksConfig,
    /// The rest of each simulated cluster's set-up (indices with settings of their own, data
    /// streams, the distribution, a slow deletion), from what the fields above make.
    pub sim: fn(SimConfig) -> SimConfig,
    /// `[[schedules]]`; the test starts the scheduler itself (`opsbot::scheduler::spawn`).
    pub schedules: Vec<opsbot::config::ScheduleConfig>,
    /// The time the engine's clock starts at, as `opsbot run --now` sets it; the system's
    /// time when `None`. Either way the clock runs at the normal pace and the test can move it
    /// on ([`Harness::clock`]).
    pub now: Option<time::OffsetDateTime>,
    /// The config's `[approval]` policy; the catalogue's defaults when empty.
    pub approval: opsbot_commands::consent::ConsentPolicy,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            flavor: Flavor::Es7,
            node_control: |_| NodeControlConfig::Sim { url: None },
            engine: EngineConfig {
                poll_interval: Duration::from_millis(20),
                node_timeout: Duration::from_secs(20),
                formation_timeout: Duration::from_secs(30),
                drain_timeout: Duration::from_secs(30),
                request_timeout: Duration::from_secs(2),
                retry: opsbot::config::RetryPolicy {
                    attempts: 4,
                    base_delay: Duration::from_millis(20),
                    max_delay: Duration::from_millis(100),
                },
                ..EngineConfig::default()
            },
            sim_speed: 500.0,
            days_of_indices: 90,
            clusters: 1,
            clouds: Vec::new(),
            runbooks: opsbot::config::RunbooksConfig::default(),
            sim: |config| config,
            schedules: Vec::new(),
            now: None,
            approval: Default::default(),
        }
    }
}

/// A running opsbot against a running simulated cluster.
#[derive(Debug)]
pub struct Harness {
    pub sim: SimHandle,
    /// The engine's clock, and its progress's: `h.clock.skip(...)` moves it on and wakes every
    /// wait on it (a booked run's, an approval's expiry, a backoff), instead of the test
    /// sleeping.
    pub clock: SimulatedClock,
    pub engine: Engine,
    pub service: Service,
    pub publisher: Arc<Publisher<RecordingChat>>,
    pub config: Config,
    channel: ChannelId,
    _dir: tempfile::TempDir,
}

/// The name of the `n`-th simulated cluster (from 1): `logs`, then `logs2`, `logs3`, ...
pub fn cluster_name(n: usize) -> String {
    if n == 1 {
        "logs".to_owned()
    } else {
        format!("logs{n}")
    }
}

/// The simulated clusters and a config for them, with its store in a temporary directory.
pub async fn world(setup: &Setup) -> (Vec<SimHandle>, Config, tempfile::TempDir) {
    let sim_config = (setup.sim)(SimConfig {
        flavor: setup.flavor,
        speed: setup.sim_speed,
        days_of_indices: setup.days_of_indices,
        ..SimConfig::default()
    });
    let mut sims = Vec::new();
    let mut clusters = Vec::new();
    for n in 1..=setup.clusters.max(1) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let sim = opsbot_search_sim::spawn(sim_config.clone(), listener)
            .await
            .expect("sim");
        let url = sim.base_url();
        clusters.push(cluster_config(
            &cluster_name(n),
            &url,
            &sim_config,
            (setup.node_control)(&url),
        ));
        sims.push(sim);
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(setup, clusters, dir.path());
    (sims, config, dir)
}

/// The bot's view of a simulated cluster started from `sim` and reached at `url`: its nodes'
/// addresses as the simulator numbers them.
pub fn cluster_config(
    name: &str,
    url: &str,
    sim: &SimConfig,
    node_control: NodeControlConfig,
) -> ClusterConfig {
    ClusterConfig {
        name: ClusterName::parse(name).expect("name"),
        url: url.to_owned(),
        nodes: (0..sim.node_count)
            .map(|i| NodeAddr::from(Ipv4Addr::from(u32::from(sim.first_node_ip) + i as u32)))
            .collect(),
        node_control,
        tls: Tls::default(),
        auth: None,
    }
}

/// The bot's config for `clusters` with the set-up's engine, clouds and runbooks, the test
/// people, progress edited briskly, and its store under `dir`.
pub fn config(setup: &Setup, clusters: Vec<ClusterConfig>, dir: &Path) -> Config {
    Config {
        store: StoreConfig::sled(dir.join("store")),
        engine: setup.engine,
        progress: ProgressConfig {
            edits_per_window: 5,
            window: Duration::from_millis(250),
        },
        clusters,
        clouds: setup.clouds.clone(),
        runbooks: setup.runbooks.clone(),
        people: people(),
        console: ConsoleConfig::default(),
        discord: None,
        slack: None,
        matrix: None,
        metrics: Default::default(),
        schedules: setup.schedules.clone(),
        scheduling: Default::default(),
        approval: setup.approval.clone(),
    }
}

impl Harness {
    pub async fn start(setup: Setup) -> Self {
        let (mut sims, config, dir) = world(&setup).await;
        let sim = sims.remove(0);
        let store = config.store.open().expect("store");
        let clock =
            SimulatedClock::starting_at(setup.now.unwrap_or_else(time::OffsetDateTime::now_utc));
        let publisher = Arc::new(Publisher::with_clock(
            RecordingChat::default(),
            store.clone(),
            config.progress,
            clock.clock(),
        ));
        let engine =
            Engine::with_clock(&config, store, publisher.clone(), clock.clock()).expect("engine");
        let service = Service::new(engine.clone(), publisher.clone());
        Self {
            sim,
            clock,
            engine,
            service,
            publisher,
            config,
            channel: ChannelId("ops".into()),
            _dir: dir,
        }
    }

    /// Types a command as `user`, the way the console does.
    pub async fn slash(&self, user: &str, line: &str) -> Reply {
        self.say(&actor(user), line).await
    }

    /// Types a command as `actor` (a person as a front end found them), the way the console does.
    pub async fn say(&self, actor: &Actor, line: &str) -> Reply {
        match parse::parse_line(line, Origin::Console) {
            Ok(request) => {
                self.service
                    .handle(actor, &self.channel, Origin::Console, request)
                    .await
            }
            Err(error) => Reply {
                text: error.to_string(),
                private: true,
                awaits: None,
                waiting: None,
                attachment: None,
            },
        }
    }

    /// `user` approves the run's current plan, naming its digest as the approver would after
    /// `/approve id:<run>` showed it (a run that does not exist gets a digest of zeros).
    pub async fn approve(&self, user: &str, id: impl std::fmt::Display) -> Reply {
        let id = id.to_string();
        let digest = RunId::parse(&id)
            .ok()
            .and_then(|run| self.engine.run(run).ok())
            .map_or_else(|| "0".repeat(12), |run| run.digest.short().to_owned());
        self.slash(user, &format!("/approve id:{id} digest:{digest}"))
            .await
    }

    /// Starts a procedure and returns its run id; panics with the reply if it did not start.
    /// A plan that waits for the requester's confirmation (the `confirm` policy) is confirmed
    /// by them, as the one typing it would.
    pub async fn start_run(&self, user: &str, line: &str) -> RunId {
        let reply = self.slash(user, line).await;
        let id = reply
            .text
            .split_whitespace()
            .next()
            .and_then(|word| RunId::parse(word).ok());
        let id = id.unwrap_or_else(|| panic!("`{line}` did not start a run: {}", reply.text));
        if let Some((run, digest)) = reply.awaits {
            let confirmed = self
                .slash(
                    user,
                    &format!("/run confirm id:{run} digest:{}", digest.short()),
                )
                .await;
            assert!(
                confirmed
                    .text
                    .starts_with(&format!("{run} confirmed by {user}")),
                "{}",
                confirmed.text
            );
        }
        id
    }

    pub fn run(&self, id: RunId) -> Run {
        self.engine.run(id).expect("run")
    }

    /// Waits until the run satisfies `done`, failing the test after [`PATIENCE`].
    pub async fn wait_for(&self, id: RunId, what: &str, done: impl Fn(&Run) -> bool) -> Run {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let run = self.run(id);
            if done(&run) {
                return run;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {id} to be {what}; it is {:?}",
                run.state
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Waits until the run has finished and its message shows how it ended. (The store shows
    /// the end before the engine tells the publisher, so waiting for the publisher's queue to
    /// drain could return before the last edit was even queued.)
    pub async fn finished(&self, id: RunId) -> Run {
        let run = self
            .wait_for(id, "finished", |r| r.state.is_finished())
            .await;
        let ended = |tone| !matches!(tone, Tone::Waiting | Tone::Running);
        self.message_shows(&run, "how it ended", ended).await;
        run
    }

    /// Waits until the message of `run` shows a tone that `done` accepts (`what`), failing the
    /// test after [`PATIENCE`]: the store shows a run's new state before its message does.
    pub async fn message_shows(&self, run: &Run, what: &str, done: impl Fn(Tone) -> bool) {
        let key = opsbot_commands::render::progress_view(run, None, run.created_at).message_key;
        tokio::time::timeout(PATIENCE, self.chat().shows(&key, done))
            .await
            .unwrap_or_else(|_| panic!("the message of {} never showed {what}", run.id));
    }

    /// The cluster API requests the simulator received.
    pub fn calls(&self) -> Vec<Call> {
        self.sim.calls()
    }

    /// Requests with this method.
    pub fn calls_by(&self, method: &str) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|c| c.method == method)
            .collect()
    }

    /// Every index name that reached a DELETE, once per DELETE naming it.
    pub fn deleted_names(&self) -> Vec<String> {
        self.calls_by("DELETE")
            .iter()
            .flat_map(Call::path_names)
            .collect()
    }

    /// Requests whose method and path match.
    pub fn calls_to(&self, method: &str, path: &str) -> Vec<Call> {
        self.calls_by(method)
            .into_iter()
            .filter(|c| c.path == path)
            .collect()
    }

    /// Names of the indices the simulated cluster holds now.
    pub fn index_names(&self) -> Vec<String> {
        self.sim.index_names()
    }

    pub fn chat(&self) -> &RecordingChat {
        self.publisher.transport()
    }
}
