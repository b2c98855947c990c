//! Progress messages in Matrix: posted once with a transaction id made from the run's message
//! key (the homeserver answers a repeated one with the first event, so a bot killed before it
//! recorded the event posts nothing twice) and edited in place with `m.replace`. Every send
//! goes through the client's message pace and 429 hold.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use opsbot_commands::maintenance::Announcement;
use opsbot_commands::render::ProgressView;
use opsbot_commands::run::{ChannelId, MessageId};
use serde_json::Value;

use super::client::{Client, MatrixError};
use super::{content, matrix_room};
use crate::progress::{ChatError, ChatTransport, Forbidden};

/// The chat transport over the client-server API.
#[derive(Debug, Clone)]
pub struct MatrixTransport {
    client: Client,
    /// Where maintenance is announced (`!room:server`); none configured, nothing is.
    announce_room: Option<String>,
    /// The bot's messages someone redacted, as the sync saw: editing one would change nothing
    /// anyone sees, so its run's message is posted again.
    redacted: Arc<Mutex<HashSet<String>>>,
    /// The bot logs in with its password: a token the homeserver no longer takes is renewed by
    /// the next login (the sync fails too, and the keeper logs in again), so progress waits for
    /// it instead of stopping.
    renewable: bool,
}

impl MatrixTransport {
    pub(super) fn new(client: Client, announce_room: Option<String>, renewable: bool) -> Self {
        Self {
            client,
            announce_room,
            redacted: Arc::default(),
            renewable,
        }
    }

    /// The sync saw `event` redacted.
    pub(super) fn redacted(&self, event: &str) {
        self.redacted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(event.to_owned());
    }

    fn is_redacted(&self, event: &str) -> bool {
        self.redacted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(event)
    }

    /// Sends `content` to the room a stored channel names, as transaction `txn`.
    async fn send(
        &self,
        channel: &ChannelId,
        txn: &str,
        content: &Value,
    ) -> Result<MessageId, ChatError> {
        let room = room(channel)?;
        let event = self
            .client
            .send(room, "m.room.message", txn, content)
            .await
            .map_err(|error| classify(channel, &error, self.renewable))?;
        Ok(MessageId(event))
    }
}

/// The Matrix room a stored channel names; one that is not Matrix's is never sent to.
fn room(channel: &ChannelId) -> Result<&str, ChatError> {
    matrix_room(channel)
        .ok_or_else(|| ChatError::Refused(format!("`{}` is not a Matrix room", channel.0)))
}

/// A transaction id no other send of this device has: an edit or a notice is its own
/// request. The process's start time keeps it apart from an earlier process's.
fn fresh(what: &str) -> String {
    static STARTED: OnceLock<u128> = OnceLock::new();
    static SENT: AtomicU64 = AtomicU64::new(0);
    let started = STARTED.get_or_init(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos())
    });
    let n = SENT.fetch_add(1, Ordering::Relaxed);
    format!("opsbot-{what}-{started:x}-{n}")
}

/// The homeserver's answer as progress acts on it; `renewable`: a refused token is renewed by
/// the next login.
fn classify(channel: &ChannelId, error: &MatrixError, renewable: bool) -> ChatError {
    let text = error.to_string();
    if error.is_transient() || (renewable && error.refuses_token()) {
        return ChatError::Transient(text);
    }
    if error.refuses_token() {
        return ChatError::TokenRefused(text);
    }
    match error {
        // Not in the room (kicked, banned, never joined), or a power level below the one
        // needed to send: nothing is sent there until that changes.
        MatrixError::Refused { errcode, error, .. } if errcode == "M_FORBIDDEN" => Forbidden {
            channel: channel.clone(),
            missing: format!(
                "the right to post in the room (the homeserver says: {error}); invite the bot \
                 again or raise its power level"
            ),
        }
        .into(),
        MatrixError::Refused { errcode, .. } if errcode == "M_NOT_FOUND" => ChatError::Gone(text),
        _ => ChatError::Refused(text),
    }
}

impl ChatTransport for MatrixTransport {
    async fn post(&self, channel: &ChannelId, view: &ProgressView) -> Result<MessageId, ChatError> {
        let txn = format!("opsbot-{}", view.message_key);
        self.send(channel, &txn, &content::progress(view)).await
    }

    async fn edit(
        &self,
        channel: &ChannelId,
        message: &MessageId,
        view: &ProgressView,
    ) -> Result<(), ChatError> {
        if self.is_redacted(&message.0) {
            return Err(ChatError::Gone(format!(
                "Matrix: the run's message {} was redacted",
                message.0
            )));
        }
        let edit = content::replacing(&message.0, &content::progress(view));
        self.send(channel, &fresh("edit"), &edit).await?;
        Ok(())
    }

    async fn announce(&self, announcement: &Announcement) -> Result<(), ChatError> {
        let Some(room) = &self.announce_room else {
            return Ok(());
        };
        let txn = format!("opsbot-announce-{}", announcement.key);
        let channel = super::channel_id(room);
        self.send(&channel, &txn, &content::notice(&announcement.text))
            .await?;
        Ok(())
    }

    async fn report(&self, channel: &ChannelId, text: &str) -> Result<(), ChatError> {
        let announce = self.announce_room.as_deref().map(super::channel_id);
        match announce.filter(|announce| announce != channel) {
            Some(announce) => self.notice(&announce, text).await,
            None => Ok(()),
        }
    }

    async fn notice(&self, channel: &ChannelId, text: &str) -> Result<(), ChatError> {
        self.send(channel, &fresh("notice"), &content::notice(text))
            .await?;
        Ok(())
    }
}
