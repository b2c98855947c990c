//! `opsbot check --config FILE`: reaches every configured cluster, cloud, Discord and Slack as
//! the bot would, and says per target, one line each, what works and what does not (the address
//! and cause of an unreachable server, the certificate TLS refused, 401, 403 with the missing
//! privilege, timeouts, a Discord channel the bot may not post in, a Slack scope the app lacks).
//! Nothing is changed anywhere: every request is a read.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use opsbot_commands::name::HostName;
use opsbot_commands::openstack::ids::ImageRef;

use crate::backend::{BackendError, Gate};
use crate::chat::discord::Discord;
use crate::chat::matrix::{Connector as MatrixConnector, RoomAccess};
use crate::chat::slack::{ChannelAccess, Connector as SlackConnector, Reached};
use crate::clock::Clock;
use crate::clouds::Cloud;
use crate::clusters::Cluster;
use crate::config::{
    CloudConfig, ClusterConfig, Config, DiscordConfig, MatrixConfig, SlackConfig, SlackId,
};
use crate::metrics::BackendErrors;
use crate::runbooks::Library;

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
    check(config, |outcome| {
        all_ok &= outcome.result.is_ok();
        println!("{outcome}");
    })
    .await;
    let nothing = config.clusters.is_empty() && config.clouds.is_empty();
    let no_chat = config.discord.is_none() && config.slack.is_none() && config.matrix.is_none();
    if nothing && no_chat && config.runbooks.dir.is_none() {
        println!(
            "nothing to check: the config names no cluster, cloud, Discord, Slack, Matrix or \
             runbooks"
        );
    }
    Ok(all_ok)
}

/// Checks every target in the config's order, handing each outcome to `report` when known.
pub async fn check(config: &Config, mut report: impl FnMut(Outcome)) {
    if let Some(dir) = &config.runbooks.dir {
        report(check_runbooks(config, dir));
    }
    for cluster in &config.clusters {
        report(check_cluster(config, cluster).await);
    }
    for cloud in &config.clouds {
        check_cloud(config, cloud, &mut report).await;
    }
    if let Some(discord) = &config.discord {
        report(check_discord(discord, config.engine.request_timeout).await);
    }
    if let Some(slack) = &config.slack {
        report(check_slack(slack, config.engine.request_timeout).await);
    }
    if let Some(matrix) = &config.matrix {
        report(check_matrix(matrix, config.engine.request_timeout).await);
    }
}

/// The runbooks as `opsbot run` loads them at its start, which refuses them all for one file it
/// cannot use: a check that passed must not be followed by a bot that will not start.
fn check_runbooks(config: &Config, dir: &std::path::Path) -> Outcome {
    let result = match Library::load(&config.runbooks) {
        Ok(library) => {
            let names: Vec<String> = library
                .runbooks
                .iter()
                .map(|r| r.name.to_string())
                .collect();
            Ok(format!("{} loaded: {}", names.len(), names.join(", ")))
        }
        Err(error) => Err(format!("{error:#}; opsbot run refuses to start with it")),
    };
    Outcome {
        target: format!("runbooks {}", dir.display()),
        result,
    }
}

/// A failed call without its service, which the line's target already names.
fn failed(error: &BackendError) -> String {
    format!("{} {}", error.request, error.fault)
}

/// `GET /` and `GET /_cluster/health`, the two reads every procedure starts with.
async fn check_cluster(config: &Config, cluster: &ClusterConfig) -> Outcome {
    let result = async {
        let client = Cluster::new(
            cluster,
            config.engine.request_timeout,
            &BackendErrors::default(),
            Gate::open(),
        )
        .map_err(|e| format!("{e:#}"))?
        .search;
        let version = client.version().await.map_err(|e| failed(&e))?;
        let health = client.health().await.map_err(|e| failed(&e))?;
        let reached = format!("{version}, health {}", health.status);
        // Without credentials there is no security to ask (or anonymous access, which
        // opsbot cannot see the role of).
        if cluster.auth.is_none() {
            return Ok(reached);
        }
        match client.missing_privileges().await {
            Ok(missing) if missing.is_empty() => {
                Ok(format!("{reached}, every privilege opsbot uses"))
            }
            Ok(missing) => {
                let missing: Vec<String> = missing.iter().map(ToString::to_string).collect();
                Err(format!(
                    "{reached}, but the credentials lack {}; grant them to their role",
                    missing.join(", ")
                ))
            }
            Err(error) => Ok(format!(
                "{reached}; privileges not checked: {}",
                failed(&error)
            )),
        }
    }
    .await;
    Outcome {
        target: format!("cluster `{}` at {}", cluster.name, cluster.url),
        result,
    }
}

