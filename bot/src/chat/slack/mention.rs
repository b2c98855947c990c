//! Commands addressed to the bot in a message: `@opsbot cluster status cluster:logs`, where a
//! slash command cannot be typed (a thread) or a person prefers to. Slack delivers each as an
//! `app_mention` event, and delivers it again when no acknowledgement reached it in time (up
//! to three more times, minutes apart): each is acknowledged at once and handled once, by its
//! `event_id`, which its redeliveries share. A mention has no `response_url`: the answer is a
//! message in its channel, ephemeral to the person when private.

use serde::Deserialize;
use serde_json::Value;
use tokio::sync::oneshot;

use super::handler::{Asking, Back, Handler, unescape};
use super::socket::Acker;

/// The fields of an `events_api` payload (`event_callback`) opsbot reads.
#[derive(Debug, Deserialize)]
struct Callback {
    team_id: String,
    event_id: String,
    event: Event,
}

/// An `app_mention` event's fields; a message from another bot has no `user`.
#[derive(Debug, Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    user: Option<String>,
    #[serde(default)]
    text: String,
    channel: String,
}

impl Handler {
    /// Takes an Events API envelope: acknowledged first (an event's ack carries nothing), then
    /// a mention's command handled unless a delivery of the same event was.
    pub(super) async fn mention(&self, payload: Value, acker: Acker) {
        acker.ack(None);
        let callback = match serde_json::from_value::<Callback>(payload) {
            Ok(callback) if callback.event.kind == "app_mention" => callback,
            Ok(_) => return,
            Err(error) => return tracing::warn!(%error, "a Slack event opsbot cannot read"),
        };
        let event = &callback.event;
        let Some(user) = event.user.as_deref() else {
            return;
        };
        // Before anything, refusals included: a redelivery is the same request, seen again.
        if !self
            .first_delivery(&format!("event:{}", callback.event_id))
            .await
        {
            tracing::info!(event = %callback.event_id, "a repeated delivery; already handled");
            return;
        }
        let asking = Asking {
            team: &callback.team_id,
            user,
            channel: &event.channel,
            line: line(&self.bot_user, &event.text),
            delivery: None,
        };
        let (slow, _) = oneshot::channel();
        if let Some(reply) = self.answer(asking, slow).await {
            let back = Back::Channel {
                channel: &event.channel,
                user,
            };
            self.deliver(&back, &event.channel, &reply).await;
        }
    }
}

/// The console line a mention stands for: what follows the bot's mention, with its slash
/// added (`@opsbot cluster status` is `/cluster status`); the mention alone asks for help.
fn line(bot_user: &str, text: &str) -> String {
    let mention = format!("<@{bot_user}>");
    let after = text
        .split_once(&mention)
        .map_or(text, |(_, after)| after)
        .trim();
    let typed = unescape(after);
    match typed.strip_prefix('/').unwrap_or(&typed) {
        "" => "/help".to_owned(),
        command => format!("/{command}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mention_is_read_as_the_console_line_after_it() {
        let bot = "U0BOT";
        assert_eq!(
            line(bot, "<@U0BOT> cluster restart cluster:logs"),
            "/cluster restart cluster:logs"
        );
        assert_eq!(line(bot, "hey <@U0BOT>  /run status"), "/run status");
        assert_eq!(line(bot, "<@U0BOT>"), "/help");
        assert_eq!(
            line(bot, "<@U0BOT> reject id:r-1 reason:\"a &lt; b\""),
            "/reject id:r-1 reason:\"a < b\""
        );
    }
}
