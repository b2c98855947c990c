//! The guild commands, generated from the command catalogue: the console and Discord can never
//! disagree on a command's name, options or help. A group with subcommands becomes one command
//! with subcommand options (`/cluster status`); a single command stays top-level (`/approve`).
//!
//! An open command (`/runbook run`) takes further `name:value` options on the console. Discord
//! only sends options it knows, so those are registered too: one optional option per runbook
//! parameter name, as loaded at start-up.

use opsbot_commands::catalogue::{self, CommandSpec, OptionKind, OptionSpec, Reach};
use opsbot_commands::name::ParamName;
use opsbot_commands::openstack::image::PropertyKey;
use opsbot_commands::page::Page;
use opsbot_commands::retention::RetentionDays;
use serenity::all::{CommandOptionType, CreateCommand, CreateCommandOption};

/// Discord takes at most 25 options per command or subcommand.
const MAX_OPTIONS: usize = 25;

/// What Discord shows for a runbook parameter's option; which runbook takes it, and what it
/// means there, `/runbook show` tells.
const PARAM_SUMMARY: &str = "a runbook parameter; /runbook show lists which";

/// Every chat command, in catalogue order. `params` are the runbook parameter names
/// (`Runbooks::param_names`), registered as options of the open commands.
pub fn commands<'a>(params: impl IntoIterator<Item = &'a ParamName>) -> Vec<CreateCommand> {
    let mut params: Vec<&ParamName> = params.into_iter().collect();
    params.sort_unstable();
    params.dedup();
    catalogue::chat_groups()
        .into_iter()
        .map(|group| {
            let specs: Vec<&'static CommandSpec> = catalogue::group(group)
                .filter(|c| c.reach == Reach::Everywhere)
                .collect();
            match specs.as_slice() {
                [single] if single.sub.is_none() => CreateCommand::new(group)
                    .description(single.summary)
                    .set_options(options(single, &params)),
                _ => {
                    let subs: Vec<&str> = specs.iter().filter_map(|c| c.sub).collect();
                    CreateCommand::new(group)
                        .description(format!("{group}: {}", subs.join(", ")))
                        .set_options(specs.iter().map(|spec| subcommand(spec, &params)).collect())
                }
            }
        })
        .collect()
}

fn subcommand(spec: &CommandSpec, params: &[&ParamName]) -> CreateCommandOption {
    let sub = spec.sub.unwrap_or(spec.group);
    options(spec, params).into_iter().fold(
        CreateCommandOption::new(CommandOptionType::SubCommand, sub, spec.summary),
        CreateCommandOption::add_sub_option,
    )
}

/// A command's own options, then, for an open command, one per parameter name that none of
/// them already takes (as many as Discord allows; `Runbooks` keeps them within that).
fn options(spec: &CommandSpec, params: &[&ParamName]) -> Vec<CreateCommandOption> {
    let own = spec.options.iter().map(option);
    let params = if spec.open { params } else { &[] };
    let extra = params
        .iter()
        .filter(|name| spec.option(name.as_str()).is_none())
        .map(|name| typed_option(name.as_str(), OptionKind::Param, false, PARAM_SUMMARY));
    own.chain(extra).take(MAX_OPTIONS).collect()
}

fn option(spec: &OptionSpec) -> CreateCommandOption {
    typed_option(spec.name, spec.kind, spec.required, spec.summary)
}

