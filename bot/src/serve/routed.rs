//! Where each run's messages go: the console, Discord, Slack or Matrix, as the channel it was asked
//! from says; announcements to every platform configured, each once.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use opsbot_commands::maintenance::Announcement;
use opsbot_commands::render::ProgressView;
use opsbot_commands::run::{ChannelId, MessageId};

use crate::chat::console::Hub;
use crate::chat::discord::{DiscordTransport, Reached};
use crate::chat::matrix::{MatrixTransport, matrix_room};
use crate::chat::slack::{SlackTransport, slack_channel};
use crate::progress::{ChatError, ChatTransport};

/// The chat platforms an announcement goes to, each remembered apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Platform {
    Console,
    Discord,
    Slack,
    Matrix,
}

/// Each run's messages go where it was asked for.
pub(super) struct Routed {
    /// Discord's transport once Discord has answered, when `[discord]` is configured.
    discord: Option<Reached>,
    /// Slack's, when `[slack]` is configured: its Web API needs no connection of its own.
    slack: Option<SlackTransport>,
    /// Matrix's, when `[matrix]` is configured.
    matrix: Option<MatrixTransport>,
    console: Hub,
    /// Announcements each platform has taken, by key: one that another platform has not
    /// taken yet is tried again, and those that have must not see it at every attempt.
    announced: Mutex<HashSet<(Platform, String)>>,
}

impl Routed {
    pub(super) fn new(
        discord: Option<Reached>,
        slack: Option<SlackTransport>,
        matrix: Option<MatrixTransport>,
        console: Hub,
    ) -> Self {
        Self {
            discord,
            slack,
            matrix,
            console,
            announced: Mutex::default(),
        }
    }

    fn discord(&self, channel: &ChannelId) -> Result<&DiscordTransport, ChatError> {
        let Some(reached) = &self.discord else {
            return Err(ChatError::Refused(format!(
                "a run reports to Discord channel {} but [discord] is not configured",
                channel.0
            )));
        };
        reached.get().ok_or_else(unreached)
    }

    fn slack(&self, channel: &ChannelId) -> Result<&SlackTransport, ChatError> {
        self.slack.as_ref().ok_or_else(|| {
            ChatError::Refused(format!(
                "a run reports to Slack channel {} but [slack] is not configured",
                channel.0
            ))
        })
    }

    fn matrix(&self, channel: &ChannelId) -> Result<&MatrixTransport, ChatError> {
        self.matrix.as_ref().ok_or_else(|| {
            ChatError::Refused(format!(
                "a run reports to Matrix room {} but [matrix] is not configured",
                channel.0
            ))
        })
    }

    /// The transport of the channel's platform.
    fn route(&self, channel: &ChannelId) -> Result<Route<'_>, ChatError> {
        if channel.is_console() {
            Ok(Route::Console(&self.console))
        } else if slack_channel(channel).is_some() {
            self.slack(channel).map(Route::Slack)
        } else if matrix_room(channel).is_some() {
            self.matrix(channel).map(Route::Matrix)
        } else {
            self.discord(channel).map(Route::Discord)
        }
    }

    fn taken(&self, platform: Platform, key: &str) -> bool {
        self.announced
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&(platform, key.to_owned()))
    }

    fn take(&self, platform: Platform, key: &str) {
        self.announced
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((platform, key.to_owned()));
    }

    /// Sends to one platform unless it took the announcement already.
    async fn announce_to(
        &self,
        platform: Platform,
        transport: &impl ChatTransport,
        announcement: &Announcement,
    ) -> Result<(), ChatError> {
        if !self.taken(platform, &announcement.key) {
            transport.announce(announcement).await?;
            self.take(platform, &announcement.key);
        }
        Ok(())
    }
}

/// One platform's transport.
enum Route<'a> {
    Console(&'a Hub),
    Discord(&'a DiscordTransport),
    Slack(&'a SlackTransport),
    Matrix(&'a MatrixTransport),
}

/// Discord has not answered since the start: tried again, like any outage.
fn unreached() -> ChatError {
    ChatError::Transient("Discord has not answered since opsbot started".to_owned())
}

impl ChatTransport for Routed {
    async fn post(&self, channel: &ChannelId, view: &ProgressView) -> Result<MessageId, ChatError> {
        match self.route(channel)? {
            Route::Console(hub) => hub.post(channel, view).await,
            Route::Discord(discord) => discord.post(channel, view).await,
            Route::Slack(slack) => slack.post(channel, view).await,
            Route::Matrix(matrix) => matrix.post(channel, view).await,
        }
    }

    async fn edit(
        &self,
        channel: &ChannelId,
        message: &MessageId,
        view: &ProgressView,
    ) -> Result<(), ChatError> {
        match self.route(channel)? {
            Route::Console(hub) => hub.edit(channel, message, view).await,
            Route::Discord(discord) => discord.edit(channel, message, view).await,
            Route::Slack(slack) => slack.edit(channel, message, view).await,
            Route::Matrix(matrix) => matrix.edit(channel, message, view).await,
        }
    }

    async fn find_posted(
        &self,
        channel: &ChannelId,
        view: &ProgressView,
    ) -> Result<Option<MessageId>, ChatError> {
        match self.route(channel)? {
            Route::Console(hub) => hub.find_posted(channel, view).await,
            Route::Discord(discord) => discord.find_posted(channel, view).await,
            Route::Slack(slack) => slack.find_posted(channel, view).await,
            Route::Matrix(matrix) => matrix.find_posted(channel, view).await,
        }
    }

    async fn report(&self, channel: &ChannelId, text: &str) -> Result<(), ChatError> {
        match self.route(channel)? {
            Route::Console(hub) => hub.report(channel, text).await,
            Route::Discord(discord) => discord.report(channel, text).await,
            Route::Slack(slack) => slack.report(channel, text).await,
            Route::Matrix(matrix) => matrix.report(channel, text).await,
        }
    }

    async fn notice(&self, channel: &ChannelId, text: &str) -> Result<(), ChatError> {
        match self.route(channel)? {
            Route::Console(hub) => hub.notice(channel, text).await,
            Route::Discord(discord) => discord.notice(channel, text).await,
            Route::Slack(slack) => slack.notice(channel, text).await,
            Route::Matrix(matrix) => matrix.notice(channel, text).await,
        }
    }

    /// Announced on every configured platform, each once: the consoles show it at the first
    /// attempt, the others as soon as each takes it.
    async fn announce(&self, announcement: &Announcement) -> Result<(), ChatError> {
        if !self.taken(Platform::Console, &announcement.key) {
            self.take(Platform::Console, &announcement.key);
            self.console.announce(announcement).await?;
        }
        let slack = match &self.slack {
            Some(slack) => self.announce_to(Platform::Slack, slack, announcement).await,
            None => Ok(()),
        };
        let matrix = match &self.matrix {
            Some(matrix) => {
                self.announce_to(Platform::Matrix, matrix, announcement)
                    .await
            }
            None => Ok(()),
        };
        let discord = match &self.discord {
            Some(reached) => match reached.get() {
                Some(discord) => {
                    self.announce_to(Platform::Discord, discord, announcement)
                        .await
                }
                None => Err(unreached()),
            },
            None => Ok(()),
        };
        slack.and(matrix).and(discord)
    }
}
