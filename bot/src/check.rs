//! `opsbot check --config FILE`: reaches every configured cluster, cloud and Discord as the bot
//! would, and says per target, one line each, what works and what does not (the address and
//! cause of an unreachable server, the certificate TLS refused, 401, 403 with the missing
//! privilege, timeouts). Nothing is changed anywhere: every request is a read.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use opsbot_commands::name::HostName;
use opsbot_commands::openstack::ids::ImageRef;

use crate::backend::search::SearchClient;
use crate::clouds::Clouds;
use crate::config::{CloudConfig, Config, DiscordConfig};

/// What one target answered.
#[derive(Debug)]
pub struct Outcome {
    pub target: String,
    pub result: Result<String, String>,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.result {
            Ok(what) => write!(f, "ok    {}: {what}", self.target),
            Err(why) => write!(f, "FAIL  {}: {why}", self.target),
        }
    }
}

/// Checks every target, printing each line as soon as it is known; `Ok(false)` when any failed.
pub async fn run(config: &Config) -> anyhow::Result<bool> {
    let mut all_ok = true;
    let mut report = |outcome: Outcome| {
        all_ok &= outcome.result.is_ok();
        println!("{outcome}");
    };
    for cluster in &config.clusters {
        report(check_cluster(config, cluster).await);
    }
    for outcome in check_clouds(config).await {
        report(outcome);
    }
    if let Some(discord) = &config.discord {
        report(check_discord(discord, config.engine.request_timeout).await);
    }
    if config.clusters.is_empty() && config.clouds.is_empty() && config.discord.is_none() {
        println!("nothing to check: the config names no cluster, cloud or Discord");
    }
    Ok(all_ok)
}

/// `GET /` and `GET /_cluster/health`, the two reads every procedure starts with.
async fn check_cluster(config: &Config, cluster: &crate::config::ClusterConfig) -> Outcome {
    let target = format!("cluster `{}` at {}", cluster.name, cluster.url);
    let result = async {
        let client = SearchClient::new(
            &cluster.name,
            &cluster.url,
            &cluster.tls,
            cluster.auth.as_ref(),
            config.engine.request_timeout,
        )
        .map_err(|e| format!("{e:#}"))?;
        let version = client.version().await.map_err(|e| e.to_string())?;
        let health = client.health().await.map_err(|e| e.to_string())?;
        Ok(format!("{version}, health {}", health.status))
    }
    .await;
    Outcome { target, result }
}

/// Per cloud: a token (with its catalog), then one read of each API opsbot uses, a line each;
/// one line only when the cloud cannot be set up.
async fn check_clouds(config: &Config) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for cloud in &config.clouds {
        let target = format!("cloud `{}` at {}", cloud.name, cloud.auth_url);
        match check_cloud(config, cloud).await {
            Ok(apis) => outcomes.extend(apis.into_iter().map(|(api, result)| Outcome {
                target: format!("{target} {api}"),
                result,
            })),
            Err(error) => outcomes.push(Outcome {
                target,
                result: Err(format!("{error:#}")),
            }),
        }
    }
    outcomes
}

type ApiResult = (&'static str, Result<String, String>);

async fn check_cloud(config: &Config, cloud: &CloudConfig) -> anyhow::Result<[ApiResult; 3]> {
    let one = Config {
        clouds: vec![cloud.clone()],
        ..config.clone()
    };
    let clouds = Clouds::new(&one)?;
    let client = &clouds.get(&cloud.name)?.client;
    // Names no host or image has: the answers are empty lists, the permissions are real.
    let host = HostName::parse(PROBE)?;
    let image = ImageRef::parse(PROBE)?;
    Ok([
        ("placement", read(client.providers_named(&host)).await),
        ("compute", read(client.services()).await),
        ("image", read(client.images(&image)).await),
    ])
}

/// The host and image name the cloud reads look for.
const PROBE: &str = "opsbot-check";

/// One read whose answer only needs to have come.
async fn read<T, E: fmt::Display>(
    call: impl Future<Output = Result<T, E>>,
) -> Result<String, String> {
    call.await
        .map(|_| "token accepted, answers".to_owned())
        .map_err(|e| e.to_string())
}

/// The bot's own start-up check (token, guild, channels), bounded in time.
async fn check_discord(discord: &DiscordConfig, timeout: Duration) -> Outcome {
    let target = "discord".to_owned();
    let result = match tokio::time::timeout(
        timeout,
        crate::chat::discord::Discord::connect(discord),
    )
    .await
    {
        Ok(Ok(_)) => Ok("token, guild and channels answer".to_owned()),
        Ok(Err(error)) => Err(format!("{error:#}")),
        Err(_) => Err(format!("no answer within {} s", timeout.as_secs())),
    };
    Outcome { target, result }
}
