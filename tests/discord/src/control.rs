//! The test-control API: act as Discord's users, and look at what the client did.

use std::time::Duration;

use serde_json::{Value, json};

use crate::interactions::text_of;
use crate::payloads::{self, NewInteraction};
use crate::state::{Inner, Interaction, Outbound, StoredMessage, random_token};
use crate::{FakeDiscord, FakeMessage, FakeUser, InteractionId, InteractionRecord, Ping};

pub(crate) fn fake_message(id: u64, stored: &StoredMessage) -> FakeMessage {
    let m = &stored.current;
    let list = |key: &str| {
        m.get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    FakeMessage {
        id,
        content: m
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        embeds: list("embeds"),
        components: list("components"),
        flags: m.get("flags").and_then(Value::as_u64).unwrap_or(0),
        history: stored.history.clone(),
    }
}

fn record(ix: &Interaction) -> Option<InteractionRecord> {
    let r = ix.response.as_ref()?;
    Some(InteractionRecord {
        kind: r.kind,
        data: r.data.clone(),
        ephemeral: r.ephemeral,
        at: r.at,
        followups: ix.followups.clone(),
        original_edits: ix.original_edits.clone(),
    })
}

/// The component with this `custom_id` in a message's action rows.
fn component<'a>(message: &'a Value, custom_id: &str) -> Option<&'a Value> {
    message
        .get("components")?
        .as_array()?
        .iter()
        .filter_map(|row| row.get("components")?.as_array())
        .flatten()
        .find(|c| c.get("custom_id").and_then(Value::as_str) == Some(custom_id))
}

impl FakeDiscord {
    /// Waits until a client has identified (or resumed) and holds a live gateway session.
    pub async fn wait_ready(&self, timeout: Duration) -> Result<(), String> {
        self.shared
            .wait_for(timeout, "a client to identify and receive READY", |inner| {
                inner.gateway.ready.then_some(())
            })
            .await
    }

    /// The registered guild commands, as the fake returned them (with ids).
    pub fn commands(&self) -> Vec<Value> {
        self.shared.read().commands.clone()
    }

    /// Waits until guild commands are registered.
    pub async fn wait_commands(&self, timeout: Duration) -> Result<Vec<Value>, String> {
        self.shared
            .wait_for(timeout, "guild commands to be registered", |inner| {
                (!inner.commands.is_empty()).then(|| inner.commands.clone())
            })
            .await
    }

    fn dispatch(
        &self,
        kind: u8,
        user: &FakeUser,
        channel: u64,
        data: Value,
        source: Option<(u64, Value)>,
    ) -> InteractionId {
        let cfg = &self.shared.cfg;
        assert!(
            cfg.channels.contains(&channel),
            "fake discord: channel {channel} is not a channel of the guild"
        );
        let id = self.shared.snowflake();
        let token = format!("aW50ZXJhY3Rpb246{id}:{}", random_token(64));
        let app_permissions = self.shared.read().bot_permissions(cfg, channel);
        let payload = payloads::interaction(
            cfg,
            NewInteraction {
                id,
                kind,
                token: &token,
                user,
                channel_id: channel,
                data,
                message: source.as_ref().map(|(_, m)| m.clone()),
                app_permissions,
            },
        );
        let mut inner = self.shared.lock();
        inner.interactions.insert(
            id,
            Interaction {
                kind,
                token,
                channel_id: channel,
                dispatched: self.shared.now(),
                source_message: source.map(|(mid, _)| mid),
                response: None,
                original: None,
                thinking: false,
                followups: Vec::new(),
                followup_ids: Vec::new(),
                original_edits: Vec::new(),
                texts: Vec::new(),
            },
        );
        inner.gateway.dispatch("INTERACTION_CREATE", payload);
        tracing::debug!(id, kind, channel, "fake discord: dispatched an interaction");
        InteractionId(id)
    }

    fn command_data(&self, command: &str, options: Value) -> Value {
        let inner = self.shared.read();
        let Some(id) = inner.commands.iter().find_map(|c| {
            let chat = c.get("type").and_then(Value::as_u64) == Some(1);
            (chat && c.get("name").and_then(Value::as_str) == Some(command))
                .then(|| c.get("id").cloned())
        }) else {
            panic!(
                "fake discord: /{command} is not a registered guild command, so no user can invoke it"
            );
        };
        let mut data = json!({
            "id": id,
            "name": command,
            "type": 1,
            "guild_id": self.shared.cfg.guild_id.to_string(),
        });
        if let (Some(obj), false) = (data.as_object_mut(), options.is_null()) {
            obj.insert("options".into(), options);
        }
        data
    }

