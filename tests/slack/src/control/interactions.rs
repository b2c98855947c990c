//! The test-control API's side of Socket Mode and interactions: act as Slack's users (slash
//! commands, button presses, events), see what the client acknowledged and answered through
//! `response_url`, and break connections.

use std::time::Duration;

use serde_json::{Value, json};

use crate::socket::{Outbound, sweep};
use crate::{Ack, DisconnectReason, EnvelopeKind, EnvelopeRecord, Ephemeral, FakeSlack};

/// A user runs a slash command in a channel.
#[derive(Debug, Clone)]
pub struct SlashCommand {
    pub user_id: String,
    pub channel_id: String,
    /// With its slash: `/cluster`.
    pub command: String,
    pub text: String,
}

/// A user clicks a button (by `action_id`) on a message the fake holds.
#[derive(Debug, Clone)]
pub struct BlockAction {
    pub user_id: String,
    pub channel_id: String,
    pub message_ts: String,
    pub action_id: String,
}

/// The button with `action_id` in a message's blocks.
fn button<'a>(blocks: &'a [Value], action_id: &str) -> Option<(&'a Value, Option<&'a Value>)> {
    blocks.iter().find_map(|block| {
        let mut elements: Vec<&Value> = block
            .get("elements")
            .and_then(Value::as_array)
            .map(|e| e.iter().collect())
            .unwrap_or_default();
        elements.extend(block.get("accessory"));
        elements
            .into_iter()
            .find(|e| e.get("action_id").and_then(Value::as_str) == Some(action_id))
            .map(|e| (e, block.get("block_id")))
    })
}

impl FakeSlack {
    fn deliver(&self, kind: EnvelopeKind, payload: Value) -> Result<String, String> {
        let now = self.shared.now();
        let mut inner = self.shared.lock();
        sweep(&mut inner, now, self.shared.cfg.ack_deadline);
        let envelope_id = inner.sockets.envelope_id();
        let mut frame = json!({
            "envelope_id": envelope_id,
            "type": kind.wire(),
            "payload": payload,
            "accepts_response_payload": kind != EnvelopeKind::EventsApi,
        });
        if let (EnvelopeKind::EventsApi, Value::Object(map)) = (kind, &mut frame) {
            map.insert("retry_attempt".into(), json!(0));
            map.insert("retry_reason".into(), json!(""));
        }
        if !inner.sockets.send(&frame) {
            return Err(
                "fake slack: no Socket Mode connection, so Slack shows the user dispatch_failed"
                    .to_owned(),
            );
        }
        let record = EnvelopeRecord {
            envelope_id: envelope_id.clone(),
            kind,
            frame,
            retry_attempt: 0,
            ack: None,
            timed_out: false,
        };
        inner
            .sockets
            .delivered(record, now, self.shared.cfg.ack_deadline);
        Ok(envelope_id)
    }

    /// A new `response_url` answering `user` in `channel` (Slack's is on hooks.slack.com; the
    /// fake's on its own address).
    fn response_url(&self, kind: &str, channel: &str, user: &str) -> String {
        let mut inner = self.shared.lock();
        let id = format!("R{:06}", inner.responses.len() + 1);
        let url = crate::response::ResponseUrl {
            channel: channel.to_owned(),
            user: user.to_owned(),
            issued: self.shared.now(),
            uses: 0,
            envelope: None,
            answers: Vec::new(),
        };
        inner.responses.insert(id.clone(), url);
        let team = &self.shared.cfg.team_id;
        format!("http://{}/hooks/{kind}/{team}/{id}", self.web_addr)
    }

    /// Ties a `response_url` (its last part) to the envelope that carried it.
    fn carried(&self, response_url: &str, envelope: &str) {
        let id = response_url.rsplit('/').next().unwrap_or_default();
        if let Some(url) = self.shared.lock().responses.get_mut(id) {
            url.envelope = Some(envelope.to_owned());
        }
    }

    /// What the app answered through the `response_url` of an envelope, in order.
    pub fn responses(&self, envelope_id: &str) -> Vec<Value> {
        let inner = self.shared.read();
        inner
            .responses
            .values()
            .find(|url| url.envelope.as_deref() == Some(envelope_id))
            .map(|url| url.answers.clone())
            .unwrap_or_default()
    }

