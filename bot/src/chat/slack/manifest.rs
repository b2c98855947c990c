//! The Slack app manifest (api.slack.com/reference/manifests), made from the one command
//! catalogue: an admin pastes it into "Create an app → From a manifest" and gets exactly the
//! slash commands opsbot parses, interactivity for its buttons, Socket Mode, and the scopes it
//! uses, no more.

use opsbot_commands::catalogue::{self, CommandSpec, Reach};
use serde_json::{Value, json};

use super::SINGLE_COMMAND;

/// The bot token's scopes: post and edit its messages and ephemeral answers, take slash
/// commands, look up the public and private channels it serves, and read their history, where
/// a bot restarted between posting a run's message and recording it finds the message (Slack
/// has no nonce: without it, the run would get a second message). `files:write` shares a
/// public answer's file (a run log, a plan longer than a message) in the command's channel.
/// `app_mentions:read` takes a command addressed to the bot in a message
/// (`@opsbot cluster status`), where a slash command cannot be typed: in a thread.
pub const BOT_SCOPES: [&str; 8] = [
    "chat:write",
    "commands",
    "channels:read",
    "groups:read",
    "channels:history",
    "groups:history",
    "files:write",
    "app_mentions:read",
];

/// The one event the app subscribes to: a message that mentions the bot.
pub const BOT_EVENTS: [&str; 1] = ["app_mention"];

/// Slack's limit on a slash command's usage hint.
const MAX_USAGE_HINT: usize = 1000;

/// The manifest as JSON. `single` registers one `/opsbot` command instead of one per group,
/// for a workspace whose other apps already use names like `/run`.
pub fn manifest(single: bool) -> Value {
    let commands: Vec<Value> = if single {
        vec![json!({
            "command": SINGLE_COMMAND,
            "description": "Operate the clusters and clouds: /opsbot help lists the commands",
            "usage_hint": hint(catalogue::chat_groups().join(" | ")),
            "should_escape": false,
        })]
    } else {
        catalogue::chat_groups().into_iter().map(group).collect()
    };
    json!({
        "_metadata": { "major_version": 1, "minor_version": 1 },
        "display_information": {
            "name": "opsbot",
            "description": "Maintenance of search clusters and OpenStack clouds, with a second person's approval",
        },
        "features": {
            "bot_user": { "display_name": "opsbot", "always_online": true },
            "slash_commands": commands,
        },
        "oauth_config": { "scopes": { "bot": BOT_SCOPES } },
        "settings": {
            "event_subscriptions": { "bot_events": BOT_EVENTS },
            "interactivity": { "is_enabled": true },
            "org_deploy_enabled": false,
            "socket_mode_enabled": true,
            "token_rotation_enabled": false,
        },
    })
}

/// One group's slash command: `/cluster` with its subcommands as the hint.
fn group(name: &'static str) -> Value {
    let specs: Vec<&CommandSpec> = catalogue::group(name)
        .filter(|c| c.reach == Reach::Everywhere)
        .collect();
    let (description, usage) = match specs.as_slice() {
        [single] if single.sub.is_none() => (single.summary.to_owned(), rest(single)),
        _ => {
            let subs: Vec<&str> = specs.iter().filter_map(|c| c.sub).collect();
            let usages: Vec<String> = specs.iter().map(|c| rest(c)).collect();
            (format!("{name}: {}", subs.join(", ")), usages.join(" | "))
        }
    };
    json!({
        "command": format!("/{name}"),
        "description": description,
        "usage_hint": hint(usage),
        "should_escape": false,
    })
}

/// A command's usage after its slash command: `status cluster:<cluster>`.
fn rest(spec: &CommandSpec) -> String {
    let usage = spec.usage();
    let group = format!("/{}", spec.group);
    usage
        .strip_prefix(&group)
        .unwrap_or(&usage)
        .trim()
        .to_owned()
}

/// A usage hint within Slack's limit, cut at a whole alternative.
fn hint(usage: String) -> String {
    if usage.chars().count() <= MAX_USAGE_HINT {
        return usage;
    }
    let mut kept = String::new();
    for part in usage.split(" | ") {
        if kept.chars().count() + part.chars().count() + 5 > MAX_USAGE_HINT {
            kept.push_str(" | …");
            break;
        }
        if !kept.is_empty() {
            kept.push_str(" | ");
        }
        kept.push_str(part);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_slash_command_per_chat_group_and_every_one_is_parsed() {
        let manifest = manifest(false);
        let commands: Vec<&str> = manifest["features"]["slash_commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["command"].as_str().unwrap())
            .collect();
        let groups: Vec<String> = catalogue::chat_groups()
            .iter()
            .map(|g| format!("/{g}"))
            .collect();
        assert_eq!(commands, groups);
        assert!(!commands.contains(&"/as"), "the demo's /as is not offered");
        for command in manifest["features"]["slash_commands"].as_array().unwrap() {
            let name = command["command"].as_str().unwrap();
            assert!(name.len() <= 32, "{name}");
            assert!(command["usage_hint"].as_str().unwrap().chars().count() <= MAX_USAGE_HINT);
            assert!(
                !command["description"].as_str().unwrap().is_empty(),
                "{name}"
            );
        }
        assert_eq!(manifest["settings"]["socket_mode_enabled"], true);
        assert_eq!(manifest["settings"]["interactivity"]["is_enabled"], true);
        assert_eq!(manifest["oauth_config"]["scopes"]["bot"], json!(BOT_SCOPES));
        assert_eq!(
            manifest["settings"]["event_subscriptions"]["bot_events"],
            json!(["app_mention"])
        );
    }

    #[test]
    fn a_single_command_stands_for_them_all() {
        let manifest = manifest(true);
        let commands = manifest["features"]["slash_commands"].as_array().unwrap();
        assert_eq!(commands.len(), 1);
        assert_eq!(commands[0]["command"], SINGLE_COMMAND);
    }
}