/// A token with its catalog, then one read of each API opsbot uses: a line each, the APIs
/// only once there is a token.
async fn check_cloud(config: &Config, cloud: &CloudConfig, report: &mut impl FnMut(Outcome)) {
    let target = |part: &str| format!("cloud `{}` {part}", cloud.name);
    let found = match Cloud::new(
        cloud,
        config.engine.request_timeout,
        &BackendErrors::default(),
        &Clock::system(),
    ) {
        Ok(found) => found,
        Err(error) => {
            return report(Outcome {
                target: target("identity"),
                result: Err(format!("{error:#}")),
            });
        }
    };
    let client = &found.client;
    let token = client.authenticate().await;
    let issued = token.is_ok();
    report(Outcome {
        target: target(&format!("identity at {}", cloud.auth_url)),
        result: token
            .map(|()| "token issued, with its catalog".to_owned())
            .map_err(|e| failed(&e)),
    });
    if !issued {
        return;
    }
    // Names no host or image has: the answers are empty lists, the permissions are real.
    // (Both parse: the name is a constant that is both.)
    let (Ok(host), Ok(image)) = (HostName::parse(PROBE), ImageRef::parse(PROBE)) else {
        return;
    };
    report(Outcome {
        target: target("placement"),
        result: read(client.providers_named(&host)).await,
    });
    report(Outcome {
        target: target("compute"),
        result: read(client.services()).await,
    });
    report(Outcome {
        target: target("image"),
        result: read(client.images(&image)).await,
    });
}

/// The host and image name the cloud reads look for.
const PROBE: &str = "opsbot-check";

/// One read whose answer only needs to have come.
async fn read<T>(call: impl Future<Output = Result<T, BackendError>>) -> Result<String, String> {
    call.await
        .map(|_| "the token is accepted and the API answers".to_owned())
        .map_err(|e| failed(&e))
}

/// The bot's own start-up check (token, guild, channels), bounded in time.
async fn check_discord(discord: &DiscordConfig, timeout: Duration) -> Outcome {
    let target = "discord".to_owned();
    let result = match tokio::time::timeout(timeout, Discord::connect(discord)).await {
        Ok(Ok(discord)) => usable(&discord),
        Ok(Err(error)) => Err(format!("{error:#}")),
        Err(_) => Err(format!("no answer within {} s", timeout.as_secs())),
    };
    Outcome { target, result }
}

/// Ok only when the bot may also post everywhere it must: a channel lacking a permission
/// connects fine, yet its progress or announcements would never appear.
fn usable(discord: &Discord) -> Result<String, String> {
    let mut forbidden: Vec<_> = discord.forbidden_channels().collect();
    if forbidden.is_empty() {
        return Ok("token, guild and channels answer".to_owned());
    }
    // By channel, whatever order the check found them in: the same config, the same line.
    forbidden.sort_by(|a, b| a.channel.cmp(&b.channel));
    let lines: Vec<String> = forbidden.iter().map(ToString::to_string).collect();
    Err(lines.join("; "))
}

/// Where the app-level token stands: asking Slack for a Socket Mode URL would spend one
/// (`apps.connections.open` is tier 1, one a minute), so only its form is checked here.
const APP_TOKEN: &str = "the app-level token is checked when the bot connects";

