//! `opsbot demo`: the console wired to an embedded simulated cluster, with alice (operator) and
//! bob (operator and approver). Same engine, same store, same progress code as production.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use opsbot_commands::name::{ClusterName, NodeAddr, UserName};
use opsbot_sim::{Flavor, SimConfig};

use crate::config::{
    ClusterConfig, Config, ConsoleConfig, ConsoleOperator, EngineConfig, NodeControlConfig,
    ProgressConfig, StoreConfig,
};

/// The demo's cluster name, as operators type it.
const CLUSTER: &str = "logs";

/// Runs the demo until the end of the console's input.
pub async fn run(flavor: Flavor, speed: f64, store: Option<PathBuf>) -> anyhow::Result<()> {
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
    let sim = opsbot_sim::spawn(sim_config, listener).await?;
    // A temporary store unless one is given; it lives as long as the demo.
    let temp = tempfile::tempdir().context("cannot create a temporary directory for the store")?;
    let store_path = store.unwrap_or_else(|| temp.path().join("store"));
    let config = Config {
        store: StoreConfig {
            path: store_path.clone(),
        },
        engine: EngineConfig {
            poll_interval: Duration::from_secs(1),
            ..EngineConfig::default()
        },
        progress: ProgressConfig::default(),
        clusters: vec![ClusterConfig {
            name: ClusterName::parse(CLUSTER)?,
            url: sim.base_url(),
            nodes,
            node_control: NodeControlConfig::Sim { url: None },
        }],
        clouds: Vec::new(),
        console: ConsoleConfig {
            operators: vec![
                ConsoleOperator {
                    name: UserName::parse("alice")?,
                    approver: false,
                },
                ConsoleOperator {
                    name: UserName::parse("bob")?,
                    approver: true,
                },
            ],
        },
        discord: None,
    };
    let banner = format!(
        "opsbot demo · simulated {flavor} log cluster `{CLUSTER}` (5 nodes, 90 daily flog-* indices) at {}\n\
         time runs {speed}x faster in the simulation · store: {}\n\
         you are alice (operator); /as user:bob speaks as bob (operator and approver)\n\
         try: /cluster status cluster:{CLUSTER} · /cluster restart cluster:{CLUSTER} · \
         /indices prune cluster:{CLUSTER} · /cluster remove-node cluster:{CLUSTER} node:10.0.0.14 · /help",
        sim.base_url(),
        store_path.display(),
    );
    let result = crate::chat::console::run(config, Some(banner)).await;
    sim.shutdown().await;
    result
}
