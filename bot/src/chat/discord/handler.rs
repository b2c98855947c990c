//! Interactions: slash commands, autocomplete and button presses. Each is checked (first
//! delivery, person, channel, parse, roles) and answered within Discord's 3 seconds: at once
//! when the answer needs only the store, deferred when it needs a cluster. Refusals are
//! ephemeral, and the ones that say no to a person are audited.

use std::time::Duration;

use opsbot_commands::button::ApprovalButton;
use opsbot_commands::parse::{self, Origin, ParseError};
use opsbot_commands::people::Actor;
use opsbot_commands::render;
use opsbot_commands::request::Request;
use opsbot_commands::run::ChannelId;
use serenity::all::{
    CommandData, CommandInteraction, ComponentInteraction, Context, CreateAttachment,
    CreateAutocompleteResponse, CreateInteractionResponse, CreateInteractionResponseFollowup,
    CreateInteractionResponseMessage, EditInteractionResponse, EventHandler, Http, Interaction,
    Member, Ready, ResolvedOption, ResolvedValue, User,
};
use std::sync::Arc;

use super::access::Access;
use super::autocomplete::{self, Listings};
use super::suggest;
use super::transport::{buttons, embed};
use crate::service::{self, Asked, Reply, Service};

/// Autocomplete must answer within Discord's 3 seconds; a cluster slower than this gets none.
const SUGGEST_WITHIN: Duration = Duration::from_millis(1500);

pub(super) struct Handler {
    /// One client for every REST call opsbot makes, so one rate limiter sees them all.
    pub(super) http: Arc<Http>,
    pub(super) service: Service,
    pub(super) access: Access,
    pub(super) listings: Listings,
}

#[serenity::async_trait]
impl EventHandler for Handler {
    async fn ready(&self, _ctx: Context, ready: Ready) {
        tracing::info!(user = %ready.user.name, guilds = ready.guilds.len(), "connected to Discord");
    }

    async fn interaction_create(&self, _ctx: Context, interaction: Interaction) {
        let answered = match interaction {
            Interaction::Command(command) => self.command(&command).await,
            Interaction::Autocomplete(command) => self.autocomplete(&command).await,
            Interaction::Component(click) => self.click(&click).await,
            _ => Ok(()),
        };
        if let Err(error) = answered {
            tracing::warn!(%error, "an interaction could not be answered");
        }
    }
}

/// A private message as the first response.
fn private(text: &str) -> CreateInteractionResponse {
    CreateInteractionResponse::Message(
        CreateInteractionResponseMessage::new()
            .content(text)
            .ephemeral(true),
    )
}

fn respond(reply: &Reply) -> CreateInteractionResponse {
    let mut message = CreateInteractionResponseMessage::new()
        .content(&reply.text)
        .ephemeral(reply.private);
    if let Some(file) = &reply.attachment {
        message = message.add_file(CreateAttachment::bytes(file.text.as_bytes(), &file.name));
    }
    CreateInteractionResponse::Message(message)
}

/// The subcommand, if any, and the options given to the command itself.
pub(super) fn leaf(data: &CommandData) -> (Option<&str>, Vec<ResolvedOption<'_>>) {
    let options = data.options();
    match options.as_slice() {
        [
            ResolvedOption {
                name,
                value: ResolvedValue::SubCommand(inner),
                ..
            },
        ] => (Some(*name), inner.clone()),
        _ => (None, options),
    }
}

/// The request of a slash command, checked exactly like a console line. Every option given is
/// passed on by name: those of the command's spec, and for an open command (`/runbook run`) the
/// others too, which `parse::request` takes as its further `name:value` pairs (a runbook's
/// parameters) and refuses for any other command.
fn request(data: &CommandData) -> Result<Request, ParseError> {
    let (sub, options) = leaf(data);
    let Some(command) = parse::command_by_path(&data.name, sub) else {
        return Err(ParseError::UnknownCommand {
            typed: format!("/{} {}", data.name, sub.unwrap_or_default())
                .trim_end()
                .to_owned(),
            hint: "the bot's commands have changed; type /help".into(),
        });
    };
    let values: Vec<(&str, String)> = options
        .iter()
        .map(|option| (option.name, value(&option.value)))
        .collect();
    parse::request(
        command,
        values.iter().map(|(name, value)| (*name, value.as_str())),
        Origin::Chat,
    )
}

pub(super) fn value(value: &ResolvedValue<'_>) -> String {
    match value {
        ResolvedValue::String(text) | ResolvedValue::Autocomplete { value: text, .. } => {
            (*text).to_owned()
        }
        ResolvedValue::Integer(n) => n.to_string(),
        ResolvedValue::Number(n) => n.to_string(),
        ResolvedValue::Boolean(b) => b.to_string(),
        _ => String::new(),
    }
}

