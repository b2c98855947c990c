//! Why a chat call failed, sorted by what progress does next: post the message again, stop the
//! channel, move on, or try again later. Chat platforms count refused requests against the bot
//! (Discord bans an IP after 10,000 in 10 minutes), so only a failure that may pass is retried.

use opsbot_commands::run::ChannelId;

/// A chat call that failed, classified once by the transport.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChatError {
    /// The message or the channel no longer exists (Discord 10008, 10003): a run's message is
    /// posted anew once, and editing continues there.
    #[error("gone: {0}")]
    Gone(String),
    /// The bot may not do this in the channel (Discord 403): nothing more is sent there until
    /// someone grants the permission and restarts opsbot.
    #[error(transparent)]
    Forbidden(#[from] Forbidden),
    /// The platform refused the bot's credentials (Discord 401): nothing more is sent to it
    /// until the token is fixed and opsbot restarted.
    #[error("the bot token was refused: {0}")]
    TokenRefused(String),
    /// Refused for good (any other 4xx): the same request can never succeed, so it is dropped
    /// and the next state is sent when there is one.
    #[error("refused: {0}")]
    Refused(String),
    /// May pass (429, 5xx, a timeout, the network, the store): tried again after a backoff.
    #[error("{0}")]
    Transient(String),
}

/// A channel where the bot lacks a permission it needs, and which ones, named as the chat
/// platform's settings name them, so that an admin can grant them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the bot lacks {missing} in channel {}", channel.0)]
pub struct Forbidden {
    pub channel: ChannelId,
    /// E.g. "Send Messages, Embed Links".
    pub missing: String,
}

impl Forbidden {
    /// What the people of a run are told when its channel's announcements or messages stop.
    pub fn notice(&self, stopped: &str) -> String {
        format!(
            "⚠️ {stopped} stopped: the bot lacks {} in channel {}; grant it and restart opsbot",
            self.missing, self.channel.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forbidden_channel_is_named_with_what_to_grant() {
        let forbidden = Forbidden {
            channel: ChannelId("42".into()),
            missing: "Send Messages".into(),
        };
        assert_eq!(
            forbidden.notice("announcements"),
            "⚠️ announcements stopped: the bot lacks Send Messages in channel 42; grant it and \
             restart opsbot"
        );
    }
}
