//! The console grammar, `/group sub option:value option:"quoted value"`, checked against the
//! catalogue. A command's last option, when it is free text, takes the rest of the line without
//! quotes (`/reject id:r-2 reason:wrong node, see r-1`). Pure: no I/O, every error is product
//! copy that says what to type instead.
//!
//! Command and option names are matched with ASCII case ignored (`/CLUSTER STATUS CLUSTER:logs`,
//! as a phone's keyboard or caps lock types them); values never are, since a cluster or index
//! name means what it says. An unknown command's hint suggests the nearest ones ([`suggest`]).

use std::collections::BTreeMap;

use crate::catalogue::{self, CommandSpec, OptionKind, OptionSpec, Reach};
use crate::echo::visible;
use crate::name::{NameError, ParamName};
use crate::request::Request;

/// Longest line accepted; Discord's message limit, so nothing longer could come from chat either.
pub const MAX_LINE: usize = 2000;

/// Why a command line was refused. The `Display` text is what the operator reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("commands start with `/`; type /help for the list")]
    NotACommand,
    #[error("the line is too long ({len} characters, at most {max})")]
    LineTooLong { len: usize, max: usize },
    #[error("a quote is not closed; write values with spaces as reason:\"like this\"")]
    UnclosedQuote,
    #[error("unknown command `{typed}`; {hint}")]
    UnknownCommand { typed: String, hint: String },
    #[error("`{token}` is not an option; give options as name:value, e.g. {usage}")]
    NotAnOption { token: String, usage: String },
    /// `/as user:bob /approve id:r-1`: two commands on one line, each of which would be fine.
    #[error(
        "`{token}` starts another command: one command per line, `{first}` first, then `{token} …`"
    )]
    SecondCommand { token: String, first: String },
    /// `cluster: logs`: the value, split from its name, would otherwise be refused as a word
    /// that is not an option, which hides the one space at fault.
    #[error("`{option}:` has no value: remove the space after the colon ({fixed})")]
    SpaceAfterColon { option: String, fixed: String },
    #[error("`{command}` has no option `{option}`; usage: {usage}")]
    UnknownOption {
        command: String,
        option: String,
        usage: String,
    },
    #[error("option `{option}` is given twice; usage: {usage}")]
    DuplicateOption { option: String, usage: String },
    #[error("`{command}` needs `{option}:`; usage: {usage}")]
    MissingOption {
        command: String,
        option: &'static str,
        usage: String,
    },
    #[error("{option}: {error}")]
    BadValue {
        option: &'static str,
        error: NameError,
    },
}

/// The checked options of one command, handed to its `build` function.
#[derive(Debug)]
pub struct Args<'a> {
    command: &'static CommandSpec,
    values: BTreeMap<&'static str, &'a str>,
    /// Options beyond the spec's, for an open command, in the order given; names in lower case
    /// (parameter names are), whatever case they were typed in.
    extra: Vec<(String, &'a str)>,
}

