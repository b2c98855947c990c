//! Reading a runbook file: the TOML schema, and every check that can be made before anything
//! runs, each error naming the file and the line. Pure: the caller reads the file.

use std::collections::BTreeSet;
use std::fmt;
use std::ops::Range;
use std::time::Duration;

use regex::Regex;
use serde::Deserialize;
use toml::Spanned;

use super::template::{Template, is_name};
use super::{Inventory, Param, ParamKind, Runbook, StepKind, StepSpec};
use crate::name::{GroupName, HostName, ParamName, RunbookName};
use crate::shell;

/// A runbook file that cannot be used: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct LoadError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl LoadError {
    /// An error about a file as a whole.
    pub(super) fn whole(source: &str, message: String) -> Self {
        Self {
            file: source.to_owned(),
            line: 1,
            message,
        }
    }
}

/// Longest command timeout and wait: a step that needs more is a job for something else.
const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2 * 60);
const DEFAULT_INTERVAL: Duration = Duration::from_secs(5);
const DEFAULT_WAIT: Duration = Duration::from_secs(10 * 60);
const MAX_STEPS: usize = 100;
const MAX_WORDS: usize = 64;
const MAX_TEXT: usize = 300;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRunbook {
    name: Spanned<String>,
    description: Spanned<String>,
    #[serde(default)]
    maintenance: bool,
    #[serde(default)]
    params: Vec<Spanned<RawParam>>,
    #[serde(default)]
    steps: Vec<Spanned<RawStep>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParam {
    name: Spanned<String>,
    kind: Spanned<String>,
    #[serde(default)]
    help: String,
    default: Option<Spanned<String>>,
    group: Option<Spanned<String>>,
    values: Option<Spanned<Vec<String>>>,
    pattern: Option<Spanned<String>>,
    example: Option<String>,
    min: Option<u64>,
    max: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    kind: Spanned<String>,
    title: Option<Spanned<String>>,
    each: Option<Spanned<String>>,
    on: Option<Spanned<String>>,
    argv: Option<Spanned<Vec<String>>>,
    stdin: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
    exit_codes: Option<Spanned<Vec<i32>>>,
    output: Option<Spanned<String>>,
    idempotent: Option<bool>,
    post_output: Option<bool>,
    until: Option<Spanned<String>>,
    interval: Option<Spanned<String>>,
    prompt: Option<Spanned<String>>,
    reason: Option<Spanned<String>>,
}

/// Turns byte spans into line numbers of one file.
struct Lines<'a> {
    source: &'a str,
    text: &'a str,
}

impl Lines<'_> {
    fn error(&self, span: Range<usize>, message: impl Into<String>) -> LoadError {
        let start = span.start.min(self.text.len());
        LoadError {
            file: self.source.to_owned(),
            line: self.text[..start].matches('\n').count() + 1,
            message: message.into(),
        }
    }
}

impl Runbook {
    /// Reads and checks one runbook file; `source` names it in errors.
    pub fn parse(source: &str, text: &str, inventory: &Inventory) -> Result<Self, LoadError> {
        let lines = Lines { source, text };
        let raw: RawRunbook = toml::from_str(text)
            .map_err(|e| lines.error(e.span().unwrap_or(0..0), e.message().trim().to_owned()))?;
        let name = RunbookName::parse(raw.name.get_ref())
            .map_err(|e| lines.error(raw.name.span(), e.to_string()))?;
        let description = text_field(&lines, &raw.description, "description")?;
        let mut params = Vec::with_capacity(raw.params.len());
        for raw_param in &raw.params {
            let param = param(&lines, raw_param, inventory)?;
            if params.iter().any(|p: &Param| p.name == param.name) {
                return Err(lines.error(
                    raw_param.span(),
                    format!("parameter `{}` is declared twice", param.name),
                ));
            }
            params.push(param);
        }
        if raw.steps.is_empty() {
            return Err(LoadError::whole(
                source,
                "a runbook needs at least one [[steps]]".to_owned(),
            ));
        }
        if raw.steps.len() > MAX_STEPS {
            return Err(lines.error(
                raw.steps[MAX_STEPS].span(),
                format!("a runbook has at most {MAX_STEPS} steps"),
            ));
        }
        let mut scope = Scope {
            params: params.iter().map(|p| p.name.as_str().to_owned()).collect(),
            captured: BTreeSet::new(),
        };
        let mut steps = Vec::with_capacity(raw.steps.len());
        let mut approval_seen = false;
        for raw_step in &raw.steps {
            let step = step(&lines, raw_step, inventory, &mut scope)?;
            if let StepKind::Approval { .. } = step.kind {
                if approval_seen {
                    return Err(lines.error(
                        raw_step.span(),
                        "a runbook has at most one approval step: the approval covers every \
                         step after it",
                    ));
                }
                approval_seen = true;
            }
            steps.push(step);
        }
        Ok(Self {
            name,
            description,
            maintenance: raw.maintenance,
            params,
            source: source.to_owned(),
            steps,
        })
    }
}

