//! Progress messages on Discord: ordinary channel messages posted and edited with the bot
//! token (an interaction token dies after 15 minutes; a drain can take hours). The text goes in
//! an embed coloured by the run's tone, with the Approve and Reject buttons under a plan that
//! waits for approval, disabled once it is decided.

use std::sync::Arc;

use opsbot_commands::button::ApprovalButton;
use opsbot_commands::maintenance::Announcement;
use opsbot_commands::render::{ProgressView, Tone};
use opsbot_commands::run::{ChannelId, MessageId};
use serenity::all::{
    ButtonStyle, Colour, CreateActionRow, CreateButton, CreateEmbed, CreateMessage, EditMessage,
    Http, Nonce,
};

use crate::progress::{ChatError, ChatTransport};

/// The chat transport over Discord's REST API. serenity's rate limiter honours Discord's
/// headers; the publisher's `governor` keeps each channel under them in the first place.
#[derive(Debug, Clone)]
pub struct DiscordTransport {
    http: Arc<Http>,
    /// Where maintenance is announced; none configured, nothing is.
    announce_channel: Option<u64>,
}

impl DiscordTransport {
    pub fn new(http: Arc<Http>, announce_channel: Option<u64>) -> Self {
        Self {
            http,
            announce_channel,
        }
    }
}

fn channel_id(channel: &ChannelId) -> Result<serenity::all::ChannelId, ChatError> {
    snowflake(&channel.0).map(serenity::all::ChannelId::new)
}

/// A Discord id from its text; ids opsbot stored itself, so a bad one is a store problem.
pub(super) fn snowflake(text: &str) -> Result<u64, ChatError> {
    text.parse::<u64>()
        .ok()
        .filter(|id| *id != 0)
        .ok_or_else(|| ChatError(format!("`{text}` is not a Discord id")))
}

pub(super) fn colour(tone: Tone) -> Colour {
    match tone {
        Tone::Waiting => Colour::GOLD,
        Tone::Running => Colour::BLURPLE,
        Tone::Succeeded => Colour::DARK_GREEN,
        Tone::Failed => Colour::RED,
        Tone::Stopped => Colour::LIGHT_GREY,
    }
}

/// The embed: the progress text, then the plan while it waits for approval.
pub(super) fn embed(view: &ProgressView) -> CreateEmbed {
    let mut description = view.text.clone();
    if let Some(plan) = &view.plan {
        description.push_str("\n\n");
        description.push_str(plan);
    }
    CreateEmbed::new()
        .description(description)
        .colour(colour(view.tone))
}

/// Approve and Reject, enabled while the plan waits for approval.
pub(super) fn buttons(view: &ProgressView) -> Vec<CreateActionRow> {
    let Some(buttons) = &view.buttons else {
        return Vec::new();
    };
    let button = |button: &ApprovalButton, label: &str, style: ButtonStyle| {
        CreateButton::new(button.to_string())
            .label(label)
            .style(style)
            .disabled(!buttons.enabled)
    };
    vec![CreateActionRow::Buttons(vec![
        button(&buttons.approve, "Approve", ButtonStyle::Success),
        button(&buttons.reject, "Reject", ButtonStyle::Danger),
    ])]
}

impl ChatTransport for DiscordTransport {
    async fn announce(&self, announcement: &Announcement) -> Result<(), ChatError> {
        let Some(channel) = self.announce_channel else {
            return Ok(());
        };
        let message = CreateMessage::new()
            .content(&announcement.text)
            .nonce(Nonce::String(announcement.key.clone()))
            .enforce_nonce(true);
        serenity::all::ChannelId::new(channel)
            .send_message(&self.http, message)
            .await
            .map_err(|e| ChatError(format!("Discord: {e}")))?;
        Ok(())
    }

    async fn post(&self, channel: &ChannelId, view: &ProgressView) -> Result<MessageId, ChatError> {
        // The nonce is the run's own, so a bot killed between this post and storing the
        // message id posts again with the same nonce and gets the same message back.
        let message = CreateMessage::new()
            .embed(embed(view))
            .components(buttons(view))
            .nonce(Nonce::String(view.message_key.clone()))
            .enforce_nonce(true);
        let posted = channel_id(channel)?
            .send_message(&self.http, message)
            .await
            .map_err(|e| ChatError(format!("Discord: {e}")))?;
        Ok(MessageId(posted.id.to_string()))
    }

    async fn edit(
        &self,
        channel: &ChannelId,
        message: &MessageId,
        view: &ProgressView,
    ) -> Result<(), ChatError> {
        let edit = EditMessage::new()
            .embed(embed(view))
            .components(buttons(view));
        channel_id(channel)?
            .edit_message(
                &self.http,
                serenity::all::MessageId::new(snowflake(&message.0)?),
                edit,
            )
            .await
            .map_err(|e| ChatError(format!("Discord: {e}")))?;
        Ok(())
    }
}
