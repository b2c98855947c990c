//! [`MatrixUser`]: a tiny test-side client of the Client-Server API v3, the other people in the
//! room that opsbot's tests talk to and watch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::*;

/// How long the client's own 429 retries may wait in all, per call: a test client honours the
/// server's `retry_after_ms` (the bot under test must do so itself), but never for ever.
const RETRY_PATIENCE: Duration = Duration::from_secs(60);
/// The longest one `/sync` long poll is held open by the server.
const SYNC_POLL: Duration = Duration::from_secs(30);

/// What [`MatrixUser::call`] does with a 429 (`M_LIMIT_EXCEEDED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum On429 {
    /// Waits as the server says (`retry_after_ms`, else a second) and tries again, for a
    /// minute in all: a test client honours the server (the bot under test must do so
    /// itself), but never for ever.
    WaitOut,
    /// Returns it like any other refusal.
    Return,
}

/// A registered, logged-in user of the real Synapse ([`Synapse::register`]).
///
/// Every method but the `try_`/`_once` ones panics with the homeserver's `errcode` and `error`
/// when the server refuses: they are the test's set-up and its witnesses, not what it tests.
/// A 429 is waited out as the server says (`retry_after_ms`), except by [`Self::call`] with
/// [`On429::Return`] and by [`Self::send_text_once`], which return it.
#[derive(Debug)]
pub struct MatrixUser {
    base_url: String,
    user_id: String,
    access_token: String,
    device_id: String,
    password: String,
    /// Its own, with pooled connections: a user belongs to the test (and runtime) that made it.
    http: Client,
    /// Transaction ids: `<this user's uuid>-<n>`, never reused, so a retried send is one event.
    txn_prefix: String,
    txn: AtomicU64,
}

impl MatrixUser {
    /// `POST /login` (`m.login.password`) as `localpart`.
    pub(super) async fn login(
        base_url: &str,
        localpart: &str,
        password: &str,
    ) -> Result<Self, MatrixError> {
        let http = Client::builder()
            .timeout(SYNC_POLL + Duration::from_secs(30))
            .build()
            .map_err(|e| MatrixError::no_answer("HTTP client".to_owned(), e.to_string()))?;
        let body = json!({"type": "m.login.password", "password": password,
            "identifier": {"type": "m.id.user", "user": localpart}});
        let path = ["_matrix", "client", "v3", "login"];
        let answer = send(&http, base_url, Method::POST, &path, &[], None, Some(body)).await?;
        let field = |name: &str| answer[name].as_str().unwrap_or_default().to_owned();
        Ok(Self {
            base_url: base_url.to_owned(),
            user_id: field("user_id"),
            access_token: field("access_token"),
            device_id: field("device_id"),
            password: password.to_owned(),
            http,
            txn_prefix: Uuid::new_v4().simple().to_string(),
            txn: AtomicU64::new(0),
        })
    }

    /// `@localpart:localhost`.
    pub fn user_id(&self) -> &str {
        &self.user_id
    }

    pub fn access_token(&self) -> &str {
        &self.access_token
    }

    /// The device the login made.
    pub fn device_id(&self) -> &str {
        &self.device_id
    }

    /// The password, for a bot under test that logs in by password itself.
    pub fn password(&self) -> &str {
        &self.password
    }

    /// A client API call as this user (`path` under `/_matrix/client/v3`, in segments, each
    /// percent-encoded here); a 429 waited out or returned, as `on_429` says.
    pub async fn call(
        &self,
        on_429: On429,
        method: Method,
        path: &[&str],
        query: &[(&str, &str)],
        body: Option<Value>,
    ) -> Result<Value, MatrixError> {
        let full: Vec<&str> = ["_matrix", "client", "v3"]
            .iter()
            .chain(path)
            .copied()
            .collect();
        let token = Some(self.access_token.as_str());
        let began = Instant::now();
        loop {
            let answer = send(
                &self.http,
                &self.base_url,
                method.clone(),
                &full,
                query,
                token,
                body.clone(),
            )
            .await;
            match answer {
                Err(e)
                    if on_429 == On429::WaitOut
                        && e.status == Some(StatusCode::TOO_MANY_REQUESTS) =>
                {
                    let wait = Duration::from_millis(e.retry_after_ms.unwrap_or(1000));
                    if began.elapsed() + wait > RETRY_PATIENCE {
                        return Err(e);
                    }
                    tokio::time::sleep(wait).await;
                }
                answer => return answer,
            }
        }
    }