/// `/approve` or `/run cancel`, as the audit log names a command that was refused before it
/// was read.
fn typed(data: &CommandData) -> String {
    let (sub, _) = leaf(data);
    format!("/{} {}", data.name, sub.unwrap_or_default())
        .trim_end()
        .to_owned()
}

impl Handler {
    /// The person behind an interaction in its channel, or the private refusal (audited) that
    /// says why they may not use opsbot there.
    async fn person(
        &self,
        user: &User,
        member: Option<&Member>,
        channel: serenity::all::ChannelId,
        asked: impl FnOnce() -> Asked,
    ) -> Result<Actor, Reply> {
        let roles = member.map_or(&[][..], |m| m.roles.as_slice());
        let checked = self.access.check(user.id, roles, channel);
        match checked.actor {
            Ok(actor) => Ok(actor),
            Err(refusal) => Err(self
                .service
                .refused(&checked.speaker, &asked(), refusal.into())
                .await),
        }
    }

    /// False for a repeated delivery of an interaction already handled (a gateway resume can
    /// replay it); a store failure counts as first, since refusing would lose a command.
    async fn first_delivery(&self, id: impl ToString) -> bool {
        match self
            .service
            .engine()
            .writes()
            .first_delivery(id.to_string())
            .await
        {
            Ok(first) => first,
            Err(error) => {
                tracing::error!(%error, "cannot record an interaction; handling it anyway");
                true
            }
        }
    }

    async fn command(&self, command: &CommandInteraction) -> serenity::Result<()> {
        if !self.first_delivery(command.id).await {
            tracing::info!(interaction = %command.id, "a repeated delivery; already handled");
            return Ok(());
        }
        let actor = match self
            .person(
                &command.user,
                command.member.as_deref(),
                command.channel_id,
                || Asked::new(typed(&command.data), None),
            )
            .await
        {
            Ok(actor) => actor,
            Err(refusal) => return command.create_response(&self.http, respond(&refusal)).await,
        };
        let request = match request(&command.data) {
            Ok(request) => request,
            Err(error) => {
                return command
                    .create_response(&self.http, private(&error.to_string()))
                    .await;
            }
        };
        let channel = ChannelId(command.channel_id.to_string());
        if !service::needs_a_backend(&request) {
            let reply = self
                .service
                .handle(&actor, &channel, Origin::Chat, request)
                .await;
            return command.create_response(&self.http, respond(&reply)).await;
        }
        // Deferred privately: whether the answer is a refusal is known only after the work, and
        // a deferral's visibility cannot change afterwards.
        command
            .create_response(
                &self.http,
                CreateInteractionResponse::Defer(
                    CreateInteractionResponseMessage::new().ephemeral(true),
                ),
            )
            .await?;
        let reply = self
            .service
            .handle(&actor, &channel, Origin::Chat, request)
            .await;
        if reply.private {
            return command
                .edit_response(
                    &self.http,
                    EditInteractionResponse::new().content(&reply.text),
                )
                .await
                .map(drop);
        }
        // A public answer: settle the private placeholder first (the first follow-up after a
        // deferral would otherwise fill it, privately), post the answer, then drop the
        // placeholder.
        command
            .edit_response(
                &self.http,
                EditInteractionResponse::new().content(super::ANSWERED_BELOW),
            )
            .await?;
        let mut followup = CreateInteractionResponseFollowup::new().content(&reply.text);
        if let Some(file) = &reply.attachment {
            followup = followup.add_file(CreateAttachment::bytes(file.text.as_bytes(), &file.name));
        }
        command.create_followup(&self.http, followup).await?;
        command.delete_response(&self.http).await
    }

    /// Choices only for a person who may run the command, in a served channel; anyone else
    /// gets none, and no backend is asked on their behalf. Keystrokes are not audited.
    async fn autocomplete(&self, command: &CommandInteraction) -> serenity::Result<()> {
        let Some(focused) = command.data.autocomplete() else {
            return Ok(());
        };
        let roles = command
            .member
            .as_deref()
            .map_or(&[][..], |m| m.roles.as_slice());
        let allowed = self
            .access
            .check(command.user.id, roles, command.channel_id)
            .actor
            .is_ok_and(|actor| {
                let (sub, _) = leaf(&command.data);
                parse::command_by_path(&command.data.name, sub)
                    .is_some_and(|spec| spec.who.admits(actor.roles))
            });
        let suggestions = if allowed {
            tokio::time::timeout(
                SUGGEST_WITHIN,
                autocomplete::suggestions(
                    self.service.engine(),
                    &self.listings,
                    &command.data,
                    focused.name,
                    focused.value,
                ),
            )
            .await
            .unwrap_or_default()
        } else {
            Vec::new()
        };
        let choices = suggest::fit(suggestions)
            .into_iter()
            .fold(CreateAutocompleteResponse::new(), |response, choice| {
                response.add_string_choice(choice.label, choice.value)
            });
        command
            .create_response(&self.http, CreateInteractionResponse::Autocomplete(choices))
            .await
    }

