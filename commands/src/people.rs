//! People: who acts. The config names each person once, with the account they have on every
//! surface (a Discord user id, local OS accounts for the console). Requests, approvals, refusals
//! and audit records name the person, so the two-person rule compares people: nobody approves
//! their own plan by switching from Discord to the console.

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::name::PersonName;

mod ids;
pub use ids::{MatrixUser, SlackUser, is_server_name};

/// Where someone spoke from, as that surface knows them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "surface", rename_all = "snake_case")]
pub enum Surface {
    /// A Discord user, by their id (a snowflake; names can be changed by their owner).
    Discord { user: u64 },
    /// A Slack user, by their id (`U…`) in the workspace (`T…`) opsbot serves.
    Slack { team: String, user: String },
    /// A Matrix user, by their id (`@alice:example.org`), which names one account on one
    /// homeserver for good.
    Matrix { user: String },
    /// The console, by the OS account on the other end of its socket (SO_PEERCRED), or the
    /// account running it on a terminal.
    Console { account: String },
    /// `opsbot demo`'s console, where `/as` picks the speaker.
    Demo,
    /// A schedule's fire: no person asked for the run.
    Schedule { name: String },
    /// A record written before opsbot knew people: the surface id it stored then.
    Legacy { id: String },
}

impl fmt::Display for Surface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Discord { user } => write!(f, "Discord user {user}"),
            Self::Slack { team, user } => write!(
                f,
                "Slack user {} in workspace {}",
                crate::echo::visible(user, 32),
                crate::echo::visible(team, 32)
            ),
            Self::Matrix { user } => {
                write!(f, "Matrix user {}", crate::echo::visible(user, 64))
            }
            Self::Console { account } => {
                write!(f, "console account `{}`", crate::echo::visible(account, 32))
            }
            Self::Demo => f.write_str("the demo console"),
            Self::Schedule { name } => write!(f, "schedule {name}"),
            Self::Legacy { id } => write!(f, "`{}` (before people)", crate::echo::visible(id, 32)),
        }
    }
}

/// A person as a record names them: who, and the surface account they acted from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "PersonRefRecord")]
pub struct PersonRef {
    pub name: PersonName,
    pub via: Surface,
}

impl PersonRef {
    /// True when both name the same person. A record from before people were configured names
    /// a surface account, not a person: against anyone else it counts as the same person, so
    /// that the two-person rule refuses rather than guesses.
    pub fn same_person(&self, other: &PersonRef) -> bool {
        match (&self.via, &other.via) {
            (Surface::Legacy { id: a }, Surface::Legacy { id: b }) => {
                a == b || self.name == other.name
            }
            (Surface::Legacy { .. }, _) | (_, Surface::Legacy { .. }) => true,
            // A schedule is nobody: it is the same only as itself.
            (Surface::Schedule { name: a }, Surface::Schedule { name: b }) => a == b,
            (Surface::Schedule { .. }, _) | (_, Surface::Schedule { .. }) => false,
            _ => self.name == other.name,
        }
    }

    /// True only when both certainly name the same person: never for a record from before
    /// people were configured. For what only the requester may do (withdrawing a plan), where
    /// [`Self::same_person`]'s caution would let anyone act as an old record's requester.
    pub fn is_certainly(&self, other: &PersonRef) -> bool {
        !self.is_legacy() && !other.is_legacy() && self.name == other.name
    }

    pub fn is_legacy(&self) -> bool {
        matches!(self.via, Surface::Legacy { .. })
    }
}

/// How a person reference is stored: now `{name, via}`; before people were configured,
/// `{id, name}` with a surface id and a display name.
/// Someone the config does not know, on the surface they came from.
impl From<&UnknownPerson> for Speaker {
    fn from(unknown: &UnknownPerson) -> Self {
        Self {
            person: None,
            via: unknown.via.clone(),
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum PersonRefRecord {
    Current { name: PersonName, via: Surface },
    Legacy { id: String, name: String },
}

impl From<PersonRefRecord> for PersonRef {
    fn from(record: PersonRefRecord) -> Self {
        match record {
            PersonRefRecord::Current { name, via } => Self { name, via },
            PersonRefRecord::Legacy { id, name } => Self {
                name: legacy_name(&name),
                via: Surface::Legacy { id },
            },
        }
    }
}

/// A display name of an old record as a person name: lower-cased, other characters as `-`.
fn legacy_name(name: &str) -> PersonName {
    let cleaned: String = name
        .chars()
        .take(PersonName::MAX_LEN)
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let cleaned = cleaned.trim_start_matches(['.', '-', '_']);
    PersonName::parse(cleaned).unwrap_or_else(|_| PersonName::unknown())
}

/// Someone who acted, or tried to: the person when their surface account maps to one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "SpeakerRecord")]
pub struct Speaker {
    pub person: Option<PersonName>,
    pub via: Surface,
}

impl fmt::Display for Speaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.person {
            Some(person) => person.fmt(f),
            None => write!(f, "nobody known ({})", self.via),
        }
    }
}

impl From<&PersonRef> for Speaker {
    fn from(person: &PersonRef) -> Self {
        Self {
            person: Some(person.name.clone()),
            via: person.via.clone(),
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum SpeakerRecord {
    Current {
        person: Option<PersonName>,
        via: Surface,
    },
    Legacy(PersonRef),
}

impl From<SpeakerRecord> for Speaker {
    fn from(record: SpeakerRecord) -> Self {
        match record {
            SpeakerRecord::Current { person, via } => Self { person, via },
            SpeakerRecord::Legacy(person) => Self::from(&person),
        }
    }
}

/// What a person may do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Roles {
    /// Run commands and procedures.
    pub operator: bool,
    /// Approve or reject another person's destructive plan.
    pub approver: bool,
}

/// Whoever typed a command: a known person and what they may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub person: PersonRef,
    pub roles: Roles,
}

impl Actor {
    pub fn speaker(&self) -> Speaker {
        Speaker::from(&self.person)
    }

