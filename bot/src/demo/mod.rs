//! `opsbot demo`: the console wired to an embedded simulated cluster and cloud, with alice
//! (operator) and bob (operator and approver). Same engine, same store, same progress code as
//! production.

pub mod sim;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use opsbot_cloud_sim::CloudSimConfig;
use opsbot_commands::index::IndexName;
use opsbot_commands::name::{CloudName, ClusterName, GroupName, HostName, NodeAddr, PersonName};
use opsbot_commands::people::People;
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::retention::RetentionDays;
use opsbot_commands::run::ChannelId;
use opsbot_commands::schedule::{Bounds, CronSchedule, Schedule, ScheduleName};
use opsbot_search_sim::{Flavor, SimConfig};

use crate::config::MetricsConfig;
use crate::config::{
    CloudConfig, ClusterConfig, Config, ConsoleConfig, EngineConfig, HostAccessConfig,
    HostControlConfig, Interface, NodeControlConfig, PersonConfig, ProgressConfig, Role,
    RunbooksConfig, SecretSource, StoreConfig, Tls,
};
use crate::config::{ScheduleConfig, SchedulingConfig};
use crate::engine::Engine;
use crate::process::CommandTemplate;
use crate::process::OutputBounds;

/// The demo's cluster and cloud names, as operators type them.
const CLUSTER: &str = "logs";
const CLOUD: &str = "prod";
/// The demo's schedule: a prune every minute, under a standing approval the demo gives it.
const SCHEDULE: &str = "demo-prune";

/// The runbooks the project ships, as the demo runs them.
const RUNBOOKS: [(&str, &str); 4] = [
    (
        "compute-rpc-cap-restart.toml",
        include_str!("../../../deploy/runbooks/compute-rpc-cap-restart.toml"),
    ),
    (
        "debug-silent-service.toml",
        include_str!("../../../deploy/runbooks/debug-silent-service.toml"),
    ),
    (
        "nested-virt.toml",
        include_str!("../../../deploy/runbooks/nested-virt.toml"),
    ),
    (
        "workflow-db-populate.toml",
        include_str!("../../../deploy/runbooks/workflow-db-populate.toml"),
    ),
];

/// The demo's simulated hosts, by inventory group: hypervisors first, as spec 7 restarts them.
const HOSTS: [(&str, &[&str]); 2] = [
    ("compute", &["compute-01", "compute-02", "compute-03"]),
    ("control", &["ctl-01"]),
];

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Server behaviour to simulate: es6, es7, es8 or os2.
    #[arg(long, default_value = "es7")]
    flavor: Flavor,
    /// Simulated seconds per real second (shard recoveries take minutes on a real cluster).
    #[arg(long, default_value_t = 20.0)]
    speed: f64,
    /// Keep the store here instead of in a temporary directory (to try a restart).
    #[arg(long, conflicts_with = "postgres")]
    store: Option<PathBuf>,
    /// Keep the store in a throwaway PostgreSQL instead (the HA variant: the console holds the
    /// store's lease, as an active `opsbot run` would); it needs the machine's PostgreSQL
    /// server binaries (`initdb`, `postgres`).
    #[arg(long)]
    postgres: bool,
}

/// Where the demo keeps its store.
#[derive(Debug, Clone)]
enum DemoStore {
    /// A sled store in a temporary directory, gone with the demo.
    Temporary,
    /// A sled store kept at this path (to try a restart).
    Sled(PathBuf),
    /// A throwaway PostgreSQL server, started for the demo and stopped with it.
    Postgres,
}

