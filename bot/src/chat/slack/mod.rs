//! The Slack front end over Socket Mode: slash commands and button presses arrive on a
//! WebSocket the bot opens itself (no public HTTP endpoint, which suits a bot on a management
//! network), and everything it says goes through the Web API with the bot token.

mod access;
mod blocks;
mod handler;
mod keep;
mod manifest;
mod socket;
mod transport;
mod web;

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use opsbot_commands::run::ChannelId;
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};

pub use handler::SINGLE_COMMAND;
pub use keep::Keeper;
pub use manifest::manifest;
pub use transport::SlackTransport;

use super::Unusable;
use crate::config::{SlackConfig, SlackId, Tls};
use web::{Web, WebError};

/// Where the bot token comes from when no `bot_token_file` is configured.
pub const BOT_TOKEN_VARIABLE: &str = "OPSBOT_SLACK_BOT_TOKEN";
/// Where the app-level token comes from when no `app_token_file` is configured.
pub const APP_TOKEN_VARIABLE: &str = "OPSBOT_SLACK_APP_TOKEN";

/// How a run started in Slack names its channel in the store: `slack:C…`, so that a Slack
/// channel can never be taken for a Discord one or the console.
const PREFIX: &str = "slack:";

/// The store's name of a Slack channel.
pub fn channel_id(channel: &str) -> ChannelId {
    ChannelId(format!("{PREFIX}{channel}"))
}

/// The Slack channel a stored channel names, if it is one.
pub fn slack_channel(channel: &ChannelId) -> Option<&str> {
    channel.0.strip_prefix(PREFIX)
}

/// What connecting to Slack needs, read and checked before any request: both tokens and the
/// HTTPS client. Its errors are the config's own.
pub struct Connector {
    config: SlackConfig,
    bot: Web,
    app: Web,
    tls: Arc<rustls::ClientConfig>,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector")
            .field("team", &self.config.team)
            .finish_non_exhaustive()
    }
}

/// What the start-up check found: the bot, and each served channel's name.
#[derive(Debug, Clone)]
pub struct Reached {
    /// The bot's member id, as `auth.test` names it.
    pub bot_user: String,
    /// Each served channel and how a refusal names it (`#ops`).
    pub channels: Vec<(SlackId, String)>,
    /// Served channels the bot cannot use, each with what to do about it.
    pub problems: Vec<String>,
}

impl Connector {
    /// Reads both tokens and sets up the client; nothing is sent yet.
    pub fn new(config: &SlackConfig) -> anyhow::Result<Self> {
        let tls = Tls {
            ca_file: config.ca_file.clone(),
            identity: None,
        };
        let client = crate::backend::http::client(&tls, config.request_timeout)?;
        let bot = token(
            config.bot_token_file.as_deref(),
            BOT_TOKEN_VARIABLE,
            "xoxb-",
            "bot token",
        )?;
        let app = token(
            config.app_token_file.as_deref(),
            APP_TOKEN_VARIABLE,
            "xapp-",
            "app-level token",
        )?;
        Ok(Self {
            config: config.clone(),
            bot: Web::new(client.clone(), &config.api_url, bot),
            app: Web::new(client, &config.api_url, app),
            tls: Arc::new(crate::backend::http::rustls_config(&tls)?),
        })
    }

    /// The transport progress posts with: the Web API needs no connection of its own.
    pub fn transport(&self) -> SlackTransport {
        SlackTransport::new(
            self.bot.clone(),
            self.config
                .announce_channel
                .as_ref()
                .map(|c| c.as_str().to_owned()),
            self.config.updates_per_minute,
            self.config.minute,
        )
    }

    /// Checks the bot token (its workspace is the configured one) and each served channel,
    /// each failure with what to fix and whether waiting can help.
    pub async fn check(&self) -> Result<Reached, Unusable> {
        let me = self
            .bot
            .call("auth.test", &json!({}))
            .await
            .map_err(|e| unusable(e, "checking the bot token"))?;
        let team = text(&me, "team_id");
        if team != self.config.team.as_str() {
            return Err(Unusable::Refused(anyhow::anyhow!(
                "the bot token belongs to workspace {team}, not to [slack] team {}: install \
                 the app in that workspace or fix team",
                self.config.team
            )));
        }
        let mut reached = Reached {
            bot_user: text(&me, "user_id"),
            channels: Vec::new(),
            problems: Vec::new(),
        };
        for channel in &self.config.channels {
            let shown = match self.channel(channel).await? {
                Ok(name) => format!("#{name}"),
                Err(problem) => {
                    reached.problems.push(problem);
                    channel.to_string()
                }
            };
            reached.channels.push((channel.clone(), shown));
        }
        Ok(reached)
    }

    /// A served channel's name, or what keeps the bot from it.
    async fn channel(&self, channel: &SlackId) -> Result<Result<String, String>, Unusable> {
        let args = json!({ "channel": channel.as_str() });
        match self.bot.call("conversations.info", &args).await {
            Ok(info) => {
                let name = text(&info["channel"], "name");
                if info["channel"]["is_member"].as_bool() == Some(false) {
                    return Ok(Err(format!(
                        "the bot is not in channel #{name} ({channel}): type /invite @opsbot there"
                    )));
                }
                Ok(Ok(name))
            }
            Err(error) if error.refuses_token() => Err(unusable(error, "looking up the channels")),
            Err(WebError::Slack { error, needed, .. }) => Ok(Err(match needed {
                Some(scope) => format!(
                    "channel {channel}: the app lacks the scope {scope}; add it under OAuth \
                         & Permissions and reinstall the app"
                ),
                None => format!("channel {channel}: Slack says {error}"),
            })),
            Err(error) => Err(unusable(error, "looking up the channels")),
        }
    }
}

/// A string field of a Slack answer, empty when absent.
fn text(value: &Value, field: &str) -> String {
    value[field].as_str().unwrap_or_default().to_owned()
}

/// A failed call as the start sees it: refused for good, or worth waiting for.
fn unusable(error: WebError, doing: &str) -> Unusable {
    match &error {
        WebError::Slack { .. } | WebError::NotSent { .. } => {
            Unusable::Refused(anyhow::anyhow!("{doing}: {error}"))
        }
        _ => Unusable::Unavailable(anyhow::anyhow!("{doing}: {error}")),
    }
}

/// A token from its file or the environment, checked for its kind: a bot token where the
/// app-level one belongs is the commonest mistake, and Slack would only say `not_allowed_token_type`.
fn token(
    file: Option<&Path>,
    variable: &str,
    prefix: &str,
    what: &str,
) -> anyhow::Result<SecretString> {
    let token = match file {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the Slack {what} file {}", path.display()))?,
        None => std::env::var(variable).map_err(|_| {
            anyhow::anyhow!("no Slack {what}: set {variable}, or its file in [slack]")
        })?,
    };
    let token = SecretString::from(token.trim().to_owned());
    if !token.expose_secret().starts_with(prefix) {
        anyhow::bail!("the Slack {what} does not start with {prefix}: is it the right token?");
    }
    Ok(token)
}