/// The bot's own start-up check of Slack (bot token, workspace, scopes, the served and the
/// announcement channels), bounded in time. Nothing is posted.
async fn check_slack(slack: &SlackConfig, timeout: Duration) -> Outcome {
    let result = match SlackConnector::new(slack) {
        Err(error) => Err(format!("{error:#}")),
        Ok(connector) => match tokio::time::timeout(timeout, connector.check()).await {
            Ok(Ok(reached)) => slack_usable(&slack.team, &reached),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err(format!("no answer within {} s", timeout.as_secs())),
        },
    };
    Outcome {
        target: "slack".to_owned(),
        result,
    }
}

/// Ok only when nothing keeps the bot from a scope or a channel: what to fix first, then what
/// the bot may do in each channel.
fn slack_usable(team: &SlackId, reached: &Reached) -> Result<String, String> {
    let mut head = format!("workspace {team}, bot {}", reached.bot_user);
    if reached.missing_scopes.as_ref().is_some_and(Vec::is_empty) {
        head.push_str(", every scope opsbot uses");
    }
    let each: Vec<String> = reached
        .access
        .iter()
        .map(|a| format!("{} {}", label(a), can(a)))
        .collect();
    if !reached.problems.is_empty() {
        let problems = reached.problems.join("; ");
        return Err(format!(
            "{head}: {problems}; {}; {APP_TOKEN}",
            each.join("; ")
        ));
    }
    if reached.access.iter().all(|a| a.write == Some(true)) {
        let names: Vec<String> = reached.access.iter().map(label).collect();
        let channels = if names.len() == 1 {
            "channel"
        } else {
            "channels"
        };
        let names = names.join(", ");
        return Ok(format!(
            "{head}; {channels} {names} answer, each read and written; {APP_TOKEN}"
        ));
    }
    Ok(format!("{head}; {}; {APP_TOKEN}", each.join("; ")))
}

/// The bot's own start-up check of Matrix (its credential and user, each room: joined,
/// unencrypted, its power level), bounded in time, joining nothing. Nothing is posted.
async fn check_matrix(matrix: &MatrixConfig, timeout: Duration) -> Outcome {
    let result = match MatrixConnector::new(matrix) {
        Err(error) => Err(format!("{error:#}")),
        Ok(connector) => match tokio::time::timeout(timeout, connector.inspect()).await {
            Ok(Ok(reached)) => {
                let head = format!("homeserver {}, bot {}", matrix.homeserver, matrix.user);
                let rooms: Vec<String> = reached.access.iter().map(room_can).collect();
                let said = format!("{head}; {}", rooms.join("; "));
                if reached.problems.is_empty() {
                    Ok(said)
                } else {
                    Err(format!("{head}: {}", reached.problems.join("; ")))
                }
            }
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err(format!("no answer within {} s", timeout.as_secs())),
        },
    };
    Outcome {
        target: "matrix".to_owned(),
        result,
    }
}

/// `#ops joined, can post`, marked when maintenance is announced there.
fn room_can(access: &RoomAccess) -> String {
    let can = match (access.joined, access.write) {
        (true, true) => "joined, can post",
        (true, false) => "joined, cannot post",
        (false, _) => "not joined",
    };
    let announce = if access.announce {
        " (announcements)"
    } else {
        ""
    };
    format!("{}{announce} {can}", access.shown)
}

/// `#ops`, marked when maintenance is announced there.
fn label(access: &ChannelAccess) -> String {
    if access.announce {
        format!("{} (announcements)", access.shown)
    } else {
        access.shown.clone()
    }
}

/// Whether the bot may read the channel (look it up) and write in it (post).
fn can(access: &ChannelAccess) -> &'static str {
    match (access.read, access.write) {
        (true, Some(true)) => "can be read and written",
        (true, Some(false)) => "can be read, not written",
        (true, None) => "can be read, and written if the token has chat:write",
        (false, Some(false)) => "can be neither read nor written",
        (false, _) => "cannot be read, and written only if the bot is in it",
    }
}

#[cfg(test)]
mod tests;
