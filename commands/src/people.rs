//! People: who acts. The config names each person once, with the account they have on every
//! surface (a Discord user id, local OS accounts for the console). Requests, approvals, refusals
//! and audit records name the person, so the two-person rule compares people: nobody approves
//! their own plan by switching from Discord to the console.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::name::PersonName;

mod ids;
mod named;
pub use ids::{MatrixUser, SlackUser, is_server_name};
pub use named::{PersonRef, Speaker, Surface};

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
    /// One surface account (`Discord user 9`, ``account `alice` ``) given to two people.
    #[error("{account} is given to both `{first}` and `{second}`")]
    GivenTwice {
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
                if let Some(account) = shared_account(earlier, person) {
                    return Err(PeopleError::GivenTwice {
                        account,
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

/// An account on some surface that both `a` and `b` are given, named as a person would look
/// it up.
fn shared_account(a: &Person, b: &Person) -> Option<String> {
    if let Some(user) = b.discord_user.filter(|u| a.discord_user == Some(*u)) {
        return Some(format!("Discord user {user}"));
    }
    if let Some(user) = b
        .slack_user
        .as_ref()
        .filter(|u| a.slack_user.as_ref() == Some(u))
    {
        return Some(format!("Slack user {user}"));
    }
    if let Some(user) = b
        .matrix_user
        .as_ref()
        .filter(|u| a.matrix_user.as_ref() == Some(u))
    {
        return Some(format!("Matrix user {user}"));
    }
    b.accounts
        .iter()
        .find(|account| a.accounts.contains(account))
        .map(|account| format!("account `{account}`"))
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
