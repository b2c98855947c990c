//! Who must agree before a procedure's plan acts: a second person, the requester once more, or
//! nobody. The catalogue gives each procedure its rule (deletions and removals always need a
//! second person); the operators' config chooses within it; the plan carries the result, so
//! that the plan shown says what it waits for and its digest covers the rule it was made by.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::catalogue::{self, CommandSpec};
use crate::request::ProcedureRequest;

/// What a run waits for before its first step. Ordered from the least to the most asked.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Consent {
    /// Runs as soon as it is asked for.
    #[default]
    None,
    /// The requester confirms the plan shown (`yes`, the Confirm button or `/run confirm`).
    Confirm,
    /// An approver other than the requester approves the plan shown.
    SecondPerson,
}

impl Consent {
    /// The name the config and `/help` use: `second-person`, `confirm`, `none`.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Confirm => "confirm",
            Self::SecondPerson => "second-person",
        }
    }

    /// For serde's `skip_serializing_if`.
    pub(crate) fn is_none(&self) -> bool {
        *self == Self::None
    }

    fn parse(value: &str) -> Option<Self> {
        [Self::None, Self::Confirm, Self::SecondPerson]
            .into_iter()
            .find(|consent| consent.name() == value)
    }

    /// What a plan under it waits for, as `/help` and the plan say it.
    pub fn waits_for(self) -> &'static str {
        match self {
            Self::None => "runs at once",
            Self::Confirm => "the requester confirms the plan",
            Self::SecondPerson => "an approver other than the requester approves the plan",
        }
    }
}

impl fmt::Display for Consent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A procedure's rule in the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsentRule {
    /// Always a second person's approval: it deletes or removes. The config cannot lower it.
    SecondPerson,
    /// What the config says, `default` when it says nothing.
    Configurable { default: Consent },
    /// A runbook: the approval gates its author put in it decide.
    Gates,
}

/// Why the config's approval policy was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    #[error(
        "`{key}` is not a procedure; the procedures are: {}",
        procedures().map(|c| c.path()).collect::<Vec<_>>().join(", ")
    )]
    NotAProcedure { key: String },
    #[error("`{value}` is not a policy for `{key}`; use second-person, confirm or none")]
    NotAPolicy { key: String, value: String },
    #[error(
        "`{key}` always needs a second person's approval (it deletes or removes what cannot be \
         brought back); the config cannot lower it to `{value}`"
    )]
    CannotLower { key: String, value: Consent },
    #[error(
        "runbooks keep the approval gates their authors put in them; remove `{key}` and add a \
         `kind = \"approval\"` step to the runbook instead"
    )]
    Runbook { key: String },
}

/// The commands that start a run, in catalogue order.
fn procedures() -> impl Iterator<Item = &'static CommandSpec> {
    catalogue::commands().filter(|c| c.consent.is_some())
}

/// The operators' choices, checked against the catalogue's rules when the config is read (its
/// `[approval]` table).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "BTreeMap<String, String>")]
pub struct ConsentPolicy {
    /// By the command's path, `/cluster stop`; only configurable procedures are here.
    chosen: BTreeMap<String, Consent>,
}

impl ConsentPolicy {
    /// Reads the config's `[approval]` table: `"cluster stop" = "none"` (with or without the
    /// leading slash).
    pub fn parse<'a>(
        entries: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, PolicyError> {
        let mut chosen = BTreeMap::new();
        for (key, value) in entries {
            let path = format!("/{}", key.trim().trim_start_matches('/'));
            let Some(rule) = procedures()
                .find(|c| c.path() == path)
                .and_then(|c| c.consent)
            else {
                return Err(PolicyError::NotAProcedure { key: key.into() });
            };
            let Some(consent) = Consent::parse(value.trim()) else {
                return Err(PolicyError::NotAPolicy {
                    key: key.into(),
                    value: crate::echo::visible(value, 32),
                });
            };
            match rule {
                ConsentRule::Gates => return Err(PolicyError::Runbook { key: key.into() }),
                ConsentRule::SecondPerson if consent < Consent::SecondPerson => {
                    return Err(PolicyError::CannotLower {
                        key: key.into(),
                        value: consent,
                    });
                }
                ConsentRule::SecondPerson => {}
                ConsentRule::Configurable { .. } => {
                    chosen.insert(path, consent);
                }
            }
        }
        Ok(Self { chosen })
    }

    /// What a run of `command` waits for under this policy; `None` for a command that starts
    /// no run and for a runbook (its gates decide), which `/help` says otherwise.
    pub fn of_command(&self, command: &CommandSpec) -> Option<Consent> {
        match command.consent? {
            ConsentRule::SecondPerson => Some(Consent::SecondPerson),
            ConsentRule::Configurable { default } => {
                Some(self.chosen.get(&command.path()).copied().unwrap_or(default))
            }
            ConsentRule::Gates => None,
        }
    }

    /// What a run of `procedure` waits for before its first step; a runbook asks nothing
    /// before it (its gates decide), and a procedure missing from the catalogue (a mistake
    /// the catalogue's tests catch) asks the most.
    pub fn of(&self, procedure: &ProcedureRequest) -> Consent {
        let (group, sub) = procedure.path();
        match crate::parse::command_by_path(group, sub) {
            Some(command) if command.consent == Some(ConsentRule::Gates) => Consent::None,
            Some(command) => self.of_command(command).unwrap_or(Consent::SecondPerson),
            None => Consent::SecondPerson,
        }
    }
}

impl TryFrom<BTreeMap<String, String>> for ConsentPolicy {
    type Error = PolicyError;

    fn try_from(table: BTreeMap<String, String>) -> Result<Self, PolicyError> {
        Self::parse(
            table
                .iter()
                .map(|(key, value)| (key.as_str(), value.as_str())),
        )
    }
}

#[cfg(test)]
mod tests;