/// The names a step may use: parameters, and what earlier steps captured.
struct Scope {
    params: BTreeSet<String>,
    captured: BTreeSet<String>,
}

fn text_field(lines: &Lines<'_>, raw: &Spanned<String>, what: &str) -> Result<String, LoadError> {
    let text = raw.get_ref().trim();
    if text.is_empty() || text.chars().count() > MAX_TEXT || text.contains(char::is_control) {
        return Err(lines.error(
            raw.span(),
            format!("`{what}` must be one line of 1 to {MAX_TEXT} characters"),
        ));
    }
    Ok(text.to_owned())
}

fn param(
    lines: &Lines<'_>,
    raw: &Spanned<RawParam>,
    inventory: &Inventory,
) -> Result<Param, LoadError> {
    let p = raw.get_ref();
    let name = ParamName::parse(p.name.get_ref())
        .map_err(|e| lines.error(p.name.span(), e.to_string()))?;
    // The command's own options (`name:`, `at:`) come from the catalogue.
    let own = crate::parse::command_by_path("runbook", Some("run"))
        .is_some_and(|run| run.option(name.as_str()).is_some());
    if own {
        return Err(lines.error(
            p.name.span(),
            format!("`{name}` is taken by /runbook run itself; call the parameter something else"),
        ));
    }
    let unused = |field: &str, present: bool| {
        if present {
            Err(lines.error(
                raw.span(),
                format!(
                    "parameter `{name}`: `{field}` does not apply to kind = \"{}\"",
                    p.kind.get_ref()
                ),
            ))
        } else {
            Ok(())
        }
    };
    let kind = match p.kind.get_ref().as_str() {
        "host" => {
            unused("example", p.example.is_some())?;
            unused("values", p.values.is_some())?;
            unused("pattern", p.pattern.is_some())?;
            unused("min", p.min.is_some())?;
            unused("max", p.max.is_some())?;
            let group = p
                .group
                .as_ref()
                .map(|g| group(lines, g, inventory))
                .transpose()?;
            ParamKind::Host { group }
        }
        "choice" => {
            unused("example", p.example.is_some())?;
            unused("group", p.group.is_some())?;
            unused("pattern", p.pattern.is_some())?;
            unused("min", p.min.is_some())?;
            unused("max", p.max.is_some())?;
            let Some(values) = &p.values else {
                return Err(lines.error(
                    raw.span(),
                    format!("parameter `{name}` of kind \"choice\" needs `values = [...]`"),
                ));
            };
            if values.get_ref().is_empty() {
                return Err(lines.error(values.span(), "`values` is empty"));
            }
            for value in values.get_ref() {
                check_value(value).map_err(|why| lines.error(values.span(), why))?;
            }
            ParamKind::Choice {
                values: values.get_ref().clone(),
            }
        }
        "pattern" => {
            unused("group", p.group.is_some())?;
            unused("values", p.values.is_some())?;
            unused("min", p.min.is_some())?;
            unused("max", p.max.is_some())?;
            let Some(pattern) = &p.pattern else {
                return Err(lines.error(
                    raw.span(),
                    format!("parameter `{name}` of kind \"pattern\" needs `pattern = \"...\"`"),
                ));
            };
            let regex = Regex::new(&format!("^(?:{})$", pattern.get_ref()))
                .map_err(|e| lines.error(pattern.span(), format!("`pattern`: {e}")))?;
            let Some(example) = p.example.clone() else {
                return Err(lines.error(
                    raw.span(),
                    format!(
                        "parameter `{name}` of kind \"pattern\" needs `example`: operators see it"
                    ),
                ));
            };
            if !regex.is_match(&example) {
                return Err(lines.error(
                    pattern.span(),
                    format!("the example `{example}` does not match the pattern"),
                ));
            }
            ParamKind::Pattern { regex, example }
        }
        "number" => {
            unused("example", p.example.is_some())?;
            unused("group", p.group.is_some())?;
            unused("values", p.values.is_some())?;
            unused("pattern", p.pattern.is_some())?;
            let (min, max) = (p.min.unwrap_or(0), p.max.unwrap_or(u64::from(u32::MAX)));
            if min > max {
                return Err(lines.error(raw.span(), format!("min {min} is above max {max}")));
            }
            ParamKind::Number { min, max }
        }
        other => {
            return Err(lines.error(
                p.kind.span(),
                format!("unknown parameter kind `{other}`; use host, choice, pattern or number"),
            ));
        }
    };
    let param = Param {
        name,
        kind,
        help: p.help.trim().to_owned(),
        default: None,
    };
    let default = match &p.default {
        Some(default) => {
            if let ParamKind::Host { .. } = param.kind {
                return Err(lines.error(
                    default.span(),
                    "a host parameter has no default: the operator names the host",
                ));
            }
            param
                .check(default.get_ref(), inventory)
                .map_err(|why| lines.error(default.span(), format!("`default`: {why}")))?;
            Some(default.get_ref().clone())
        }
        None => None,
    };
    Ok(Param { default, ..param })
}

