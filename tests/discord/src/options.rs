//! The options of an application command: nesting, names, order, choices, and the bounds of
//! their values and lengths.
//!
//! Relied on: `interactions/application-commands.mdx` ("Application Command Option Structure"
//! and "Option Type"): `min_length` (0-6000) and `max_length` (1-6000) for string options only;
//! `min_value`/`max_value` for integer and number options only, of the option's type; integers
//! between -2^53+1 and 2^53-1, numbers between -2^53 and 2^53; `autocomplete` for string,
//! integer and number options, never with `choices`; at most 25 choices, each named in 1-100
//! characters, with a value of the option's type (a string of at most 100 characters). A
//! minimum above its maximum is refused too: Discord once took one (discord-api-docs #5149,
//! filed as a bug), which leaves an option nobody can fill. The `code` strings of these
//! errors, where the fake could not find Discord's, are the fake's own; the status, 50035 and
//! the path are Discord's.

use std::collections::HashSet;

use serde_json::Value;

use crate::commands::chat_name;
use crate::rules::{Check, Invalid, at_most, fail, items, join, length, text};

/// 2^53 - 1: the largest integer an INTEGER option (or its bounds and choices) may hold.
const MAX_INTEGER: f64 = 9_007_199_254_740_991.0;
/// 2^53: the largest magnitude of a NUMBER option.
const MAX_NUMBER: f64 = 9_007_199_254_740_992.0;

/// A field that is there and not `null` (serenity sends `null` for every bound it lacks).
fn present<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|v| !v.is_null())
}

/// Whether `v` is a value of an integer (4) or number (10) option.
fn of_type(v: &Value, kind: u64) -> bool {
    let Value::Number(n) = v else {
        return false;
    };
    let integer = n.is_i64() || n.is_u64();
    let limit = if kind == 4 { MAX_INTEGER } else { MAX_NUMBER };
    (kind == 10 || integer) && n.as_f64().is_some_and(|x| x.abs() <= limit)
}

fn what(kind: u64) -> &'static str {
    match kind {
        3 => "a string",
        4 => "an integer between -2^53+1 and 2^53-1",
        _ => "a number between -2^53 and 2^53",
    }
}

/// `min_length` and `max_length`: string options only, within 0-6000 and 1-6000, in order.
fn lengths(o: &Value, path: &str, kind: u64) -> Check {
    let mut got = [None, None];
    for (slot, (key, low)) in [("min_length", 0), ("max_length", 1)]
        .into_iter()
        .enumerate()
    {
        let Some(v) = present(o, key) else {
            continue;
        };
        let p = join(path, key);
        if kind != 3 {
            fail(
                &p,
                "APPLICATION_COMMAND_OPTION_LENGTH_NOT_ALLOWED",
                format!("{key} is only allowed on string options"),
            )?;
        }
        let Some(n) = v.as_i64() else {
            return fail(
                &p,
                "NUMBER_TYPE_COERCE",
                format!("Value \"{v}\" is not int."),
            );
        };
        if n < low {
            fail(
                &p,
                "NUMBER_TYPE_MIN",
                format!("int value should be greater than or equal to {low}."),
            )?;
        }
        if n > 6000 {
            fail(
                &p,
                "NUMBER_TYPE_MAX",
                "int value should be less than or equal to 6000.",
            )?;
        }
        got[slot] = Some(n);
    }
    if let [Some(min), Some(max)] = got {
        if min > max {
            fail(
                &join(path, "min_length"),
                "APPLICATION_COMMAND_OPTION_LENGTH_RANGE_INVALID",
                "min_length must be less than or equal to max_length",
            )?;
        }
    }
    Ok(())
}

/// `min_value` and `max_value`: integer and number options only, of the option's type, in order.
fn values(o: &Value, path: &str, kind: u64) -> Check {
    let mut got = [None, None];
    for (slot, key) in ["min_value", "max_value"].into_iter().enumerate() {
        let Some(v) = present(o, key) else {
            continue;
        };
        let p = join(path, key);
        if !matches!(kind, 4 | 10) {
            fail(
                &p,
                "APPLICATION_COMMAND_OPTION_VALUE_NOT_ALLOWED",
                format!("{key} is only allowed on integer and number options"),
            )?;
        }
        if !of_type(v, kind) {
            fail(
                &p,
                "APPLICATION_COMMAND_OPTION_VALUE_INVALID",
                format!("{key} must be {}", what(kind)),
            )?;
        }
        got[slot] = v.as_f64();
    }
    if let [Some(min), Some(max)] = got {
        if min > max {
            fail(
                &join(path, "min_value"),
                "APPLICATION_COMMAND_OPTION_VALUE_RANGE_INVALID",
                "min_value must be less than or equal to max_value",
            )?;
        }
    }
    Ok(())
}