/// Runs the demo until the end of the console's input.
pub async fn run(args: DemoArgs) -> anyhow::Result<()> {
    let DemoArgs {
        flavor,
        speed,
        store,
        postgres,
    } = args;
    let store = match (postgres, store) {
        (true, _) => DemoStore::Postgres,
        (false, Some(path)) => DemoStore::Sled(path),
        (false, None) => DemoStore::Temporary,
    };
    let sim_config = SimConfig {
        flavor,
        speed,
        ..SimConfig::default()
    };
    let nodes: Vec<NodeAddr> = (0..sim_config.node_count)
        .filter_map(|i| u32::try_from(i).ok())
        .map(|i| {
            NodeAddr::from(std::net::Ipv4Addr::from(
                u32::from(sim_config.first_node_ip) + i,
            ))
        })
        .collect();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("cannot open a local port for the simulated cluster")?;
    let sim = opsbot_search_sim::spawn(sim_config, listener).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("cannot open a local port for the simulated cloud")?;
    let cloud_sim = opsbot_cloud_sim::spawn(CloudSimConfig::demo(), listener).await?;
    // A temporary store unless one is given; it lives as long as the demo.
    let temp = tempfile::tempdir().context("cannot create a temporary directory for the store")?;
    // The simulated cloud's password, in a file as a production config would have it.
    let password_file = temp.path().join("prod-password");
    std::fs::write(&password_file, "adminpass\n").context("cannot write the demo password")?;
    // Lives as long as the demo, like the temporary directory.
    let postgres = match store {
        DemoStore::Postgres => Some(
            tokio::task::spawn_blocking(opsbot_tmp_postgres::Server::start)
                .await?
                .context("cannot start a throwaway PostgreSQL for the demo")?,
        ),
        DemoStore::Temporary | DemoStore::Sled(_) => None,
    };
    let (store, shown) = match (&postgres, store) {
        (Some(server), _) => {
            let url = server.url("postgres");
            let shown = format!("PostgreSQL {url} (schema opsbot, thrown away at the end)");
            (StoreConfig::postgres(url), shown)
        }
        (None, DemoStore::Sled(path)) => {
            (StoreConfig::sled(path.clone()), path.display().to_string())
        }
        (None, _) => {
            let path = temp.path().join("store");
            (StoreConfig::sled(path.clone()), path.display().to_string())
        }
    };
    let runbooks = runbooks(temp.path())?;
    let config = Config {
        store,
        engine: EngineConfig {
            poll_interval: Duration::from_secs(1),
            ..EngineConfig::default()
        },
        progress: ProgressConfig::default(),
        runbooks,
        clusters: vec![ClusterConfig {
            name: ClusterName::parse(CLUSTER)?,
            url: sim.base_url(),
            nodes,
            node_control: NodeControlConfig::Sim { url: None },
            tls: Tls::default(),
            auth: None,
        }],
        clouds: vec![CloudConfig {
            name: CloudName::parse(CLOUD)?,
            auth_url: cloud_sim.identity_url(),
            username: "admin".to_owned(),
            user_domain: "Default".to_owned(),
            project: "admin".to_owned(),
            project_domain: "Default".to_owned(),
            region: "RegionOne".to_owned(),
            interface: Interface::Internal,
            password: SecretSource::File(password_file),
            ca_file: None,
            compute_control: HostControlConfig::Sim { url: None },
        }],
        people: vec![
            person("alice", &[Role::Operator])?,
            person("bob", &[Role::Operator, Role::Approver])?,
        ],
        console: ConsoleConfig::default(),
        discord: None,
        slack: None,
        matrix: None,
        metrics: MetricsConfig::default(),
        schedules: vec![ScheduleConfig(Schedule {
            name: ScheduleName::parse(SCHEDULE)?,
            cron: CronSchedule::parse("* * * * *", "UTC")?,
            request: ProcedureRequest::IndicesPrune {
                cluster: ClusterName::parse(CLUSTER)?,
                older_than: RetentionDays::parse("80")?,
                prefix: Some(IndexName::parse_prefix("flog-")?),
            },
            channel: ChannelId::console(),
            bounds: Some(Bounds {
                max_indices: 20,
                min_age_days: RetentionDays::parse("80")?,
                prefix: Some(IndexName::parse_prefix("flog-")?),
                max_total_bytes: None,
            }),
        })],
        scheduling: SchedulingConfig {
            min_interval: Duration::from_secs(60),
            ..SchedulingConfig::default()
        },
        approval: Default::default(),
    };
    let banner = format!(
        "opsbot demo · simulated {flavor} log cluster `{CLUSTER}` (5 nodes, 90 daily flog-* indices) at {}\n\
         simulated OpenStack cloud `{CLOUD}` (hypervisors compute-01..03) at {}\n\
         time runs {speed}x faster in the simulation · store: {}\n\
         you are alice (operator); /as user:bob speaks as bob (operator and approver)\n\
         try: /cluster status cluster:{CLUSTER} · /cluster restart cluster:{CLUSTER} · \
         /indices prune cluster:{CLUSTER} · /cluster remove-node cluster:{CLUSTER} node:10.0.0.14 · \
         /placement stale cloud:{CLOUD} host:compute-02 · /compute rpc-cap cloud:{CLOUD} · \
         /runbook list · /runbook run name:nested-virt host:compute-01 · /help",
        sim.base_url(),
        cloud_sim.base_url(),
        shown,
    );
    let people = config.people()?;
    let alice = people
        .in_demo(&PersonName::parse("alice")?)
        .context("the demo's people lack alice")?;
    let result = crate::chat::console::demo(config, people, alice, banner, |engine, people| {
        Box::pin(standing_approval(engine, people))
    })
    .await;
    sim.shutdown().await;
    cloud_sim.shutdown().await;
    result
}

