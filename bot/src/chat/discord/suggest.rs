//! Autocomplete choices, from what opsbot knows without asking anyone: names from the config,
//! runbooks and their parameters' kinds, the host inventory. Pure, so that odd input (an unknown
//! runbook, a parameter it lacks, a half-typed value) can be tried here without a gateway.

use opsbot_commands::echo::visible;
use opsbot_commands::runbook::{Inventory, Param, ParamKind, Runbooks};

/// Discord shows at most 25 autocomplete choices.
const MAX_CHOICES: usize = 25;
/// Discord's limit on a choice's name and on a string choice's value, in characters.
const MAX_CHOICE_LEN: usize = 100;

/// One autocomplete choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Choice {
    /// What Discord shows.
    pub(super) label: String,
    /// What Discord sends when it is picked.
    pub(super) value: String,
}

impl Choice {
    /// A value shown as itself.
    fn plain(value: impl Into<String>) -> Self {
        let value = value.into();
        Self {
            label: value.clone(),
            value,
        }
    }

    /// A value shown with a word on what it is: `30 (default)`.
    fn marked(value: &str, mark: &str) -> Self {
        Self {
            label: format!("{value} ({mark})"),
            value: value.to_owned(),
        }
    }
}

/// What Discord accepts of `choices`: values it can send (1 to 100 characters), once each,
/// labels cut to 100 characters, at most 25.
pub(super) fn fit(choices: Vec<Choice>) -> Vec<Choice> {
    let mut fitted: Vec<Choice> = Vec::new();
    for Choice { label, value } in choices {
        let len = value.chars().count();
        if !(1..=MAX_CHOICE_LEN).contains(&len) || fitted.iter().any(|c| c.value == value) {
            continue;
        }
        let label = if label.trim().is_empty() {
            value.clone()
        } else {
            visible(&label, MAX_CHOICE_LEN - 1)
        };
        fitted.push(Choice { label, value });
        if fitted.len() == MAX_CHOICES {
            break;
        }
    }
    fitted
}

/// The values containing what is typed, ignoring case, each shown as itself.
pub(super) fn containing(values: impl IntoIterator<Item = String>, typed: &str) -> Vec<Choice> {
    let typed = typed.trim().to_lowercase();
    values
        .into_iter()
        .filter(|value| value.to_lowercase().contains(&typed))
        .map(Choice::plain)
        .collect()
}

/// The loaded runbooks whose name or description contains what is typed, those whose name
/// starts with it first; each shown by its description, sent as its name.
pub(super) fn runbooks(runbooks: &Runbooks, typed: &str) -> Vec<Choice> {
    let typed = typed.trim().to_lowercase();
    let (mut first, rest): (Vec<Choice>, Vec<Choice>) = runbooks
        .iter()
        .filter(|r| {
            r.name.as_str().contains(&typed) || r.description.to_lowercase().contains(&typed)
        })
        .map(|r| Choice {
            label: format!("{} — {}", r.name, r.description),
            value: r.name.to_string(),
        })
        .partition(|c| c.value.starts_with(&typed));
    first.extend(rest);
    first
}