/// Options of a command (depth 0), a subcommand group (1) or a subcommand (2); returns their size.
pub(crate) fn options_of(options: &[Value], path: &str, depth: u8) -> Result<usize, Invalid> {
    at_most(options, path, 25)?;
    let mut total = 0;
    let mut names = HashSet::new();
    let mut seen_optional = false;
    let nested = |o: &Value| matches!(o.get("type").and_then(Value::as_u64), Some(1 | 2));
    if options.iter().any(nested) && !options.iter().all(nested) {
        fail(
            path,
            "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
            "Sub-command and sub-command group option types are mutually exclusive to all other types",
        )?;
    }
    for (i, o) in options.iter().enumerate() {
        let p = join(path, i);
        let kind = o.get("type").and_then(Value::as_u64).unwrap_or(0);
        if !(1..=11).contains(&kind) {
            fail(
                &join(&p, "type"),
                "BASE_TYPE_CHOICES",
                "Value must be one of {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}.",
            )?;
        }
        total += chat_name(o, &p)? + length(o, &p, "description", 1, 100)?;
        if !names.insert(text(o, "name").unwrap_or_default().to_owned()) {
            fail(
                &join(&p, "name"),
                "APPLICATION_COMMAND_OPTIONS_NAME_ALREADY_EXISTS",
                "Option names must be unique",
            )?;
        }
        let allowed = match (kind, depth) {
            (2, 0) | (1, 0 | 1) => true,
            (1 | 2, _) => false,
            _ => depth == 2 || !options.iter().any(nested),
        };
        if !allowed {
            fail(
                &join(&p, "type"),
                "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
                "This option type cannot be nested here",
            )?;
        }
        let children = items(o, "options");
        match kind {
            1 => total += options_of(children, &join(&p, "options"), 2)?,
            2 => {
                if children
                    .iter()
                    .any(|c| c.get("type").and_then(Value::as_u64) != Some(1))
                {
                    fail(
                        &join(&p, "options"),
                        "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
                        "A sub-command group holds sub-commands only",
                    )?;
                }
                total += options_of(children, &join(&p, "options"), 1)?;
            }
            _ if !children.is_empty() => {
                fail(
                    &join(&p, "options"),
                    "BASE_TYPE_MAX_LENGTH",
                    "Must be 0 or fewer in length.",
                )?;
            }
            _ => {}
        }
        let required = o.get("required").and_then(Value::as_bool).unwrap_or(false);
        if required && seen_optional {
            fail(
                &join(&p, "required"),
                "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
                "Required options must be placed before non-required options",
            )?;
        }
        seen_optional |= !required && !matches!(kind, 1 | 2);
        lengths(o, &p, kind)?;
        values(o, &p, kind)?;
        if o.get("autocomplete").and_then(Value::as_bool) == Some(true)
            && !matches!(kind, 3 | 4 | 10)
        {
            fail(
                &join(&p, "autocomplete"),
                "APPLICATION_COMMAND_AUTOCOMPLETE_INVALID",
                "Only string, integer and number options can autocomplete",
            )?;
        }
        total += choices(o, &p, kind)?;
    }
    Ok(total)
}

fn choices(o: &Value, path: &str, kind: u64) -> Result<usize, Invalid> {
    let list = items(o, "choices");
    let cp = join(path, "choices");
    if list.is_empty() {
        return Ok(0);
    }
    if !matches!(kind, 3 | 4 | 10) {
        fail(
            &cp,
            "APPLICATION_COMMAND_OPTION_CHOICES_INVALID",
            "Only string, integer and number options have choices",
        )?;
    }
    if o.get("autocomplete").and_then(Value::as_bool) == Some(true) {
        fail(
            &join(path, "autocomplete"),
            "APPLICATION_COMMAND_AUTOCOMPLETE_INVALID",
            "Autocomplete cannot be set with choices",
        )?;
    }
    at_most(list, &cp, 25)?;
    let mut total = 0;
    for (i, c) in list.iter().enumerate() {
        let p = join(&cp, i);
        total += length(c, &p, "name", 1, 100)?;
        let vp = join(&p, "value");
        match (kind, present(c, "value")) {
            (_, None) => fail(&vp, "BASE_TYPE_REQUIRED", "This field is required")?,
            (3, Some(Value::String(_))) => total += length(c, &p, "value", 1, 100)?,
            (4 | 10, Some(v)) if of_type(v, kind) => {}
            _ => fail(
                &vp,
                "APPLICATION_COMMAND_OPTION_CHOICE_VALUE_INVALID",
                format!("A choice of this option must be {}", what(kind)),
            )?,
        }
    }
    Ok(total)
}
