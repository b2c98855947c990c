//! Events of the served rooms, each handled once (its event id is recorded before anything is
//! done, so a restarted or a new active bot that syncs it again does nothing): a message that
//! starts with `!` (or addresses the bot) is a command; ✅ or ❌ on a plan's message decides it;
//! a redaction of the bot's message, the bot kicked, or a room turned encrypted is noted.
//!
//! Matrix has no private reply: an answer only its asker should see is a notice in the room,
//! a reply to their message (the README says so).

use std::time::Duration;

use opsbot_commands::name::RunId;
use opsbot_commands::parse::{self, Origin};
use opsbot_commands::people::{Actor, People, Speaker};
use serde_json::{Value, json};

use super::channel_id;
use super::client::{Client, MatrixError};
use super::content;
use super::reaction::Removed;
use super::transport::MatrixTransport;
use crate::config::RoomId;
use crate::progress::ChatTransport;
use crate::refusal::Refusal;
use crate::service::{Asked, Reply, Service};

/// What starts a command in a message: `!cluster status cluster:logs`.
pub const PREFIX: char = '!';

/// How many times an answer is sent before it is given up (waiting 2, 4, 8 and 16 s between).
const ANSWER_ATTEMPTS: u32 = 5;

pub(super) struct Handler {
    pub(super) service: Service,
    pub(super) people: People,
    pub(super) client: Client,
    pub(super) transport: MatrixTransport,
    /// The bot's user id.
    pub(super) me: String,
    /// Each served room, and how a refusal names it.
    pub(super) rooms: Vec<(RoomId, String)>,
    /// The runs' messages redacted since the start, and whose they were.
    pub(super) removed: Removed,
}

impl Handler {
    /// Takes one timeline event of `room`.
    pub(super) async fn take(&self, room: &str, event: &Value) {
        let (Some(id), Some(sender)) = (event["event_id"].as_str(), event["sender"].as_str())
        else {
            return;
        };
        match event["type"].as_str() {
            Some("m.room.redaction") => {
                if let Some(redacted) = event["redacts"]
                    .as_str()
                    .or(event["content"]["redacts"].as_str())
                {
                    self.redacted(redacted);
                }
            }
            Some("m.room.member") if event["state_key"] == self.me && sender != self.me => {
                let membership = event["content"]["membership"].as_str().unwrap_or_default();
                // Reported once, though a restarted bot sees it again.
                if matches!(membership, "leave" | "ban") && self.first_delivery(id).await {
                    tracing::error!(%room, %sender, %membership, "the bot was removed from a room; \
                                    its runs' progress there stops until it is invited again");
                    let reason = event["content"]["reason"]
                        .as_str()
                        .unwrap_or("no reason given");
                    let text = format!(
                        "⚠️ opsbot was removed from room {room} by {sender} ({reason}): commands \
                         there are not served and its runs' progress there is not shown until it \
                         is invited again and restarted"
                    );
                    self.report(room, &text).await;
                }
            }
            Some("m.room.encryption") if self.first_delivery(id).await => {
                tracing::error!(%room, %sender, "a served room was made encrypted");
                let text = format!(
                    "⚠️ room {room} was made encrypted by {sender}: opsbot cannot read it from \
                     now on; serve an unencrypted room instead (encryption cannot be turned off)"
                );
                // Said in the room too: its people would otherwise wait for answers.
                let notice = self.transport.notice(&channel_id(room), &text).await;
                if let Err(error) = notice {
                    tracing::warn!(%error, "cannot say so in the room");
                }
                self.report(room, &text).await;
            }
            Some("m.room.message") if sender != self.me => {
                // Chat is not recorded: only a command is.
                if let Some(line) = line(&self.me, &event["content"]) {
                    if self.first_delivery(id).await {
                        self.command(room, sender, event, &line).await;
                    }
                }
            }
            Some("m.reaction") if sender != self.me => {
                let key = event["content"]["m.relates_to"]["key"]
                    .as_str()
                    .unwrap_or_default();
                if content::is_decision(key) && self.first_delivery(id).await {
                    self.reaction(room, sender, event).await;
                }
            }
            _ => {}
        }
    }

    /// Tells the announcement room (unless it is `room` itself) what happened to `room`.
    async fn report(&self, room: &str, text: &str) {
        if let Err(error) = self.transport.report(&channel_id(room), text).await {
            tracing::warn!(%error, "cannot report it in the announcement room");
        }
    }

    /// A command; the answer as a reply to it.
    async fn command(&self, room: &str, sender: &str, event: &Value, line: &str) {
        let reply = match self.actor(room, sender, line, None).await {
            Err(reply) => reply,
            Ok(actor) => match parse::parse_line(line, Origin::Chat) {
                Ok(request) => {
                    let channel = channel_id(room);
                    self.service
                        .handle(&actor, &channel, Origin::Chat, request)
                        .await
                }
                Err(error) => Reply::private(error.to_string()),
            },
        };
        self.answer(room, event, &reply).await;
    }

