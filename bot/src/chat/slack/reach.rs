//! What the start-up check (and `opsbot check`) finds in Slack: the bot token works and is the
//! configured workspace's, the scopes the app needs, and each channel it serves or announces
//! in, with what to fix for each problem and whether waiting can help.

use serde_json::json;

use super::web::WebError;
use super::{Connector, manifest, text};
use crate::chat::Unusable;
use crate::config::SlackId;

/// What the start-up check found: the bot, each served channel's name, and what keeps the bot
/// from anything it must do.
#[derive(Debug, Clone)]
pub struct Reached {
    /// The bot's member id, as `auth.test` names it.
    pub bot_user: String,
    /// Each served channel and how a refusal names it (`#ops`).
    pub channels: Vec<(SlackId, String)>,
    /// Scopes the bot token lacks, and served or announcement channels the bot cannot use,
    /// each with what to do about it.
    pub problems: Vec<String>,
    /// Of the scopes the app's manifest asks for, those the bot token lacks; `None` when Slack
    /// did not list the token's scopes.
    pub missing_scopes: Option<Vec<&'static str>>,
    /// Each channel looked up: the served ones in the config's order, then the announcement
    /// channel unless it is served too.
    pub access: Vec<ChannelAccess>,
}

/// What the bot may do in a channel it serves or announces in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelAccess {
    pub channel: SlackId,
    /// `#ops`, or the channel's id when Slack did not say its name.
    pub shown: String,
    /// Commands are served there.
    pub served: bool,
    /// Maintenance is announced there.
    pub announce: bool,
    /// `conversations.info` answered for it.
    pub read: bool,
    /// The bot is in it and the token has `chat:write`; `None` when either is not known.
    pub write: Option<bool>,
}

/// What `conversations.info` said of a channel.
enum Looked {
    Found {
        name: String,
        member: bool,
    },
    /// Slack's code, and the scope a `missing_scope` names.
    Refused {
        error: String,
        needed: Option<String>,
    },
}

impl Connector {
    /// Checks the bot token (its workspace is the configured one, its scopes those the app
    /// needs, when Slack lists them), each served channel and the announcement channel: each
    /// failure with what to fix and whether waiting can help. Nothing is posted. The app-level
    /// token is checked only when Socket Mode is opened: asking for a URL spends one
    /// (`apps.connections.open` is tier 1, one a minute).
    pub async fn check(&self) -> Result<Reached, Unusable> {
        let (me, scopes) = self
            .bot
            .call_with_scopes("auth.test", &json!({}))
            .await
            .map_err(|e| unusable(e, "checking the bot token"))?;
        let team = text(&me, "team_id");
        if team != self.config.team.as_str() {
            return Err(Unusable::Refused(anyhow::anyhow!(
                "the bot token belongs to workspace {team}, not to [slack] team {}: install \
                 the app in that workspace or fix team",
                self.config.team
            )));
        }
        let missing = scopes.map(|granted| lacking(&granted));
        let mut reached = Reached {
            bot_user: text(&me, "user_id"),
            channels: Vec::new(),
            problems: missing
                .as_deref()
                .and_then(scope_problem)
                .into_iter()
                .collect(),
            missing_scopes: missing,
            access: Vec::new(),
        };
        for (channel, served, announce) in crate::chat::served_and_announced(
            &self.config.channels,
            self.config.announce_channel.as_ref(),
        ) {
            let looked = self.look_up(channel).await?;
            let missing = reached.missing_scopes.as_deref();
            let (access, problem) = assess(channel, served, announce, &looked, missing);
            reached.problems.extend(problem);
            if served {
                let shown = access.shown.clone();
                reached.channels.push((channel.clone(), shown));
            }
            reached.access.push(access);
        }
        Ok(reached)
    }

    /// What Slack says of a channel; a refused token or no answer ends the check.
    async fn look_up(&self, channel: &SlackId) -> Result<Looked, Unusable> {
        let args = json!({ "channel": channel.as_str() });
        match self.bot.call("conversations.info", &args).await {
            Ok(info) => Ok(Looked::Found {
                name: text(&info["channel"], "name"),
                member: info["channel"]["is_member"].as_bool() != Some(false),
            }),
            Err(error) if error.refuses_token() => Err(unusable(error, "looking up the channels")),
            Err(WebError::Slack { error, needed, .. }) => Ok(Looked::Refused { error, needed }),
            Err(error) => Err(unusable(error, "looking up the channels")),
        }
    }
}

/// Of the scopes the manifest asks for, those not `granted`.
fn lacking(granted: &[String]) -> Vec<&'static str> {
    let granted = |scope: &&str| granted.iter().any(|g| g == scope);
    manifest::BOT_SCOPES
        .into_iter()
        .filter(|scope| !granted(scope))
        .collect()
}

/// The scopes the bot token lacks, with what to do; `None` when it lacks none.
fn scope_problem(missing: &[&str]) -> Option<String> {
    let (them, s) = match missing {
        [] => return None,
        [_] => ("it", ""),
        _ => ("them", "s"),
    };
    Some(format!(
        "the bot token lacks the scope{s} {}: add {them} under OAuth & Permissions and \
         reinstall the app",
        missing.join(", ")
    ))
}

