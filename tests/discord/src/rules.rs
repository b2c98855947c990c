//! Discord's limits on what a client sends. A breach is answered with 400, code 50035.

use std::collections::HashSet;

use serde_json::{Value, json};

/// One broken rule: where in the body, Discord's error code, and its message.
#[derive(Debug)]
pub(crate) struct Invalid {
    pub(crate) path: String,
    pub(crate) code: &'static str,
    pub(crate) message: String,
}

impl Invalid {
    /// The `errors` object of Discord's 50035 body: the path as nested keys, then `_errors`.
    pub(crate) fn errors(&self) -> Value {
        let leaf = json!({"_errors": [{"code": self.code, "message": self.message}]});
        self.path
            .split('.')
            .filter(|s| !s.is_empty())
            .rev()
            .fold(leaf, |inner, key| json!({ key: inner }))
    }
}

pub(crate) type Check = Result<(), Invalid>;

pub(crate) fn fail(path: &str, code: &'static str, message: impl Into<String>) -> Check {
    Err(Invalid {
        path: path.to_owned(),
        code,
        message: message.into(),
    })
}

pub(crate) fn join(path: &str, key: impl std::fmt::Display) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

pub(crate) fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

pub(crate) fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn len(s: &str) -> usize {
    s.chars().count()
}

/// A string field between `min` and `max` characters; `None` when absent (and `min` is 0).
pub(crate) fn length(
    v: &Value,
    path: &str,
    key: &str,
    min: usize,
    max: usize,
) -> Result<usize, Invalid> {
    let n = text(v, key).map_or(0, len);
    if n == 0 && min > 0 {
        fail(
            &join(path, key),
            "BASE_TYPE_REQUIRED",
            "This field is required",
        )?;
    }
    if n > max || n < min {
        let message = if min == 0 {
            format!("Must be {max} or fewer in length.")
        } else {
            format!("Must be between {min} and {max} in length.")
        };
        let code = if n > max && min == 0 {
            "BASE_TYPE_MAX_LENGTH"
        } else {
            "BASE_TYPE_BAD_LENGTH"
        };
        fail(&join(path, key), code, message)?;
    }
    Ok(n)
}

pub(crate) fn at_most(list: &[Value], path: &str, max: usize) -> Check {
    if list.len() > max {
        return fail(
            path,
            "BASE_TYPE_MAX_LENGTH",
            format!("Must be {max} or fewer in length."),
        );
    }
    Ok(())
}

/// Content, embeds, components and `allowed_mentions` of a message a client creates or edits.
pub(crate) fn message(body: &Value, path: &str) -> Check {
    length(body, path, "content", 0, 2000)?;
    let embeds = items(body, "embeds");
    at_most(embeds, &join(path, "embeds"), 10)?;
    let mut total = 0;
    for (i, embed) in embeds.iter().enumerate() {
        let p = join(path, format!("embeds.{i}"));
        total += length(embed, &p, "title", 0, 256)?;
        total += length(embed, &p, "description", 0, 4096)?;
        let fields = items(embed, "fields");
        at_most(fields, &join(&p, "fields"), 25)?;
        for (j, field) in fields.iter().enumerate() {
            let fp = join(&p, format!("fields.{j}"));
            total += length(field, &fp, "name", 1, 256)?;
            total += length(field, &fp, "value", 1, 1024)?;
        }
        if let Some(footer) = embed.get("footer") {
            total += length(footer, &join(&p, "footer"), "text", 0, 2048)?;
        }
        if let Some(author) = embed.get("author") {
            total += length(author, &join(&p, "author"), "name", 0, 256)?;
        }
    }
    if total > 6000 {
        fail(
            &join(path, "embeds"),
            "MAX_EMBED_SIZE_EXCEEDED",
            "Embed size exceeds maximum size of 6000",
        )?;
    }
    components(body, path)?;
    crate::mentions::validate(body, path)
}

/// A message with nothing in it is refused (code 50006).
pub(crate) fn is_empty(body: &Value) -> bool {
    text(body, "content").is_none_or(str::is_empty)
        && items(body, "embeds").is_empty()
        && items(body, "components").is_empty()
        && items(body, "attachments").is_empty()
        && items(body, "sticker_ids").is_empty()
        && body.get("poll").is_none_or(Value::is_null)
}

