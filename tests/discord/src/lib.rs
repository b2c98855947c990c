//! A protocol-faithful fake Discord on loopback, for driving the real `serenity` client in tests.
//!
//! [`FakeDiscord::start`] serves Discord's REST API over TLS (a certificate for `discord.com`
//! signed by a CA made at start) and a plain `ws://` gateway, both on 127.0.0.1. A client reaches
//! it by resolving `discord.com` to [`FakeDiscord::rest_addr`] and trusting [`FakeDiscord::ca_pem`],
//! so request URLs stay `https://discord.com/api/v10/...` and serenity's own ratelimiter stays on:
//!
//! ```text
//! let fake = FakeDiscord::start(FakeConfig::default()).await;
//! let client = reqwest::Client::builder()            // reqwest 0.12, serenity's own
//!     .use_rustls_tls()
//!     .resolve("discord.com", fake.rest_addr())
//!     .add_root_certificate(reqwest::Certificate::from_pem(fake.ca_pem().as_bytes())?)
//!     .build()?;                                      // or: fake.reqwest_client()?
//! let http = serenity::http::HttpBuilder::new(&fake.config().token).client(client).build();
//! let client = serenity::Client::builder... ClientBuilder::new_with_http(http, intents)
//! // and never `.token(..)` after that: it would replace the client.
//! ```
//!
//! The fake enforces Discord's rules (3 s to answer an interaction, once; content limits; a
//! per-channel message rate limit answered with 429s; the bot's channel permissions; mentions
//! and `allowed_mentions`; nonces) and records every breach in [`FakeDiscord::violations`].
//! Every message that would ping someone is a breach too ([`FakeDiscord::pings`]), and every
//! 401, 403 and 429 is counted as Discord counts invalid requests
//! ([`FakeDiscord::invalid_requests`]).

mod commands;
mod control;
mod gateway;
mod interactions;
mod invalid;
mod mentions;
mod messages;
mod nonces;
mod options;
mod payloads;
pub mod permissions;
mod rest;
mod rules;
mod staff;
mod state;
pub mod tls;
mod uploads;
pub use uploads::Upload;
mod webhook;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::state::Shared;

/// What the fake Discord knows and how strict it is.
#[derive(Debug, Clone)]
pub struct FakeConfig {
    /// The bot token; clients must send `Authorization: Bot <token>`.
    pub token: String,
    pub application_id: u64,
    pub bot_user_id: u64,
    /// The owner of the application and of the guild.
    pub owner_id: u64,
    pub guild_id: u64,
    /// The text channels of the guild.
    pub channels: Vec<u64>,
    /// Channel message creates and edits allowed per channel per `window`.
    pub edits_per_window: u32,
    pub window: Duration,
    /// Time an interaction's first response has, from its dispatch.
    pub first_response_deadline: Duration,
    /// Life of an interaction token (follow-ups, `@original`).
    pub interaction_token_ttl: Duration,
    /// The heartbeat interval announced in HELLO.
    pub heartbeat_interval: Duration,
    /// The bot's permissions in every channel until [`FakeDiscord::set_bot_permissions`] changes
    /// them: Discord's bits, see [`permissions`]. The default is what a bot in a channel it
    /// serves has in a guild left at Discord's defaults ([`permissions::BOT_DEFAULT`]).
    pub bot_permissions: u64,
    /// How long a message's nonce is remembered for `enforce_nonce`. Discord says only "a few
    /// minutes"; the default, 2 minutes, errs on the short side, where a bot that relies on the
    /// nonce after a restart gets duplicates sooner.
    pub nonce_window: Duration,
    /// Invalid requests (401, 403, 429) in any 10 minutes after which Discord bans the client's
    /// IP (10,000); the fake records the ban as a violation and keeps answering.
    pub invalid_request_limit: usize,
}

impl Default for FakeConfig {
    fn default() -> Self {
        Self {
            token: "fake-token".to_owned(),
            application_id: 1_100_000_000_000_000_001,
            bot_user_id: 1_100_000_000_000_000_001,
            owner_id: 1_100_000_000_000_000_099,
            guild_id: 1_100_000_000_000_000_100,
            channels: vec![1_100_000_000_000_000_200, 1_100_000_000_000_000_201],
            edits_per_window: 5,
            window: Duration::from_secs(5),
            first_response_deadline: Duration::from_secs(3),
            interaction_token_ttl: Duration::from_secs(15 * 60),
            heartbeat_interval: Duration::from_millis(41_250),
            bot_permissions: permissions::BOT_DEFAULT,
            nonce_window: Duration::from_secs(2 * 60),
            invalid_request_limit: 10_000,
        }
    }
}

/// A guild member who invokes commands and clicks buttons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeUser {
    pub id: u64,
    pub name: String,
    pub roles: Vec<u64>,
    /// The member's permissions in the channel, as Discord computes them.
    pub permissions: u64,
}

impl FakeUser {
    /// A member with the given roles and an ordinary member's permissions.
    pub fn new(id: u64, name: &str, roles: &[u64]) -> Self {
        Self {
            id,
            name: name.to_owned(),
            roles: roles.to_vec(),
            permissions: permissions::MEMBER,
        }
    }
}

/// The id of an interaction the fake dispatched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InteractionId(pub u64);

/// What a client answered to one interaction.
#[derive(Debug, Clone, PartialEq)]
pub struct InteractionRecord {
    /// The first response's type: 4 message, 5 deferred, 6 deferred update, 7 update,
    /// 8 autocomplete result, 9 modal.
    pub kind: u8,
    /// The first response's `data` (`{}` when it had none).
    pub data: Value,
    /// Fixed by the first response (`flags & 64`).
    pub ephemeral: bool,
    /// From dispatch to the first response.
    pub at: Duration,
    /// Bodies of `POST /webhooks/{app}/{token}`, in order.
    pub followups: Vec<Value>,
    /// Bodies of `PATCH .../messages/@original`, in order.
    pub original_edits: Vec<Value>,
}