    /// A private room (`private_chat` preset: invited people join, history shared) named
    /// `name`; `encrypted` turns on `m.megolm.v1.aes-sha2` from its creation.
    pub async fn create_room(&self, name: &str, encrypted: bool) -> String {
        let mut initial_state = Vec::new();
        if encrypted {
            initial_state.push(json!({"type": "m.room.encryption", "state_key": "",
                "content": {"algorithm": "m.megolm.v1.aes-sha2"}}));
        }
        let body = json!({"name": name, "preset": "private_chat",
            "initial_state": initial_state});
        let answer = self.post(&["createRoom"], body).await;
        string(&answer, "room_id")
    }

    pub async fn invite(&self, room: &str, user_id: &str) {
        self.post(&["rooms", room, "invite"], json!({"user_id": user_id}))
            .await;
    }

    /// Joins `room` (by id or alias); its id.
    pub async fn join(&self, room: &str) -> String {
        let answer = self.post(&["join", room], json!({})).await;
        string(&answer, "room_id")
    }

    pub async fn kick(&self, room: &str, user_id: &str, reason: &str) {
        let body = json!({"user_id": user_id, "reason": reason});
        self.post(&["rooms", room, "kick"], body).await;
    }

    /// Sets `user_id`'s power level in `room` (read-modify-write of `m.room.power_levels`).
    pub async fn set_power_level(&self, room: &str, user_id: &str, level: i64) {
        self.change_power_levels(room, |levels| {
            levels["users"][user_id] = json!(level);
        })
        .await
    }

    /// Sets the level needed to send a message event in `room` (`events_default`): above a
    /// user's level, the user may read but not speak.
    pub async fn set_events_default(&self, room: &str, level: i64) {
        self.change_power_levels(room, |levels| levels["events_default"] = json!(level))
            .await
    }

    async fn change_power_levels(&self, room: &str, change: impl FnOnce(&mut Value)) {
        let path = ["rooms", room, "state", "m.room.power_levels", ""];
        let mut levels = self.ok(Method::GET, &path, &[], None).await;
        change(&mut levels);
        self.ok(Method::PUT, &path, &[], Some(levels)).await;
    }

    /// The room's current state events (`GET /rooms/{id}/state`).
    pub async fn state(&self, room: &str) -> Vec<Value> {
        let answer = self
            .ok(Method::GET, &["rooms", room, "state"], &[], None)
            .await;
        answer.as_array().cloned().unwrap_or_default()
    }

    /// An `m.text` message; its event id.
    pub async fn send_text(&self, room: &str, body: &str) -> String {
        or_panic(self.try_send_text(room, body).await)
    }

    /// [`Self::send_text`], the refusal returned (after 429s are waited out).
    pub async fn try_send_text(&self, room: &str, body: &str) -> Result<String, MatrixError> {
        self.send_text_on_429(room, body, On429::WaitOut).await
    }

    /// [`Self::try_send_text`], one attempt: a 429 is returned.
    pub async fn send_text_once(&self, room: &str, body: &str) -> Result<String, MatrixError> {
        self.send_text_on_429(room, body, On429::Return).await
    }

    async fn send_text_on_429(
        &self,
        room: &str,
        body: &str,
        on_429: On429,
    ) -> Result<String, MatrixError> {
        let txn = self.next_txn();
        let path = ["rooms", room, "send", "m.room.message", &txn];
        let answer = self
            .call(on_429, Method::PUT, &path, &[], Some(text(body)))
            .await?;
        Ok(string(&answer, "event_id"))
    }