fn components(body: &Value, path: &str) -> Check {
    let rows = items(body, "components");
    let path = join(path, "components");
    at_most(rows, &path, 5)?;
    let mut ids = HashSet::new();
    for (i, row) in rows.iter().enumerate() {
        let rp = join(&path, i);
        if row.get("type").and_then(Value::as_u64) != Some(1) {
            fail(
                &join(&rp, "type"),
                "UNION_TYPE_CHOICES",
                "Value of field \"type\" must be one of (1,).",
            )?;
        }
        let children = items(row, "components");
        let cp = join(&rp, "components");
        if children.is_empty() {
            fail(&cp, "BASE_TYPE_REQUIRED", "This field is required")?;
        }
        at_most(children, &cp, 5)?;
        for (j, child) in children.iter().enumerate() {
            let p = join(&cp, j);
            match child.get("type").and_then(Value::as_u64) {
                Some(2) => button(child, &p, &mut ids)?,
                Some(3 | 5..=8) => {
                    if children.len() > 1 {
                        fail(
                            &cp,
                            "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                            "The specified component exceeds the maximum width",
                        )?;
                    }
                    select(child, &p, &mut ids)?;
                }
                _ => fail(
                    &join(&p, "type"),
                    "UNION_TYPE_CHOICES",
                    "Value of field \"type\" must be one of (2, 3, 5, 6, 7, 8).",
                )?,
            }
        }
    }
    Ok(())
}

fn custom_id(v: &Value, path: &str, ids: &mut HashSet<String>) -> Check {
    length(v, path, "custom_id", 1, 100)?;
    let id = text(v, "custom_id").unwrap_or_default();
    if !ids.insert(id.to_owned()) {
        fail(
            &join(path, "custom_id"),
            "COMPONENT_CUSTOM_ID_DUPLICATED",
            "Component custom id cannot be duplicated",
        )?;
    }
    Ok(())
}

fn button(b: &Value, path: &str, ids: &mut HashSet<String>) -> Check {
    length(b, path, "label", 0, 80)?;
    match b.get("style").and_then(Value::as_u64) {
        Some(1..=4) => custom_id(b, path, ids),
        Some(5) if b.get("custom_id").is_some_and(|c| !c.is_null()) => fail(
            &join(path, "custom_id"),
            "BUTTON_COMPONENT_CUSTOM_ID_NOT_ALLOWED",
            "A custom id cannot be set on a link button",
        ),
        Some(5) => length(b, path, "url", 1, 512).map(drop),
        Some(6) => length(b, path, "sku_id", 1, 20).map(drop),
        _ => fail(
            &join(path, "style"),
            "BASE_TYPE_CHOICES",
            "Value must be one of {1, 2, 3, 4, 5, 6}.",
        ),
    }
}

fn select(s: &Value, path: &str, ids: &mut HashSet<String>) -> Check {
    custom_id(s, path, ids)?;
    length(s, path, "placeholder", 0, 150)?;
    for key in ["min_values", "max_values"] {
        if s.get(key).and_then(Value::as_u64).is_some_and(|n| n > 25) {
            fail(
                &join(path, key),
                "NUMBER_TYPE_MAX",
                "int value should be less than or equal to 25.",
            )?;
        }
    }
    if s.get("type").and_then(Value::as_u64) == Some(3) {
        let options = items(s, "options");
        let op = join(path, "options");
        if options.is_empty() {
            fail(&op, "BASE_TYPE_REQUIRED", "This field is required")?;
        }
        at_most(options, &op, 25)?;
        for (i, o) in options.iter().enumerate() {
            let p = join(&op, i);
            length(o, &p, "label", 1, 100)?;
            length(o, &p, "value", 1, 100)?;
            length(o, &p, "description", 0, 100)?;
        }
    }
    Ok(())
}

/// The data of an autocomplete result (response type 8).
pub(crate) fn autocomplete(data: &Value) -> Check {
    let choices = items(data, "choices");
    at_most(choices, "data.choices", 25)?;
    for (i, c) in choices.iter().enumerate() {
        let p = format!("data.choices.{i}");
        length(c, &p, "name", 1, 100)?;
        if c.get("value").is_some_and(Value::is_string) {
            length(c, &p, "value", 1, 100)?;
        }
    }
    Ok(())
}

/// The data of a modal (response type 9).
pub(crate) fn modal(data: &Value) -> Check {
    length(data, "data", "custom_id", 1, 100)?;
    length(data, "data", "title", 1, 45)?;
    let rows = items(data, "components");
    if rows.is_empty() {
        fail(
            "data.components",
            "BASE_TYPE_REQUIRED",
            "This field is required",
        )?;
    }
    at_most(rows, "data.components", 5)?;
    for (i, row) in rows.iter().enumerate() {
        let inputs = items(row, "components");
        let p = format!("data.components.{i}.components");
        if inputs.len() != 1 {
            fail(
                &p,
                "BASE_TYPE_BAD_LENGTH",
                "Must be between 1 and 1 in length.",
            )?;
        }
        for input in inputs {
            let ip = format!("{p}.0");
            length(input, &ip, "custom_id", 1, 100)?;
            length(input, &ip, "label", 1, 45)?;
            length(input, &ip, "value", 0, 4000)?;
            length(input, &ip, "placeholder", 0, 100)?;
        }
    }
    Ok(())
}
