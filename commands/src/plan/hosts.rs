//! The steps of a runbook's plan: commands on the hosts of the inventory, and manual steps.

use serde::{Deserialize, Serialize};

use crate::name::HostName;
use crate::runbook::Word;

/// A runbook's steps before its approval gate (if it has one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HostSafe {
    /// A command on a host.
    HostCommand(HostCommand),
    /// A manual step: an operator does it and confirms with `/run done`.
    Confirm { prompt: Word },
}

/// A runbook's wait.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HostWait {
    /// A command on a host prints what `until` matches.
    HostOutput(OutputWait),
}

/// A runbook's steps after its approval gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HostDestructive {
    /// A command on a host, run only under the approval the gate asked for.
    HostCommand(HostCommand),
}

/// A command a runbook runs on a host, through host access (ssh, kolla tooling, or a person).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCommand {
    pub host: HostName,
    /// The program and its arguments; never given to a shell.
    pub argv: Vec<Word>,
    /// Text written to the program's standard input (e.g. a configuration file for `tee`).
    pub stdin: Option<Word>,
    pub timeout_secs: u64,
    /// Exit codes that count as success.
    pub exit_codes: Vec<i32>,
    /// A regular expression the output must match; its named groups are captured for the
    /// steps after it.
    pub output: Option<String>,
    /// Running it twice does no harm, so one interrupted by a restart is run again; otherwise
    /// an operator is asked whether it took effect.
    pub idempotent: bool,
    /// The output is posted in chat (shortened), not only kept in the run log.
    pub post_output: bool,
    /// The runbook's words for the step, shown before the command line.
    pub title: Option<String>,
}

/// A runbook's wait: run a command every `interval_secs` until its output matches `until`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputWait {
    pub host: HostName,
    pub argv: Vec<Word>,
    pub until: String,
    pub interval_secs: u64,
    pub timeout_secs: u64,
    pub title: Option<String>,
}
