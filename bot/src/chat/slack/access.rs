//! Who may do what, and where, in Slack: the person behind a member id of the one workspace
//! opsbot serves (never a display name), with their configured roles, in the channels it
//! serves. Every command and button press is checked here, whatever Slack's own settings say.

use opsbot_commands::people::{Actor, People, Speaker, Surface, UnknownPerson};

use crate::config::SlackId;
use crate::refusal::Refusal;

#[derive(Debug, Clone)]
pub(super) struct Access {
    team: SlackId,
    /// Each served channel, and how a refusal names it (`#ops`, or its id when its name is not
    /// known): a refusal's text is escaped, so it cannot carry a channel link.
    channels: Vec<(SlackId, String)>,
    people: People,
}

/// Who spoke, and why they may not, when they may not.
pub(super) struct Checked {
    pub(super) speaker: Speaker,
    pub(super) actor: Result<Actor, Refusal>,
}

impl Access {
    pub(super) fn new(team: SlackId, channels: Vec<(SlackId, String)>, people: People) -> Self {
        Self {
            team,
            channels,
            people,
        }
    }

    /// The person behind a member of `team` in `channel`: refused when the workspace is not
    /// the one opsbot serves (a member id names a person only within its workspace), the
    /// member maps to no person, or the channel is not served.
    pub(super) fn check(&self, team: &str, user: &str, channel: &str) -> Checked {
        let found = if team == self.team.as_str() {
            self.people.on_slack(team, user)
        } else {
            Err(UnknownPerson {
                via: Surface::Slack {
                    team: team.to_owned(),
                    user: user.to_owned(),
                },
            })
        };
        match found {
            Err(unknown) => Checked {
                speaker: Speaker::from(&unknown),
                actor: Err(Refusal::UnknownPerson(unknown)),
            },
            Ok(actor) => Checked {
                speaker: actor.speaker(),
                actor: if self.channels.iter().any(|(c, _)| c.as_str() == channel) {
                    Ok(actor)
                } else {
                    Err(Refusal::WrongChannel {
                        served: self.served(),
                    })
                },
            },
        }
    }

    fn served(&self) -> String {
        let names: Vec<&str> = self
            .channels
            .iter()
            .map(|(_, name)| name.as_str())
            .collect();
        names.join(" or ")
    }
}

#[cfg(test)]
mod tests {
    use opsbot_commands::name::PersonName;
    use opsbot_commands::people::{Person, Roles, SlackUser};

    use super::*;

    fn id(text: &str) -> SlackId {
        SlackId::try_from(text.to_owned()).unwrap()
    }

    fn access() -> Access {
        let alice = Person {
            name: PersonName::parse("alice").unwrap(),
            roles: Roles {
                operator: true,
                approver: false,
            },
            discord_user: None,
            discord_roles: vec![],
            slack_user: Some(SlackUser::parse("U0ALICE").unwrap()),
            matrix_user: None,
            accounts: vec![],
        };
        Access::new(
            id("T0TEAM"),
            vec![
                (id("C0OPS"), "#ops".to_owned()),
                (id("G0PRIVATE"), "G0PRIVATE".to_owned()),
            ],
            People::new(vec![alice]).unwrap(),
        )
    }

    #[test]
    fn a_member_of_the_workspace_in_a_served_channel_is_their_person() {
        let checked = access().check("T0TEAM", "U0ALICE", "G0PRIVATE");
        assert_eq!(checked.actor.unwrap().name().as_str(), "alice");
    }

    #[test]
    fn the_same_member_id_in_another_workspace_is_nobody() {
        let checked = access().check("T0OTHER", "U0ALICE", "C0OPS");
        assert_eq!(checked.speaker.person, None);
        let refusal = checked.actor.unwrap_err().to_string();
        assert!(refusal.contains("workspace T0OTHER"), "{refusal}");
    }

    #[test]
    fn another_channel_is_refused_naming_the_served_ones() {
        let checked = access().check("T0TEAM", "U0ALICE", "C0ELSE");
        assert_eq!(checked.speaker.person.unwrap().as_str(), "alice");
        let refusal = checked.actor.unwrap_err().to_string();
        assert!(refusal.ends_with("use #ops or G0PRIVATE"), "{refusal}");
    }
}