fn group(
    lines: &Lines<'_>,
    raw: &Spanned<String>,
    inventory: &Inventory,
) -> Result<GroupName, LoadError> {
    let group =
        GroupName::parse(raw.get_ref()).map_err(|e| lines.error(raw.span(), e.to_string()))?;
    if inventory.group(&group).is_none_or(<[HostName]>::is_empty) {
        return Err(lines.error(
            raw.span(),
            format!("group `{group}` is not in the host inventory ([runbooks.inventory])"),
        ));
    }
    Ok(group)
}

/// What every parameter value must be, whatever its kind: a single printable word that no
/// program reads as an option and no placeholder syntax can take apart.
pub(super) fn check_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("the value is empty".to_owned());
    }
    if value.chars().count() > super::MAX_VALUE_LEN {
        return Err(format!(
            "the value is longer than {} characters",
            super::MAX_VALUE_LEN
        ));
    }
    if value.starts_with('-') {
        return Err(format!(
            "`{}` starts with `-`, which a program would read as an option",
            crate::echo::visible(value, 40)
        ));
    }
    if let Some(c) = value
        .chars()
        .find(|c| c.is_control() || c.is_whitespace() || matches!(c, '{' | '}' | '"'))
    {
        return Err(format!(
            "`{}` has {c:?}; values are single words without braces or quotes",
            crate::echo::visible(value, 40)
        ));
    }
    Ok(())
}

