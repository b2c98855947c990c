//! Envelopes: slash commands and button presses. Each is checked (workspace, person, channel,
//! parse, first delivery, roles) and acknowledged within Slack's 3 s: with the answer when it
//! needs only the store, else (a cluster, a cloud, or a store slower than it should be) with a
//! short "working on it", the answer following through the command's `response_url`.
//! Refusals are ephemeral, and the ones that say no to a person are audited.

use std::sync::Arc;
use std::time::Duration;

use opsbot_commands::button::ApprovalButton;
use opsbot_commands::parse::{self, Origin};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::access::Access;
use super::blocked::Blocked;
use super::blocks::escape;
use super::channel_id;
use super::said::{excerpt, response, said, shared_file};
use super::socket::{Acker, Envelope, Kind};
use super::web::Web;
use crate::service::{self, Asked, Reply, Service};

/// How long an answer may take and still come with the acknowledgement: Slack shows the user
/// an error after 3 s without one, and the ack has a network to cross.
const ACK_WITHIN: Duration = Duration::from_millis(2000);

/// What an answer that takes longer says meanwhile.
const WORKING: &str = "⏳ working on it…";

/// The single command a workspace may prefer to one per group: `/opsbot cluster status …`.
pub const SINGLE_COMMAND: &str = "/opsbot";

pub(super) struct Handler {
    pub(super) service: Service,
    pub(super) access: Access,
    /// The bot token's client, whose HTTP client answers through `response_url`s.
    pub(super) web: Web,
    /// The bot's member id: a message addressed to it starts with `<@U…>`.
    pub(super) bot_user: String,
    /// Channels where Slack refused the bot: an answer there says what to grant.
    pub(super) blocked: Blocked,
}

/// Who asks what where, from a slash command or a mention.
pub(super) struct Asking<'a> {
    pub(super) team: &'a str,
    pub(super) user: &'a str,
    pub(super) channel: &'a str,
    /// The console line it stands for.
    pub(super) line: String,
    /// The delivery's key, recorded before anything is done; `None` when the caller has.
    pub(super) delivery: Option<&'a str>,
}

/// Where an answer goes after the acknowledgement: a slash command's or a button's
/// `response_url` (valid 30 minutes, needs neither token nor membership), or, for a mention,
/// which has none, a message in its channel (ephemeral to the person when private).
pub(super) enum Back<'a> {
    Url(&'a str),
    Channel { channel: &'a str, user: &'a str },
}

/// The fields of a `slash_commands` payload opsbot reads.
#[derive(Debug, Deserialize)]
struct SlashCommand {
    team_id: String,
    user_id: String,
    channel_id: String,
    command: String,
    #[serde(default)]
    text: String,
    trigger_id: String,
    response_url: String,
}

/// The fields of an `interactive` `block_actions` payload opsbot reads.
#[derive(Debug, Deserialize)]
struct BlockActions {
    #[serde(rename = "type")]
    kind: String,
    user: Id,
    team: Id,
    channel: Id,
    #[serde(default)]
    actions: Vec<Action>,
    trigger_id: String,
    response_url: String,
}

#[derive(Debug, Deserialize)]
struct Id {
    id: String,
}

#[derive(Debug, Deserialize)]
struct Action {
    action_id: String,
}

impl Handler {
    /// Takes one envelope; the work goes on in a task of its own, so that the next is read at
    /// once.
    pub(super) fn take(self: &Arc<Self>, envelope: Envelope, acker: Acker) {
        let this = Arc::clone(self);
        tokio::spawn(async move {
            match envelope.kind {
                Kind::SlashCommand => this.command(envelope.payload, acker).await,
                Kind::Interactive => this.click(envelope.payload, acker).await,
                Kind::Event => this.mention(envelope.payload, acker).await,
                Kind::Other => acker.ack(None),
            }
        });
    }

