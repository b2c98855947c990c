//! How records name people: the surface someone spoke from, the person a record names (with
//! the stored shapes of records written before people were configured), and the speaker of a
//! refusal, who may be nobody the config knows.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::UnknownPerson;
use crate::name::PersonName;

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