    /// The person's name, for chat.
    pub fn name(&self) -> &PersonName {
        &self.person.name
    }
}

/// One configured person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub name: PersonName,
    pub roles: Roles,
    /// Their Discord user id, when they use Discord.
    pub discord_user: Option<u64>,
    /// Their Slack member id (`U…`), when they use Slack.
    pub slack_user: Option<SlackUser>,
    /// Their Matrix user id, when they use Matrix.
    pub matrix_user: Option<MatrixUser>,
    /// Discord role ids: when given, the person's roles count in Discord only while they hold
    /// one of them, so that a guild admin can take access away without editing the config.
    pub discord_roles: Vec<u64>,
    /// Their local OS accounts, for the console.
    pub accounts: Vec<String>,
}

/// Why a list of people cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeopleError {
    #[error("person `{0}` is listed twice")]
    Twice(PersonName),
    #[error("Discord user {user} is given to both `{first}` and `{second}`")]
    DiscordTwice {
        user: u64,
        first: PersonName,
        second: PersonName,
    },
    #[error("Slack user {user} is given to both `{first}` and `{second}`")]
    SlackTwice {
        user: SlackUser,
        first: PersonName,
        second: PersonName,
    },
    #[error("Matrix user {user} is given to both `{first}` and `{second}`")]
    MatrixTwice {
        user: MatrixUser,
        first: PersonName,
        second: PersonName,
    },
    #[error("account `{account}` is given to both `{first}` and `{second}`")]
    AccountTwice {
        account: String,
        first: PersonName,
        second: PersonName,
    },
    #[error("person `{0}` has no roles; give roles = [\"operator\"] and/or \"approver\"")]
    NoRoles(PersonName),
    #[error(
        "person `{0}` has no discord_user, slack_user, matrix_user or accounts: they could not \
         speak anywhere"
    )]
    Unreachable(PersonName),
    #[error("person `{person}`: discord_roles needs discord_user (roles alone name no person)")]
    RolesWithoutUser { person: PersonName },
    #[error("person `{person}`: `{account}` is not an OS account name")]
    BadAccount { person: PersonName, account: String },
}

/// A surface account that maps to no configured person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{via} is not one of opsbot's people; ask whoever runs opsbot to add it to [[people]] in \
     the config"
)]
pub struct UnknownPerson {
    pub via: Surface,
}

/// Every configured person; each surface account maps to at most one of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct People {
    people: Vec<Person>,
}