    async fn command(&self, payload: Value, acker: Acker) {
        let command = match serde_json::from_value::<SlashCommand>(payload) {
            Ok(command) => command,
            Err(error) => {
                tracing::warn!(%error, "a slash command payload opsbot cannot read");
                return acker.ack(Some(response(&Reply::private(
                    "opsbot could not read this command from Slack; try again",
                ))));
            }
        };
        // Acknowledged with the answer when it is ready before it needs a backend (a cluster,
        // a cloud: seconds) or ACK_WITHIN passes; else with WORKING, the answer following.
        let (slow, needs_time) = oneshot::channel();
        let asking = Asking {
            team: &command.team_id,
            user: &command.user_id,
            channel: &command.channel_id,
            line: line(&command.command, &command.text),
            delivery: Some(&command.trigger_id),
        };
        let back = Back::Url(&command.response_url);
        let mut answer = std::pin::pin!(self.answer(asking, slow));
        let ready = tokio::select! {
            biased;
            reply = &mut answer => Some(reply),
            Ok(()) = needs_time => None,
            () = tokio::time::sleep(ACK_WITHIN) => None,
        };
        match ready {
            Some(Some(reply)) => {
                acker.ack(Some(said(&reply)));
                self.share(&back, &command.channel_id, &reply).await;
            }
            Some(None) => acker.ack(None),
            None => {
                acker.ack(Some(response(&Reply::private(WORKING))));
                if let Some(reply) = answer.await {
                    self.deliver(&back, &command.channel_id, &reply).await;
                }
            }
        }
    }

    /// The answer to a command; none for one already handled. `slow` is told when the answer
    /// needs a backend.
    pub(super) async fn answer(
        &self,
        asking: Asking<'_>,
        slow: oneshot::Sender<()>,
    ) -> Option<Reply> {
        let checked = self.access.check(asking.team, asking.user, asking.channel);
        let actor = match checked.actor {
            Ok(actor) => actor,
            Err(refusal) => {
                let asked = Asked::new(typed(&asking.line), None);
                return Some(
                    self.service
                        .refused(&checked.speaker, &asked, refusal.into())
                        .await,
                );
            }
        };
        let request = match parse::parse_line(&asking.line, Origin::Chat) {
            Ok(request) => request,
            Err(error) => return Some(Reply::private(error.to_string())),
        };
        if service::needs_a_backend(&request) {
            let _ = slow.send(());
        }
        // Recorded before anything is done, after what needs no store: a command that will
        // take a while is acknowledged without waiting for the write.
        if let Some(delivery) = asking.delivery {
            if !self.first_delivery(delivery).await {
                tracing::info!(%delivery, "a repeated delivery; already handled");
                return None;
            }
        }
        let channel = channel_id(asking.channel);
        let mut reply = self
            .service
            .handle(&actor, &channel, Origin::Chat, request)
            .await;
        if let Some(warning) = self.blocked.warning(asking.channel) {
            reply.text = format!("{}\n{warning}", reply.text);
        }
        Some(reply)
    }

    /// A press of Approve, Confirm or Reject: acknowledged at once (a press has no answer of
    /// its own); the message then shows the decision, or the presser alone is told why not.
    async fn click(&self, payload: Value, acker: Acker) {
        acker.ack(None);
        let click = match serde_json::from_value::<BlockActions>(payload) {
            Ok(click) if click.kind == "block_actions" => click,
            Ok(_) => return,
            Err(error) => return tracing::warn!(%error, "a button press opsbot cannot read"),
        };
        let Some(button) = click
            .actions
            .first()
            .and_then(|action| ApprovalButton::parse(&action.action_id))
        else {
            return;
        };
        if !self.first_delivery(&click.trigger_id).await {
            return;
        }
        let checked = self
            .access
            .check(&click.team.id, &click.user.id, &click.channel.id);
        let decided = match checked.actor {
            Ok(actor) => self.service.decide(&actor, &button).await,
            Err(refusal) => {
                let asked = Asked::new(format!("{button} button"), Some(button.run));
                Err(self
                    .service
                    .refused(&checked.speaker, &asked, refusal.into())
                    .await)
            }
        };
        // A decision is shown by progress, which edits the plan's message with the run's
        // latest state; an edit from here could land after a later one and show the past.
        if let Err(reply) = decided {
            let back = Back::Url(&click.response_url);
            self.deliver(&back, &click.channel.id, &reply).await;
        }
    }