impl<'a> Args<'a> {
    /// Checks names, duplicates and lengths against the command's spec. Front ends that receive
    /// options already split (Discord) enter here; the console enters through [`parse_line`].
    pub fn new(
        command: &'static CommandSpec,
        given: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, ParseError> {
        let mut values = BTreeMap::new();
        let mut extra: Vec<(String, &'a str)> = Vec::new();
        for (name, value) in given {
            let Some(spec) = option_named(command, name) else {
                let lower = name.to_ascii_lowercase();
                if command.open && ParamName::parse(&lower).is_ok() {
                    check_len("value", OptionKind::Param, value)?;
                    if extra.iter().any(|(given, _)| *given == lower) {
                        return Err(ParseError::DuplicateOption {
                            option: lower,
                            usage: command.usage(),
                        });
                    }
                    extra.push((lower, value));
                    continue;
                }
                return Err(ParseError::UnknownOption {
                    command: command.path(),
                    option: visible(name, 32),
                    usage: command.usage(),
                });
            };
            check_len(spec.name, spec.kind, value)?;
            if values.insert(spec.name, value).is_some() {
                return Err(ParseError::DuplicateOption {
                    option: spec.name.to_owned(),
                    usage: command.usage(),
                });
            }
        }
        for spec in command.options.iter().filter(|o| o.required) {
            if !values.contains_key(spec.name) {
                return Err(ParseError::MissingOption {
                    command: command.path(),
                    option: spec.name,
                    usage: command.usage(),
                });
            }
        }
        Ok(Self {
            command,
            values,
            extra,
        })
    }

    /// The options beyond the spec's of an open command, as given but for the names' case.
    pub fn extra(&self) -> impl Iterator<Item = (&str, &'a str)> + '_ {
        self.extra
            .iter()
            .map(|(name, value)| (name.as_str(), *value))
    }

    /// A required option, validated by `parse`. `new` has checked presence already.
    pub fn required<T>(
        &self,
        name: &'static str,
        parse: impl Fn(&str) -> Result<T, NameError>,
    ) -> Result<T, ParseError> {
        self.optional(name, parse)?
            .ok_or_else(|| ParseError::MissingOption {
                command: self.command.path(),
                option: name,
                usage: self.command.usage(),
            })
    }

    /// An optional option, validated by `parse` when present.
    pub fn optional<T>(
        &self,
        name: &'static str,
        parse: impl Fn(&str) -> Result<T, NameError>,
    ) -> Result<Option<T>, ParseError> {
        self.values
            .get(name)
            .map(|raw| {
                parse(raw).map_err(|error| ParseError::BadValue {
                    option: name,
                    error,
                })
            })
            .transpose()
    }
}

/// The option of `command` called `name`, ASCII case ignored.
fn option_named(command: &CommandSpec, name: &str) -> Option<&'static OptionSpec> {
    command
        .options
        .iter()
        .find(|o| o.name.eq_ignore_ascii_case(name))
}

/// Refuses a value longer than its kind takes, before anything else looks at it.
fn check_len(option: &'static str, kind: OptionKind, value: &str) -> Result<(), ParseError> {
    let len = value.chars().count();
    if len > kind.max_len() {
        return Err(ParseError::BadValue {
            option,
            error: NameError::TooLong {
                what: "value",
                value: visible(value, 40),
                len,
                max: kind.max_len(),
            },
        });
    }
    Ok(())
}

/// Which surface the line came from: `/as` exists only in the demo, and `/help` lists what the
/// surface offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `opsbot demo`'s console.
    Demo,
    /// The console of a real deployment (a terminal, or the console socket).
    Console,
    /// Discord.
    Chat,
}

/// Parses one console line into a request.
pub fn parse_line(line: &str, origin: Origin) -> Result<Request, ParseError> {
    let len = line.chars().count();
    if len > MAX_LINE {
        return Err(ParseError::LineTooLong { len, max: MAX_LINE });
    }
    let line = line.trim();
    let (head, free) = split_free_text(line)?;
    let tokens = tokenize(head)?;
    let Some(first) = tokens.first() else {
        return Err(ParseError::NotACommand);
    };
    let Some(group) = first.strip_prefix('/') else {
        return Err(ParseError::NotACommand);
    };
    let (command, rest) = find_command(group, &tokens[1..], origin)?;
    let mut given = Vec::with_capacity(rest.len());
    for (at, token) in rest.iter().enumerate() {
        let Some((name, value)) = token.split_once(':') else {
            if token.starts_with('/') {
                // What came before it: the command's words and the options given so far.
                let first = &tokens[..tokens.len() - rest.len() + at];
                return Err(ParseError::SecondCommand {
                    token: visible(token, 40),
                    first: visible(&first.join(" "), 60),
                });
            }
            return Err(ParseError::NotAnOption {
                token: visible(token, 40),
                usage: command.usage(),
            });
        };
        if let Some(next) = rest.get(at + 1).filter(|_| value.is_empty()) {
            check_no_space_after_colon(command, name, next)?;
        }
        given.push((name, value));
    }
    given.extend(free);
    request(command, given, origin)
}

/// Refuses `name: value`, which the tokenizer reads as an empty `name:` and then a token of its
/// own: the next token is a value when it is no option (`cluster: logs`), or when it looks like
/// one but `name` is an option and the next token's name none (`at: 03:00Z`, `node: fe80::14`).
fn check_no_space_after_colon(
    command: &CommandSpec,
    name: &str,
    next: &str,
) -> Result<(), ParseError> {
    let split = match next.split_once(':') {
        None => !name.is_empty(),
        Some((next_name, _)) => {
            option_named(command, name).is_some()
                && option_named(command, next_name).is_none()
                && !(command.open && ParamName::parse(&next_name.to_ascii_lowercase()).is_ok())
        }
    };
    if !split {
        return Ok(());
    }
    let option = option_named(command, name).map_or_else(|| visible(name, 32), |o| o.name.into());
    let value = visible(next, 40);
    let fixed = if next.contains(char::is_whitespace) {
        format!("{option}:\"{value}\"")
    } else {
        format!("{option}:{value}")
    };
    Err(ParseError::SpaceAfterColon { option, fixed })
}

/// A free-text option's name and its value.
type FreeText<'a> = (&'static str, &'a str);

/// Splits off the free-text option of the line's command (see [`CommandSpec::free_text`]):
/// from where `name:` starts a word outside quotes, the rest of the line is its value. A value
/// that starts with a quote is quoted whole (as the canonical text of a request writes it).
fn split_free_text(line: &str) -> Result<(&str, Option<FreeText<'_>>), ParseError> {
    let mut words = line.split_whitespace();
    let group = words.next().and_then(|w| w.strip_prefix('/'));
    let sub = words.next();
    let Some(name) = group
        .and_then(|group| lookup(group, sub))
        .and_then(|(command, _)| command.free_text())
    else {
        return Ok((line, None));
    };
    let mut in_quotes = false;
    let mut word_start = true;
    for (at, ch) in line.char_indices() {
        if word_start && !in_quotes {
            let value = line
                .get(at..at + name.len())
                .filter(|typed| typed.eq_ignore_ascii_case(name))
                .and_then(|_| line.get(at + name.len()..))
                .and_then(|rest| rest.strip_prefix(':'));
            if let Some(value) = value {
                return Ok((&line[..at], Some((name, unquoted(value.trim())?))));
            }
        }
        in_quotes ^= ch == '"';
        word_start = ch.is_whitespace();
    }
    Ok((line, None))
}

/// `"a b"` as `a b`; a value that opens a quote must end with it.
fn unquoted(value: &str) -> Result<&str, ParseError> {
    match value.strip_prefix('"') {
        None => Ok(value),
        Some(rest) => rest.strip_suffix('"').ok_or(ParseError::UnclosedQuote),
    }
}

/// The request of `command` from its options, whether parsed from a console line or received
/// already split (Discord): the same checks, the same errors.
pub fn request<'a>(
    command: &'static CommandSpec,
    given: impl IntoIterator<Item = (&'a str, &'a str)>,
    origin: Origin,
) -> Result<Request, ParseError> {
    if command.reach == Reach::Demo && origin != Origin::Demo {
        return Err(ParseError::UnknownCommand {
            typed: command.path(),
            hint: "type /help for the list".into(),
        });
    }
    let args = Args::new(command, given)?;
    (command.build)(&args)
}