fn step(
    lines: &Lines<'_>,
    raw: &Spanned<RawStep>,
    inventory: &Inventory,
    scope: &mut Scope,
) -> Result<StepSpec, LoadError> {
    let s = raw.get_ref();
    let kind_name = s.kind.get_ref().as_str();
    let fields: [(&str, bool); 12] = [
        ("each", s.each.is_some()),
        ("on", s.on.is_some()),
        ("argv", s.argv.is_some()),
        ("stdin", s.stdin.is_some()),
        ("timeout", s.timeout.is_some()),
        ("exit_codes", s.exit_codes.is_some()),
        ("output", s.output.is_some()),
        ("idempotent", s.idempotent.is_some()),
        ("post_output", s.post_output.is_some()),
        ("until", s.until.is_some()),
        ("interval", s.interval.is_some()),
        ("prompt", s.prompt.is_some()),
    ];
    let allowed: &[&str] = match kind_name {
        "run" => &[
            "each",
            "on",
            "argv",
            "stdin",
            "timeout",
            "exit_codes",
            "output",
            "idempotent",
            "post_output",
        ],
        "wait" => &["each", "on", "argv", "timeout", "until", "interval"],
        "confirm" => &["each", "prompt"],
        "approval" => &[],
        other => {
            return Err(lines.error(
                s.kind.span(),
                format!("unknown step kind `{other}`; use run, wait, confirm or approval"),
            ));
        }
    };
    if let Some((field, _)) = fields
        .iter()
        .find(|(field, present)| *present && !allowed.contains(field))
    {
        return Err(lines.error(
            raw.span(),
            format!("`{field}` does not apply to a step of kind = \"{kind_name}\""),
        ));
    }
    if kind_name != "approval" && s.reason.is_some() {
        return Err(lines.error(
            raw.span(),
            format!("`reason` does not apply to a step of kind = \"{kind_name}\""),
        ));
    }
    let title = s
        .title
        .as_ref()
        .map(|t| text_field(lines, t, "title"))
        .transpose()?;
    let each = s
        .each
        .as_ref()
        .map(|g| group(lines, g, inventory))
        .transpose()?;
    if each.is_some() && scope.params.contains("host") {
        return Err(lines.error(
            raw.span(),
            "`each` binds {host} to each host of the group, and the runbook has a parameter \
             `host` too: rename the parameter",
        ));
    }
    // `{host}` is bound inside an `each` block.
    let mut known = scope.params.clone();
    known.extend(scope.captured.iter().cloned());
    if each.is_some() {
        known.insert("host".to_owned());
    }
    let word = |raw: &Spanned<String>, captures: bool| -> Result<Template, LoadError> {
        let template =
            Template::parse(raw.get_ref()).map_err(|why| lines.error(raw.span(), why))?;
        for var in template.vars() {
            let fine = if captures {
                known.contains(var)
            } else {
                known.contains(var) && !scope.captured.contains(var)
            };
            if !fine {
                let why = if scope.captured.contains(var) {
                    format!(
                        "{{{var}}} is captured while the run goes; here it must be known before"
                    )
                } else {
                    format!(
                        "{{{var}}} is not a parameter{} or a value an earlier step captures",
                        if each.is_some() { ", {host}" } else { "" }
                    )
                };
                return Err(lines.error(raw.span(), why));
            }
        }
        Ok(template)
    };
    let kind = match kind_name {
        "run" | "wait" => {
            let on = match &s.on {
                Some(on) => word(on, false)?,
                None if each.is_some() => {
                    Template::parse("{host}").map_err(|why| lines.error(raw.span(), why))?
                }
                None => {
                    return Err(lines.error(
                        raw.span(),
                        "the step needs `on`: the host it runs on, e.g. on = \"{host}\"",
                    ));
                }
            };
            if let Some(on) = &s.on {
                check_literal_host(lines, on, inventory)?;
            }
            let Some(raw_argv) = &s.argv else {
                return Err(lines.error(
                    raw.span(),
                    "the step needs `argv`: the program and its arguments, e.g. \
                     argv = [\"systemctl\", \"status\", \"{service}\"]",
                ));
            };
            let argv = argv(lines, raw_argv, &word)?;
            let timeout_default = if kind_name == "run" {
                DEFAULT_TIMEOUT
            } else {
                DEFAULT_WAIT
            };
            let timeout = duration(lines, s.timeout.as_ref(), "timeout", timeout_default)?;
            if kind_name == "run" {
                let output = s
                    .output
                    .as_ref()
                    .map(|o| regex(lines, o, "output"))
                    .transpose()?;
                let mut new_captures = Vec::new();
                if let (Some(output), Some(raw_output)) = (&output, &s.output) {
                    for name in output.capture_names().flatten() {
                        if !is_name(name) || scope.params.contains(name) {
                            return Err(lines.error(
                                raw_output.span(),
                                format!(
                                    "captured `{name}` must be lower-case letters, digits and \
                                     `_`, and not a parameter's name"
                                ),
                            ));
                        }
                        new_captures.push(name.to_owned());
                    }
                }
                let stdin = s.stdin.as_ref().map(|t| word(t, true)).transpose()?;
                let exit_codes = match &s.exit_codes {
                    Some(codes) if codes.get_ref().is_empty() => {
                        return Err(lines.error(codes.span(), "`exit_codes` is empty"));
                    }
                    Some(codes) => codes.get_ref().clone(),
                    None => vec![0],
                };
                scope.captured.extend(new_captures);
                StepKind::Run {
                    on,
                    argv,
                    stdin,
                    timeout,
                    exit_codes,
                    output,
                    idempotent: s.idempotent.unwrap_or(false),
                    post_output: s.post_output.unwrap_or(false),
                }
            } else {
                let Some(raw_until) = &s.until else {
                    return Err(lines.error(
                        raw.span(),
                        "a wait needs `until`: a regular expression its output must match, \
                         e.g. until = \"^Y$\"",
                    ));
                };
                let until = regex(lines, raw_until, "until")?;
                let interval = duration(lines, s.interval.as_ref(), "interval", DEFAULT_INTERVAL)?;
                if interval < Duration::from_secs(1) || interval > timeout {
                    return Err(lines.error(
                        s.interval.as_ref().map_or(raw.span(), Spanned::span),
                        "`interval` must be at least 1s and at most the timeout",
                    ));
                }
                StepKind::Wait {
                    on,
                    argv,
                    until,
                    interval,
                    timeout,
                }
            }
        }
        "confirm" => {
            let Some(prompt) = &s.prompt else {
                return Err(lines.error(
                    raw.span(),
                    "a confirm step needs `prompt`: what the operator must do",
                ));
            };
            text_field(lines, prompt, "prompt")?;
            StepKind::Confirm {
                prompt: word(prompt, true)?,
            }
        }
        _ => {
            let Some(reason) = &s.reason else {
                return Err(lines.error(
                    raw.span(),
                    "an approval step needs `reason`: why a second operator must look first",
                ));
            };
            StepKind::Approval {
                reason: text_field(lines, reason, "reason")?,
            }
        }
    };
    Ok(StepSpec { title, each, kind })
}