/// What the bot may do in `channel` (writing needs it in the channel and `chat:write`), and
/// what keeps it from the rest, with what to do: `None` when nothing does, or only a scope
/// already said to be missing.
fn assess(
    channel: &SlackId,
    served: bool,
    announce: bool,
    looked: &Looked,
    missing: Option<&[&str]>,
) -> (ChannelAccess, Option<String>) {
    let what = if served {
        "channel"
    } else {
        "announcement channel"
    };
    let chat_write = missing.map(|m| !m.contains(&"chat:write"));
    let (shown, read, write, problem) = match looked {
        Looked::Found { name, member: true } => (format!("#{name}"), true, chat_write, None),
        Looked::Found { name, .. } => (
            format!("#{name}"),
            true,
            Some(false),
            Some(format!(
                "the bot is not in {what} #{name} ({channel}): type /invite @opsbot there"
            )),
        ),
        Looked::Refused { error, .. } if error == "channel_not_found" => (
            channel.to_string(),
            false,
            Some(false),
            Some(format!(
                "{what} {channel} does not exist, or is private and the bot is not in it: \
                 check the id in [slack], or type /invite @opsbot in the channel"
            )),
        ),
        // Whether the bot is in it is not known.
        Looked::Refused { error, needed } => {
            let problem = match needed {
                Some(scope) if missing.is_some_and(|m| m.contains(&scope.as_str())) => None,
                Some(scope) => Some(format!(
                    "{what} {channel}: the app lacks the scope {scope}; add it under OAuth & \
                     Permissions and reinstall the app"
                )),
                None => Some(format!("{what} {channel}: Slack says {error}")),
            };
            (
                channel.to_string(),
                false,
                chat_write.filter(|w| !w),
                problem,
            )
        }
    };
    let access = ChannelAccess {
        channel: channel.clone(),
        shown,
        served,
        announce,
        read,
        write,
    };
    (access, problem)
}

/// A failed call as the start sees it: refused for good, or worth waiting for.
fn unusable(error: WebError, doing: &str) -> Unusable {
    match &error {
        WebError::Slack { error: code, .. } | WebError::NotSent { refusal: code, .. } => {
            let advice = token_advice(code)
                .map(|a| format!("; {a}"))
                .unwrap_or_default();
            Unusable::Refused(anyhow::anyhow!("{doing}: {error}{advice}"))
        }
        _ => Unusable::Unavailable(anyhow::anyhow!("{doing}: {error}")),
    }
}

/// What to do about a bot token Slack refuses, by Slack's code.
fn token_advice(code: &str) -> Option<&'static str> {
    Some(match code {
        "invalid_auth" | "not_authed" => {
            "Slack does not know this token: put the app's Bot User OAuth Token (xoxb-…, under \
             OAuth & Permissions) in place"
        }
        "token_revoked" => {
            "the app was uninstalled or its token revoked: reinstall the app and put its new Bot \
             User OAuth Token in place"
        }
        "token_expired" => {
            "the token expired: opsbot needs one that does not, so turn token rotation off and \
             reinstall the app"
        }
        "account_inactive" => {
            "the bot user or its workspace is deactivated: a workspace admin must reinstall the app"
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scopes_the_token_lacks_are_named_with_what_to_do() {
        let granted = [
            "commands",
            "chat:write",
            "channels:history",
            "groups:history",
            "files:write",
            "app_mentions:read",
        ];
        let missing = lacking(&granted.map(str::to_owned));
        assert_eq!(missing, ["channels:read", "groups:read"]);
        assert_eq!(
            scope_problem(&missing).unwrap(),
            "the bot token lacks the scopes channels:read, groups:read: add them under OAuth & \
             Permissions and reinstall the app"
        );
        assert_eq!(scope_problem(&[]), None);
        assert!(lacking(&manifest::BOT_SCOPES.map(str::to_owned)).is_empty());
    }

    #[test]
    fn a_refused_token_says_what_to_do_and_an_outage_does_not() {
        let refused = |code: &str| WebError::Slack {
            method: "auth.test",
            error: code.to_owned(),
            needed: None,
        };
        let said = unusable(refused("token_revoked"), "checking the bot token").to_string();
        assert_eq!(
            said,
            "checking the bot token: Slack: auth.test: token_revoked; the app was uninstalled \
             or its token revoked: reinstall the app and put its new Bot User OAuth Token in place"
        );
        for code in [
            "invalid_auth",
            "not_authed",
            "token_expired",
            "account_inactive",
        ] {
            assert!(token_advice(code).is_some(), "{code}");
        }
        let other = unusable(refused("fatal_error"), "doing").to_string();
        assert_eq!(other, "doing: Slack: auth.test: fatal_error");
        let away = WebError::Unreachable {
            method: "auth.test",
            cause: "connection refused".to_owned(),
        };
        assert!(matches!(unusable(away, "doing"), Unusable::Unavailable(_)));
    }
}
