//! What the fake remembers, shared by the REST server, the gateway and the test-control API.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use time::OffsetDateTime;
use time::macros::format_description;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::{FakeConfig, Ping};

/// Discord's epoch (2015-01-01) in milliseconds since the Unix epoch.
const DISCORD_EPOCH_MS: u64 = 1_420_070_400_000;

/// The state behind every server task and every test-control call.
pub(crate) struct Shared {
    pub(crate) cfg: FakeConfig,
    pub(crate) gateway_url: String,
    inner: Mutex<Inner>,
    changed: watch::Sender<u64>,
    last_id: AtomicU64,
    /// How far the fake's clock runs ahead of tokio's, in nanoseconds.
    skew: AtomicU64,
    /// Message requests still to be held open without an answer.
    hangs: AtomicU64,
}

impl Shared {
    pub(crate) fn new(cfg: FakeConfig, gateway_url: String) -> Self {
        let (changed, _) = watch::channel(0);
        Self {
            cfg,
            gateway_url,
            inner: Mutex::new(Inner::default()),
            changed,
            last_id: AtomicU64::new(0),
            skew: AtomicU64::new(0),
            hangs: AtomicU64::new(0),
        }
    }

    /// Makes the next `n` message requests hang.
    pub(crate) fn hang(&self, n: u64) {
        self.hangs.fetch_add(n, Ordering::Relaxed);
    }

    /// True if this request is one to hold open (and counts it).
    pub(crate) fn take_hang(&self) -> bool {
        self.hangs
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }

    /// The fake's clock: tokio's, plus what [`Shared::advance`] added. Every window, deadline
    /// and token lifetime of the fake is measured on it.
    pub(crate) fn now(&self) -> Instant {
        Instant::now() + Duration::from_nanos(self.skew.load(Ordering::Relaxed))
    }

    /// Time passes for the fake at once (and for nobody else).
    pub(crate) fn advance(&self, by: Duration) {
        let nanos = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        self.skew.fetch_add(nanos, Ordering::Relaxed);
    }

    /// How long ago `then` was, on the fake's clock.
    pub(crate) fn since(&self, then: Instant) -> Duration {
        self.now().saturating_duration_since(then)
    }