    /// Delivers a `slash_commands` envelope; returns its `envelope_id`.
    pub fn slash_command(&self, c: &SlashCommand) -> Result<String, String> {
        let cfg = &self.shared.cfg;
        let channel_name = self
            .shared
            .read()
            .channels
            .get(&c.channel_id)
            .map(|ch| ch.name.clone());
        let channel_name =
            channel_name.ok_or(format!("fake slack: no channel {}", c.channel_id))?;
        let response_url = self.response_url("commands", &c.channel_id, &c.user_id);
        // Unique per interaction, as Slack's are.
        let trigger_id = format!("1.{}.fake", self.shared.read().sockets.envelopes.len());
        let payload = json!({
            "token": "fakeverificationtoken",
            "team_id": cfg.team_id,
            "team_domain": "fake-ops",
            "channel_id": c.channel_id,
            "channel_name": channel_name,
            "user_id": c.user_id,
            "user_name": c.user_id.to_lowercase(),
            "command": c.command,
            "text": c.text,
            "api_app_id": cfg.app_id,
            "is_enterprise_install": "false",
            "response_url": response_url.clone(),
            "trigger_id": trigger_id,
        });
        let envelope = self.deliver(EnvelopeKind::SlashCommands, payload)?;
        self.carried(&response_url, &envelope);
        Ok(envelope)
    }

    /// Delivers an `interactive` `block_actions` envelope for a button the message really
    /// has: nobody can click a button that is not there.
    pub fn block_action(&self, a: &BlockAction) -> Result<String, String> {
        let cfg = &self.shared.cfg;
        let (message, button) = {
            let inner = self.shared.read();
            let m = inner
                .channels
                .get(&a.channel_id)
                .and_then(|c| c.messages.get(&a.message_ts))
                .filter(|m| !m.deleted)
                .ok_or(format!(
                    "fake slack: no message {} in {}",
                    a.message_ts, a.channel_id
                ))?;
            let (b, block_id) = button(&m.blocks, &a.action_id).ok_or(format!(
                "fake slack: the message has no element {:?}",
                a.action_id
            ))?;
            let action = json!({
                "action_id": a.action_id,
                "block_id": block_id,
                "type": b.get("type"),
                "value": b.get("value"),
                "text": b.get("text"),
                "action_ts": a.message_ts,
            });
            let mut message = json!({"type": "message", "ts": a.message_ts, "user": m.user,
                "text": m.text, "blocks": m.blocks});
            // The clicked message carries its metadata, as at Slack.
            if let (Value::Object(fields), Some(metadata)) = (&mut message, &m.metadata) {
                fields.insert("metadata".into(), metadata.clone());
            }
            (message, action)
        };
        let response_url = self.response_url("actions", &a.channel_id, &a.user_id);
        let trigger_id = format!("2.{}.fake", self.shared.read().sockets.envelopes.len());
        let payload = json!({
            "type": "block_actions",
            "user": {"id": a.user_id, "username": a.user_id.to_lowercase(), "team_id": cfg.team_id},
            "api_app_id": cfg.app_id,
            "token": "fakeverificationtoken",
            "container": {"type": "message", "message_ts": a.message_ts,
                "channel_id": a.channel_id, "is_ephemeral": false},
            "trigger_id": trigger_id,
            "team": {"id": cfg.team_id, "domain": "fake-ops"},
            "channel": {"id": a.channel_id},
            "message": message,
            "response_url": response_url.clone(),
            "actions": [button],
        });
        let envelope = self.deliver(EnvelopeKind::Interactive, payload)?;
        self.carried(&response_url, &envelope);
        Ok(envelope)
    }

    /// Delivers an `events_api` envelope around `event_callback` (redelivered if not acked).
    pub fn event(&self, event: Value) -> Result<String, String> {
        let cfg = &self.shared.cfg;
        let payload = json!({
            "token": "fakeverificationtoken",
            "team_id": cfg.team_id,
            "api_app_id": cfg.app_id,
            "type": "event_callback",
            "event_id": format!("Ev0FAKE{}", self.shared.read().sockets.envelopes.len()),
            "event": event,
        });
        self.deliver(EnvelopeKind::EventsApi, payload)
    }

    /// A user posts `text` mentioning the bot (`<@U…>` in it) in a channel: the message is
    /// posted, and an `app_mention` event delivered, as Slack does only for an app subscribed
    /// to it (its bot token has `app_mentions:read`) and a member of that channel. Returns the
    /// envelope's id and the message's `ts`.
    pub fn mention(
        &self,
        channel: &str,
        user: &str,
        text: &str,
    ) -> Result<(String, String), String> {
        let cfg = &self.shared.cfg;
        {
            let inner = self.shared.read();
            let subscribed = inner
                .tokens
                .get(&cfg.bot_token)
                .is_some_and(|t| t.scopes.contains("app_mentions:read"));
            if !subscribed {
                return Err("fake slack: the app lacks app_mentions:read; no event".to_owned());
            }
            let c = inner
                .channels
                .get(channel)
                .ok_or(format!("fake slack: no channel {channel}"))?;
            if !c.members.contains(&cfg.bot_user_id) {
                return Err(format!(
                    "fake slack: the bot is not in {channel}; Slack offers to invite it instead"
                ));
            }
        }
        let ts = self.post_as_user(channel, user, text);
        let event = json!({
            "type": "app_mention",
            "user": user,
            "text": text,
            "ts": ts,
            "channel": channel,
            "event_ts": ts,
            "team": cfg.team_id,
        });
        Ok((self.event(event)?, ts))
    }

