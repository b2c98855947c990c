//! Application commands: Discord's validation of a bulk overwrite, and storing the result.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::rest::Reply;
use crate::rules::{Check, Invalid, at_most, fail, items, join, length, text};
use crate::state::Shared;

pub(crate) fn put(s: &Shared, body: &Value) -> Reply {
    if let Err(invalid) = validate(body) {
        s.lock().violation(format!(
            "invalid commands: {}: {}",
            invalid.path, invalid.message
        ));
        return Reply::invalid(&invalid);
    }
    let cfg = &s.cfg;
    let mut inner = s.lock();
    let old = std::mem::take(&mut inner.commands);
    let mut stored = Vec::new();
    for cmd in body.as_array().map_or(&[][..], Vec::as_slice) {
        let kind = cmd.get("type").and_then(Value::as_u64).unwrap_or(1);
        let name = cmd.get("name").cloned().unwrap_or(Value::Null);
        let kept = old.iter().find(|c| {
            c.get("name") == Some(&name) && c.get("type").and_then(Value::as_u64) == Some(kind)
        });
        let id = kept
            .and_then(|c| c.get("id").cloned())
            .unwrap_or_else(|| json!(s.snowflake().to_string()));
        let mut c = cmd.as_object().cloned().unwrap_or_default();
        c.insert("id".into(), id);
        c.insert("type".into(), json!(kind));
        c.insert(
            "application_id".into(),
            json!(cfg.application_id.to_string()),
        );
        c.insert("guild_id".into(), json!(cfg.guild_id.to_string()));
        c.insert("version".into(), json!(s.snowflake().to_string()));
        c.entry("description").or_insert(json!(""));
        c.entry("default_member_permissions").or_insert(Value::Null);
        c.entry("nsfw").or_insert(json!(false));
        c.entry("integration_types").or_insert(json!([0]));
        c.entry("contexts").or_insert(Value::Null);
        stored.push(Value::Object(c));
    }
    inner.commands.clone_from(&stored);
    Reply::ok(Value::Array(stored))
}

/// A bulk overwrite of application commands.
pub(crate) fn validate(body: &Value) -> Check {
    let Some(list) = body.as_array() else {
        return fail(
            "",
            "BASE_TYPE_ARRAY",
            "Only iterables may be used in a ListType",
        );
    };
    at_most(list, "", 110)?;
    let mut names = HashSet::new();
    for (i, cmd) in list.iter().enumerate() {
        let p = i.to_string();
        let kind = cmd.get("type").and_then(Value::as_u64).unwrap_or(1);
        if !(1..=4).contains(&kind) {
            fail(
                &join(&p, "type"),
                "BASE_TYPE_CHOICES",
                "Value must be one of {1, 2, 3, 4}.",
            )?;
        }
        let name = text(cmd, "name").unwrap_or_default();
        if !names.insert((kind, name.to_owned())) {
            fail(
                &join(&p, "name"),
                "APPLICATION_COMMANDS_DUPLICATE_NAME",
                format!("Application command names must be unique: {name}"),
            )?;
        }
        let mut total = if kind == 1 {
            chat_name(cmd, &p)? + length(cmd, &p, "description", 1, 100)?
        } else {
            length(cmd, &p, "description", 0, 0)?;
            length(cmd, &p, "name", 1, 32)?
        };
        let options = items(cmd, "options");
        if kind != 1 && !options.is_empty() {
            fail(
                &join(&p, "options"),
                "BASE_TYPE_MAX_LENGTH",
                "Must be 0 or fewer in length.",
            )?;
        }
        total += options_of(options, &join(&p, "options"), 0)?;
        if total > 4000 {
            fail(
                &p,
                "APPLICATION_COMMAND_TOO_LARGE",
                "Command exceeds maximum size (4000)",
            )?;
        }
    }
    Ok(())
}

/// A chat-input name: 1-32 lowercase letters, digits, `-` and `_`.
fn chat_name(v: &Value, path: &str) -> Result<usize, Invalid> {
    let n = length(v, path, "name", 1, 32)?;
    let name = text(v, "name").unwrap_or_default();
    let ok = name
        .chars()
        .all(|c| c == '-' || c == '_' || (c.is_alphanumeric() && !c.is_uppercase()));
    if !ok {
        fail(
            &join(path, "name"),
            "APPLICATION_COMMAND_INVALID_NAME",
            format!("Command name is invalid: {name}"),
        )?;
    }
    Ok(n)
}

/// Options of a command (depth 0), a subcommand group (1) or a subcommand (2); returns their size.
fn options_of(options: &[Value], path: &str, depth: u8) -> Result<usize, Invalid> {
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
        if c.get("value").is_some_and(Value::is_string) {
            total += length(c, &p, "value", 1, 100)?;
        }
    }
    Ok(total)
}