    /// Locks the state. Every change made through the guard is announced when it is dropped.
    pub(crate) fn lock(&self) -> Locked<'_> {
        Locked {
            guard: self.read(),
            changed: &self.changed,
        }
    }

    /// Locks the state to look, announcing nothing.
    pub(crate) fn read(&self) -> MutexGuard<'_, Inner> {
        match self.inner.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// A fresh snowflake: milliseconds since Discord's epoch, then a counter; always increasing.
    pub(crate) fn snowflake(&self) -> u64 {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let fresh = now_ms.saturating_sub(DISCORD_EPOCH_MS) << 22;
        let mut last = self.last_id.load(Ordering::Relaxed);
        loop {
            let next = fresh.max(last + 1);
            match self
                .last_id
                .compare_exchange(last, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return next,
                Err(actual) => last = actual,
            }
        }
    }

    /// Waits until `check` finds something in the state, or fails with `what` after `timeout`.
    pub(crate) async fn wait_for<T>(
        &self,
        timeout: Duration,
        what: &str,
        mut check: impl FnMut(&mut Inner) -> Option<T>,
    ) -> Result<T, String> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut rx = self.changed.subscribe();
        loop {
            if let Some(found) = check(&mut self.read()) {
                return Ok(found);
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => {
                    return match check(&mut self.read()) {
                        Some(found) => Ok(found),
                        None => Err(format!(
                            "fake discord: timed out after {timeout:?} waiting for {what}"
                        )),
                    };
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
    /// The registered guild commands, as the fake returned them.
    pub(crate) commands: Vec<Value>,
    pub(crate) interactions: HashMap<u64, Interaction>,
    pub(crate) channels: HashMap<u64, Channel>,
    pub(crate) violations: Vec<String>,
    pub(crate) rate_limited: usize,
    pub(crate) latencies: Vec<Duration>,
    pub(crate) gateway: Gateway,
    /// The bot's permissions in the channels where a test changed them.
    pub(crate) permissions: HashMap<u64, u64>,
    /// Every mention that would have notified someone, in order.
    pub(crate) pings: Vec<Ping>,
    /// Recent nonces of the bot's messages: the nonce's text -> (channel, message, created).
    pub(crate) nonces: HashMap<String, (u64, u64, Instant)>,
    /// 401, 403 and 429 answers: how many, and when those of the last 10 minutes came.
    pub(crate) invalid: usize,
    pub(crate) invalid_recent: VecDeque<Instant>,
    pub(crate) banned: bool,
    /// Every REST request, as `METHOD /path`, in order.
    pub(crate) requests: Vec<String>,
    /// Requests held open by [`Shared::hang`].
    pub(crate) hung: usize,
    /// The files messages carried, in order.
    pub(crate) uploads: Vec<crate::uploads::Upload>,
}

impl Inner {
    pub(crate) fn violation(&mut self, what: String) {
        tracing::warn!("fake discord: rule broken: {what}");
        self.violations.push(what);
    }

    /// The bot's permission bits in `channel`.
    pub(crate) fn bot_permissions(&self, cfg: &FakeConfig, channel: u64) -> u64 {
        self.permissions
            .get(&channel)
            .copied()
            .unwrap_or(cfg.bot_permissions)
    }

    /// Deletes a message: it leaves the channel for the channel's deleted ones, and a client
    /// subscribed to GUILD_MESSAGES hears of it (ephemeral messages excepted: they were never
    /// in the channel). False if there was no such message.
    pub(crate) fn delete_message(&mut self, guild: u64, channel: u64, id: u64) -> bool {
        let Some(c) = self.channels.get_mut(&channel) else {
            return false;
        };
        let Some(gone) = c.messages.remove(&id) else {
            return false;
        };
        let ephemeral = gone
            .current
            .get("flags")
            .and_then(Value::as_u64)
            .unwrap_or(0)
            & crate::payloads::EPHEMERAL
            != 0;
        c.deleted.insert(id, gone);
        if !ephemeral && self.gateway.intents & GUILD_MESSAGES != 0 {
            let data = serde_json::json!({
                "id": id.to_string(),
                "channel_id": channel.to_string(),
                "guild_id": guild.to_string(),
            });
            self.gateway.dispatch("MESSAGE_DELETE", data);
        }
        true
    }

    pub(crate) fn message_mut(&mut self, channel: u64, id: u64) -> Option<&mut StoredMessage> {
        self.channels.get_mut(&channel)?.messages.get_mut(&id)
    }

    pub(crate) fn store_message(&mut self, channel: u64, id: u64, message: Value) {
        let stored = StoredMessage {
            history: vec![message.clone()],
            current: message,
        };
        self.channels
            .entry(channel)
            .or_default()
            .messages
            .insert(id, stored);
    }
}

/// The gateway intent that carries MESSAGE_CREATE, _UPDATE and _DELETE for guild channels.
const GUILD_MESSAGES: u64 = 1 << 9;

/// One channel's messages and its message rate-limit window.
#[derive(Default)]
pub(crate) struct Channel {
    pub(crate) messages: BTreeMap<u64, StoredMessage>,
    /// Messages deleted by a moderator or by the client, as they were last.
    pub(crate) deleted: BTreeMap<u64, StoredMessage>,
    /// When the current window opened and how many creates and edits it has counted.
    pub(crate) window: Option<(Instant, u32)>,
}

pub(crate) struct StoredMessage {
    pub(crate) current: Value,
    /// Every version, oldest first, the current one last.
    pub(crate) history: Vec<Value>,
}

impl StoredMessage {
    pub(crate) fn replace(&mut self, message: Value) {
        self.history.push(message.clone());
        self.current = message;
    }
}

/// One dispatched interaction and everything the client did with it.
pub(crate) struct Interaction {
    pub(crate) kind: u8,
    pub(crate) token: String,
    pub(crate) channel_id: u64,
    pub(crate) dispatched: Instant,
    /// The message a component sits on.
    pub(crate) source_message: Option<u64>,
    pub(crate) response: Option<Response>,
    /// The message `@original` stands for, once there is one.
    pub(crate) original: Option<u64>,
    /// A deferred (type 5) response whose "thinking" message was not filled in yet.
    pub(crate) thinking: bool,
    pub(crate) followups: Vec<Value>,
    pub(crate) followup_ids: Vec<u64>,
    pub(crate) original_edits: Vec<Value>,
    /// Non-empty texts the client showed for this interaction, in order, with their ephemerality.
    pub(crate) texts: Vec<(String, bool)>,
}

impl Interaction {
    pub(crate) fn said(&mut self, text: String, ephemeral: bool) {
        if !text.is_empty() {
            self.texts.push((text, ephemeral));
        }
    }
}

#[derive(Clone)]
pub(crate) struct Response {
    pub(crate) kind: u8,
    pub(crate) data: Value,
    pub(crate) ephemeral: bool,
    pub(crate) at: Duration,
}

/// Commands for the task that owns one gateway connection.
#[derive(Debug)]
pub(crate) enum Outbound {
    Text(String),
    Close(u16, &'static str),
}

/// The single-shard session the fake gateway keeps.
#[derive(Default)]
pub(crate) struct Gateway {
    pub(crate) session_id: Option<String>,
    /// The intents of the session's IDENTIFY.
    pub(crate) intents: u64,
    pub(crate) seq: u64,
    /// Every dispatch of the session, for RESUME to replay.
    pub(crate) events: Vec<(u64, String)>,
    /// The connection that has identified or resumed, if any.
    pub(crate) current: Option<(u64, mpsc::UnboundedSender<Outbound>)>,
    pub(crate) next_connection: u64,
    pub(crate) ready: bool,
    pub(crate) identifies: usize,
    pub(crate) resumes: usize,
    pub(crate) heartbeats: usize,
    pub(crate) closes: Vec<u16>,
    /// Close codes the client sent, in order.
    pub(crate) client_closes: Vec<u16>,
    /// A client's Close frame is left unanswered and its connection open, as a proxy that
    /// holds connections does (RFC 6455 lets the peer take its time).
    pub(crate) closes_unanswered: bool,
}

impl Gateway {
    /// Numbers and records a dispatch and sends it to the live connection, if there is one.
    pub(crate) fn dispatch(&mut self, event: &str, data: Value) {
        self.seq += 1;
        let frame = serde_json::json!({"op": 0, "s": self.seq, "t": event, "d": data}).to_string();
        self.events.push((self.seq, frame.clone()));
        if let Some((_, tx)) = &self.current {
            let _gone = tx.send(Outbound::Text(frame));
        }
    }
}

/// The time now as Discord writes it.
pub(crate) fn timestamp() -> String {
    let format = format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]+00:00"
    );
    OffsetDateTime::now_utc()
        .format(&format)
        .unwrap_or_else(|_| "2025-01-01T00:00:00.000000+00:00".to_owned())
}

/// A hard-to-guess string, for interaction tokens and session ids.
pub(crate) fn random_token(len: usize) -> String {
    use std::hash::{BuildHasher, Hasher};
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let state = std::collections::hash_map::RandomState::new();
    let mut out = String::with_capacity(len);
    let mut word = 0u64;
    for i in 0..len {
        if i % 8 == 0 {
            let mut hasher = state.build_hasher();
            hasher.write_usize(i);
            hasher.write_u128(
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            word = hasher.finish();
        }
        out.push(char::from(
            ALPHABET[usize::try_from(word % 64).unwrap_or(0)],
        ));
        word /= 64;
    }
    out
}