/// A literal `on = "ctl-01"` must be a host of the inventory; one with placeholders is checked
/// when the run is planned.
fn check_literal_host(
    lines: &Lines<'_>,
    on: &Spanned<String>,
    inventory: &Inventory,
) -> Result<(), LoadError> {
    if on.get_ref().contains('{') {
        return Ok(());
    }
    let host = HostName::parse(on.get_ref()).map_err(|e| lines.error(on.span(), e.to_string()))?;
    if !inventory.contains(&host) {
        return Err(lines.error(
            on.span(),
            format!("host `{host}` is not in the host inventory ([runbooks.inventory])"),
        ));
    }
    Ok(())
}

fn argv(
    lines: &Lines<'_>,
    raw: &Spanned<Vec<String>>,
    word: &impl Fn(&Spanned<String>, bool) -> Result<Template, LoadError>,
) -> Result<Vec<Template>, LoadError> {
    let words = raw.get_ref();
    if words.is_empty() || words.len() > MAX_WORDS {
        return Err(lines.error(
            raw.span(),
            format!(
                "`argv` needs the program and at most {} arguments",
                MAX_WORDS - 1
            ),
        ));
    }
    shell::check_argv(words).map_err(|why| lines.error(raw.span(), why))?;
    words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i == 0 && w.contains('{') {
                return Err(lines.error(raw.span(), "the program itself cannot be a placeholder"));
            }
            word(&Spanned::new(raw.span(), w.clone()), true)
        })
        .collect()
}

fn regex(lines: &Lines<'_>, raw: &Spanned<String>, what: &str) -> Result<Regex, LoadError> {
    Regex::new(raw.get_ref()).map_err(|e| {
        // The regex crate's message spans several lines; its last line says what is wrong.
        let why = e.to_string();
        let why = why.lines().last().unwrap_or("invalid").trim().to_owned();
        lines.error(
            raw.span(),
            format!("`{what}` is no regular expression: {why}"),
        )
    })
}

fn duration(
    lines: &Lines<'_>,
    raw: Option<&Spanned<String>>,
    what: &str,
    default: Duration,
) -> Result<Duration, LoadError> {
    let Some(raw) = raw else {
        return Ok(default);
    };
    let value = humantime::parse_duration(raw.get_ref()).map_err(|e| {
        lines.error(
            raw.span(),
            format!(
                "`{what}` = \"{}\": {e}; write e.g. \"30s\", \"5m\", \"2h\"",
                raw.get_ref()
            ),
        )
    })?;
    if value < Duration::from_secs(1) || value > MAX_TIMEOUT {
        return Err(lines.error(raw.span(), format!("`{what}` must be from 1s to 24h")));
    }
    Ok(value)
}

impl Param {
    /// Checks a value typed for this parameter.
    pub fn check(&self, value: &str, inventory: &Inventory) -> Result<(), String> {
        check_value(value)?;
        match &self.kind {
            ParamKind::Host { group } => {
                let host = HostName::parse(value).map_err(|e| e.to_string())?;
                let fits = match group {
                    Some(group) => inventory.group(group).is_some_and(|g| g.contains(&host)),
                    None => inventory.contains(&host),
                };
                if fits {
                    Ok(())
                } else {
                    Err(format!(
                        "`{host}` is not {} of the inventory",
                        match group {
                            Some(group) => format!("a host of group `{group}`"),
                            None => "a host".to_owned(),
                        }
                    ))
                }
            }
            ParamKind::Choice { values } => {
                if values.iter().any(|v| v == value) {
                    Ok(())
                } else {
                    Err(format!("`{value}` is not one of {}", values.join(", ")))
                }
            }
            ParamKind::Pattern { regex, example } => {
                if regex.is_match(value) {
                    Ok(())
                } else {
                    Err(format!(
                        "`{value}` is not of the expected form, e.g. {example}"
                    ))
                }
            }
            // Digits only, without leading zeros: `+5` or `007` would reach the argv as typed,
            // and some programs read them otherwise (`tail -n +5`).
            ParamKind::Number { min, max } => match value.parse::<u64>() {
                Ok(n)
                    if (*min..=*max).contains(&n)
                        && value.bytes().all(|b| b.is_ascii_digit())
                        && (value == "0" || !value.starts_with('0')) =>
                {
                    Ok(())
                }
                _ => Err(format!(
                    "`{value}` is not a whole number from {min} to {max}"
                )),
            },
        }
    }
}
