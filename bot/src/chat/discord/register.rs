//! The guild commands, generated from the command catalogue: the console and Discord can never
//! disagree on a command's name, options or help. A group with subcommands becomes one command
//! with subcommand options (`/cluster status`); a single command stays top-level (`/approve`).

use opsbot_commands::catalogue::{self, CommandSpec, OptionKind, OptionSpec, Surface};
use opsbot_commands::openstack::image::PropertyKey;
use opsbot_commands::retention::RetentionDays;
use serenity::all::{CommandOptionType, CreateCommand, CreateCommandOption};

/// Every chat command, in catalogue order.
pub fn commands() -> Vec<CreateCommand> {
    catalogue::chat_groups()
        .into_iter()
        .map(|group| {
            let specs: Vec<&'static CommandSpec> = catalogue::group(group)
                .filter(|c| c.surface == Surface::Everywhere)
                .collect();
            match specs.as_slice() {
                [single] if single.sub.is_none() => CreateCommand::new(group)
                    .description(single.summary)
                    .set_options(single.options.iter().map(option).collect()),
                _ => {
                    let subs: Vec<&str> = specs.iter().filter_map(|c| c.sub).collect();
                    CreateCommand::new(group)
                        .description(format!("{group}: {}", subs.join(", ")))
                        .set_options(specs.iter().map(|spec| subcommand(spec)).collect())
                }
            }
        })
        .collect()
}

fn subcommand(spec: &CommandSpec) -> CreateCommandOption {
    let sub = spec.sub.unwrap_or(spec.group);
    spec.options.iter().fold(
        CreateCommandOption::new(CommandOptionType::SubCommand, sub, spec.summary),
        |command, o| command.add_sub_option(option(o)),
    )
}

fn option(spec: &OptionSpec) -> CreateCommandOption {
    let typed =
        |kind| CreateCommandOption::new(kind, spec.name, spec.summary).required(spec.required);
    let text = |autocomplete: bool| {
        let max = u16::try_from(spec.kind.max_len()).unwrap_or(u16::MAX);
        typed(CommandOptionType::String)
            .max_length(max)
            .set_autocomplete(autocomplete)
    };
    match spec.kind {
        // Suggested from the config, the store or the cluster; the user may still type any
        // value, which opsbot validates like console input.
        OptionKind::Cluster
        | OptionKind::Run
        | OptionKind::Index
        | OptionKind::Node
        | OptionKind::Cloud
        | OptionKind::Host => text(true),
        OptionKind::User
        | OptionKind::Text { .. }
        | OptionKind::Instance
        | OptionKind::Image
        | OptionKind::Property(PropertyKey::OsDistro) => text(false),
        // Spec 2.10 allows one or two values: offered as choices, so nothing else can be sent.
        OptionKind::Property(key) => key.allowed().iter().fold(text(false), |option, value| {
            option.add_string_choice(*value, *value)
        }),
        OptionKind::Days => typed(CommandOptionType::Integer)
            .min_int_value(1)
            .max_int_value(u64::from(RetentionDays::MAX)),
        OptionKind::Topic => catalogue::chat_groups()
            .into_iter()
            .fold(text(false), |option, group| {
                option.add_string_choice(group, group)
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One line per command and option, read back from the JSON Discord receives.
    fn outline(json: &serde_json::Value, depth: usize, out: &mut Vec<String>) {
        for item in json.as_array().into_iter().flatten() {
            let kind = match item["type"].as_u64() {
                None | Some(1) => "",
                Some(3) => " string",
                Some(4) => " integer",
                Some(other) => panic!("unexpected option type {other}"),
            };
            let mut flags = Vec::new();
            for (key, word) in [("required", "required"), ("autocomplete", "autocomplete")] {
                if item[key] == true {
                    flags.push(word.to_owned());
                }
            }
            for key in ["max_length", "min_value", "max_value"] {
                if let Some(n) = item[key].as_u64() {
                    flags.push(format!("{key} {n}"));
                }
            }
            let choices: Vec<&str> = item["choices"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["value"].as_str())
                .collect();
            if !choices.is_empty() {
                flags.push(format!("choices {}", choices.join("|")));
            }
            out.push(format!(
                "{}{}{kind}{} — {}",
                "  ".repeat(depth),
                item["name"].as_str().unwrap(),
                if flags.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", flags.join(", "))
                },
                item["description"].as_str().unwrap(),
            ));
            outline(&item["options"], depth + 1, out);
        }
    }

    /// The registration as Discord receives it; a change to the catalogue shows up here.
    #[test]
    fn registration_is_the_catalogue() {
        let json = serde_json::to_value(commands()).unwrap();
        let mut lines = Vec::new();
        outline(&json, 0, &mut lines);
        insta::assert_snapshot!(lines.join("\n"));
    }

    #[test]
    fn registration_fits_discord_limits() {
        let json = serde_json::to_value(commands()).unwrap();
        for command in json.as_array().unwrap() {
            let description = command["description"].as_str().unwrap();
            assert!((1..=100).contains(&description.len()), "{description}");
            let options = command["options"].as_array().map_or(0, Vec::len);
            assert!(options <= 25);
        }
    }
}
