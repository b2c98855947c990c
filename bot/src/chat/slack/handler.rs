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
use super::blocks::escape;
use super::channel_id;
use super::socket::{Acker, Envelope, Kind};
use super::web::Web;
use crate::service::{self, Asked, Attachment, Reply, Service};

/// How long an answer may take and still come with the acknowledgement: Slack shows the user
/// an error after 3 s without one, and the ack has a network to cross.
const ACK_WITHIN: Duration = Duration::from_millis(2000);

/// What an answer that takes longer says meanwhile.
const WORKING: &str = "⏳ working on it…";

/// The most of a file-sized answer shown in the message (Slack's section text is 3,000).
const INLINE_FILE: usize = 2500;

/// The single command a workspace may prefer to one per group: `/opsbot cluster status …`.
pub const SINGLE_COMMAND: &str = "/opsbot";

pub(super) struct Handler {
    pub(super) service: Service,
    pub(super) access: Access,
    /// The bot token's client, whose HTTP client answers through `response_url`s.
    pub(super) web: Web,
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
                // opsbot subscribes to no event; one delivered anyway is taken and dropped.
                Kind::Event | Kind::Other => acker.ack(None),
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
        let mut answer = std::pin::pin!(self.answer(&command, slow));
        let ready = tokio::select! {
            biased;
            reply = &mut answer => Some(reply),
            Ok(()) = needs_time => None,
            () = tokio::time::sleep(ACK_WITHIN) => None,
        };
        match ready {
            Some(Some(reply)) => {
                acker.ack(Some(said(&reply)));
                let (url, channel) = (&command.response_url, &command.channel_id);
                self.share(url, channel, &reply).await;
            }
            Some(None) => acker.ack(None),
            None => {
                acker.ack(Some(response(&Reply::private(WORKING))));
                if let Some(reply) = answer.await {
                    let (url, channel) = (&command.response_url, &command.channel_id);
                    self.deliver(url, channel, &reply).await;
                }
            }
        }
    }

    /// The answer to a slash command; none for one already handled. `slow` is told when the
    /// answer needs a backend.
    async fn answer(&self, command: &SlashCommand, slow: oneshot::Sender<()>) -> Option<Reply> {
        let line = line(&command.command, &command.text);
        let checked = self
            .access
            .check(&command.team_id, &command.user_id, &command.channel_id);
        let actor = match checked.actor {
            Ok(actor) => actor,
            Err(refusal) => {
                let asked = Asked::new(typed(&line), None);
                return Some(
                    self.service
                        .refused(&checked.speaker, &asked, refusal.into())
                        .await,
                );
            }
        };
        let request = match parse::parse_line(&line, Origin::Chat) {
            Ok(request) => request,
            Err(error) => return Some(Reply::private(error.to_string())),
        };
        if service::needs_a_backend(&request) {
            let _ = slow.send(());
        }
        // Recorded before anything is done, after what needs no store: a command that will
        // take a while is acknowledged without waiting for the write.
        if !self.first_delivery(&command.trigger_id).await {
            tracing::info!(trigger = %command.trigger_id, "a repeated delivery; already handled");
            return None;
        }
        let channel = channel_id(&command.channel_id);
        Some(
            self.service
                .handle(&actor, &channel, Origin::Chat, request)
                .await,
        )
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
            self.deliver(&click.response_url, &click.channel.id, &reply)
                .await;
        }
    }

    /// An answer after the acknowledgement, through the interaction's `response_url`:
    /// ephemeral when private, in the channel when public. A public answer with a file says
    /// its text there, and the file is then shared in `channel`.
    async fn deliver(&self, response_url: &str, channel: &str, reply: &Reply) {
        self.respond(response_url, &said(reply)).await;
        self.share(response_url, channel, reply).await;
    }

    async fn respond(&self, response_url: &str, answer: &Value) {
        if let Err(error) = self.web.respond(response_url, answer).await {
            tracing::warn!(%error, "an answer could not be delivered in Slack");
        }
    }

    /// Shares a public answer's file (none: nothing to do) in the command's channel, introduced by the answer's
    /// first line; when Slack does not take it (no `files:write`, the bot not in the channel,
    /// Slack away), the start of the file follows the answer through `response_url` instead.
    async fn share(&self, response_url: &str, channel: &str, reply: &Reply) {
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
            self.respond(response_url, &excerpt).await;
        }
    }

    /// False for a repeated delivery of an envelope already handled; a store failure counts
    /// as first, since refusing would lose a command.
    async fn first_delivery(&self, trigger: &str) -> bool {
        let key = format!("slack:{trigger}");
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
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    if command == SINGLE_COMMAND {
        format!("/{}", text.trim_start())
    } else {
        format!("{command} {text}")
    }
}

/// `/approve` or `/run cancel`, as the audit log names a command refused before it was read.
fn typed(line: &str) -> String {
    line.split_whitespace()
        .take_while(|word| !word.contains(':'))
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The file of a public answer, which is shared in the channel; a private answer's file is
/// shown inline, since a file shared in a channel is everyone's.
fn shared_file(reply: &Reply) -> Option<&Attachment> {
    reply.attachment.as_ref().filter(|_| !reply.private)
}

/// The response that says an answer: its text alone when its file is shared in the channel
/// after it, else with the file's start inline.
fn said(reply: &Reply) -> Value {
    match shared_file(reply) {
        Some(_) => response(&Reply {
            attachment: None,
            ..reply.clone()
        }),
        None => response(reply),
    }
}

/// The text of an answer, escaped, with the start of its file when it has one.
fn text(reply: &Reply) -> String {
    let mut text = escape(&reply.text);
    if let Some(file) = &reply.attachment {
        text.push('\n');
        text.push_str(&excerpt(file));
    }
    text
}

/// The start of a file, escaped, as a code block.
fn excerpt(file: &Attachment) -> String {
    let shown: String = file.text.chars().take(INLINE_FILE).collect();
    let cut = if shown.len() < file.text.len() {
        "\n… (cut here)"
    } else {
        ""
    };
    format!("```{}{cut}```", escape(&shown))
}

/// A slash command's response, carried by its acknowledgement.
fn response(reply: &Reply) -> Value {
    let kind = if reply.private {
        "ephemeral"
    } else {
        "in_channel"
    };
    json!({ "response_type": kind, "text": text(reply) })
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

    #[test]
    fn answers_are_escaped_and_private_ones_ephemeral() {
        let reply = Reply::private("no <!channel> & <@U0BOB>");
        assert_eq!(
            response(&reply),
            json!({
                "response_type": "ephemeral",
                "text": "no &lt;!channel&gt; &amp; &lt;@U0BOB&gt;"
            })
        );
    }
}
