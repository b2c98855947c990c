//! Progress messages on Slack: posted with `chat.postMessage` and edited in place with
//! `chat.update`, by the bot token (a slash command's `response_url` expires after 30 minutes; a
//! drain can take hours). The publisher's lanes pace each channel by `[progress]`; this paces
//! the calls by Slack's own limits on top, so that twenty runs at once never meet a 429.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use opsbot_commands::maintenance::Announcement;
use opsbot_commands::render::ProgressView;
use opsbot_commands::run::{ChannelId, MessageId};
use serde_json::{Map, Value};
use tokio::sync::Mutex;

use super::blocked::{Blocked, MEMBERSHIP};
use super::blocks;
use super::web::{Web, WebError};
use crate::chat::paced;
use crate::progress::{ChatError, ChatTransport, Forbidden, Pace};

/// Calls a minute of Slack's tier 3 (`conversations.history`).
const TIER_3: u32 = 50;

/// How far back a restarted bot looks for a run's unrecorded message: it was posted just
/// before the bot died, so it is among the channel's latest.
const LOOK_BACK: u32 = 100;

/// The chat transport over Slack's Web API.
#[derive(Clone)]
pub struct SlackTransport {
    web: Web,
    /// Where maintenance is announced (`C…`); none configured, nothing is.
    announce_channel: Option<String>,
    pacing: Arc<Pacing>,
    /// Where Slack refused the bot, for the handler to say so.
    blocked: Blocked,
}

/// The token stays in [`Web`], which shows its base URL alone.
impl std::fmt::Debug for SlackTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlackTransport")
            .field("web", &self.web)
            .field("announce_channel", &self.announce_channel)
            .finish_non_exhaustive()
    }
}

/// Slack's limits as the transport keeps them. Each pace sits behind a lock, which queues its
/// callers first come, first served: no lane starves while the others take every turn.
struct Pacing {
    /// `chat.update` over the whole workspace (Slack's tier 3).
    updates: Mutex<Pace>,
    /// `conversations.history` over the whole workspace (tier 3 too).
    reads: Mutex<Pace>,
    /// `chat.postMessage`, one pace per channel, made on the channel's first post.
    posts: std::sync::Mutex<HashMap<String, Arc<Mutex<Pace>>>>,
    /// `chat.postMessage`: about one message a second per channel (Slack's special tier).
    post_period: Duration,
}

impl Pacing {
    /// Waits for the channel's next post.
    async fn post(&self, channel: &str) {
        let pace = {
            let mut posts = self.posts.lock().unwrap_or_else(PoisonError::into_inner);
            let pace = posts
                .entry(channel.to_owned())
                .or_insert_with(|| Arc::new(Mutex::new(Pace::new(paced(self.post_period)))));
            Arc::clone(pace)
        };
        pace.lock().await.ready().await;
    }

    /// Waits for the workspace's next edit.
    async fn update(&self) {
        self.updates.lock().await.ready().await;
    }

    /// Waits for the workspace's next read of a channel's history.
    async fn read(&self) {
        self.reads.lock().await.ready().await;
    }
}

impl SlackTransport {
    /// `updates_per_minute` is `chat.update`'s rate over the workspace: 50 at Slack's tier 3;
    /// `minute` is the minute Slack counts in (60 s; a test double's may be shorter).
    pub(super) fn new(
        web: Web,
        announce_channel: Option<String>,
        updates_per_minute: u32,
        minute: Duration,
        blocked: Blocked,
    ) -> Self {
        let update_period = minute / updates_per_minute.max(1);
        Self {
            web,
            announce_channel,
            pacing: Arc::new(Pacing {
                updates: Mutex::new(Pace::new(paced(update_period))),
                reads: Mutex::new(Pace::new(paced(minute / TIER_3))),
                posts: std::sync::Mutex::new(HashMap::new()),
                post_period: minute / 60,
            }),
            blocked,
        }
    }

    /// Posts `message` in `channel`, the store's name of it (`slack:C…`); the answer's `ts`.
    async fn post_in(
        &self,
        channel: &ChannelId,
        mut message: Map<String, Value>,
    ) -> Result<MessageId, ChatError> {
        let slack = slack_channel(channel)?;
        message.insert("channel".to_owned(), slack.into());
        self.pacing.post(slack).await;
        let posted = self
            .web
            .call("chat.postMessage", &Value::Object(message))
            .await
            .map_err(|error| self.refused(channel, &error))?;
        self.blocked.posted(slack);
        match posted.get("ts").and_then(Value::as_str) {
            Some(ts) => Ok(MessageId(ts.to_owned())),
            None => Err(ChatError::Transient(
                "Slack: chat.postMessage: answered ok without the message's ts".to_owned(),
            )),
        }
    }
}