/// Values for the parameter `param` of the runbook chosen so far, by the parameter's kind.
/// Nothing when no runbook is chosen, it is not loaded, or it has no such parameter.
pub(super) fn param(
    runbooks: &Runbooks,
    inventory: &Inventory,
    runbook: Option<&str>,
    param: &str,
    typed: &str,
) -> Vec<Choice> {
    let Some(param) = runbook
        .and_then(|name| runbooks.get(name).ok())
        .and_then(|runbook| runbook.param(param))
    else {
        return Vec::new();
    };
    let typed = typed.trim();
    let valid = || !typed.is_empty() && param.check(typed, inventory).is_ok();
    match &param.kind {
        // The hosts it may name, in the inventory's order, that start with what is typed.
        ParamKind::Host { group } => {
            let prefix = typed.to_lowercase();
            let hosts: Vec<_> = match group {
                Some(group) => inventory.group(group).unwrap_or_default().iter().collect(),
                None => inventory.hosts().into_iter().collect(),
            };
            hosts
                .into_iter()
                .filter(|host| host.as_str().to_lowercase().starts_with(&prefix))
                .map(|host| Choice::plain(host.as_str()))
                .collect()
        }
        // Its values containing what is typed; all of them when none does, since nothing else
        // would be accepted.
        ParamKind::Choice { values } => {
            let lower = typed.to_lowercase();
            let matching: Vec<&String> = values
                .iter()
                .filter(|v| v.to_lowercase().contains(&lower))
                .collect();
            let shown = if matching.is_empty() {
                values.iter().collect()
            } else {
                matching
            };
            shown.into_iter().map(|v| with_default(param, v)).collect()
        }
        // What is typed once it is a number in range; until then, the default and the bounds.
        ParamKind::Number { min, max } => {
            if valid() {
                return vec![Choice::plain(typed)];
            }
            param
                .default
                .iter()
                .map(|d| Choice::marked(d, "default"))
                .chain([
                    Choice::marked(&min.to_string(), "lowest"),
                    Choice::marked(&max.to_string(), "highest"),
                ])
                .collect()
        }
        // What is typed once it has the form, then the default, or else the example.
        ParamKind::Pattern { example, .. } => {
            let typed = valid().then(|| Choice::plain(typed));
            let known = match &param.default {
                Some(default) => Choice::marked(default, "default"),
                None => Choice::marked(example, "example"),
            };
            typed.into_iter().chain([known]).collect()
        }
    }
}

