//! What the bot may do in a channel, computed as Discord does (the guild's roles, the bot's
//! roles, the channel's overwrites), so that an operator is told which permission to grant:
//! Discord's 403 says only "Missing Permissions".

use serenity::all::{Channel, ChannelId, GuildChannel, GuildId, Http, Member, PartialGuild};
use serenity::all::{Permissions, UserId};

use super::failure::{Failure, classify};

/// What progress messages and announcements need in every channel opsbot posts to: seeing the
/// channel, posting in it, and embeds (a progress message is an embed).
pub(super) const NEEDED: Permissions = Permissions::VIEW_CHANNEL
    .union(Permissions::SEND_MESSAGES)
    .union(Permissions::EMBED_LINKS);

/// The link that adds the bot to `guild` with the `bot` and `applications.commands` scopes and
/// exactly the permissions of [`NEEDED`]: what a guild admin opens to invite it.
pub(super) fn invite_url(application: u64, guild: u64) -> String {
    format!(
        "https://discord.com/oauth2/authorize?client_id={application}&scope=bot+applications.\
         commands&permissions={}&guild_id={guild}&disable_guild_select=true",
        NEEDED.bits()
    )
}

/// The bot in one guild, as far as permissions go.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bot {
    pub(super) guild: GuildId,
    pub(super) user: UserId,
}

impl Bot {
    /// The permissions of [`NEEDED`] that the bot lacks in `channel`, looked up afresh (an
    /// admin may have changed them since start-up). Costs three GETs.
    pub(super) async fn missing(
        &self,
        http: &Http,
        channel: ChannelId,
    ) -> Result<Permissions, serenity::Error> {
        let Some(channel) = visible(http, channel).await? else {
            return Ok(Permissions::VIEW_CHANNEL);
        };
        let Some(channel) = channel.guild() else {
            return Ok(NEEDED);
        };
        let guild = http.get_guild(self.guild).await?;
        let member = http.get_member(self.guild, self.user).await?;
        Ok(missing_in(&guild, &member, &channel))
    }
}

/// The channel, or `None` when Discord refuses to show it: the bot cannot see it.
pub(super) async fn visible(
    http: &Http,
    channel: ChannelId,
) -> Result<Option<Channel>, serenity::Error> {
    match http.get_channel(channel).await {
        Ok(channel) => Ok(Some(channel)),
        Err(error) if classify(&error) == Failure::Forbidden => Ok(None),
        Err(error) => Err(error),
    }
}

/// The permissions of [`NEEDED`] that `member` lacks in `channel` of `guild`.
pub(super) fn missing_in(
    guild: &PartialGuild,
    member: &Member,
    channel: &GuildChannel,
) -> Permissions {
    NEEDED - guild.user_permissions_in(channel, member)
}

/// Permissions as Discord's settings name them: "Send Messages, Embed Links".
pub(super) fn names(permissions: Permissions) -> String {
    permissions.get_permission_names().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_lacking_is_named_as_discord_settings_name_it() {
        assert_eq!(names(NEEDED - NEEDED), "");
        assert_eq!(
            names(NEEDED - Permissions::VIEW_CHANNEL),
            "Send Messages, Embed Links"
        );
        assert_eq!(
            names(NEEDED - (Permissions::SEND_MESSAGES | Permissions::EMBED_LINKS)),
            "View Channel"
        );
    }
}
