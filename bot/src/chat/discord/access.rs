//! Who may do what, from the config: Discord user ids and role ids, never display names. Every
//! command and every button press is checked here, whatever Discord's own permissions say.

use opsbot_commands::run::{Actor, Roles, UserRef};
use serenity::all::{ChannelId, RoleId, User};

use crate::config::DiscordConfig;

#[derive(Debug, Clone)]
pub(super) struct Access {
    config: DiscordConfig,
}

impl Access {
    pub(super) fn new(config: DiscordConfig) -> Self {
        Self { config }
    }

    /// The person behind an interaction, with the roles opsbot grants them.
    pub(super) fn actor(&self, user: &User, roles: &[RoleId]) -> Actor {
        let c = &self.config;
        let has = |role_ids: &[u64], user_ids: &[u64]| {
            user_ids.contains(&user.id.get()) || roles.iter().any(|r| role_ids.contains(&r.get()))
        };
        Actor {
            user: UserRef {
                id: user.id.to_string(),
                name: user.name.clone(),
            },
            roles: Roles {
                operator: has(&c.operator_roles, &c.operator_users),
                approver: has(&c.approver_roles, &c.approver_users),
            },
        }
    }

    /// `None` where opsbot serves; else the refusal, naming where it does.
    pub(super) fn refusal(&self, channel: ChannelId) -> Option<String> {
        if self.config.channels.contains(&channel.get()) {
            return None;
        }
        let served: Vec<String> = self
            .config
            .channels
            .iter()
            .map(|id| format!("<#{id}>"))
            .collect();
        Some(format!(
            "opsbot does not serve this channel; use {}",
            served.join(" or ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access() -> Access {
        Access::new(DiscordConfig {
            token_file: None,
            guild: 1,
            channels: vec![10, 11],
            announce_channel: None,
            operator_roles: vec![100],
            operator_users: vec![7],
            approver_roles: vec![200],
            approver_users: vec![],
            api_address: None,
            ca_file: None,
        })
    }

    fn user(id: u64, name: &str) -> User {
        let mut user = User::default();
        user.id = serenity::all::UserId::new(id);
        user.name = name.to_owned();
        user
    }

    #[test]
    fn roles_come_from_ids_never_from_names() {
        let access = access();
        let roles = |ids: &[u64]| ids.iter().map(|id| RoleId::new(*id)).collect::<Vec<_>>();
        let alice = access.actor(&user(1, "alice"), &roles(&[100]));
        assert_eq!((alice.roles.operator, alice.roles.approver), (true, false));
        let bob = access.actor(&user(2, "bob"), &roles(&[100, 200]));
        assert_eq!((bob.roles.operator, bob.roles.approver), (true, true));
        let listed = access.actor(&user(7, "carol"), &[]);
        assert!(listed.roles.operator);
        // A display name that looks like an operator's grants nothing.
        let impostor = access.actor(&user(3, "alice"), &roles(&[999]));
        assert_eq!(impostor.roles, Roles::default());
        assert_eq!(impostor.user.id, "3");
    }

    #[test]
    fn other_channels_are_refused_naming_the_served_ones() {
        let access = access();
        assert_eq!(access.refusal(ChannelId::new(10)), None);
        assert_eq!(
            access.refusal(ChannelId::new(12)).as_deref(),
            Some("opsbot does not serve this channel; use <#10> or <#11>")
        );
    }
}