    /// An answer after the acknowledgement: ephemeral when private, in the channel when
    /// public. A public answer with a file says its text, and the file is then shared in
    /// `channel`.
    pub(super) async fn deliver(&self, back: &Back<'_>, channel: &str, reply: &Reply) {
        self.respond(back, &said(reply)).await;
        self.share(back, channel, reply).await;
    }

    /// Says `answer` (a slash command's response: `response_type` and `text`) where `back`
    /// names.
    async fn respond(&self, back: &Back<'_>, answer: &Value) {
        let said = match back {
            Back::Url(url) => self.web.respond(url, answer).await,
            Back::Channel { channel, user } => {
                let mut args = json!({ "channel": channel, "text": answer["text"] });
                let method = if answer["response_type"] == "ephemeral" {
                    args["user"] = json!(user);
                    "chat.postEphemeral"
                } else {
                    "chat.postMessage"
                };
                self.web.call(method, &args).await.map(drop)
            }
        };
        if let Err(error) = said {
            tracing::warn!(%error, "an answer could not be delivered in Slack");
        }
    }

    /// Shares a public answer's file (none: nothing to do) in the command's channel,
    /// introduced by the answer's first line; when Slack does not take it (no `files:write`,
    /// the bot not in the channel, Slack away), the start of the file follows the answer
    /// instead.
    async fn share(&self, back: &Back<'_>, channel: &str, reply: &Reply) {
        let Some(file) = shared_file(reply) else {
            return;
        };
        let first = reply.text.lines().next().unwrap_or(&file.name);
        let uploaded = self
            .web
            .upload(channel, &file.name, &file.text, &escape(first))
            .await;
        if let Err(error) = uploaded {
            tracing::warn!(%error, file = %file.name, "a file could not be shared in Slack; its start is shown instead");
            let excerpt = json!({ "response_type": "in_channel", "text": excerpt(file) });
            self.respond(back, &excerpt).await;
        }
    }

    /// False for a repeated delivery of an envelope already handled; a store failure counts
    /// as first, since refusing would lose a command.
    pub(super) async fn first_delivery(&self, delivery: &str) -> bool {
        let key = format!("slack:{delivery}");
        match self.service.engine().writes().first_delivery(key).await {
            Ok(first) => first,
            Err(error) => {
                tracing::error!(%error, "cannot record a Slack delivery; handling it anyway");
                true
            }
        }
    }
}

/// The console line a slash command stands for. Slack escapes `&`, `<` and `>` in what the
/// user typed; the parser sees what they typed. `/opsbot cluster status` is `/cluster status`.
fn line(command: &str, text: &str) -> String {
    let text = unescape(text);
    if command == SINGLE_COMMAND {
        format!("/{}", text.trim_start())
    } else {
        format!("{command} {text}")
    }
}

/// What the user typed, from Slack's escaped text.
pub(super) fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// `/approve` or `/run cancel`, as the audit log names a command refused before it was read.
fn typed(line: &str) -> String {
    line.split_whitespace()
        .take_while(|word| !word.contains(':'))
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use opsbot_commands::parse::parse_line;

    use super::*;

    #[test]
    fn a_slash_command_is_read_as_its_console_line() {
        assert_eq!(
            line("/cluster", "restart cluster:logs"),
            "/cluster restart cluster:logs"
        );
        assert_eq!(
            line("/opsbot", " cluster restart cluster:logs"),
            "/cluster restart cluster:logs"
        );
        let reason = line("/reject", "id:r-1 reason:\"a &lt; b &amp;&amp; c &gt; d\"");
        let Ok(request) = parse_line(&reason, Origin::Chat) else {
            panic!("{reason}");
        };
        assert!(
            format!("{request:?}").contains("a < b && c > d"),
            "{request:?}"
        );
    }

    #[test]
    fn a_refused_command_is_named_without_its_options() {
        assert_eq!(typed("/run cancel id:r-1"), "/run cancel");
        assert_eq!(typed("/approve id:r-1 digest:abc"), "/approve");
    }
}
