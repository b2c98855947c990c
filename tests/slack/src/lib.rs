//! A protocol-faithful fake Slack on loopback: the Web API and Socket Mode, as strict as Slack.
//!
//! [`FakeSlack::start`] serves the Web API under [`FakeSlack::base_url`]
//! (`http://127.0.0.1:PORT/api/`, methods as `POST {base}chat.postMessage`) and Socket Mode on a
//! second port, reached only through the single-use URL `apps.connections.open` returns. Every
//! answer is Slack's: HTTP 200 with `{"ok": false, "error": ...}` for refusals, 429 with
//! `Retry-After` for rate limits. Time for rate limits and acknowledgement deadlines runs on the
//! fake's own clock, which a test moves with [`FakeSlack::advance`] instead of sleeping.
//!
//! The test side (channels, scopes, envelopes, faults, what the client posted) is in `control`.

mod blocks;
mod chat;
mod control;
mod files;
mod history;
mod limits;
mod mentions;
mod metadata;
mod methods;
mod params;
mod response;
mod socket;
mod state;
mod web;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use crate::control::{BlockAction, SlashCommand};
pub use crate::methods::WebMethod;
use crate::state::Shared;

/// Who the fake workspace is and how strict it is.
#[derive(Debug, Clone)]
pub struct SlackConfig {
    pub team_id: String,
    pub team_name: String,
    pub app_id: String,
    /// The bot user's id (`U…`) and its bot id (`B…`), as `auth.test` reports them.
    pub bot_user_id: String,
    pub bot_id: String,
    pub bot_token: String,
    /// The app-level token, the only kind `apps.connections.open` accepts.
    pub app_token: String,
    /// The bot token's scopes until a test changes them.
    pub bot_scopes: Vec<String>,
    pub app_scopes: Vec<String>,
    /// `chat.postMessage` allows about one message a second per channel "with short bursts":
    /// at most this many in any window of as many seconds. Slack does not publish the burst
    /// size; 3 errs on the strict side.
    pub post_burst: u32,
    /// The minute the rate limits are counted in: 60 s, as at Slack; a test shortens it to
    /// scale every limit alike (`chat.postMessage`'s second is `minute / 60`), together with
    /// the bot's `[slack] minute`.
    pub minute: Duration,
    /// Time a client has to acknowledge an envelope (Slack: 3 s).
    pub ack_deadline: Duration,
    /// How often the fake pings each Socket Mode connection. Slack's server pings its clients:
    /// Slack's own client (`@slack/socket-mode`, `SlackWebSocket.ts`) deems a connection dead
    /// after 30 s without a ping from the server (`serverPingTimeoutMS`), so Slack pings well
    /// within that. Slack does not publish the period; 10 s here.
    pub heartbeat: Duration,
    /// Slack's workspace setting "people can edit their messages" for `chat.update`; `None`
    /// (Slack's default, and what applies to bots) lets the bot edit forever.
    pub edit_window: Option<Duration>,
}

impl Default for SlackConfig {
    fn default() -> Self {
        Self {
            team_id: "T0FAKE0001".to_owned(),
            team_name: "Fake Ops".to_owned(),
            app_id: "A0FAKE0001".to_owned(),
            bot_user_id: "U0FAKEBOT1".to_owned(),
            bot_id: "B0FAKEBOT1".to_owned(),
            bot_token: "xoxb-1111-2222-fakebottoken".to_owned(),
            app_token: "xapp-1-A0FAKE0001-3333-fakeapptoken".to_owned(),
            bot_scopes: ["chat:write", "channels:read", "groups:read", "commands"]
                .map(str::to_owned)
                .to_vec(),
            app_scopes: vec!["connections:write".to_owned()],
            post_burst: 3,
            minute: Duration::from_secs(60),
            ack_deadline: Duration::from_secs(3),
            heartbeat: Duration::from_secs(10),
            edit_window: None,
        }
    }
}

/// Whether a channel is public (`C…`, needs `channels:read` / `channels:history`) or private
/// (`G…`, `groups:read` / `groups:history`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    Public,
    Private,
}

/// What Slack says of a token that no longer works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenStatus {
    Active,
    /// The app was uninstalled or the token revoked: `token_revoked`.
    Revoked,
    /// The workspace or the bot user was deactivated: `account_inactive`.
    Inactive,
}

/// How the next calls of a method fail, whatever they ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// HTTP 200 with `{"ok": false, "error": code}`.
    Error(String),
    /// HTTP 429 with `Retry-After: secs`.
    RateLimited { retry_after_secs: u64 },
}

/// A channel message as the fake holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct SlackMessage {
    pub channel: String,
    pub ts: String,
    /// The poster: the bot's user id, or the user's a test posted as.
    pub user: String,
    /// Verbatim, as posted: escaping is the client's job and tests check it.
    pub text: String,
    pub blocks: Vec<Value>,
    /// Every version as `(text, blocks)`, oldest first, the current one last.
    pub history: Vec<(String, Vec<Value>)>,
    pub deleted: bool,
    /// The message metadata (`{"event_type": ..., "event_payload": {...}}`) it was posted
    /// with, or last updated with: an update without `metadata` keeps it.
    pub metadata: Option<Value>,
}

