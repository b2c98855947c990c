//! What the fake remembers, shared by the Web API, Socket Mode and the test-control API, and
//! the fake's clock.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::limits::Limiter;
use crate::methods::WebMethod;
use crate::socket::Sockets;
use crate::{Ephemeral, Failure, Ping, SlackConfig, TokenStatus, Visibility};

/// The state behind every server task and every test-control call.
pub(crate) struct Shared {
    pub(crate) cfg: SlackConfig,
    /// `ws://127.0.0.1:PORT/socket`, to which a ticket is appended.
    pub(crate) socket_url: String,
    /// `http://127.0.0.1:PORT/upload/`, to which a file id is appended: where the bytes of an
    /// upload go (Slack's is on files.slack.com).
    pub(crate) upload_url: String,
    inner: Mutex<Inner>,
    changed: watch::Sender<u64>,
    /// How far the fake's clock runs ahead of tokio's, in nanoseconds.
    skew: AtomicU64,
    /// Slack is unreachable: connections are dropped unanswered.
    pub(crate) away: AtomicBool,
    /// Connections dropped unanswered while away.
    pub(crate) cut: AtomicUsize,
    started: Instant,
    started_unix: Duration,
}

impl Shared {
    pub(crate) fn new(cfg: SlackConfig, socket_url: String, upload_url: String) -> Self {
        let (changed, _) = watch::channel(0);
        let mut inner = Inner::default();
        for (token, kind, scopes) in [
            (&cfg.bot_token, TokenKind::Bot, &cfg.bot_scopes),
            (&cfg.app_token, TokenKind::App, &cfg.app_scopes),
        ] {
            let token_state = Token {
                kind,
                scopes: scopes.iter().cloned().collect(),
                status: TokenStatus::Active,
            };
            inner.tokens.insert(token.clone(), token_state);
        }
        Self {
            cfg,
            socket_url,
            upload_url,
            inner: Mutex::new(inner),
            changed,
            skew: AtomicU64::new(0),
            away: AtomicBool::new(false),
            cut: AtomicUsize::new(0),
            started: Instant::now(),
            started_unix: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default(),
        }
    }

    /// The fake's clock: tokio's, plus what [`Shared::advance`] added. Every rate-limit window,
    /// deadline and edit window of the fake is measured on it.
    pub(crate) fn now(&self) -> Instant {
        Instant::now() + Duration::from_nanos(self.skew.load(Ordering::Relaxed))
    }

    /// Time passes for the fake at once (and for nobody else).
    pub(crate) fn advance(&self, by: Duration) {
        let nanos = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        self.skew.fetch_add(nanos, Ordering::Relaxed);
    }

    /// Whether Slack is away; when it is, the connection just accepted counts as cut.
    pub(crate) fn cuts(&self) -> bool {
        let away = self.away.load(Ordering::Relaxed);
        if away {
            self.cut.fetch_add(1, Ordering::Relaxed);
            self.announce();
        }
        away
    }

    /// A fresh message timestamp, `seconds.micros` on the fake's clock: Slack's message id,
    /// unique and increasing.
    pub(crate) fn next_ts(&self, inner: &mut Inner) -> String {
        let now = self.started_unix + self.now().saturating_duration_since(self.started);
        let micros = u64::try_from(now.as_micros()).unwrap_or(u64::MAX);
        let micros = micros.max(inner.last_ts_micros + 1);
        inner.last_ts_micros = micros;
        format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000)
    }

    /// Locks the state. Every change made through the guard is announced when it is dropped.
    pub(crate) fn lock(&self) -> Locked<'_> {
        Locked {
            guard: self.read(),
            changed: &self.changed,
        }
    }

    /// Wakes every waiter, for a change made under [`Shared::read`].
    pub(crate) fn announce(&self) {
        self.changed.send_modify(|v| *v = v.wrapping_add(1));
    }

    /// Locks the state to look, announcing nothing.
    pub(crate) fn read(&self) -> MutexGuard<'_, Inner> {
        match self.inner.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Waits until `check` finds something in the state, or fails with `what` after `timeout`
    /// (real time: this bounds a test, it is not the fake's clock).
    pub(crate) async fn wait_for<T>(
        &self,
        timeout: Duration,
        what: &str,
        mut check: impl FnMut(&mut Inner) -> Option<T>,
    ) -> Result<T, String> {
        let deadline = Instant::now() + timeout;
        let mut rx = self.changed.subscribe();
        loop {
            if let Some(found) = check(&mut self.read()) {
                return Ok(found);
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => {
                    return check(&mut self.read()).ok_or_else(|| {
                        format!("fake slack: timed out after {timeout:?} waiting for {what}")
                    });
                }
            }
        }
    }
}

/// A lock on the state that announces a change when released.
pub(crate) struct Locked<'a> {
    guard: MutexGuard<'a, Inner>,
    changed: &'a watch::Sender<u64>,
}

impl std::ops::Deref for Locked<'_> {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.guard
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Inner {
        &mut self.guard
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        self.changed.send_modify(|v| *v = v.wrapping_add(1));
    }
}

#[derive(Default)]
pub(crate) struct Inner {
    pub(crate) tokens: HashMap<String, Token>,
    pub(crate) channels: BTreeMap<String, Channel>,
    pub(crate) channel_count: u32,
    pub(crate) last_ts_micros: u64,
    pub(crate) limiter: Limiter,
    /// Failures a test queued, per method, consumed one per call.
    pub(crate) failures: HashMap<WebMethod, VecDeque<Failure>>,
    /// Every call that got past the HTTP layer: the method and its parameters.
    pub(crate) calls: Vec<(WebMethod, Value)>,
    pub(crate) ephemerals: Vec<Ephemeral>,
    /// Every `response_url` handed out, by its id.
    pub(crate) responses: HashMap<String, crate::response::ResponseUrl>,
    pub(crate) pings: Vec<Ping>,
    /// Uploads begun with `files.getUploadURLExternal`, by file id.
    pub(crate) uploads: BTreeMap<String, crate::files::Upload>,
    /// Files shared in channels, in order: the channel and the file.
    pub(crate) files: Vec<(String, crate::SlackFile)>,
    /// Things a client did that Slack would not have let pass silently.
    pub(crate) violations: Vec<String>,
    pub(crate) sockets: Sockets,
}

impl Inner {
    pub(crate) fn violation(&mut self, what: String) {
        tracing::warn!("fake slack: {what}");
        self.violations.push(what);
    }
}

/// Bot tokens (`xoxb-`) call the Web API; app-level tokens (`xapp-`) only open connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenKind {
    Bot,
    App,
}

pub(crate) struct Token {
    pub(crate) kind: TokenKind,
    pub(crate) scopes: BTreeSet<String>,
    pub(crate) status: TokenStatus,
}

pub(crate) struct Channel {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) visibility: Visibility,
    /// User ids, the bot's among them when it is a member.
    pub(crate) members: BTreeSet<String>,
    pub(crate) messages: BTreeMap<String, StoredMessage>,
}

pub(crate) struct StoredMessage {
    pub(crate) user: String,
    pub(crate) text: String,
    pub(crate) blocks: Vec<Value>,
    pub(crate) history: Vec<(String, Vec<Value>)>,
    pub(crate) posted: Instant,
    pub(crate) deleted: bool,
    /// `{"event_type", "event_payload"}` as posted or last updated.
    pub(crate) metadata: Option<Value>,
}
