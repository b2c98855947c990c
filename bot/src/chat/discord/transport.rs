//! Progress messages on Discord: ordinary channel messages posted and edited with the bot
//! token (an interaction token dies after 15 minutes; a drain can take hours). The text goes in
//! an embed coloured by the run's tone, with the Approve and Reject buttons under a plan that
//! waits for approval, disabled once it is decided.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use opsbot_commands::button::ApprovalButton;
use opsbot_commands::maintenance::Announcement;
use opsbot_commands::render::{ProgressView, Tone};
use opsbot_commands::run::{ChannelId, MessageId};
use serenity::all::{
    ButtonStyle, Colour, CreateActionRow, CreateButton, CreateEmbed, CreateMessage, EditMessage,
    Http, Nonce,
};

use super::failure::{Failure, classify};
use super::permissions::{Bot, names};
use crate::progress::{ChatError, ChatTransport, Forbidden};

/// The chat transport over Discord's REST API. serenity's rate limiter honours Discord's
/// headers; the publisher's `governor` keeps each channel under them in the first place.
#[derive(Debug, Clone)]
pub struct DiscordTransport {
    http: Arc<Http>,
    bot: Bot,
    /// Where maintenance is announced; none configured, nothing is.
    announce_channel: Option<u64>,
    /// Channels the start-up check found the bot may not use: refused here without a request,
    /// so that their lanes stop at once instead of adding to Discord's count of invalid ones.
    forbidden: Arc<HashMap<u64, Forbidden>>,
    /// Set by the first 401: every request after it would be refused too (and counted by
    /// Discord towards an IP ban), so none is made, in any channel.
    token_refused: Arc<AtomicBool>,
}

impl DiscordTransport {
    pub(super) fn new(
        http: Arc<Http>,
        bot: Bot,
        announce_channel: Option<u64>,
        forbidden: Arc<HashMap<u64, Forbidden>>,
    ) -> Self {
        Self {
            http,
            bot,
            announce_channel,
            forbidden,
            token_refused: Arc::default(),
        }
    }

    /// The channel, unless the start-up check found the bot may not use it or Discord has
    /// refused the token.
    fn usable(&self, channel: u64) -> Result<serenity::all::ChannelId, ChatError> {
        if self.token_refused.load(Ordering::Relaxed) {
            return Err(ChatError::TokenRefused(
                "not sent since Discord answered 401".to_owned(),
            ));
        }
        match self.forbidden.get(&channel) {
            Some(forbidden) => Err(forbidden.clone().into()),
            None => Ok(serenity::all::ChannelId::new(channel)),
        }
    }

    /// A failed request as progress acts on it; a refused permission is named by computing
    /// the bot's permissions in the channel, since Discord's answer does not say which.
    async fn failed(&self, channel: serenity::all::ChannelId, error: serenity::Error) -> ChatError {
        let text = format!("Discord: {error}");
        match classify(&error) {
            Failure::Gone => ChatError::Gone(text),
            Failure::Refused => ChatError::Refused(text),
            Failure::Transient => ChatError::Transient(text),
            Failure::TokenRefused => {
                self.token_refused.store(true, Ordering::Relaxed);
                ChatError::TokenRefused(text)
            }
            Failure::Forbidden => {
                let missing = match self.bot.missing(&self.http, channel).await {
                    Ok(missing) if !missing.is_empty() => names(missing),
                    Ok(_) => "a permission Discord did not name".to_owned(),
                    Err(cause) => {
                        tracing::warn!(%cause, "cannot tell which permission the bot lacks");
                        "a permission Discord did not name".to_owned()
                    }
                };
                Forbidden {
                    channel: ChannelId(channel.to_string()),
                    missing,
                }
                .into()
            }
        }
    }

    async fn send(
        &self,
        channel: serenity::all::ChannelId,
        message: CreateMessage,
    ) -> Result<serenity::all::Message, ChatError> {
        match channel.send_message(&self.http, message).await {
            Ok(sent) => Ok(sent),
            Err(error) => Err(self.failed(channel, error).await),
        }
    }
}

fn channel_id(channel: &ChannelId) -> Result<u64, ChatError> {
    snowflake(&channel.0)
}

/// A Discord id from its text; ids opsbot stored itself, so a bad one can never be sent to.
pub(super) fn snowflake(text: &str) -> Result<u64, ChatError> {
    text.parse::<u64>()
        .ok()
        .filter(|id| *id != 0)
        .ok_or_else(|| ChatError::Refused(format!("`{text}` is not a Discord id")))
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
    let button = |button: &ApprovalButton, style: ButtonStyle| {
        CreateButton::new(button.to_string())
            .label(button.decision.label())
            .style(style)
            .disabled(!buttons.enabled)
    };
    vec![CreateActionRow::Buttons(vec![
        button(&buttons.approve, ButtonStyle::Success),
        button(&buttons.reject, ButtonStyle::Danger),
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
        self.send(self.usable(channel)?, message).await?;
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
        let posted = self
            .send(self.usable(channel_id(channel)?)?, message)
            .await?;
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
        let channel = self.usable(channel_id(channel)?)?;
        let message = serenity::all::MessageId::new(snowflake(&message.0)?);
        if let Err(error) = channel.edit_message(&self.http, message, edit).await {
            return Err(self.failed(channel, error).await);
        }
        Ok(())
    }

    async fn report(&self, channel: &ChannelId, text: &str) -> Result<(), ChatError> {
        match self.announce_channel {
            Some(announce) if Ok(announce) != channel_id(channel) => {
                let message = CreateMessage::new().content(text);
                self.send(self.usable(announce)?, message).await?;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    async fn notice(&self, channel: &ChannelId, text: &str) -> Result<(), ChatError> {
        let message = CreateMessage::new().content(text);
        self.send(self.usable(channel_id(channel)?)?, message)
            .await?;
        Ok(())
    }
}
