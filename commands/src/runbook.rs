//! Runbooks: operators' own procedures, written as TOML files and loaded at start-up. A runbook
//! names typed parameters and steps of the kinds the engine already has: a command on a host, a
//! wait on a command's output, an operator's manual step, an approval gate. Asked for with
//! values, it becomes an ordinary plan, shown, approved and bound by its digest like any other.
//! The file format is documented in `docs/runbooks.md`.

mod expand;
mod file;
mod template;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::name::{GroupName, HostName, ParamName, RunbookName};

pub use file::LoadError;
use template::Template;
pub use template::{Segment, Word};

/// Longest parameter value accepted: a fully qualified host name.
pub const MAX_VALUE_LEN: usize = HostName::MAX_LEN;

/// Discord takes at most 25 options per command; `/runbook run` spends one on `name`.
pub const MAX_PARAM_NAMES: usize = 24;

/// A loaded, checked runbook.
#[derive(Debug, Clone)]
pub struct Runbook {
    pub name: RunbookName,
    pub description: String,
    /// Runs of it are announced as maintenance.
    pub maintenance: bool,
    pub params: Vec<Param>,
    /// Where it was read from, for `/runbook show` and errors.
    pub source: String,
    steps: Vec<StepSpec>,
}

/// A typed parameter.
#[derive(Debug, Clone)]
pub struct Param {
    pub name: ParamName,
    pub kind: ParamKind,
    pub help: String,
    /// Without a default the parameter is required.
    pub default: Option<String>,
}

/// What values a parameter takes.
#[derive(Debug, Clone)]
pub enum ParamKind {
    /// A host of the inventory, of `group` when given.
    Host { group: Option<GroupName> },
    /// One of fixed values.
    Choice { values: Vec<String> },
    /// Text matching a regular expression (anchored: the whole value must match).
    Pattern { regex: Regex, example: String },
    /// A whole number in a range.
    Number { min: u64, max: u64 },
}

impl ParamKind {
    /// A short hint of what to type, for usage lines and `/runbook show`.
    pub fn hint(&self) -> String {
        match self {
            Self::Host { group: Some(group) } => format!("a host of group {group}"),
            Self::Host { group: None } => "a host of the inventory".to_owned(),
            Self::Choice { values } => values.join("|"),
            Self::Pattern { example, .. } => format!("e.g. {example}"),
            Self::Number { min, max } => format!("{min} to {max}"),
        }
    }
}

/// One step as the file declares it, checked.
#[derive(Debug, Clone)]
struct StepSpec {
    title: Option<String>,
    /// Run once per host of this group, with consecutive steps of the same group as one block.
    each: Option<GroupName>,
    kind: StepKind,
}

#[derive(Debug, Clone)]
enum StepKind {
    Run {
        on: Template,
        argv: Vec<Template>,
        stdin: Option<Template>,
        timeout: Duration,
        exit_codes: Vec<i32>,
        output: Option<Regex>,
        idempotent: bool,
        post_output: bool,
    },
    Wait {
        on: Template,
        argv: Vec<Template>,
        until: Regex,
        interval: Duration,
        timeout: Duration,
    },
    Confirm {
        prompt: Template,
    },
    Approval {
        reason: String,
    },
}

/// The hosts runbooks may run on, by group, in the order steps go through them (for the compute
/// RPC cap: hypervisors before controllers).
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    groups: BTreeMap<GroupName, Vec<HostName>>,
}

impl Inventory {
    pub fn new(groups: BTreeMap<GroupName, Vec<HostName>>) -> Self {
        Self { groups }
    }

    pub fn group(&self, name: &GroupName) -> Option<&[HostName]> {
        self.groups.get(name).map(Vec::as_slice)
    }

    /// Every host, once, sorted.
    pub fn hosts(&self) -> BTreeSet<&HostName> {
        self.groups.values().flatten().collect()
    }

    pub fn contains(&self, host: &HostName) -> bool {
        self.groups.values().flatten().any(|h| h == host)
    }
}

/// A runbook asked for: every parameter's value (defaults filled in) and the hosts its steps run
/// on, which the run locks.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RunbookRequest {
    pub runbook: RunbookName,
    pub params: BTreeMap<ParamName, String>,
    pub hosts: BTreeSet<HostName>,
    pub maintenance: bool,
}

/// `/runbook run name:nested-virt host:compute-01 module:kvm_amd`. Values are single words
/// without quotes, so the line parses back as it is.
impl fmt::Display for RunbookRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/runbook run name:{}", self.runbook)?;
        for (name, value) in &self.params {
            write!(f, " {name}:{value}")?;
        }
        Ok(())
    }
}