impl SlackTransport {
    /// Slack's refusal as progress acts on it; a channel where the bot may not post is
    /// remembered, so that the next command typed there is told what to grant.
    fn refused(&self, channel: &ChannelId, error: &WebError) -> ChatError {
        let error = classify(channel, error);
        if let (ChatError::Forbidden(forbidden), Some(slack)) =
            (&error, super::slack_channel(channel))
        {
            self.blocked.refused(slack, &forbidden.missing);
        }
        error
    }
}

/// The Slack channel a stored one names; one that is not Slack's is never sent to.
fn slack_channel(channel: &ChannelId) -> Result<&str, ChatError> {
    super::slack_channel(channel)
        .filter(|slack| !slack.is_empty())
        .ok_or_else(|| ChatError::Refused(format!("`{}` is not a Slack channel", channel.0)))
}

/// Slack's answer as progress acts on it. The text is Slack's own: the method and its code.
fn classify(channel: &ChannelId, error: &WebError) -> ChatError {
    let text = error.to_string();
    match error {
        WebError::NotSent { .. } => ChatError::TokenRefused(text),
        WebError::Slack { .. } if error.refuses_token() => ChatError::TokenRefused(text),
        WebError::Slack { error, needed, .. } => match error.as_str() {
            // The channel gone is Discord's Unknown Channel: each run there gives up alone.
            "message_not_found" | "channel_not_found" | "is_archived" => ChatError::Gone(text),
            "not_in_channel" => forbidden(channel, MEMBERSHIP.to_owned()),
            "missing_scope" => forbidden(
                channel,
                format!(
                    "the scope {}",
                    needed.as_deref().unwrap_or("that Slack did not name")
                ),
            ),
            // Slack's own trouble, answered as an error rather than a 429 or a 5xx.
            "ratelimited"
            | "internal_error"
            | "fatal_error"
            | "service_unavailable"
            | "request_timeout" => ChatError::Transient(text),
            _ => ChatError::Refused(text),
        },
        WebError::RateLimited { .. }
        | WebError::Unreachable { .. }
        | WebError::Unreadable { .. } => ChatError::Transient(text),
    }
}

fn forbidden(channel: &ChannelId, missing: String) -> ChatError {
    Forbidden {
        channel: channel.clone(),
        missing,
    }
    .into()
}

impl ChatTransport for SlackTransport {
    async fn announce(&self, announcement: &Announcement) -> Result<(), ChatError> {
        let Some(channel) = &self.announce_channel else {
            return Ok(());
        };
        let message = blocks::plain(&announcement.text);
        self.post_in(&super::channel_id(channel), message).await?;
        Ok(())
    }

    async fn post(&self, channel: &ChannelId, view: &ProgressView) -> Result<MessageId, ChatError> {
        self.post_in(channel, blocks::progress(view)).await
    }

    async fn edit(
        &self,
        channel: &ChannelId,
        message: &MessageId,
        view: &ProgressView,
    ) -> Result<(), ChatError> {
        let mut update = blocks::progress(view);
        update.insert("channel".to_owned(), slack_channel(channel)?.into());
        update.insert("ts".to_owned(), message.0.clone().into());
        self.pacing.update().await;
        self.web
            .call("chat.update", &Value::Object(update))
            .await
            .map_err(|error| self.refused(channel, &error))?;
        Ok(())
    }

    /// Looks in the channel's latest messages for the bot's own with the run's metadata. A
    /// token without the history scopes cannot look: the run's message may then be posted a
    /// second time, which the log says.
    async fn find_posted(
        &self,
        channel: &ChannelId,
        view: &ProgressView,
    ) -> Result<Option<MessageId>, ChatError> {
        let args = serde_json::json!({
            "channel": slack_channel(channel)?,
            "limit": LOOK_BACK,
            "include_all_metadata": true,
        });
        self.pacing.read().await;
        let history = match self.web.call("conversations.history", &args).await {
            Ok(history) => history,
            Err(error) => {
                let error = classify(channel, &error);
                if let ChatError::Transient(_) = error {
                    return Err(error);
                }
                tracing::warn!(%error, "cannot look for a message an earlier run of opsbot \
                               posted; the run's message may be posted again");
                return Ok(None);
            }
        };
        let found = history["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|message| blocks::is_posted_for(message, &view.message_key))
            .and_then(|message| message["ts"].as_str());
        Ok(found.map(|ts| MessageId(ts.to_owned())))
    }

    async fn report(&self, channel: &ChannelId, text: &str) -> Result<(), ChatError> {
        // Not where Slack refused the bot already.
        let announce = (self.announce_channel.as_deref())
            .filter(|announce| !self.blocked.refuses(announce))
            .map(super::channel_id);
        match announce.filter(|announce| announce != channel) {
            Some(announce) => self.notice(&announce, text).await,
            None => Ok(()),
        }
    }

    async fn notice(&self, channel: &ChannelId, text: &str) -> Result<(), ChatError> {
        self.post_in(channel, blocks::plain(text)).await?;
        Ok(())
    }
}

/// On tokio's paused clock, which the fake's rate limits follow too: the paces are skipped
/// through, never waited out.
#[cfg(test)]
mod tests;