/// A file shared in a channel (`files.completeUploadExternal`), as uploaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlackFile {
    /// `F…`, as `files.getUploadURLExternal` gave it.
    pub id: String,
    /// The `title` the completion gave it, else its name.
    pub title: String,
    /// The `filename` the upload was asked for with.
    pub name: String,
    /// The bytes uploaded, as text.
    pub content: String,
    /// The message introducing it in the channel.
    pub initial_comment: Option<String>,
}

/// A message only one user saw (`chat.postEphemeral`).
#[derive(Debug, Clone, PartialEq)]
pub struct Ephemeral {
    pub channel: String,
    pub user: String,
    pub text: String,
    pub blocks: Vec<Value>,
    pub message_ts: String,
}

/// What a mention stands for, as Slack's mrkdwn writes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Mention {
    /// `<!channel>`
    Channel,
    /// `<!here>`
    Here,
    /// `<!everyone>`
    Everyone,
    /// `<@U…>`
    User(String),
    /// `<!subteam^S…>`: a user group.
    Subteam(String),
}

/// A mention Slack would have notified someone of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ping {
    pub channel: String,
    pub ts: String,
    pub mention: Mention,
    /// Made by `chat.update` rather than by the first post.
    pub edit: bool,
}

/// The kinds of Socket Mode envelope the fake delivers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvelopeKind {
    /// `slash_commands`: not redelivered; unacknowledged, the user sees `operation_timeout`.
    SlashCommands,
    /// `interactive` (block actions): not redelivered either.
    Interactive,
    /// `events_api`: redelivered up to 3 times with `retry_attempt` and `retry_reason`.
    EventsApi,
}

impl EnvelopeKind {
    pub fn wire(self) -> &'static str {
        match self {
            Self::SlashCommands => "slash_commands",
            Self::Interactive => "interactive",
            Self::EventsApi => "events_api",
        }
    }
}

/// A client's acknowledgement of one envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct Ack {
    /// The `payload` the ack carried, if any (a slash command's response, for one).
    pub payload: Option<Value>,
    /// From delivery to the ack, on the fake's clock.
    pub after: Duration,
    /// Past the deadline: Slack had already given up on it.
    pub late: bool,
}

/// One delivery of an envelope and what became of it.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvelopeRecord {
    pub envelope_id: String,
    pub kind: EnvelopeKind,
    /// The frame as sent.
    pub frame: Value,
    /// 0 for the first delivery; n for the n-th redelivery.
    pub retry_attempt: u32,
    pub ack: Option<Ack>,
    /// Not acknowledged within the deadline.
    pub timed_out: bool,
}

/// Why Slack asks a client to go (`{"type": "disconnect", "reason": ...}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisconnectReason {
    /// Sent about 10 s before a `refresh_requested`; the connection stays open.
    Warning,
    /// The connection is being recycled: the client should open a new one. Slack then closes.
    RefreshRequested,
    /// Socket Mode was turned off for the app: the client must not reconnect. Slack then closes.
    LinkDisabled,
}

impl DisconnectReason {
    pub fn wire(self) -> &'static str {
        match self {
            Self::Warning => "warning",
            Self::RefreshRequested => "refresh_requested",
            Self::LinkDisabled => "link_disabled",
        }
    }
}

/// Why the fake could not start.
#[derive(Debug, thiserror::Error)]
pub enum FakeError {
    #[error("fake slack: cannot bind a loopback port: {0}")]
    Bind(#[from] std::io::Error),
}

/// A running fake Slack; [`FakeSlack::shutdown`] stops its tasks.
pub struct FakeSlack {
    shared: Arc<Shared>,
    web_addr: SocketAddr,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for FakeSlack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeSlack")
            .field("web_addr", &self.web_addr)
            .field("socket", &self.shared.socket_url)
            .finish_non_exhaustive()
    }
}

impl FakeSlack {
    /// Starts the Web API and Socket Mode servers; panics if a loopback port cannot be bound.
    pub async fn start(config: SlackConfig) -> Self {
        match Self::try_start(config).await {
            Ok(fake) => fake,
            Err(e) => panic!("{e}"),
        }
    }

    pub async fn try_start(config: SlackConfig) -> Result<Self, FakeError> {
        let web = TcpListener::bind("127.0.0.1:0").await?;
        let ws = TcpListener::bind("127.0.0.1:0").await?;
        let web_addr = web.local_addr()?;
        let socket_url = format!("ws://{}/socket", ws.local_addr()?);
        let upload_url = format!("http://{web_addr}/upload/");
        let shared = Arc::new(Shared::new(config, socket_url, upload_url));
        let (stop, stopped) = watch::channel(false);
        let web_task = tokio::spawn(web::serve(web, Arc::clone(&shared), stopped.clone()));
        let socket_task = tokio::spawn(socket::serve(ws, Arc::clone(&shared), stopped.clone()));
        let sweep_task = tokio::spawn(socket::sweep_every_tick(Arc::clone(&shared), stopped));
        tracing::debug!(%web_addr, "fake slack: started");
        Ok(Self {
            shared,
            web_addr,
            stop,
            tasks: vec![web_task, socket_task, sweep_task],
        })
    }

    /// `http://127.0.0.1:PORT/api/`: what a client puts before a method's name.
    pub fn base_url(&self) -> String {
        format!("http://{}/api/", self.web_addr)
    }

    pub fn config(&self) -> &SlackConfig {
        &self.shared.cfg
    }

    /// Closes every Socket Mode connection and stops the servers.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            if tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .is_err()
            {
                tracing::warn!("fake slack: a server task did not stop within 5 s");
            }
        }
    }
}