    /// The person behind `sender` in `room`: refused (and audited) when they are nobody
    /// opsbot knows or the room is not served.
    pub(super) async fn actor(
        &self,
        room: &str,
        sender: &str,
        asked: &str,
        run: Option<RunId>,
    ) -> Result<Actor, Reply> {
        let (speaker, refusal) = match self.people.on_matrix(sender) {
            Err(unknown) => (Speaker::from(&unknown), Refusal::UnknownPerson(unknown)),
            Ok(actor) if self.rooms.iter().any(|(r, _)| r.as_str() == room) => return Ok(actor),
            Ok(actor) => {
                let names: Vec<&str> = self.rooms.iter().map(|(_, n)| n.as_str()).collect();
                let served = names.join(" or ");
                (actor.speaker(), Refusal::WrongChannel { served })
            }
        };
        let asked = Asked::new(typed(asked), run);
        Err(self.service.refused(&speaker, &asked, refusal.into()).await)
    }

    /// An answer, as a notice replying to the message it answers (Matrix has no private
    /// reply); its file (a long plan, a run log), when it has one, follows as a file uploaded
    /// to the homeserver, or its start inline when the homeserver does not take it.
    pub(super) async fn answer(&self, room: &str, to: &Value, reply: &Reply) {
        let to = to["event_id"].as_str().unwrap_or_default();
        let file = match &reply.attachment {
            Some(file) => match self.client.upload(&file.name, &file.text).await {
                Ok(uri) => Some(content::file(&file.name, &uri, file.text.len())),
                Err(error) => {
                    tracing::warn!(%error, file = %file.name, "a file could not be uploaded; its start is shown instead");
                    None
                }
            },
            None => None,
        };
        let mut text = reply.text.clone();
        if let (Some(attachment), None) = (&reply.attachment, &file) {
            text.push_str("\n\n");
            text.push_str(&attachment.text);
        }
        let said = self.reply(room, to, "answer", content::notice(&text)).await;
        if let (true, Some(file)) = (said, file) {
            self.reply(room, to, "file", file).await;
        }
    }

    /// Sends `content` as a reply to `to`, once (its transaction id is made from `to`, so a
    /// send tried again is one message); tried again while the homeserver is busy or away, a
    /// few times. False when it could not be sent.
    async fn reply(&self, room: &str, to: &str, what: &str, mut content: Value) -> bool {
        content["m.relates_to"] = json!({ "m.in_reply_to": { "event_id": to } });
        let txn = format!("opsbot-{what}-{to}");
        let clock = self.service.engine().clock();
        for attempt in 1..=ANSWER_ATTEMPTS {
            match self
                .client
                .send(room, "m.room.message", &txn, &content)
                .await
            {
                Ok(_) => return true,
                Err(error) if error.is_transient() && attempt < ANSWER_ATTEMPTS => {
                    tracing::warn!(%error, attempt, "an answer was not delivered; trying again");
                    // A 429 holds the client itself until its `retry_after_ms`; no answer at
                    // all waits here.
                    if !matches!(error, MatrixError::RateLimited { .. }) {
                        clock.sleep(Duration::from_secs(1 << attempt)).await;
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "an answer could not be delivered in Matrix");
                    return false;
                }
            }
        }
        false
    }

    /// False for an event already handled; a store failure counts as first, since refusing
    /// would lose a command.
    async fn first_delivery(&self, event: &str) -> bool {
        let key = format!("matrix:{event}");
        match self.service.engine().writes().first_delivery(key).await {
            Ok(first) => first,
            Err(error) => {
                tracing::error!(%error, "cannot record a Matrix event; handling it anyway");
                true
            }
        }
    }
}

/// The console line a message stands for: `!cluster status` is `/cluster status`, and so is
/// a message that mentions the bot first (`opsbot: cluster status`); any other is chat.
fn line(me: &str, content: &Value) -> Option<String> {
    // An edit of a message is not a second command.
    let edit = content["m.relates_to"]["rel_type"] == "m.replace";
    if content["msgtype"] != "m.text" || edit {
        return None;
    }
    let body = content["body"].as_str()?.trim();
    if let Some(command) = body.strip_prefix(PREFIX) {
        return Some(format!("/{}", command.trim_start()));
    }
    let mentioned = content["m.mentions"]["user_ids"]
        .as_array()
        .is_some_and(|ids| ids.iter().any(|id| id == me));
    if !mentioned {
        return None;
    }
    // Element writes a mention as the display name and a colon: `opsbot: cluster status`.
    let (_, command) = body
        .split_once(':')
        .filter(|(name, _)| !name.contains(' '))?;
    let command = command.trim().trim_start_matches('/');
    Some(format!(
        "/{}",
        if command.is_empty() { "help" } else { command }
    ))
}

/// `/approve` or `/run cancel`, as the audit log names a command refused before it was read.
fn typed(line: &str) -> String {
    line.split_whitespace()
        .take_while(|word| !word.contains(':'))
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_a_message_starting_with_the_prefix_or_addressing_the_bot() {
        let me = "@opsbot:localhost";
        let text = |body: &str| json!({ "msgtype": "m.text", "body": body });
        assert_eq!(
            line(me, &text("!cluster status cluster:logs")).as_deref(),
            Some("/cluster status cluster:logs")
        );
        assert_eq!(line(me, &text("hello all")), None);
        let mention = json!({ "msgtype": "m.text", "body": "opsbot: run list", "m.mentions": { "user_ids": [me] } });
        assert_eq!(line(me, &mention).as_deref(), Some("/run list"));
        let other = json!({ "msgtype": "m.text", "body": "opsbot: run list", "m.mentions": { "user_ids": ["@x:y"] } });
        assert_eq!(line(me, &other), None);
    }
}
