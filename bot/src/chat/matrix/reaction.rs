//! Decisions by reaction: ✅ (or ❌) on a plan's message decides what that message showed when
//! the reaction was made (its latest edit before then, by the homeserver's clock), and only on
//! the run's current message: a message redacted and posted again leaves the old one without a
//! say, and a reaction on it is refused, naming the run.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use opsbot_commands::approval::ApprovalRefusal;
use opsbot_commands::name::RunId;
use reqwest::Method;
use serde_json::Value;

use super::client::encode;
use super::content;
use super::handler::Handler;
use crate::refusal::Refusal;
use crate::service::Asked;

/// The runs' messages redacted since the start, and whose they were.
pub(super) type Removed = Mutex<HashMap<String, RunId>>;

/// What a message reacted to showed.
enum Shown {
    /// The bot's message, as it was then.
    Content(Value),
    /// The bot's message, redacted since; the run it was for, when known.
    Removed(Option<RunId>),
    /// Someone else's message, or one that cannot be read.
    Other,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Handler {
    /// ✅ or ❌ on a plan's message: the decision the message offered when the reaction was
    /// made, and only on the run's current message.
    pub(super) async fn reaction(&self, room: &str, sender: &str, event: &Value) {
        let relates = &event["content"]["m.relates_to"];
        let (Some(target), Some(key)) = (relates["event_id"].as_str(), relates["key"].as_str())
        else {
            return;
        };
        let reacted = event["origin_server_ts"].as_u64().unwrap_or(u64::MAX);
        let (run, button) = match self.shown_at(room, target, reacted).await {
            Shown::Content(shown) => match content::decision(&shown, key) {
                Some(button) => (button.run, Some(button)),
                None => return,
            },
            Shown::Removed(Some(run)) => (run, None),
            Shown::Removed(None) | Shown::Other => return,
        };
        let asked = format!("{key} reaction on {run}");
        let actor = match self.actor(room, sender, &asked, Some(run)).await {
            Ok(actor) => actor,
            Err(reply) => return self.answer(room, event, &reply).await,
        };
        let current = self
            .service
            .engine()
            .run(run)
            .ok()
            .and_then(|run| run.progress_message)
            .is_some_and(|message| message.0 == target);
        let decided = match button.filter(|_| current) {
            Some(button) => self.service.decide(&actor, &button).await.map(drop),
            None => {
                let asked = Asked::new(asked, Some(run));
                let refusal = Refusal::Approval(ApprovalRefusal::OlderMessage { run });
                Err(self
                    .service
                    .refused(&actor.speaker(), &asked, refusal.into())
                    .await)
            }
        };
        // A decision is shown by progress, which edits the plan's message.
        if let Err(reply) = decided {
            self.answer(room, event, &reply).await;
        }
    }

    /// What `target` showed at `reacted` (the homeserver's time): the content of its latest
    /// edit made before then, so that a plan edited after the reaction is not what the
    /// reaction decides.
    async fn shown_at(&self, room: &str, target: &str, reacted: u64) -> Shown {
        let path = format!("/v3/rooms/{}/event/{}", encode(room), encode(target));
        let original = match self
            .client
            .call("reading a plan's message", Method::GET, &path, None)
            .await
        {
            Ok(event) => event,
            Err(error) => {
                tracing::warn!(%error, "a reaction's message cannot be read");
                return Shown::Other;
            }
        };
        if original["sender"] != self.me.as_str() {
            return Shown::Other;
        }
        if !original["unsigned"]["redacted_because"].is_null() {
            return Shown::Removed(self.retired(target));
        }
        let path = format!(
            "/v1/rooms/{}/relations/{}/m.replace?dir=b&limit=100",
            encode(room),
            encode(target)
        );
        let edits = match self
            .client
            .call("reading a plan's edits", Method::GET, &path, None)
            .await
        {
            Ok(edits) => edits,
            Err(error) => {
                tracing::warn!(%error, "a reaction's message's edits cannot be read");
                return Shown::Other;
            }
        };
        let then = edits["chunk"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|edit| {
                edit["sender"] == self.me.as_str()
                    && edit["origin_server_ts"]
                        .as_u64()
                        .is_some_and(|at| at <= reacted)
            });
        Shown::Content(match then {
            Some(edit) => edit["content"]["m.new_content"].clone(),
            None => original["content"].clone(),
        })
    }

    /// One of the bot's messages was redacted: the transport posts its run's message again,
    /// and a decision on the removed one is refused, naming the run.
    pub(super) fn redacted(&self, event: &str) {
        self.transport.redacted(event);
        let runs = self
            .service
            .engine()
            .store()
            .unfinished_runs()
            .unwrap_or_default();
        if let Some(run) = runs
            .iter()
            .find(|run| run.progress_message.as_ref().is_some_and(|m| m.0 == event))
        {
            lock(&self.removed).insert(event.to_owned(), run.id);
        }
    }

    fn retired(&self, event: &str) -> Option<RunId> {
        lock(&self.removed).get(event).copied()
    }
}
