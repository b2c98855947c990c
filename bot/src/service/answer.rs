//! What the service answers with, and what it records a refusal as being about.

use opsbot_commands::name::RunId;
use opsbot_commands::plan::PlanDigest;
use opsbot_commands::request::Request;

/// What to answer the person who typed the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub text: String,
    /// Only for the person who typed it (Discord: ephemeral). Refusals and errors are private.
    pub private: bool,
    /// The run the command started, when it waits for this person's confirmation of the plan
    /// with this digest: a console then takes `yes` for it.
    pub awaits: Option<(RunId, PlanDigest)>,
    /// The run the command started, when the text shows it waiting for a decision: a console
    /// then leaves out the progress message that would say the same right after it.
    pub waiting: Option<RunId>,
    /// All of what the text shows only a page of, as a file, where the platform takes files
    /// (Discord); the console pages instead.
    pub attachment: Option<Attachment>,
}

/// A text file sent with a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub name: String,
    pub text: String,
}

impl Reply {
    pub fn public(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            private: false,
            awaits: None,
            waiting: None,
            attachment: None,
        }
    }

    pub fn private(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            private: true,
            awaits: None,
            waiting: None,
            attachment: None,
        }
    }
}

/// What a request that failed is about, for the audit record of a refusal.
#[derive(Debug, Clone)]
pub struct Asked {
    pub summary: String,
    pub run: Option<RunId>,
}

impl Asked {
    pub fn new(summary: impl Into<String>, run: Option<RunId>) -> Self {
        Self {
            summary: summary.into(),
            run,
        }
    }
}

impl From<&Request> for Asked {
    fn from(request: &Request) -> Self {
        Self::new(request.summary(), request.run())
    }
}