    /// Reacts to `event_id` with `key` (an `m.reaction` annotating it); the reaction's id.
    pub async fn react(&self, room: &str, event_id: &str, key: &str) -> String {
        let txn = self.next_txn();
        let content = json!({"m.relates_to": {"rel_type": "m.annotation",
            "event_id": event_id, "key": key}});
        let path = ["rooms", room, "send", "m.reaction", &txn];
        string(
            &self.ok(Method::PUT, &path, &[], Some(content)).await,
            "event_id",
        )
    }

    /// Redacts `event_id`; the redaction's id.
    pub async fn redact(&self, room: &str, event_id: &str) -> String {
        let txn = self.next_txn();
        let path = ["rooms", room, "redact", event_id, &txn];
        string(
            &self.ok(Method::PUT, &path, &[], Some(json!({}))).await,
            "event_id",
        )
    }

    /// The room's latest `limit` events, newest first (`GET /rooms/{id}/messages?dir=b`).
    pub async fn messages(&self, room: &str, limit: u32) -> Vec<Value> {
        let limit = limit.to_string();
        let query = [("dir", "b"), ("limit", limit.as_str())];
        let answer = self
            .ok(Method::GET, &["rooms", room, "messages"], &query, None)
            .await;
        answer["chunk"].as_array().cloned().unwrap_or_default()
    }

    /// The first event of `room`'s timeline that `matches`, as `/sync` shows it to this user:
    /// the recent timeline first (an event sent before the call counts), then each new batch
    /// the server hands over as it comes (a long poll with a `since` token: no sleeping).
    /// Panics after `timeout`, saying how many events went by.
    pub async fn wait_for(
        &self,
        room: &str,
        matches: impl Fn(&Value) -> bool,
        timeout: Duration,
    ) -> Value {
        let filter = json!({
            "room": {"rooms": [room], "include_leave": true,
                "timeline": {"limit": 100}, "state": {"lazy_load_members": true},
                "ephemeral": {"not_types": ["*"]}, "account_data": {"not_types": ["*"]}},
            "presence": {"not_types": ["*"]}, "account_data": {"not_types": ["*"]}})
        .to_string();
        let deadline = Instant::now() + timeout;
        let mut since: Option<String> = None;
        let mut seen = 0;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let poll = left.min(SYNC_POLL).as_millis().to_string();
            let mut query = vec![("filter", filter.as_str()), ("timeout", poll.as_str())];
            if let Some(since) = &since {
                query.push(("since", since));
            }
            let batch = self.ok(Method::GET, &["sync"], &query, None).await;
            for section in ["join", "leave"] {
                let events = batch["rooms"][section][room]["timeline"]["events"].as_array();
                for event in events.into_iter().flatten() {
                    if matches(event) {
                        return event.clone();
                    }
                    seen += 1;
                }
            }
            assert!(
                !left.is_zero(),
                "{} waited {timeout:?} in {room} for an event that never came ({seen} others did)",
                self.user_id
            );
            since = batch["next_batch"].as_str().map(str::to_owned);
        }
    }

    fn next_txn(&self) -> String {
        let n = self.txn.fetch_add(1, Ordering::Relaxed);
        format!("{}-{n}", self.txn_prefix)
    }

    async fn post(&self, path: &[&str], body: Value) -> Value {
        self.ok(Method::POST, path, &[], Some(body)).await
    }

    async fn ok(
        &self,
        method: Method,
        path: &[&str],
        query: &[(&str, &str)],
        body: Option<Value>,
    ) -> Value {
        or_panic(self.call(On429::WaitOut, method, path, query, body).await)
    }
}

fn text(body: &str) -> Value {
    json!({"msgtype": "m.text", "body": body})
}

/// A string field of an answer ("" if it has none, which the caller's next request shows).
fn string(answer: &Value, field: &str) -> String {
    answer[field].as_str().unwrap_or_default().to_owned()
}