/// A message in a channel, as the fake stores it.
#[derive(Debug, Clone, PartialEq)]
pub struct FakeMessage {
    pub id: u64,
    pub content: String,
    pub embeds: Vec<Value>,
    pub components: Vec<Value>,
    /// Message flags (64: ephemeral, 128: a deferred response still "thinking").
    pub flags: u64,
    /// Every version of the full message object, oldest first, the current one last.
    pub history: Vec<Value>,
}

impl FakeMessage {
    pub fn ephemeral(&self) -> bool {
        self.flags & payloads::EPHEMERAL != 0
    }
}

/// What a mention in a message's content stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mention {
    /// `@everyone`
    Everyone,
    /// `@here`
    Here,
    /// `<@id>` or `<@!id>`
    User(u64),
    /// `<@&id>`
    Role(u64),
}

impl std::fmt::Display for Mention {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Everyone => f.write_str("@everyone"),
            Self::Here => f.write_str("@here"),
            Self::User(id) => write!(f, "user {id}"),
            Self::Role(id) => write!(f, "role {id}"),
        }
    }
}

/// A mention Discord would have notified someone of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ping {
    pub channel_id: u64,
    pub message_id: u64,
    pub mention: Mention,
    /// Made by an edit of the message's content rather than by its first content.
    pub edit: bool,
}

/// Why the fake could not start.
#[derive(Debug, thiserror::Error)]
pub enum FakeError {
    #[error("fake discord: cannot bind a loopback port: {0}")]
    Bind(#[from] std::io::Error),
    #[error("fake discord: cannot make the test certificates: {0}")]
    Certificate(#[from] rcgen::Error),
    #[error("fake discord: TLS setup: {0}")]
    Tls(String),
}

/// A running fake Discord. Dropping it leaves its tasks running until the runtime ends;
/// [`FakeDiscord::shutdown`] stops them.
pub struct FakeDiscord {
    shared: Arc<Shared>,
    rest_addr: SocketAddr,
    ca_pem: String,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for FakeDiscord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeDiscord")
            .field("rest_addr", &self.rest_addr)
            .field("gateway_url", &self.shared.gateway_url)
            .finish_non_exhaustive()
    }
}

impl FakeDiscord {
    /// Starts the REST server and the gateway; panics if a loopback port cannot be bound.
    pub async fn start(config: FakeConfig) -> Self {
        match Self::try_start(config).await {
            Ok(fake) => fake,
            Err(e) => panic!("{e}"),
        }
    }

    pub async fn try_start(config: FakeConfig) -> Result<Self, FakeError> {
        let identity = tls::identity()?;
        let rest = TcpListener::bind("127.0.0.1:0").await?;
        let ws = TcpListener::bind("127.0.0.1:0").await?;
        let rest_addr = rest.local_addr()?;
        let gateway_url = format!("ws://{}", ws.local_addr()?);
        let shared = Arc::new(Shared::new(config, gateway_url));
        let (stop, stopped) = watch::channel(false);

        let listener = opsbot_search_sim::TlsListener::new(rest, identity.server)?;
        let app = rest::router(Arc::clone(&shared));
        let mut rest_stop = stopped.clone();
        let rest_task = tokio::spawn(async move {
            let serve = axum::serve(listener, app)
                .with_graceful_shutdown(async move { gateway::stopped(&mut rest_stop).await });
            if let Err(e) = serve.await {
                tracing::warn!("fake discord: REST server failed: {e}");
            }
        });
        let gateway_task = tokio::spawn(gateway::serve(ws, Arc::clone(&shared), stopped));
        tracing::debug!(%rest_addr, gateway = %shared.gateway_url, "fake discord: started");
        Ok(Self {
            shared,
            rest_addr,
            ca_pem: identity.ca_pem,
            stop,
            tasks: vec![rest_task, gateway_task],
        })
    }

    /// Where `discord.com` must resolve to (TLS, HTTP/1.1).
    pub fn rest_addr(&self) -> SocketAddr {
        self.rest_addr
    }

    /// The PEM of the CA that signed the `discord.com` certificate.
    pub fn ca_pem(&self) -> String {
        self.ca_pem.clone()
    }

    /// `ws://127.0.0.1:PORT`, as `GET /gateway` reports it.
    pub fn gateway_url(&self) -> String {
        self.shared.gateway_url.clone()
    }

    /// A `reqwest` client (the version serenity 0.12.5 resolves to here) that reaches the fake as
    /// `https://discord.com`: hand it to serenity with `HttpBuilder::new(token).client(..)`.
    pub fn reqwest_client(&self) -> Result<reqwest::Client, reqwest::Error> {
        reqwest::Client::builder()
            .use_rustls_tls()
            .resolve("discord.com", self.rest_addr)
            .add_root_certificate(reqwest::Certificate::from_pem(self.ca_pem.as_bytes())?)
            .timeout(Duration::from_secs(30))
            .build()
    }

    pub fn config(&self) -> &FakeConfig {
        &self.shared.cfg
    }

    /// A member of the guild (see [`FakeUser::new`]).
    pub fn user(id: u64, name: &str, roles: &[u64]) -> FakeUser {
        FakeUser::new(id, name, roles)
    }

    /// Closes the gateway connection (1001, going away), then stops both servers.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            if tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .is_err()
            {
                tracing::warn!("fake discord: a server task did not stop within 5 s");
            }
        }
    }
}
