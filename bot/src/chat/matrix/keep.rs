//! The homeserver kept in reach: the bot syncs the rooms it serves (a long poll: the
//! homeserver answers as soon as there is something new), hands each event to the handler, and
//! starts again after a backoff whenever the homeserver does not answer. An outage of it stops
//! nothing else; progress meanwhile waits in its lanes.
//!
//! Where the sync starts: the homeserver's position is kept in memory only, so a bot started
//! (or made active) anew sees each room's latest events again; the ones already handled are in
//! the store, and those older than [`FRESH`] are history, not requests.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::client::encode;
use super::handler::Handler;
use super::{Connector, Reached};
use crate::chat::Keeper;
use crate::chat::Unusable;

/// The part `/healthz` names.
const PART: &str = "matrix";

/// How long the homeserver holds a sync open when there is nothing new.
const SYNC_WAIT: Duration = Duration::from_secs(30);

/// An event older than this when a sync first sees it is history: a command typed while the
/// bot was away for longer is not carried out hours later.
const FRESH: Duration = Duration::from_secs(10 * 60);

/// The events the bot acts on; the others are never sent to it.
const TYPES: [&str; 5] = [
    "m.room.message",
    "m.reaction",
    "m.room.redaction",
    "m.room.member",
    "m.room.encryption",
];

impl Keeper<Connector> {
    /// Serves Matrix until `stop` turns true, starting from `first` (the check made at start).
    pub async fn keep(self, first: Result<Reached, Unusable>, stop: watch::Receiver<bool>) {
        let reconnect = self.reconnect(PART);
        let serve = |reached: Reached| async {
            for problem in &reached.problems {
                tracing::warn!(%problem, "Matrix: the bot lacks something it needs");
            }
            let handler = Arc::new(self.handler(reached));
            Some(self.sync(&handler).await)
        };
        reconnect
            .keep(first, stop, || self.connector.check(), serve)
            .await;
    }

    fn handler(&self, reached: Reached) -> Handler {
        Handler {
            service: self.service.clone(),
            people: self.people.clone(),
            client: self.connector.client.clone(),
            transport: self.connector.transport.clone(),
            me: self.connector.config.user.as_str().to_owned(),
            rooms: reached.rooms,
            removed: std::sync::Mutex::default(),
        }
    }

    /// Syncs until a sync fails; says why.
    async fn sync(&self, handler: &Arc<Handler>) -> String {
        let filter = encode(&self.filter().to_string());
        let mut since: Option<String> = None;
        loop {
            let mut path = format!("/v3/sync?filter={filter}&timeout={}", SYNC_WAIT.as_millis());
            if let Some(since) = &since {
                path.push_str(&format!("&since={}", encode(since)));
            }
            let synced = self
                .connector
                .client
                .call_waiting("syncing", Method::GET, &path, None, SYNC_WAIT)
                .await;
            let body = match synced {
                Ok(body) => body,
                Err(error) => return error.to_string(),
            };
            self.join_invited(&body["rooms"]["invite"]).await;
            // A room the bot left (was kicked from) shows its last events under `leave`.
            let rooms = ["join", "leave"]
                .into_iter()
                .flat_map(|section| body["rooms"][section].as_object().into_iter().flatten());
            for (room, state) in rooms {
                let events = state["timeline"]["events"].as_array().into_iter().flatten();
                for event in events {
                    // The first sync's timeline is each room's latest events, old ones too.
                    let age = event["unsigned"]["age"].as_u64().map(Duration::from_millis);
                    if since.is_none() && age.is_none_or(|age| age > FRESH) {
                        continue;
                    }
                    // A redaction at once, so that a decision after it in the room knows of it;
                    // the rest each in a task of its own: a command that waits for a cluster
                    // holds up neither the sync nor the next command.
                    if event["type"] == "m.room.redaction" {
                        handler.take(room, event).await;
                        continue;
                    }
                    let (handler, room, event) = (Arc::clone(handler), room.clone(), event.clone());
                    tokio::spawn(async move { handler.take(&room, &event).await });
                }
            }
            since = body["next_batch"].as_str().map(str::to_owned);
        }
    }

    /// The rooms served and announced in, and the events the bot acts on: nothing else is
    /// sent (no presence, no typing, no read receipts, no other room).
    fn filter(&self) -> Value {
        let config = &self.connector.config;
        let rooms: Vec<&str> = config
            .rooms
            .iter()
            .chain(&config.announce_room)
            .map(|r| r.as_str())
            .collect();
        json!({
            "presence": { "not_types": ["*"] },
            "account_data": { "not_types": ["*"] },
            "room": {
                "rooms": rooms,
                "include_leave": true,
                "timeline": { "limit": 50, "types": TYPES },
                "state": { "types": [] },
                "ephemeral": { "not_types": ["*"] },
                "account_data": { "not_types": ["*"] },
            },
        })
    }

    /// Accepts an invitation to a room the bot serves or announces in (an admin invited it
    /// after the start); others are left alone.
    async fn join_invited(&self, invites: &Value) {
        let config = &self.connector.config;
        let ours = config.rooms.iter().chain(&config.announce_room);
        for room in ours.filter(|room| invites.get(room.as_str()).is_some()) {
            match self.connector.join(room).await {
                Ok(true) => tracing::info!(%room, "joined a served room the bot was invited to"),
                Ok(false) => tracing::warn!(%room, "the homeserver refused the bot a served room"),
                Err(error) => tracing::warn!(%room, %error, "cannot join a served room"),
            }
        }
    }
}
