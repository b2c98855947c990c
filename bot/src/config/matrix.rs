//! `[matrix]`: the rooms opsbot serves on a Matrix homeserver. The bot's access token or
//! password is never in this file: it comes from a file (a systemd credential) or the
//! environment.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::bail;
use opsbot_commands::people::{MatrixUser, is_server_name};
use serde::Deserialize;

/// Where opsbot serves in Matrix. Ids are Matrix's (`@bot:example.org`, `!room:example.org`);
/// who may do what is in `[[people]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixConfig {
    /// The homeserver's client-server API base, e.g. `https://matrix.example.org`.
    pub homeserver: String,
    /// The bot's own user id.
    pub user: MatrixUser,
    /// A file holding the bot's access token; else `OPSBOT_MATRIX_ACCESS_TOKEN`. With neither,
    /// the bot logs in with its password.
    pub access_token_file: Option<PathBuf>,
    /// A file holding the bot's password, used to log in when no access token is given; else
    /// `OPSBOT_MATRIX_PASSWORD`.
    pub password_file: Option<PathBuf>,
    /// Rooms where commands are served, by id (a room's settings, Advanced); an alias can be
    /// moved to another room, an id cannot.
    pub rooms: Vec<RoomId>,
    /// Where maintenance is announced; none when absent.
    pub announce_room: Option<RoomId>,
    /// A CA to trust besides the system's roots (a homeserver with a private CA).
    pub ca_file: Option<PathBuf>,
    /// How long one request may take before it is given up and tried again later (a sync
    /// waits `SYNC_WAIT` on top of this).
    #[serde(default = "request_timeout", with = "humantime_serde")]
    pub request_timeout: Duration,
    /// Messages (posts and edits) a second the bot sends over all rooms: the homeserver's
    /// `rc_message` for the bot's user (Synapse's default is 0.2 a second, in bursts of 10;
    /// an admin can lift it for the bot, and then this should follow).
    #[serde(default = "messages_per_second")]
    pub messages_per_second: f64,
}

fn request_timeout() -> Duration {
    Duration::from_secs(15)
}

fn messages_per_second() -> f64 {
    0.2
}

/// A Matrix room id: `!opaque:server`, or `!hash` in rooms of version 12 on. An alias (`#ops:example.org`) is refused, with where to
/// find the id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(try_from = "String")]
pub struct RoomId(String);

impl RoomId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for RoomId {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        // `!opaque:server` before room version 12; `!hash` (no server) from it on.
        let well_formed = text.len() <= 255
            && text.strip_prefix('!').is_some_and(|rest| {
                let (opaque, server) = rest.split_once(':').unwrap_or((rest, "localhost"));
                !opaque.is_empty()
                    && opaque.bytes().all(|b| b.is_ascii_graphic())
                    && is_server_name(server)
            });
        if well_formed {
            Ok(Self(text))
        } else {
            Err(format!(
                "`{}` is not a Matrix room id (like !abcdef:example.org: in Element, the room's \
                 settings, Advanced; an alias like #ops:example.org is not an id)",
                opsbot_commands::echo::visible(&text, 64)
            ))
        }
    }
}

impl std::fmt::Display for RoomId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl MatrixConfig {
    pub(super) fn validate(&self, anyone: bool) -> anyhow::Result<()> {
        if self.rooms.is_empty() {
            bail!("[matrix] rooms is empty: list the rooms opsbot serves in");
        }
        if !anyone {
            bail!("[matrix] is configured but no person has a matrix_user: nobody could use it");
        }
        if !(self.homeserver.starts_with("https://") || self.homeserver.starts_with("http://")) {
            bail!("[matrix] homeserver must be an http(s) URL, like https://matrix.example.org");
        }
        if !(self.messages_per_second.is_finite() && self.messages_per_second > 0.0) {
            bail!("[matrix] messages_per_second must be above 0 (Synapse's default limit is 0.2)");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_room_is_named_by_its_id_not_an_alias() {
        assert!(RoomId::try_from("!abc:localhost:8448".to_owned()).is_ok());
        assert!(RoomId::try_from("!abc:example.org".to_owned()).is_ok());
        let alias = RoomId::try_from("#ops:example.org".to_owned()).unwrap_err();
        assert!(alias.contains("an alias like"), "{alias}");
        let v12 = "!XaH58fwybFYpVI3Gnx-nCfCVP3cOePO0JGiUM4NFxKk";
        assert!(RoomId::try_from(v12.to_owned()).is_ok());
        assert!(RoomId::try_from("!".to_owned()).is_err());
        assert!(RoomId::try_from("!a b".to_owned()).is_err());
        assert!(RoomId::try_from("!:example.org".to_owned()).is_err());
    }

    #[test]
    fn a_user_is_named_by_their_id() {
        assert!(MatrixUser::parse("@alice:example.org").is_ok());
        assert!(MatrixUser::parse("@alice:[::1]:8008").is_ok());
        assert!(MatrixUser::parse("alice").is_err());
        assert!(MatrixUser::parse("@alice").is_err());
        assert!(MatrixUser::parse("@:example.org").is_err());
        assert!(MatrixUser::parse("@al ice:example.org").is_err());
    }
}
