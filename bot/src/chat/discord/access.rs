//! Who may do what, and where, in Discord: the person behind a Discord user id (never a display
//! name), with their configured roles, in the channels opsbot serves. Every command, button
//! press and keystroke of autocomplete is checked here, whatever Discord's own permissions say.

use opsbot_commands::people::{Actor, People, Speaker};
use serenity::all::{ChannelId, RoleId, UserId};

use crate::config::DiscordConfig;
use crate::refusal::Refusal;

#[derive(Debug, Clone)]
pub(super) struct Access {
    config: DiscordConfig,
    people: People,
}

/// Who spoke, and why they may not, when they may not.
pub(super) struct Checked {
    pub(super) speaker: Speaker,
    pub(super) actor: Result<Actor, Refusal>,
}

impl Access {
    pub(super) fn new(config: DiscordConfig, people: People) -> Self {
        Self { config, people }
    }

    /// The person behind a user in a channel: refused when the user maps to no person or the
    /// channel is not one opsbot serves.
    pub(super) fn check(&self, user: UserId, roles: &[RoleId], channel: ChannelId) -> Checked {
        let roles: Vec<u64> = roles.iter().map(|r| r.get()).collect();
        match self.people.on_discord(user.get(), &roles) {
            Err(unknown) => Checked {
                speaker: Speaker::from(&unknown),
                actor: Err(Refusal::UnknownPerson(unknown)),
            },
            Ok(actor) => Checked {
                speaker: actor.speaker(),
                actor: match self.served(channel) {
                    true => Ok(actor),
                    false => Err(Refusal::WrongChannel {
                        served: self.channels(),
                    }),
                },
            },
        }
    }

    fn served(&self, channel: ChannelId) -> bool {
        self.config.channels.contains(&channel.get())
    }

    /// The served channels as Discord shows links to them.
    fn channels(&self) -> String {
        let served: Vec<String> = self
            .config
            .channels
            .iter()
            .map(|id| format!("<#{id}>"))
            .collect();
        served.join(" or ")
    }
}

#[cfg(test)]
mod tests {
    use opsbot_commands::name::PersonName;
    use opsbot_commands::people::{Person, Roles, Surface};

    use super::*;

    fn access() -> Access {
        let person = |name: &str, user: u64, approver: bool, discord_roles: Vec<u64>| Person {
            name: PersonName::parse(name).unwrap(),
            roles: Roles {
                operator: true,
                approver,
            },
            discord_user: Some(user),
            discord_roles,
            slack_user: None,
            matrix_user: None,
            accounts: vec![],
        };
        Access::new(
            DiscordConfig {
                token_file: None,
                guild: 1,
                channels: vec![10, 11],
                announce_channel: None,
                api_address: None,
                ca_file: None,
                request_timeout: std::time::Duration::from_secs(1),
            },
            People::new(vec![
                person("alice", 1, false, vec![]),
                person("bob", 2, true, vec![200]),
            ])
            .unwrap(),
        )
    }

    fn roles(ids: &[u64]) -> Vec<RoleId> {
        ids.iter().map(|id| RoleId::new(*id)).collect()
    }

    #[test]
    fn people_come_from_user_ids_and_roles_from_the_config() {
        let access = access();
        let alice = access
            .check(UserId::new(1), &[], ChannelId::new(10))
            .actor
            .unwrap();
        assert_eq!(alice.person.name.as_str(), "alice");
        assert_eq!(alice.person.via, Surface::Discord { user: 1 });
        assert_eq!((alice.roles.operator, alice.roles.approver), (true, false));
        // bob approves only while he holds the Discord role his entry names.
        let bob = |held: &[u64]| {
            access
                .check(UserId::new(2), &roles(held), ChannelId::new(10))
                .actor
                .unwrap()
                .roles
        };
        assert!(bob(&[200]).approver);
        assert_eq!(bob(&[]), Roles::default());
    }

    #[test]
    fn unknown_users_and_other_channels_are_refused_naming_the_served_ones() {
        let access = access();
        let stranger = access.check(UserId::new(3), &roles(&[200]), ChannelId::new(10));
        assert_eq!(stranger.speaker.person, None);
        assert!(matches!(stranger.actor, Err(Refusal::UnknownPerson(_))));
        let elsewhere = access.check(UserId::new(1), &[], ChannelId::new(12));
        assert_eq!(elsewhere.speaker.person.unwrap().as_str(), "alice");
        assert_eq!(
            elsewhere.actor.unwrap_err().to_string(),
            "opsbot does not serve this channel; use <#10> or <#11>"
        );
    }
}