    async fn click(&self, click: &ComponentInteraction) -> serenity::Result<()> {
        let Some(button) = ApprovalButton::parse(&click.data.custom_id) else {
            return click
                .create_response(&self.http, private("this button is not one of opsbot's"))
                .await;
        };
        if !self.first_delivery(click.id).await {
            return Ok(());
        }
        let actor = match self
            .person(&click.user, click.member.as_ref(), click.channel_id, || {
                Asked::new(format!("{} button", click.data.custom_id), Some(button.run))
            })
            .await
        {
            Ok(actor) => actor,
            Err(refusal) => return click.create_response(&self.http, respond(&refusal)).await,
        };
        match self.service.decide(&actor, &button).await {
            Ok(run) => {
                // The message shows the decision at once, its buttons disabled; progress then
                // keeps editing it as the run goes on.
                let now = self.service.engine().clock().now();
                let view = render::progress_view(&run, None, now);
                let update = CreateInteractionResponseMessage::new()
                    .embed(embed(&view))
                    .components(buttons(&view));
                click
                    .create_response(&self.http, CreateInteractionResponse::UpdateMessage(update))
                    .await
            }
            Err(reply) => click.create_response(&self.http, respond(&reply)).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use opsbot_commands::parse::parse_line;

    use super::*;

    /// The command data Discord sends for `/group sub` with string options.
    fn data(group: &str, sub: Option<&str>, options: &[(&str, &str)]) -> CommandData {
        let options: Vec<serde_json::Value> = options
            .iter()
            .map(|(name, value)| serde_json::json!({"name": name, "type": 3, "value": value}))
            .collect();
        let options = match sub {
            Some(sub) => serde_json::json!([{"name": sub, "type": 1, "options": options}]),
            None => serde_json::Value::Array(options),
        };
        serde_json::from_value(serde_json::json!({
            "id": "100000000000000001",
            "name": group,
            "type": 1,
            "options": options,
        }))
        .unwrap()
    }

    #[test]
    fn runbook_parameters_pass_through_as_from_the_console() {
        let from_discord = request(&data(
            "runbook",
            Some("run"),
            &[
                ("name", "nested-virt"),
                ("host", "compute-01"),
                ("module", "kvm_amd"),
            ],
        ))
        .unwrap();
        let from_console = parse_line(
            "/runbook run name:nested-virt host:compute-01 module:kvm_amd",
            Origin::Chat,
        )
        .unwrap();
        assert_eq!(from_discord, from_console);
        let Request::RunbookRun { name, params, .. } = from_discord else {
            panic!("{from_discord:?}");
        };
        assert_eq!(name, "nested-virt");
        assert_eq!(
            params,
            [
                ("host".to_owned(), "compute-01".to_owned()),
                ("module".to_owned(), "kvm_amd".to_owned())
            ]
        );
    }

    #[test]
    fn options_beyond_the_spec_are_refused_by_closed_commands() {
        let error = request(&data(
            "cluster",
            Some("status"),
            &[("cluster", "logs"), ("host", "compute-01")],
        ))
        .unwrap_err();
        assert!(
            matches!(error, ParseError::UnknownOption { ref option, .. } if option == "host"),
            "{error}"
        );
        // An open command still checks what it is given: a name Discord would not send, twice.
        let bad = request(&data(
            "runbook",
            Some("run"),
            &[("name", "nested-virt"), ("host!", "compute-01")],
        ))
        .unwrap_err();
        assert!(matches!(bad, ParseError::UnknownOption { .. }), "{bad}");
        let twice = request(&data(
            "runbook",
            Some("run"),
            &[("name", "x"), ("host", "a"), ("host", "b")],
        ))
        .unwrap_err();
        assert!(
            matches!(twice, ParseError::DuplicateOption { .. }),
            "{twice}"
        );
        let missing = request(&data("runbook", Some("run"), &[("host", "a")])).unwrap_err();
        assert!(
            matches!(missing, ParseError::MissingOption { .. }),
            "{missing}"
        );
    }
}
