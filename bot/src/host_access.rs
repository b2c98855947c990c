//! Reaching the host a runbook step runs on: a command prefix (ssh, kolla tooling, or in tests
//! a local launcher) followed by the step's argv, or a person who runs it and says so.

use std::time::Duration;

use opsbot_commands::name::HostName;

use crate::config::HostAccessConfig;
use crate::process::CommandError;
use crate::process::{self, Finished, OutputBounds};

/// What became of a command sent to a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reached {
    /// It ran to its end; whether that is success is the step's to judge.
    Ran(Finished),
    /// A person must run it; this is what they are asked.
    AskOperator(String),
}

/// Host access for every runbook.
#[derive(Debug, Clone)]
pub struct HostAccess {
    config: HostAccessConfig,
    output: OutputBounds,
}

impl HostAccess {
    /// `output` bounds what is kept of any one command's output.
    pub fn new(config: HostAccessConfig, output: OutputBounds) -> Self {
        Self { config, output }
    }

    /// The most of one command's output that is kept.
    pub fn output(&self) -> OutputBounds {
        self.output
    }

    /// Runs `argv` on `host` with `stdin`, keeping the tail of its output within `bounds`,
    /// until it ends or `stop` resolves (see [`process::run`]).
    pub async fn run(
        &self,
        host: &HostName,
        argv: &[String],
        stdin: Option<&str>,
        timeout: Duration,
        bounds: OutputBounds,
        stop: impl Future<Output = ()>,
    ) -> Result<Reached, CommandError> {
        match &self.config {
            HostAccessConfig::Command { prefix } => {
                let mut full = prefix.render(host.as_str(), host.as_str(), "");
                if prefix.program().rsplit('/').next() == Some("ssh") {
                    // ssh hands the remote side one string for its shell: quoted word by word,
                    // the host runs exactly this argv, whatever the words hold.
                    full.push(argv.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" "));
                } else {
                    full.extend(argv.iter().cloned());
                }
                process::run(&full, stdin, timeout, bounds, stop)
                    .await
                    .map(Reached::Ran)
            }
            HostAccessConfig::Manual => {
                let mut prompt = format!("on {host}, run `{}`", argv.join(" "));
                if let Some(stdin) = stdin {
                    prompt.push_str(&format!(" with this as its input:\n```\n{stdin}\n```\n"));
                }
                Ok(Reached::AskOperator(prompt))
            }
        }
    }

    /// True when commands run without a person: waits poll, outputs are checked.
    pub fn is_automatic(&self) -> bool {
        matches!(self.config, HostAccessConfig::Command { .. })
    }
}

/// A word as a POSIX shell reads it back unchanged: plain words as they are, anything else in
/// single quotes, with each `'` closed, escaped and reopened.
fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn words_are_quoted_for_a_remote_shell() {
        assert_eq!(quote("kvm_amd"), "kvm_amd");
        assert_eq!(
            quote("/etc/modprobe.d/kvm.conf"),
            "/etc/modprobe.d/kvm.conf"
        );
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("$(reboot)"), "'$(reboot)'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }
}