/// A choice's value, marked when it is the parameter's default.
fn with_default(param: &Param, value: &str) -> Choice {
    if param.default.as_deref() == Some(value) {
        Choice::marked(value, "default")
    } else {
        Choice::plain(value)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use opsbot_commands::name::{GroupName, HostName};
    use opsbot_commands::runbook::Runbook;

    use super::*;

    const NESTED_VIRT: &str = r#"
name = "nested-virt"
description = "enable nested virtualisation on a hypervisor"

[[params]]
name = "host"
kind = "host"
group = "compute"

[[params]]
name = "module"
kind = "choice"
values = ["kvm_intel", "kvm_amd"]
default = "kvm_intel"

[[params]]
name = "retries"
kind = "number"
min = 1
max = 5
default = "3"

[[params]]
name = "ticket"
kind = "pattern"
pattern = "OPS-[0-9]+"
example = "OPS-123"

[[steps]]
kind = "run"
on = "{host}"
argv = ["modprobe", "{module}"]
"#;

    const ANY_HOST: &str = r#"
name = "uptime"
description = "how long a host has been up"

[[params]]
name = "target"
kind = "host"

[[params]]
name = "count"
kind = "number"
max = 10

[[params]]
name = "tag"
kind = "pattern"
pattern = "[a-z]+"
example = "web"
default = "db"

[[steps]]
kind = "run"
on = "{target}"
argv = ["uptime"]
"#;

    fn inventory() -> Inventory {
        let hosts = |names: &[&str]| -> Vec<HostName> {
            names.iter().map(|n| HostName::parse(n).unwrap()).collect()
        };
        Inventory::new(BTreeMap::from([
            (
                GroupName::parse("compute").unwrap(),
                hosts(&["compute-02", "compute-01", "compute-10"]),
            ),
            (
                GroupName::parse("control").unwrap(),
                hosts(&["ctl-01", "compute-01"]),
            ),
        ]))
    }

    fn library(files: &[&str]) -> (Runbooks, Inventory) {
        let inventory = inventory();
        let list = files
            .iter()
            .map(|text| Runbook::parse("test.toml", text, &inventory).unwrap())
            .collect();
        (Runbooks::new(list).unwrap(), inventory)
    }

    fn values(choices: &[Choice]) -> Vec<&str> {
        choices.iter().map(|c| c.value.as_str()).collect()
    }

    fn labels(choices: &[Choice]) -> Vec<&str> {
        choices.iter().map(|c| c.label.as_str()).collect()
    }

    #[test]
    fn runbook_names_match_what_is_typed_and_show_name_and_description() {
        let (runbooks, _) = library(&[NESTED_VIRT, ANY_HOST]);
        let all = super::runbooks(&runbooks, "");
        assert_eq!(values(&all), ["nested-virt", "uptime"]);
        assert_eq!(
            labels(&all),
            [
                "nested-virt — enable nested virtualisation on a hypervisor",
                "uptime — how long a host has been up"
            ]
        );
        assert_eq!(values(&super::runbooks(&runbooks, "NEST")), ["nested-virt"]);
        // The description counts too, after names that start with what is typed.
        assert_eq!(
            values(&super::runbooks(&runbooks, "u")),
            ["uptime", "nested-virt"]
        );
        assert!(super::runbooks(&runbooks, "zzz").is_empty());
        assert!(super::runbooks(&Runbooks::default(), "").is_empty());
    }

    #[test]
    fn hosts_come_from_the_inventory_group_by_prefix() {
        let (runbooks, inventory) = library(&[NESTED_VIRT, ANY_HOST]);
        let hosts = |runbook: &str, param: &str, typed: &str| {
            let choices = super::param(&runbooks, &inventory, Some(runbook), param, typed);
            values(&choices)
                .iter()
                .map(|v| (*v).to_owned())
                .collect::<Vec<_>>()
        };
        // The group's hosts, in the inventory's order.
        assert_eq!(
            hosts("nested-virt", "host", ""),
            ["compute-02", "compute-01", "compute-10"]
        );
        assert_eq!(
            hosts("nested-virt", "host", "compute-0"),
            ["compute-02", "compute-01"]
        );
        assert!(hosts("nested-virt", "host", "ctl").is_empty());
        assert!(hosts("nested-virt", "host", "01").is_empty(), "a prefix");
        // Without a group: every host of the inventory, once, sorted.
        assert_eq!(
            hosts("uptime", "target", ""),
            ["compute-01", "compute-02", "compute-10", "ctl-01"]
        );
        assert_eq!(
            hosts("uptime", "target", "C"),
            hosts("uptime", "target", "c")
        );
    }

    #[test]
    fn choices_numbers_and_patterns_follow_the_kind() {
        let (runbooks, inventory) = library(&[NESTED_VIRT, ANY_HOST]);
        let suggest = |runbook: &str, param: &str, typed: &str| {
            super::param(&runbooks, &inventory, Some(runbook), param, typed)
        };
        let module = suggest("nested-virt", "module", "");
        assert_eq!(values(&module), ["kvm_intel", "kvm_amd"]);
        assert_eq!(labels(&module), ["kvm_intel (default)", "kvm_amd"]);
        assert_eq!(
            values(&suggest("nested-virt", "module", "amd")),
            ["kvm_amd"]
        );
        // Nothing else would be accepted: every value, rather than none.
        assert_eq!(
            values(&suggest("nested-virt", "module", "xen")),
            ["kvm_intel", "kvm_amd"]
        );

        assert_eq!(values(&suggest("nested-virt", "retries", "4")), ["4"]);
        for typed in ["", "9", "-1", "two", "0"] {
            let retries = suggest("nested-virt", "retries", typed);
            assert_eq!(values(&retries), ["3", "1", "5"], "{typed:?}");
            assert_eq!(
                labels(&retries),
                ["3 (default)", "1 (lowest)", "5 (highest)"]
            );
        }
        assert_eq!(values(&suggest("uptime", "count", "x")), ["0", "10"]);

        let ticket = suggest("nested-virt", "ticket", "");
        assert_eq!(values(&ticket), ["OPS-123"]);
        assert_eq!(labels(&ticket), ["OPS-123 (example)"]);
        assert_eq!(
            values(&suggest("nested-virt", "ticket", "OPS-9")),
            ["OPS-9", "OPS-123"]
        );
        assert_eq!(
            values(&suggest("nested-virt", "ticket", "OPS-")),
            ["OPS-123"]
        );
        assert_eq!(values(&suggest("uptime", "tag", "")), ["db"]);
        assert_eq!(values(&suggest("uptime", "tag", "web")), ["web", "db"]);
    }

    #[test]
    fn no_runbook_or_no_such_parameter_offers_nothing() {
        let (runbooks, inventory) = library(&[NESTED_VIRT, ANY_HOST]);
        for (runbook, param) in [
            (None, "host"),
            (Some(""), "host"),
            (Some("nope"), "host"),
            (Some("nested-virt"), "target"),
            (Some("uptime"), "module"),
            (Some("nested-virt"), ""),
            (Some("nested-virt\u{0}"), "host"),
            (Some(&"x".repeat(10_000)), "host"),
        ] {
            let choices = super::param(&runbooks, &inventory, runbook, param, "c");
            assert!(choices.is_empty(), "{runbook:?} {param:?}: {choices:?}");
        }
        let empty = Runbooks::default();
        assert!(super::param(&empty, &inventory, Some("nested-virt"), "host", "").is_empty());
    }

    #[test]
    fn odd_typing_never_panics() {
        let (runbooks, inventory) = library(&[NESTED_VIRT, ANY_HOST]);
        let odd = [
            "",
            " ",
            "é",
            "\u{0}",
            "{host}",
            "-rf",
            "İ",
            "🦀🦀",
            &"9".repeat(400),
            &"x".repeat(5000),
        ];
        for typed in odd {
            for (runbook, param) in [
                ("nested-virt", "host"),
                ("nested-virt", "module"),
                ("nested-virt", "retries"),
                ("nested-virt", "ticket"),
                ("uptime", "target"),
                ("uptime", "count"),
                ("uptime", "tag"),
            ] {
                let choices = fit(super::param(
                    &runbooks,
                    &inventory,
                    Some(runbook),
                    param,
                    typed,
                ));
                assert!(choices.len() <= MAX_CHOICES);
            }
            let _ = fit(super::runbooks(&runbooks, typed));
            let _ = fit(containing(["a".to_owned()], typed));
        }
    }

    #[test]
    fn fit_keeps_to_discord_limits() {
        let long = "d".repeat(300);
        let choices = (0..40)
            .map(|i| Choice {
                label: long.clone(),
                value: format!("v{}", i % 30),
            })
            .chain([
                Choice::plain(""),
                Choice::plain("h".repeat(101)),
                Choice {
                    label: " ".to_owned(),
                    value: "blank".to_owned(),
                },
            ])
            .collect();
        let fitted = fit(choices);
        assert_eq!(fitted.len(), MAX_CHOICES);
        assert!(
            fitted
                .iter()
                .all(|c| c.label.chars().count() == MAX_CHOICE_LEN)
        );
        let seen: std::collections::BTreeSet<&str> = values(&fitted).into_iter().collect();
        assert_eq!(seen.len(), MAX_CHOICES, "each value once");

        let few = fit(vec![
            Choice::plain(""),
            Choice::plain("h".repeat(101)),
            Choice::plain("h".repeat(100)),
            Choice {
                label: " ".to_owned(),
                value: "blank".to_owned(),
            },
            Choice::plain("blank"),
        ]);
        assert_eq!(values(&few), ["h".repeat(100).as_str(), "blank"]);
        assert_eq!(few[1].label, "blank", "an empty label shows the value");
    }

    #[test]
    fn containing_ignores_case() {
        let names = || ["logs".to_owned(), "Metrics".to_owned(), "prod".to_owned()];
        assert_eq!(
            values(&containing(names(), "")),
            ["logs", "Metrics", "prod"]
        );
        assert_eq!(values(&containing(names(), "TR")), ["Metrics"]);
        assert!(containing(names(), "zz").is_empty());
    }
}
