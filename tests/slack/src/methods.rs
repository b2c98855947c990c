//! The Web API methods the fake serves, with what Slack's reference pages say of each: its rate
//! tier, the token kind it takes and the scope it needs.

use crate::Visibility;
use crate::state::TokenKind;

/// A Web API method the fake knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WebMethod {
    /// `auth.test`: who the token is.
    AuthTest,
    /// `apps.connections.open`: a Socket Mode URL, for an app-level token only.
    AppsConnectionsOpen,
    /// `chat.postMessage`
    ChatPostMessage,
    /// `chat.update`
    ChatUpdate,
    /// `chat.postEphemeral`
    ChatPostEphemeral,
    /// `chat.delete`
    ChatDelete,
    /// `conversations.info`
    ConversationsInfo,
    /// `conversations.history`
    ConversationsHistory,
    /// `files.getUploadURLExternal`: the first step of an upload, a URL for the bytes.
    FilesGetUploadUrlExternal,
    /// `files.completeUploadExternal`: the last, sharing the uploaded file in a channel.
    FilesCompleteUploadExternal,
}

/// Slack's rate-limit tiers (api.slack.com/apis/rate-limits): requests per minute, per method,
/// per app, per workspace. (Tier 2, 20+ per minute, has no method here.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tier {
    /// 1+ per minute.
    One,
    /// 50+ per minute.
    Three,
    /// 100+ per minute.
    Four,
    /// `chat.postMessage`: about one message per second per channel, short bursts allowed.
    PostMessage,
}

impl Tier {
    /// Calls allowed in any 60 s. Slack's "+" is headroom it may grant; the fake grants none.
    pub(crate) fn per_minute(self) -> Option<u32> {
        match self {
            Self::One => Some(1),
            Self::Three => Some(50),
            Self::Four => Some(100),
            Self::PostMessage => None,
        }
    }
}

impl WebMethod {
    pub const ALL: [Self; 10] = [
        Self::AuthTest,
        Self::AppsConnectionsOpen,
        Self::ChatPostMessage,
        Self::ChatUpdate,
        Self::ChatPostEphemeral,
        Self::ChatDelete,
        Self::ConversationsInfo,
        Self::ConversationsHistory,
        Self::FilesGetUploadUrlExternal,
        Self::FilesCompleteUploadExternal,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::AuthTest => "auth.test",
            Self::AppsConnectionsOpen => "apps.connections.open",
            Self::ChatPostMessage => "chat.postMessage",
            Self::ChatUpdate => "chat.update",
            Self::ChatPostEphemeral => "chat.postEphemeral",
            Self::ChatDelete => "chat.delete",
            Self::ConversationsInfo => "conversations.info",
            Self::ConversationsHistory => "conversations.history",
            Self::FilesGetUploadUrlExternal => "files.getUploadURLExternal",
            Self::FilesCompleteUploadExternal => "files.completeUploadExternal",
        }
    }

    /// Method names are case-sensitive at Slack, as here.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// From each method's reference page ("Rate limits" in its facts).
    pub(crate) fn tier(self) -> Tier {
        match self {
            Self::AuthTest => Tier::Four,
            Self::AppsConnectionsOpen => Tier::One,
            Self::ChatPostMessage => Tier::PostMessage,
            // conversations.history is Tier 3 for internal and Marketplace apps; Slack holds
            // apps distributed outside the Marketplace to 1 a minute and 15 a page (2025).
            Self::ChatUpdate
            | Self::ChatDelete
            | Self::ConversationsInfo
            | Self::ConversationsHistory => Tier::Three,
            // chat.postEphemeral is Tier 4, and so are both steps of an upload (their
            // reference pages, 2025).
            Self::ChatPostEphemeral
            | Self::FilesGetUploadUrlExternal
            | Self::FilesCompleteUploadExternal => Tier::Four,
        }
    }

    /// App-level tokens open Socket Mode connections and nothing else here; bot tokens cannot
    /// open them. Either mistake is `not_allowed_token_type`.
    pub(crate) fn token_kind(self) -> TokenKind {
        match self {
            Self::AppsConnectionsOpen => TokenKind::App,
            _ => TokenKind::Bot,
        }
    }

    /// The scope the call needs; the `conversations.*` methods need the one of the channel's
    /// kind.
    pub(crate) fn scope(self, channel: Option<Visibility>) -> Option<&'static str> {
        match self {
            Self::AuthTest => None,
            Self::AppsConnectionsOpen => Some("connections:write"),
            Self::ChatPostMessage
            | Self::ChatUpdate
            | Self::ChatPostEphemeral
            | Self::ChatDelete => Some("chat:write"),
            Self::ConversationsInfo => match channel {
                Some(Visibility::Private) => Some("groups:read"),
                Some(Visibility::Public) | None => Some("channels:read"),
            },
            Self::ConversationsHistory => match channel {
                Some(Visibility::Private) => Some("groups:history"),
                Some(Visibility::Public) | None => Some("channels:history"),
            },
            Self::FilesGetUploadUrlExternal | Self::FilesCompleteUploadExternal => {
                Some("files:write")
            }
        }
    }
}
