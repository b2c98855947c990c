//! `opsbot sim`: the simulated search cluster on its own, served until Ctrl-C, for trials of a
//! config and for the tests of the real binary (demo builds only).

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use opsbot_search_sim::{Distribution, FaultRule, Flavor, Security, SimConfig, SimTls};

#[derive(Debug, Args)]
pub struct SimArgs {
    /// The address to serve the cluster's HTTP API on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:9200")]
    listen: SocketAddr,
    /// Server behaviour to simulate: es6, es7, es8 or os2 (wire formats and flush differ).
    #[arg(long, default_value = "es7")]
    flavor: Flavor,
    /// Data nodes in the cluster, at 10.0.0.11 onwards.
    #[arg(long, default_value_t = 5)]
    nodes: usize,
    /// Daily `flog-YYYY.MM.DD` indices, ending today.
    #[arg(long, default_value_t = 90)]
    days: u32,
    /// Simulated seconds per real second (shard recoveries take minutes on a real cluster).
    #[arg(long, default_value_t = 1.0)]
    speed: f64,
    /// A fault rule, e.g. `status=503,count=3` or `latency=200ms`; repeatable.
    #[arg(long)]
    fault: Vec<FaultRule>,
    /// Serve HTTPS with this PEM certificate (chain), as Elasticsearch 8 does; needs --tls-key.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Require basic authentication as this user, as Elasticsearch security does (401
    /// security_exception otherwise); the password comes from OPSBOT_SIM_PASSWORD. Security is
    /// X-Pack's, so the cluster runs the default distribution (with ILM) rather than OSS.
    #[arg(long, requires = "password")]
    user: Option<String>,
    /// The password of --user.
    #[arg(
        long,
        env = "OPSBOT_SIM_PASSWORD",
        hide_env_values = true,
        requires = "user"
    )]
    password: Option<String>,
}

pub async fn serve(args: SimArgs) -> anyhow::Result<()> {
    let config = SimConfig {
        flavor: args.flavor,
        node_count: args.nodes,
        days_of_indices: args.days,
        speed: args.speed,
        faults: args.fault,
        tls: match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => Some(SimTls {
                cert_pem: read_pem(cert)?,
                key_pem: read_pem(key)?,
                client_ca_pem: None,
            }),
            _ => None,
        },
        // Security is X-Pack's, so a secured cluster runs the default distribution.
        distribution: if args.user.is_some() {
            Distribution::Default
        } else {
            Distribution::default()
        },
        security: args.user.zip(args.password).map(|user| Security {
            users: vec![user],
            ..Security::default()
        }),
        ..SimConfig::default()
    };
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let handle = opsbot_search_sim::spawn(config, listener).await?;
    tracing::info!(url = %handle.base_url(), "simulated cluster serving; Ctrl-C stops it");
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    handle.shutdown().await;
    Ok(())
}

fn read_pem(file: &std::path::Path) -> anyhow::Result<String> {
    std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))
}