impl People {
    /// Checks that names, Discord ids and accounts each belong to one person.
    pub fn new(people: Vec<Person>) -> Result<Self, PeopleError> {
        let mut names = BTreeSet::new();
        for (i, person) in people.iter().enumerate() {
            if !names.insert(&person.name) {
                return Err(PeopleError::Twice(person.name.clone()));
            }
            if !(person.roles.operator || person.roles.approver) {
                return Err(PeopleError::NoRoles(person.name.clone()));
            }
            if person.discord_user.is_none()
                && person.slack_user.is_none()
                && person.matrix_user.is_none()
                && person.accounts.is_empty()
            {
                return Err(PeopleError::Unreachable(person.name.clone()));
            }
            if person.discord_user.is_none() && !person.discord_roles.is_empty() {
                return Err(PeopleError::RolesWithoutUser {
                    person: person.name.clone(),
                });
            }
            for account in &person.accounts {
                if !is_account_name(account) {
                    return Err(PeopleError::BadAccount {
                        person: person.name.clone(),
                        account: crate::echo::visible(account, 32),
                    });
                }
            }
            for earlier in &people[..i] {
                if let Some(user) = person
                    .discord_user
                    .filter(|u| earlier.discord_user == Some(*u))
                {
                    return Err(PeopleError::DiscordTwice {
                        user,
                        first: earlier.name.clone(),
                        second: person.name.clone(),
                    });
                }
                if let Some(user) = person
                    .slack_user
                    .as_ref()
                    .filter(|u| earlier.slack_user.as_ref() == Some(*u))
                {
                    return Err(PeopleError::SlackTwice {
                        user: user.clone(),
                        first: earlier.name.clone(),
                        second: person.name.clone(),
                    });
                }
                if let Some(user) = person
                    .matrix_user
                    .as_ref()
                    .filter(|u| earlier.matrix_user.as_ref() == Some(*u))
                {
                    return Err(PeopleError::MatrixTwice {
                        user: user.clone(),
                        first: earlier.name.clone(),
                        second: person.name.clone(),
                    });
                }
                if let Some(account) = person
                    .accounts
                    .iter()
                    .find(|a| earlier.accounts.contains(a))
                {
                    return Err(PeopleError::AccountTwice {
                        account: account.clone(),
                        first: earlier.name.clone(),
                        second: person.name.clone(),
                    });
                }
            }
        }
        Ok(Self { people })
    }

    pub fn iter(&self) -> impl Iterator<Item = &Person> {
        self.people.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.people.is_empty()
    }

    /// The person behind a Discord user, with the roles they have there.
    pub fn on_discord(&self, user: u64, member_roles: &[u64]) -> Result<Actor, UnknownPerson> {
        let via = Surface::Discord { user };
        let Some(person) = self.people.iter().find(|p| p.discord_user == Some(user)) else {
            return Err(UnknownPerson { via });
        };
        let holds = person.discord_roles.is_empty()
            || person
                .discord_roles
                .iter()
                .any(|r| member_roles.contains(r));
        Ok(Actor {
            person: PersonRef {
                name: person.name.clone(),
                via,
            },
            roles: if holds {
                person.roles
            } else {
                Roles::default()
            },
        })
    }

    /// The person behind a Slack user of the workspace `team`: the caller checks that the
    /// workspace is the one opsbot serves, since a member id is unique only within it.
    pub fn on_slack(&self, team: &str, user: &str) -> Result<Actor, UnknownPerson> {
        let via = Surface::Slack {
            team: team.to_owned(),
            user: user.to_owned(),
        };
        self.found(via, |p| {
            p.slack_user.as_ref().is_some_and(|u| u.as_str() == user)
        })
    }

    /// The person behind a Matrix user.
    pub fn on_matrix(&self, user: &str) -> Result<Actor, UnknownPerson> {
        let via = Surface::Matrix {
            user: user.to_owned(),
        };
        self.found(via, |p| {
            p.matrix_user.as_ref().is_some_and(|u| u.as_str() == user)
        })
    }

    /// The person behind a local OS account.
    pub fn on_console(&self, account: &str) -> Result<Actor, UnknownPerson> {
        let via = Surface::Console {
            account: account.to_owned(),
        };
        self.found(via, |p| p.accounts.iter().any(|a| a == account))
    }

    /// The person `is_them` picks, speaking from `via` with all their roles.
    fn found(
        &self,
        via: Surface,
        is_them: impl Fn(&Person) -> bool,
    ) -> Result<Actor, UnknownPerson> {
        match self.people.iter().find(|p| is_them(p)) {
            Some(person) => Ok(Actor {
                person: PersonRef {
                    name: person.name.clone(),
                    via,
                },
                roles: person.roles,
            }),
            None => Err(UnknownPerson { via }),
        }
    }

    /// A person by name, as the demo's `/as` picks them.
    pub fn in_demo(&self, name: &PersonName) -> Option<Actor> {
        self.people.iter().find(|p| &p.name == name).map(|p| Actor {
            person: PersonRef {
                name: p.name.clone(),
                via: Surface::Demo,
            },
            roles: p.roles,
        })
    }
}

/// A POSIX portable account name: letters, digits, `.`, `_`, `-`, not starting with `-`.
fn is_account_name(account: &str) -> bool {
    (1..=32).contains(&account.len())
        && !account.starts_with('-')
        && account
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// People for the tests of this crate.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// `name`, speaking from the console account of the same name.
    pub(crate) fn person(name: &str) -> PersonRef {
        PersonRef {
            name: PersonName::parse(name).unwrap(),
            via: Surface::Console {
                account: name.to_owned(),
            },
        }
    }

    /// `name` as an operator, and an approver when `approver`.
    pub(crate) fn actor(name: &str, approver: bool) -> Actor {
        Actor {
            person: person(name),
            roles: Roles {
                operator: true,
                approver,
            },
        }
    }
}

#[cfg(test)]
mod tests;