/// One of the demo's people; the demo's console speaks as them through `/as`.
fn person(name: &str, roles: &[Role]) -> anyhow::Result<PersonConfig> {
    Ok(PersonConfig {
        name: PersonName::parse(name)?,
        roles: roles.to_vec(),
        discord_user: None,
        discord_roles: Vec::new(),
        slack_user: None,
        matrix_user: None,
        accounts: vec![format!("opsbot-demo-{name}")],
    })
}

/// The shipped runbooks, on simulated hosts made of local scripts (`opsbot-host-sim`) that
/// behave like a Kolla host's commands; the demo reaches them through their launcher, where
/// production goes through ssh.
fn runbooks(dir: &std::path::Path) -> anyhow::Result<RunbooksConfig> {
    let books = dir.join("runbooks");
    std::fs::create_dir_all(&books).context("cannot create the demo's runbooks directory")?;
    for (name, text) in RUNBOOKS {
        std::fs::write(books.join(name), text).context("cannot write the demo's runbooks")?;
    }
    let (config, _hosts) = simulated_hosts(&dir.join("hosts"), &HOSTS, books)?;
    Ok(config)
}

/// Installs simulated hosts in `dir`, by inventory group, and the runbook config that runs the
/// runbooks of `books` on them through their launcher: for the demo and the tests alike.
pub fn simulated_hosts(
    dir: &std::path::Path,
    groups: &[(&str, &[&str])],
    books: PathBuf,
) -> anyhow::Result<(RunbooksConfig, opsbot_host_sim::TestHosts)> {
    let names: Vec<&str> = groups
        .iter()
        .flat_map(|(_, hosts)| hosts.iter().copied())
        .collect();
    let hosts = opsbot_host_sim::TestHosts::install(dir, &names)
        .context("cannot install the simulated hosts")?;
    let mut inventory = std::collections::BTreeMap::new();
    for (group, names) in groups {
        let members = names
            .iter()
            .map(|h| HostName::parse(h))
            .collect::<Result<Vec<_>, _>>()?;
        inventory.insert(GroupName::parse(group)?, members);
    }
    let prefix = CommandTemplate::try_from(vec![
        hosts.launcher().display().to_string(),
        "{host}".to_owned(),
    ])
    .map_err(anyhow::Error::msg)?;
    let config = RunbooksConfig {
        dir: Some(books),
        inventory,
        access: HostAccessConfig::Command { prefix },
        output: OutputBounds::default(),
    };
    Ok((config, hosts))
}

/// Gives the demo's schedule a standing approval (alice asks, bob approves, for a week) unless
/// one is in force, so that a newcomer sees a prune run by itself; says what it did.
async fn standing_approval(engine: &Engine, people: &People) -> anyhow::Result<Option<String>> {
    let name = ScheduleName::parse(SCHEDULE)?;
    if engine.schedule(&name).is_err() {
        return Ok(None);
    }
    let (alice, bob) = (PersonName::parse("alice")?, PersonName::parse("bob")?);
    let (Some(alice), Some(bob)) = (people.in_demo(&alice), people.in_demo(&bob)) else {
        return Ok(None);
    };
    let (asked, _) = engine.ask_standing(&alice, &name).await?;
    if !matches!(
        asked.state,
        opsbot_commands::schedule::StandingState::Asked { .. }
    ) {
        return Ok(None);
    }
    let until = engine.clock().now() + time::Duration::days(7);
    let approved = engine
        .approve_standing(&bob, &name, asked.digest.as_str(), Some(until))
        .await?;
    Ok(Some(format!(
        "demo: schedule {name} prunes flog-* indices older than 80 days every minute; alice \
         asked for standing approval {} and bob approved it: {}; /schedule show name:{name}",
        approved.id,
        approved.what()
    )))
}