/// Why a runbook could not be asked for; the text is what the operator reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunbookError {
    #[error("there is no runbook `{name}`; {known}")]
    Unknown { name: String, known: String },
    #[error("runbook `{runbook}` has no parameter `{param}`; usage: {usage}")]
    UnknownParam {
        runbook: RunbookName,
        param: String,
        usage: String,
    },
    #[error("runbook `{runbook}` needs `{param}:`; usage: {usage}")]
    MissingParam {
        runbook: RunbookName,
        param: ParamName,
        usage: String,
    },
    #[error("{param}: {why}")]
    BadValue { param: ParamName, why: String },
    #[error("runbook `{runbook}` would run on `{value}`, which is not a host of the inventory")]
    NotAHost { runbook: RunbookName, value: String },
}

/// Every loaded runbook, sorted by name.
#[derive(Debug, Clone, Default)]
pub struct Runbooks {
    list: Vec<Runbook>,
}

impl Runbooks {
    /// Checks what holds across files: unique names, and few enough parameter names for one
    /// chat command.
    pub fn new(mut list: Vec<Runbook>) -> Result<Self, LoadError> {
        list.sort_by(|a, b| a.name.cmp(&b.name));
        for pair in list.windows(2) {
            if let [a, b] = pair {
                if a.name == b.name {
                    return Err(LoadError::whole(
                        &b.source,
                        format!("runbook `{}` is also declared by {}", b.name, a.source),
                    ));
                }
            }
        }
        let runbooks = Self { list };
        let names = runbooks.param_names();
        if names.len() > MAX_PARAM_NAMES {
            let source = runbooks.list.last().map_or("", |r| r.source.as_str());
            return Err(LoadError::whole(
                source,
                format!(
                    "the runbooks use {} parameter names together, at most {MAX_PARAM_NAMES} \
                     fit one chat command: reuse names such as `host` across runbooks",
                    names.len()
                ),
            ));
        }
        Ok(runbooks)
    }

    pub fn get(&self, name: &str) -> Result<&Runbook, RunbookError> {
        self.list
            .iter()
            .find(|r| r.name.as_str() == name)
            .ok_or_else(|| RunbookError::Unknown {
                name: crate::echo::visible(name, 40),
                known: if self.list.is_empty() {
                    "none is loaded (see [runbooks] in the config)".to_owned()
                } else {
                    format!(
                        "known: {}",
                        self.list
                            .iter()
                            .map(|r| r.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                },
            })
    }

    pub fn iter(&self) -> impl Iterator<Item = &Runbook> {
        self.list.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Every parameter name any runbook uses, sorted: the options of `/runbook run` in chat.
    pub fn param_names(&self) -> BTreeSet<&ParamName> {
        self.list
            .iter()
            .flat_map(|r| r.params.iter().map(|p| &p.name))
            .collect()
    }
}

impl Runbook {
    /// `/runbook run name:nested-virt host:<a host of group compute> [module:<kvm_amd|kvm_intel>]`.
    pub fn usage(&self) -> String {
        let mut usage = format!("/runbook run name:{}", self.name);
        for param in &self.params {
            let part = format!("{}:<{}>", param.name, param.kind.hint());
            if param.default.is_some() {
                usage.push_str(&format!(" [{part}]"));
            } else {
                usage.push(' ');
                usage.push_str(&part);
            }
        }
        usage
    }

    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name.as_str() == name)
    }

    /// True when the runbook has an approval gate.
    pub fn needs_approval(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s.kind, StepKind::Approval { .. }))
    }

    /// The steps as the file writes them, placeholders and all, one line each: what
    /// `/runbook show` lists before anyone fills in a value.
    pub fn outline(&self) -> Vec<String> {
        let none = BTreeMap::new();
        let line = |words: &[Template]| -> String {
            words
                .iter()
                .map(|w| w.bind(&none).to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        self.steps
            .iter()
            .map(|step| {
                let mut text = match &step.each {
                    Some(group) => format!("[each host of {group}] "),
                    None => String::new(),
                };
                if let Some(title) = &step.title {
                    text.push_str(&format!("{title}: "));
                }
                text.push_str(&match &step.kind {
                    StepKind::Run {
                        on,
                        argv,
                        idempotent,
                        ..
                    } => format!(
                        "on {}, run `{}`{}",
                        on.bind(&none),
                        line(argv),
                        if *idempotent { " (repeatable)" } else { "" }
                    ),
                    StepKind::Wait {
                        on, argv, until, ..
                    } => format!(
                        "on {}, wait until `{}` prints /{until}/",
                        on.bind(&none),
                        line(argv)
                    ),
                    StepKind::Confirm { prompt } => {
                        format!("ask an operator: {}", prompt.bind(&none))
                    }
                    StepKind::Approval { reason } => {
                        format!("a second operator approves here: {reason}")
                    }
                });
                text
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