    /// A user runs a registered slash command in a guild channel (interaction type 2).
    /// `options` is Discord's array, e.g. `[{"name":"status","type":1,"options":[...]}]`.
    pub async fn slash(
        &self,
        user: &FakeUser,
        channel: u64,
        command: &str,
        options: Value,
    ) -> InteractionId {
        let data = self.command_data(command, options);
        self.dispatch(2, user, channel, data, None)
    }

    /// A user types in a command option marked `"focused": true` (interaction type 4).
    pub async fn autocomplete(
        &self,
        user: &FakeUser,
        channel: u64,
        command: &str,
        options: Value,
    ) -> InteractionId {
        let data = self.command_data(command, options);
        self.dispatch(4, user, channel, data, None)
    }

    fn source(&self, channel: u64, message_id: u64, custom_id: &str, want: &[u64]) -> (Value, u64) {
        let inner = self.shared.read();
        let Some(stored) = inner
            .channels
            .get(&channel)
            .and_then(|c| c.messages.get(&message_id))
        else {
            panic!("fake discord: no message {message_id} in channel {channel}");
        };
        let message = stored.current.clone();
        let Some(found) = component(&message, custom_id) else {
            panic!(
                "fake discord: message {message_id} has no component with custom_id {custom_id:?}"
            );
        };
        let kind = found.get("type").and_then(Value::as_u64).unwrap_or(0);
        assert!(
            want.contains(&kind),
            "fake discord: component {custom_id:?} is of type {kind}"
        );
        assert!(
            found.get("disabled").and_then(Value::as_bool) != Some(true),
            "fake discord: component {custom_id:?} is disabled, nobody can use it"
        );
        (message, kind)
    }

    /// A user clicks a button on a message the fake holds (interaction type 3).
    pub async fn click(
        &self,
        user: &FakeUser,
        channel: u64,
        message_id: u64,
        custom_id: &str,
    ) -> InteractionId {
        let (message, _) = self.source(channel, message_id, custom_id, &[2]);
        let data = json!({"custom_id": custom_id, "component_type": 2});
        self.dispatch(3, user, channel, data, Some((message_id, message)))
    }

    /// A user picks values in a string select menu (interaction type 3, component type 3).
    pub async fn select(
        &self,
        user: &FakeUser,
        channel: u64,
        message_id: u64,
        custom_id: &str,
        values: &[&str],
    ) -> InteractionId {
        let (message, kind) = self.source(channel, message_id, custom_id, &[3]);
        let data = json!({"custom_id": custom_id, "component_type": kind, "values": values});
        self.dispatch(3, user, channel, data, Some((message_id, message)))
    }

    /// Waits for the first response to an interaction.
    pub async fn response(
        &self,
        id: InteractionId,
        timeout: Duration,
    ) -> Result<InteractionRecord, String> {
        let what = format!("the first response to interaction {}", id.0);
        self.shared
            .wait_for(timeout, &what, |inner| {
                record(inner.interactions.get(&id.0)?)
            })
            .await
    }

    /// The latest state of an interaction, once it has been answered.
    pub fn interaction(&self, id: InteractionId) -> Option<InteractionRecord> {
        record(self.shared.read().interactions.get(&id.0)?)
    }

    /// Waits for the first text a user gets for an interaction: the response's content (or
    /// first embed's description), else, after a deferral, that of the first `@original` edit or
    /// follow-up. Returns it with whether it is ephemeral.
    pub async fn reply_text(
        &self,
        id: InteractionId,
        timeout: Duration,
    ) -> Result<(String, bool), String> {
        let what = format!("a reply with text to interaction {}", id.0);
        self.shared
            .wait_for(timeout, &what, |inner| {
                let ix = inner.interactions.get(&id.0)?;
                match ix.response.as_ref()? {
                    r if r.kind == 8 => Some((
                        r.data
                            .get("choices")
                            .cloned()
                            .unwrap_or_default()
                            .to_string(),
                        false,
                    )),
                    r if r.kind == 9 => {
                        Some((text_of(&json!({"content": r.data.get("title")})), false))
                    }
                    _ => ix.texts.first().cloned(),
                }
            })
            .await
    }

