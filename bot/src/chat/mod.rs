//! Front ends: where commands come from and where replies and progress go.

pub mod console;
pub mod discord;
mod reconnect;
pub mod slack;

/// Why a chat platform cannot be used now, and whether waiting can help.
#[derive(Debug, thiserror::Error)]
pub enum Unusable {
    /// The platform refused (a bad token, a workspace or guild that is not the configured
    /// one, the bot's access): the config or the bot's installation must change first.
    #[error("{0:#}")]
    Refused(anyhow::Error),
    /// The platform did not answer, or answered that it cannot now (a 5xx, a 429): it may
    /// pass.
    #[error("{0:#}")]
    Unavailable(anyhow::Error),
}
