//! Who speaks to opsbot, and where: the people (each once, with their account on every surface),
//! the console socket, the Discord guild and channels, and where metrics are served.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::bail;
use opsbot_commands::name::PersonName;
use opsbot_commands::people::{MatrixUser, People, Person, Roles, SlackUser};
use serde::Deserialize;

use super::Config;

/// One person: who they are, what they may do, and the accounts they speak from.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersonConfig {
    pub name: PersonName,
    /// `operator` (run commands) and/or `approver` (approve others' destructive plans).
    pub roles: Vec<Role>,
    /// Their Discord user id (Developer Mode: right-click the user, Copy User ID).
    #[serde(default)]
    pub discord_user: Option<u64>,
    /// Discord role ids: when given, the roles above count in Discord only while the person
    /// holds one of them there.
    #[serde(default)]
    pub discord_roles: Vec<u64>,
    /// Their Slack member id (`U…`: in Slack, their profile, ⋮, Copy member ID).
    #[serde(default)]
    pub slack_user: Option<SlackUser>,
    /// Their Matrix user id (`@alice:example.org`).
    #[serde(default)]
    pub matrix_user: Option<MatrixUser>,
    /// Their local OS accounts, for the console.
    #[serde(default)]
    pub accounts: Vec<String>,
}

/// A role of a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Operator,
    Approver,
}

/// The local console.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsoleConfig {
    /// The Unix socket on which `opsbot run` serves the console to local accounts (e.g.
    /// `/run/opsbot/console.sock`, group-readable by the operators). Each connection speaks as
    /// the OS account that connected (SO_PEERCRED); one that maps to no person is refused.
    pub socket: Option<PathBuf>,
}

/// Where opsbot serves in Discord. Ids are Discord snowflakes; who may do what is in
/// `[[people]]`. The bot token is never in this file: it comes from `OPSBOT_DISCORD_TOKEN` or
/// `token_file`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscordConfig {
    /// A file holding the bot token (e.g. a systemd credential); else `OPSBOT_DISCORD_TOKEN`.
    pub token_file: Option<PathBuf>,
    /// The guild (server) whose slash commands opsbot registers.
    pub guild: u64,
    /// Channels where commands are served; a command typed elsewhere is refused.
    pub channels: Vec<u64>,
    /// Where maintenance is announced; none when absent.
    pub announce_channel: Option<u64>,
    /// Reach `discord.com` at this address instead of through DNS, trusting `ca_file` too: for
    /// a TLS-inspecting egress proxy, or a Discord test double.
    pub api_address: Option<std::net::SocketAddr>,
    pub ca_file: Option<PathBuf>,
    /// How long one request to Discord may take before it is given up and tried again later.
    #[serde(default = "discord_request_timeout", with = "humantime_serde")]
    pub request_timeout: std::time::Duration,
}

/// Discord answers within a second or two; a request still open after 15 s will not be.
fn discord_request_timeout() -> std::time::Duration {
    std::time::Duration::from_secs(15)
}

/// Keys of earlier versions, and what took their place: a config that still has one would
/// otherwise be refused with a bare "unknown field".
const RETIRED: [(&str, &str, &str); 5] = [
    (
        "console",
        "operators",
        "[[people]] (name, roles, accounts): console speakers are now the OS accounts that connect",
    ),
    (
        "discord",
        "operator_roles",
        "[[people]] (name, roles, discord_user, discord_roles)",
    ),
    (
        "discord",
        "operator_users",
        "[[people]] (name, roles, discord_user)",
    ),
    (
        "discord",
        "approver_roles",
        "[[people]] (roles = [\"operator\", \"approver\"], discord_user, discord_roles)",
    ),
    (
        "discord",
        "approver_users",
        "[[people]] (roles = [\"operator\", \"approver\"], discord_user)",
    ),
];

pub(super) fn refuse_retired_keys(table: &toml::Table) -> anyhow::Result<()> {
    for (section, key, instead) in RETIRED {
        let present = table
            .get(section)
            .and_then(toml::Value::as_table)
            .is_some_and(|t| t.contains_key(key));
        if present {
            bail!(
                "[{section}] {key} is replaced by {instead}; deploy/opsbot.example.toml shows the \
                 format"
            );
        }
    }
    Ok(())
}

pub(super) fn people(configured: &[PersonConfig]) -> anyhow::Result<People> {
    let people = configured
        .iter()
        .map(|p| Person {
            name: p.name.clone(),
            roles: Roles {
                operator: p.roles.contains(&Role::Operator),
                approver: p.roles.contains(&Role::Approver),
            },
            discord_user: p.discord_user,
            slack_user: p.slack_user.clone(),
            matrix_user: p.matrix_user.clone(),
            discord_roles: p.discord_roles.clone(),
            accounts: p.accounts.clone(),
        })
        .collect();
    People::new(people).map_err(|e| anyhow::anyhow!("[[people]]: {e}"))
}

/// Checks that someone can use each front end.
pub(super) fn validate(config: &Config) -> anyhow::Result<()> {
    let people = config.people()?;
    if people.is_empty() {
        bail!(
            "the config names no [[people]]: nobody could use opsbot; add one per person, e.g. \
             [[people]] name = \"alice\", roles = [\"operator\"], accounts = [\"alice\"]"
        );
    }
    if let Some(discord) = &config.discord {
        if discord.channels.is_empty() {
            bail!("[discord] channels is empty: list the channels opsbot serves in");
        }
        if !people.iter().any(|p| p.discord_user.is_some()) {
            bail!("[discord] is configured but no person has a discord_user: nobody could use it");
        }
    }
    if let Some(slack) = &config.slack {
        slack.validate(people.iter().any(|p| p.slack_user.is_some()))?;
    }
    if let Some(matrix) = &config.matrix {
        matrix.validate(people.iter().any(|p| p.matrix_user.is_some()))?;
    }
    Ok(())
}

/// `[metrics]` of the config.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    /// Where `opsbot run` serves `/metrics` and `/healthz` (e.g. `127.0.0.1:9464`); nowhere
    /// when absent. Neither is authenticated: keep it on a local or management address.
    pub listen: Option<SocketAddr>,
}