    /// The messages of a channel, oldest first (ephemeral interaction messages included).
    pub fn messages(&self, channel: u64) -> Vec<FakeMessage> {
        let inner = self.shared.read();
        inner.channels.get(&channel).map_or_else(Vec::new, |c| {
            c.messages
                .iter()
                .map(|(id, m)| fake_message(*id, m))
                .collect()
        })
    }

    /// Waits for a message in `channel` that satisfies `predicate`.
    pub async fn wait_message(
        &self,
        channel: u64,
        timeout: Duration,
        predicate: impl Fn(&FakeMessage) -> bool,
    ) -> Result<FakeMessage, String> {
        let what = format!("a matching message in channel {channel}");
        self.shared
            .wait_for(timeout, &what, |inner: &mut Inner| {
                let c = inner.channels.get(&channel)?;
                c.messages
                    .iter()
                    .map(|(id, m)| fake_message(*id, m))
                    .find(|m| predicate(m))
            })
            .await
    }

    /// How many 429s the fake answered.
    pub fn rate_limited(&self) -> usize {
        self.shared.read().rate_limited
    }

    /// Every rule a client broke, in order.
    /// The files the bot attached to messages, in order.
    pub fn uploads(&self) -> Vec<crate::uploads::Upload> {
        self.shared.read().uploads.clone()
    }

    pub fn violations(&self) -> Vec<String> {
        self.shared.read().violations.clone()
    }

    /// Every mention that would have notified someone, in order. Each is a violation too.
    pub fn pings(&self) -> Vec<Ping> {
        self.shared.read().pings.clone()
    }

    /// The 401, 403 and 429 answers so far: what Discord counts toward an IP ban.
    pub fn invalid_requests(&self) -> usize {
        self.shared.read().invalid
    }

    /// From dispatch to first response, for every answered interaction.
    pub fn response_latencies(&self) -> Vec<Duration> {
        self.shared.read().latencies.clone()
    }

    /// Close codes the fake's gateway sent, in order.
    pub fn gateway_closes(&self) -> Vec<u16> {
        self.shared.read().gateway.closes.clone()
    }

    /// Waits until the client has closed its gateway connection with a Close frame.
    pub async fn wait_client_close(&self, timeout: Duration) -> Result<u16, String> {
        self.shared
            .wait_for(timeout, "the client to close the gateway", |inner| {
                inner.gateway.client_closes.first().copied()
            })
            .await
    }

    /// REST requests whose path starts with `/api/v10/{under}` (e.g. `channels/123`), counted
    /// over the fake's whole life.
    pub fn requests_under(&self, under: &str) -> usize {
        let prefix = format!("/api/v10/{under}");
        let inner = self.shared.read();
        inner
            .requests
            .iter()
            .filter(|r| {
                r.split_once(' ')
                    .is_some_and(|(_, path)| path.starts_with(&prefix))
            })
            .count()
    }

    /// The next `n` requests on channel messages (create, edit, get) are held open and
    /// never answered, as a Discord that hangs would; [`FakeDiscord::hung`] counts them.
    pub fn hang_next_message_requests(&self, n: u64) {
        self.shared.hang(n);
    }

    /// Requests held open so far.
    pub fn hung(&self) -> usize {
        self.shared.read().hung
    }

    /// Waits until the gateway has accepted `n` IDENTIFYs over the fake's life: a restarted
    /// client has started a new session.
    pub async fn wait_identifies(&self, n: usize, timeout: Duration) -> Result<(), String> {
        self.shared
            .wait_for(timeout, &format!("{n} IDENTIFYs"), |inner| {
                (inner.gateway.identifies >= n).then_some(())
            })
            .await
    }

    /// IDENTIFYs, RESUMEs and heartbeats the gateway accepted.
    pub fn gateway_counts(&self) -> (usize, usize, usize) {
        let inner = self.shared.read();
        let g = &inner.gateway;
        (g.identifies, g.resumes, g.heartbeats)
    }

    /// From now on a client's Close frame gets no answer and the connection stays open until
    /// the fake stops: a client that waits for the answer waits that long.
    pub fn leave_client_closes_unanswered(&self) {
        self.shared.lock().gateway.closes_unanswered = true;
    }

    /// Closes the live gateway connection with 4000 (resumable), as Discord does at times.
    /// The client is expected to reconnect and RESUME; [`FakeDiscord::wait_ready`] waits for it.
    pub async fn disconnect(&self) {
        let mut inner = self.shared.lock();
        inner.gateway.ready = false;
        if let Some((_, tx)) = inner.gateway.current.take() {
            let _gone = tx.send(Outbound::Close(4000, "Unknown error."));
        }
    }
}
