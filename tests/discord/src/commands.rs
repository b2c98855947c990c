//! Application commands: Discord's validation of a bulk overwrite, and storing the result.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::options::options_of;
use crate::rest::Reply;
use crate::rules::{Check, Invalid, fail, items, join, length, text};
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
    counts(list)?;
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
        if kind == 4 {
            fail(
                &join(&p, "type"),
                "APPLICATION_COMMAND_TYPE_INVALID",
                "A primary entry point command cannot be a guild command",
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

/// How many commands of each type a guild may have: 100 chat-input, 15 user and 15 message
/// commands (`interactions/application-commands.mdx`, "Registering a Command"). Discord may
/// answer this with `30032 Maximum number of application commands reached`; the fake answers
/// 50035 at the list, as for the other limits of the overwrite.
fn counts(list: &[Value]) -> Check {
    for (kind, max, what) in [(1, 100, "chat input"), (2, 15, "user"), (3, 15, "message")] {
        let n = list
            .iter()
            .filter(|c| c.get("type").and_then(Value::as_u64).unwrap_or(1) == kind)
            .count();
        if n > max {
            fail(
                "",
                "APPLICATION_COMMANDS_TOO_MANY",
                format!("At most {max} {what} commands, got {n}"),
            )?;
        }
    }
    Ok(())
}

/// A chat-input name: 1-32 lowercase letters, digits, `-` and `_`.
pub(crate) fn chat_name(v: &Value, path: &str) -> Result<usize, Invalid> {
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
