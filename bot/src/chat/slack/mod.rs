//! The Slack front end over Socket Mode: slash commands and button presses arrive on a
//! WebSocket the bot opens itself (no public HTTP endpoint, which suits a bot on a management
//! network), and everything it says goes through the Web API with the bot token.

mod access;
mod blocked;
mod blocks;
mod handler;
mod keep;
mod manifest;
mod mention;
mod reach;
mod said;
mod socket;
mod transport;
mod web;

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use opsbot_commands::run::ChannelId;
use secrecy::{ExposeSecret, SecretString};
use serde_json::Value;

pub use handler::SINGLE_COMMAND;
pub use manifest::{BOT_SCOPES, manifest};
pub use reach::{ChannelAccess, Reached};
pub use transport::SlackTransport;

use crate::config::{SlackConfig, Tls};
use blocked::Blocked;
use web::Web;

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
    /// The channels where Slack refused the bot, shared by its transport and its handler.
    blocked: Blocked,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector")
            .field("team", &self.config.team)
            .finish_non_exhaustive()
    }
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
            blocked: Blocked::default(),
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
            self.blocked.clone(),
        )
    }
}

/// A string field of a Slack answer, empty when absent.
fn text(value: &Value, field: &str) -> String {
    value[field].as_str().unwrap_or_default().to_owned()
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