    /// The next `n` acks the client sends are lost on the way, as on a link that drops just
    /// then: Slack sees none, and redelivers an Events API envelope after its deadline.
    pub fn lose_acks(&self, n: usize) {
        self.shared.lock().sockets.acks_to_lose = n;
    }

    /// Waits for the first ephemeral message `user` was shown.
    pub async fn wait_ephemeral(&self, user: &str, timeout: Duration) -> Result<Ephemeral, String> {
        let what = format!("an ephemeral message for {user}");
        self.shared
            .wait_for(timeout, &what, |inner| {
                inner.ephemerals.iter().find(|e| e.user == user).cloned()
            })
            .await
    }

    /// Waits until `n` acks were lost with [`FakeSlack::lose_acks`].
    pub async fn wait_lost_acks(&self, n: usize, timeout: Duration) -> Result<(), String> {
        let what = format!("{n} lost acks");
        self.shared
            .wait_for(timeout, &what, |inner| {
                (inner.sockets.acks_lost >= n).then_some(())
            })
            .await
    }

    /// Waits for the client's ack of one envelope.
    pub async fn wait_ack(&self, envelope_id: &str, timeout: Duration) -> Result<Ack, String> {
        let what = format!("the ack of envelope {envelope_id}");
        self.shared
            .wait_for(timeout, &what, |inner| {
                let e = inner
                    .sockets
                    .envelopes
                    .iter()
                    .find(|e| e.record.envelope_id == envelope_id)?;
                e.record.ack.clone()
            })
            .await
    }

    /// Every envelope delivered, redeliveries included, in order.
    pub fn envelopes(&self) -> Vec<EnvelopeRecord> {
        let inner = self.shared.read();
        inner
            .sockets
            .envelopes
            .iter()
            .map(|e| e.record.clone())
            .collect()
    }

    /// Waits until `n` Socket Mode connections have been greeted over the fake's life.
    pub async fn wait_hellos(&self, n: usize, timeout: Duration) -> Result<(), String> {
        self.shared
            .wait_for(timeout, &format!("{n} socket connections"), |inner| {
                (inner.sockets.hellos >= n).then_some(())
            })
            .await
    }

    /// Open Socket Mode connections.
    pub fn open_sockets(&self) -> usize {
        self.shared.read().sockets.live.len()
    }

    /// Socket handshakes refused for a missing, unknown or spent ticket.
    pub fn refused_handshakes(&self) -> usize {
        self.shared.read().sockets.refused
    }

    /// Sends `{"type": "disconnect", "reason": ...}` on every open connection, then, except for
    /// a warning, closes them.
    pub fn disconnect(&self, reason: DisconnectReason) {
        let frame = json!({
            "type": "disconnect",
            "reason": reason.wire(),
            "debug_info": {"host": "applink-fake-1"},
        })
        .to_string();
        for (_, tx) in &self.shared.read().sockets.live {
            let _gone = tx.send(Outbound::Text(frame.clone()));
            if reason != DisconnectReason::Warning {
                let _gone = tx.send(Outbound::Close);
            }
        }
    }

    /// Cuts every Socket Mode connection without a Close frame.
    pub fn drop_sockets(&self) {
        for (_, tx) in &self.shared.read().sockets.live {
            let _gone = tx.send(Outbound::Drop);
        }
    }

    /// Slack away: every new connection (Web API and Socket Mode) is cut unanswered, and the
    /// open sockets are dropped. `false` brings Slack back.
    pub fn set_away(&self, away: bool) {
        self.shared
            .away
            .store(away, std::sync::atomic::Ordering::Relaxed);
        if away {
            self.drop_sockets();
        }
    }

    /// Waits until `n` connections were cut unanswered while Slack was away.
    pub async fn wait_refused_connections(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<(), String> {
        let what = format!("{n} connections refused");
        self.shared
            .wait_for(timeout, &what, |_| {
                (self.refused_connections() >= n).then_some(())
            })
            .await
    }

    /// Connections (Web API and Socket Mode) cut unanswered while Slack was away.
    pub fn refused_connections(&self) -> usize {
        self.shared.cut.load(std::sync::atomic::Ordering::Relaxed)
    }
}
