//! What the bot may do in a channel, computed as Discord does (the guild's roles, the bot's
//! roles, the channel's overwrites), so that an operator is told which permission to grant:
//! Discord's 403 says only "Missing Permissions".

use serenity::all::{ChannelId, GuildId, Http, Permissions, UserId};

use super::failure::{Failure, classify};

/// What progress messages and announcements need in every channel opsbot posts to: seeing the
/// channel, posting in it, and embeds (a progress message is an embed).
pub(super) const NEEDED: Permissions = Permissions::VIEW_CHANNEL
    .union(Permissions::SEND_MESSAGES)
    .union(Permissions::EMBED_LINKS);

/// The bot in one guild, as far as permissions go.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bot {
    pub(super) guild: GuildId,
    pub(super) user: UserId,
}

impl Bot {
    /// The permissions of [`NEEDED`] that the bot lacks in `channel`. A channel it cannot see
    /// lacks VIEW_CHANNEL, whatever else it would have. Costs three GETs.
    pub(super) async fn missing(
        &self,
        http: &Http,
        channel: ChannelId,
    ) -> Result<Permissions, serenity::Error> {
        let channel = match http.get_channel(channel).await {
            Ok(channel) => channel,
            Err(error) if classify(&error) == Failure::Forbidden => {
                return Ok(Permissions::VIEW_CHANNEL);
            }
            Err(error) => return Err(error),
        };
        let Some(channel) = channel.guild() else {
            return Ok(NEEDED);
        };
        let guild = http.get_guild(self.guild).await?;
        let member = http.get_member(self.guild, self.user).await?;
        let granted = guild.user_permissions_in(&channel, &member);
        Ok(lacking(granted))
    }
}

/// What of [`NEEDED`] `granted` leaves out, after Discord's implicit denials: nothing works in
/// a channel the bot cannot see, and no embed without SEND_MESSAGES.
fn lacking(granted: Permissions) -> Permissions {
    if !granted.view_channel() {
        return Permissions::VIEW_CHANNEL;
    }
    NEEDED - granted
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
        assert_eq!(names(lacking(NEEDED)), "");
        assert_eq!(
            names(lacking(Permissions::VIEW_CHANNEL)),
            "Send Messages, Embed Links"
        );
        assert_eq!(
            names(lacking(
                Permissions::SEND_MESSAGES | Permissions::EMBED_LINKS
            )),
            "View Channel"
        );
    }
}
