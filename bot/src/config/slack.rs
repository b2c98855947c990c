//! `[slack]`: where opsbot serves in a Slack workspace. The two tokens are never in this file:
//! each comes from a file (a systemd credential) or the environment.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::bail;
use serde::Deserialize;

/// Where opsbot serves in Slack, over Socket Mode (no public HTTP endpoint). Ids are Slack's
/// (`T…` for the workspace, `C…`/`G…` for channels); who may do what is in `[[people]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlackConfig {
    /// A file holding the bot token (`xoxb-…`); else `OPSBOT_SLACK_BOT_TOKEN`.
    pub bot_token_file: Option<PathBuf>,
    /// A file holding the app-level token (`xapp-…`, scope `connections:write`), which opens
    /// the Socket Mode connection; else `OPSBOT_SLACK_APP_TOKEN`.
    pub app_token_file: Option<PathBuf>,
    /// The workspace (`T…`): a command or a button press from any other is refused, since a
    /// member id names a person only within its workspace.
    pub team: SlackId,
    /// Channels where commands are served; a command typed elsewhere is refused.
    pub channels: Vec<SlackId>,
    /// Where maintenance is announced; none when absent.
    pub announce_channel: Option<SlackId>,
    /// The Web API's base URL: Slack's own unless a proxy or a test double stands in for it.
    #[serde(default = "slack_api")]
    pub api_url: String,
    /// A CA to trust besides the system's roots (a TLS-inspecting egress proxy).
    pub ca_file: Option<PathBuf>,
    /// How long one request to Slack may take before it is given up and tried again later.
    #[serde(default = "slack_request_timeout", with = "humantime_serde")]
    pub request_timeout: Duration,
    /// `chat.update` calls a minute over the whole workspace: Slack's tier 3 allows 50 ("50+":
    /// raise it only if Slack has granted the app more).
    #[serde(default = "updates_per_minute")]
    pub updates_per_minute: u32,
    /// The minute Slack counts its rate limits in (`chat.postMessage`: one a second per
    /// channel; `chat.update`: `updates_per_minute`). Always 60 s at Slack; a test double that
    /// counts faster shortens it, so that tests take seconds.
    #[serde(default = "slack_minute", with = "humantime_serde")]
    pub minute: Duration,
}

fn slack_api() -> String {
    "https://slack.com/api/".to_owned()
}

/// Slack answers within a second or two; a request still open after 15 s will not be.
fn slack_request_timeout() -> Duration {
    Duration::from_secs(15)
}

fn updates_per_minute() -> u32 {
    50
}

fn slack_minute() -> Duration {
    Duration::from_secs(60)
}

/// A Slack id of a workspace, channel or user: capitals and digits, as Slack writes them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(try_from = "String")]
pub struct SlackId(String);

impl SlackId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for SlackId {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        let well_formed = (2..=24).contains(&text.len())
            && text
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
        if well_formed {
            Ok(Self(text))
        } else {
            Err(format!(
                "`{}` is not a Slack id (like C024BE91L for a channel: in Slack, the channel's \
                 details, at the bottom; names and #links are not ids)",
                opsbot_commands::echo::visible(&text, 32)
            ))
        }
    }
}

impl std::fmt::Display for SlackId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl SlackConfig {
    pub(super) fn validate(&self, anyone: bool) -> anyhow::Result<()> {
        if self.channels.is_empty() {
            bail!("[slack] channels is empty: list the channels opsbot serves in");
        }
        if !anyone {
            bail!("[slack] is configured but no person has a slack_user: nobody could use it");
        }
        if self.minute.is_zero() {
            bail!("[slack] minute is 0: it is 60s at Slack");
        }
        if self.updates_per_minute == 0 {
            bail!("[slack] updates_per_minute is 0: progress could never be shown");
        }
        if !(self.api_url.starts_with("https://") || self.api_url.starts_with("http://"))
            || !self.api_url.ends_with('/')
        {
            bail!(
                "[slack] api_url must be an http(s) URL ending in /, like https://slack.com/api/"
            );
        }
        Ok(())
    }
}
