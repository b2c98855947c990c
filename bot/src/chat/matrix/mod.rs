//! The Matrix front end: the bot is a user of a homeserver, syncing the rooms it serves
//! (Matrix has no bot slash commands: `!cluster status` is a message), approving by reaction
//! (✅ on a plan's message) or by `!approve`, and posting each run's progress as one message
//! edited in place (`m.replace`).
//!
//! Written on the HTTP client opsbot has rather than `matrix-sdk`: opsbot calls a dozen
//! endpoints and serves unencrypted rooms only, and the SDK's crypto and store would cost more
//! build time than the whole bot.

mod client;
mod content;
mod handler;
mod keep;
mod reach;
mod reaction;
mod transport;

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use opsbot_commands::run::ChannelId;
use reqwest::Method;
use secrecy::{ExposeSecret, SecretString};
use serde_json::json;

pub use reach::{Reached, RoomAccess};
pub use transport::MatrixTransport;

use crate::chat::Unusable;
use crate::config::{MatrixConfig, Tls};
use crate::progress::Pace;
use client::{Client, MatrixError};

/// Where the access token comes from when no `access_token_file` is configured.
pub const TOKEN_VARIABLE: &str = "OPSBOT_MATRIX_ACCESS_TOKEN";
/// Where the password comes from when no `password_file` is configured.
pub const PASSWORD_VARIABLE: &str = "OPSBOT_MATRIX_PASSWORD";

/// The device the bot logs in as with its password: always the same, so that the homeserver's
/// transaction ids (scoped to a device) keep a message sent before a restart from being sent
/// again after it.
const DEVICE: &str = "OPSBOT";

/// The device `opsbot check` logs in as, and out of when done, so that checks leave no
/// sessions behind: a logout deletes its device with every session of it, which on
/// [`DEVICE`] would end the running bot's.
const CHECK_DEVICE: &str = "OPSBOT-CHECK";

/// How a run started in Matrix names its room in the store: `matrix:!room:server`.
const PREFIX: &str = "matrix:";

/// The store's name of a Matrix room.
pub fn channel_id(room: &str) -> ChannelId {
    ChannelId(format!("{PREFIX}{room}"))
}

/// The Matrix room a stored channel names, if it is one.
pub fn matrix_room(channel: &ChannelId) -> Option<&str> {
    channel
        .0
        .strip_prefix(PREFIX)
        .filter(|room| !room.is_empty())
}

/// How the bot proves who it is.
enum Credential {
    Token(SecretString),
    Password(SecretString),
}

/// What connecting to Matrix needs, read and checked before any request: the credential and
/// the HTTPS client.
pub struct Connector {
    config: MatrixConfig,
    client: Client,
    credential: Arc<Credential>,
    /// Shared by the router's progress and the sync, which tells it of redactions.
    transport: MatrixTransport,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector")
            .field("user", &self.config.user)
            .finish_non_exhaustive()
    }
}

impl Connector {
    /// Reads the credential and sets up the client; nothing is sent yet.
    pub fn new(config: &MatrixConfig) -> anyhow::Result<Self> {
        let tls = Tls {
            ca_file: config.ca_file.clone(),
            identity: None,
        };
        let http = crate::backend::http::client(&tls, config.request_timeout)?;
        let period = std::time::Duration::from_secs_f64(1.0 / config.messages_per_second);
        let pace = Pace::new(crate::chat::paced(period));
        let credential = credential(config)?;
        let client = Client::new(http, &config.homeserver, pace);
        if let Credential::Token(token) = &credential {
            client.set_token(token.clone());
        }
        let announce = config.announce_room.as_ref().map(|r| r.as_str().to_owned());
        let renewable = matches!(credential, Credential::Password(_));
        Ok(Self {
            config: config.clone(),
            transport: MatrixTransport::new(client.clone(), announce, renewable),
            client,
            credential: Arc::new(credential),
        })
    }

    /// The transport progress posts with.
    pub fn transport(&self) -> MatrixTransport {
        self.transport.clone()
    }

    /// Logs in with the password, when that is the credential: as the configured user, on
    /// `device`; whatever session that device had ends.
    async fn log_in(&self, device: &str) -> Result<(), Unusable> {
        let Credential::Password(password) = &*self.credential else {
            return Ok(());
        };
        let body = json!({
            "type": "m.login.password",
            "identifier": { "type": "m.id.user", "user": self.config.user.as_str() },
            "password": password.expose_secret(),
            "device_id": device,
            "initial_device_display_name": "opsbot",
        });
        let answer = self
            .client
            .call("logging in", Method::POST, "/v3/login", Some(&body))
            .await
            .map_err(|error| unusable(error, "logging in"))?;
        let token = answer["access_token"].as_str().unwrap_or_default();
        if token.is_empty() {
            return Err(Unusable::Unavailable(anyhow::anyhow!(
                "logging in: the homeserver answered without an access token"
            )));
        }
        self.client.set_token(SecretString::from(token.to_owned()));
        Ok(())
    }

    /// Ends the session a password login made (its device goes too); nothing to do with an
    /// access token, which is the operator's.
    async fn log_out(&self) {
        if let Credential::Password(_) = &*self.credential {
            let ended = self
                .client
                .call("logging out", Method::POST, "/v3/logout", None)
                .await;
            if let Err(error) = ended {
                tracing::warn!(%error, "the check's session could not be ended");
            }
        }
    }
}

/// The credential from its file or the environment: the access token first, else the password.
fn credential(config: &MatrixConfig) -> anyhow::Result<Credential> {
    let read = |path: &Path, what: &str| {
        std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the Matrix {what} file {}", path.display()))
            .map(|text| SecretString::from(text.trim().to_owned()))
    };
    if let Some(path) = &config.access_token_file {
        return read(path, "access token").map(Credential::Token);
    }
    if let Some(path) = &config.password_file {
        return read(path, "password").map(Credential::Password);
    }
    if let Ok(token) = std::env::var(TOKEN_VARIABLE) {
        return Ok(Credential::Token(SecretString::from(
            token.trim().to_owned(),
        )));
    }
    if let Ok(password) = std::env::var(PASSWORD_VARIABLE) {
        return Ok(Credential::Password(SecretString::from(
            password.trim().to_owned(),
        )));
    }
    anyhow::bail!(
        "no Matrix credential: set {TOKEN_VARIABLE} or {PASSWORD_VARIABLE}, or \
         access_token_file or password_file in [matrix]"
    )
}

/// A failed request as the start-up check and the keeper act on it: refused (a wrong token
/// or password, a deactivated user) needs the config changed; anything else may pass.
fn unusable(error: MatrixError, doing: &str) -> Unusable {
    let what = anyhow::anyhow!("{doing}: {error}");
    match error.errcode() {
        Some("M_FORBIDDEN" | "M_UNKNOWN_TOKEN" | "M_MISSING_TOKEN" | "M_USER_DEACTIVATED") => {
            Unusable::Refused(what.context(
                "the homeserver refused the bot's credential: check [matrix] user and its \
                 access token or password",
            ))
        }
        _ => Unusable::Unavailable(what),
    }
}