/// Finds the command named by the leading words; the rest of the tokens are its options.
fn find_command<'t>(
    group: &str,
    rest: &'t [String],
    origin: Origin,
) -> Result<(&'static CommandSpec, &'t [String]), ParseError> {
    let sub = rest.first().map(String::as_str);
    let (command, words) =
        lookup(group, sub).ok_or_else(|| suggest::unknown_command(group, sub, origin))?;
    Ok((command, rest.get(words..).unwrap_or_default()))
}

/// The command of `/group` (a group of one command) or `/group sub`, ASCII case ignored, and
/// how many words after the group its path takes.
fn lookup(group: &str, sub: Option<&str>) -> Option<(&'static CommandSpec, usize)> {
    catalogue::commands()
        .filter(|c| c.group.eq_ignore_ascii_case(group))
        .find_map(|c| match c.sub {
            None => Some((c, 0)),
            Some(name) => sub
                .filter(|typed| typed.eq_ignore_ascii_case(name))
                .map(|_| (c, 1)),
        })
}

/// Splits on white space; `name:"a b"` keeps its spaces and loses its quotes.
fn tokenize(line: &str) -> Result<Vec<String>, ParseError> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut in_quotes = false;
    for ch in line.chars() {
        match ch {
            '"' => in_quotes = !in_quotes,
            c if c.is_whitespace() && !in_quotes => {
                if !current.is_empty() {
                    tokens.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if in_quotes {
        return Err(ParseError::UnclosedQuote);
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    Ok(tokens)
}

/// Looks a command up by its path words, for front ends that get the path already split.
pub fn command_by_path(group: &str, sub: Option<&str>) -> Option<&'static CommandSpec> {
    catalogue::commands().find(|c| c.group == group && c.sub == sub)
}

mod suggest;

#[cfg(test)]
mod tests;