fn typed_option(
    name: &str,
    kind: OptionKind,
    required: bool,
    summary: &str,
) -> CreateCommandOption {
    let typed = |ty| CreateCommandOption::new(ty, name, summary).required(required);
    let text = |autocomplete: bool| {
        let max = u16::try_from(kind.max_len()).unwrap_or(u16::MAX);
        typed(CommandOptionType::String)
            .max_length(max)
            .set_autocomplete(autocomplete)
    };
    match kind {
        // Suggested from the config, the store or the cluster; the user may still type any
        // value, which opsbot validates like console input.
        OptionKind::Cluster
        | OptionKind::Run
        | OptionKind::Index
        | OptionKind::Node
        | OptionKind::Cloud
        | OptionKind::Host
        | OptionKind::Runbook
        | OptionKind::Schedule
        | OptionKind::Param => text(true),
        // At least the 12 hex digits shown with a plan.
        OptionKind::Digest => text(false).min_length(12),
        OptionKind::User
        | OptionKind::Text { .. }
        | OptionKind::Date
        | OptionKind::Time
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
        OptionKind::Page => typed(CommandOptionType::Integer)
            .min_int_value(1)
            .max_int_value(u64::from(Page::MAX)),
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
            for key in ["min_length", "max_length", "min_value", "max_value"] {
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

    fn names(names: &[&str]) -> Vec<ParamName> {
        names.iter().map(|n| ParamName::parse(n).unwrap()).collect()
    }

    fn lines(params: &[ParamName]) -> Vec<String> {
        let json = serde_json::to_value(commands(params)).unwrap();
        let mut lines = Vec::new();
        outline(&json, 0, &mut lines);
        lines
    }

    /// The registration as Discord receives it, with runbooks whose parameters are `module`,
    /// `host` and `count`; a change to the catalogue shows up here.
    #[test]
    fn registration_is_the_catalogue() {
        let lines = lines(&names(&["module", "host", "count", "host"]));
        insta::assert_snapshot!(lines.join("\n"));
    }

    /// The parameters are options of `/runbook run` only, after its own, sorted, once each.
    #[test]
    fn parameters_are_options_of_the_open_command_only() {
        let with = lines(&names(&["module", "host", "count"]));
        let without = lines(&[]);
        let added: Vec<&String> = with
            .iter()
            .filter(|l| !without.contains(l) && l.contains("a runbook parameter"))
            .collect();
        let param = |name: &str| {
            format!(
                "    {name} string (autocomplete, max_length 253) — a runbook parameter; \
                 /runbook show lists which"
            )
        };
        assert_eq!(added, [&param("count"), &param("host"), &param("module")]);
        let run = with.iter().position(|l| l.starts_with("  run — ")).unwrap();
        assert!(with[run + 1].starts_with("    name string (required, autocomplete"));
        assert!(with[run + 2].starts_with("    at string (max_length 40)"));
        assert_eq!(
            with[run + 3..run + 6],
            [param("count"), param("host"), param("module")]
        );
        assert!(
            !without.iter().any(|l| l.contains("a runbook parameter")),
            "no runbooks, no parameter options"
        );
    }

    /// A parameter named like one of the command's own options is not registered twice.
    #[test]
    fn a_parameter_never_shadows_an_own_option() {
        let json = serde_json::to_value(commands(&names(&["name", "at", "host"]))).unwrap();
        let runbook = json
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "runbook")
            .unwrap();
        let run = runbook["options"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == "run")
            .unwrap();
        let options: Vec<&str> = run["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["name"].as_str().unwrap())
            .collect();
        assert_eq!(options, ["name", "at", "host"]);
    }

    /// Every option list Discord receives, at any depth.
    fn option_lists<'a>(json: &'a serde_json::Value, out: &mut Vec<&'a serde_json::Value>) {
        for item in json.as_array().into_iter().flatten() {
            out.push(item);
            option_lists(&item["options"], out);
        }
    }

    #[test]
    fn registration_fits_discord_limits() {
        // As many parameter names as the runbooks may use together.
        let many: Vec<String> = (0..opsbot_commands::runbook::MAX_PARAM_NAMES)
            .map(|i| format!("param_{i:02}"))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        for params in [names(&[]), names(&many)] {
            let json = serde_json::to_value(commands(&params)).unwrap();
            let mut items = Vec::new();
            option_lists(&json, &mut items);
            for item in items {
                let name = item["name"].as_str().unwrap();
                assert!((1..=32).contains(&name.len()), "{name}");
                let description = item["description"].as_str().unwrap();
                assert!((1..=100).contains(&description.len()), "{description}");
                let options = item["options"].as_array().map_or(0, Vec::len);
                assert!(options <= MAX_OPTIONS, "{name}: {options} options");
            }
        }
    }
}
