//! The Block Kit checks behind `invalid_blocks` (api.slack.com/reference/block-kit/blocks), as
//! named limits. Slack checks much more; the fake checks what a chat-ops bot's messages use
//! (sections, headers, dividers, context, actions with buttons) and refuses unknown block types.

use std::collections::HashSet;

use serde_json::Value;

/// Blocks in one message.
pub(crate) const MAX_BLOCKS: usize = 50;
/// A section's `text`.
pub(crate) const MAX_SECTION_TEXT: usize = 3000;
/// A header's `plain_text`.
pub(crate) const MAX_HEADER_TEXT: usize = 150;
/// A section's `fields`.
pub(crate) const MAX_FIELDS: usize = 10;
/// Elements of an `actions` block.
pub(crate) const MAX_ACTIONS: usize = 25;
/// Elements of a `context` block.
pub(crate) const MAX_CONTEXT: usize = 10;
/// `block_id` and `action_id`.
pub(crate) const MAX_ID: usize = 255;
/// A button's visible text.
pub(crate) const MAX_BUTTON_TEXT: usize = 75;
/// A button's `value`.
pub(crate) const MAX_BUTTON_VALUE: usize = 2000;

/// Why blocks are refused (logged; Slack's answer is just `invalid_blocks`).
pub(crate) fn check(blocks: &[Value]) -> Result<(), String> {
    if blocks.len() > MAX_BLOCKS {
        return Err(format!("{} blocks, over {MAX_BLOCKS}", blocks.len()));
    }
    let mut block_ids = HashSet::new();
    for (i, block) in blocks.iter().enumerate() {
        let at = |why: &str| format!("block {i}: {why}");
        if let Some(id) = block.get("block_id") {
            let id = id.as_str().ok_or_else(|| at("block_id is not a string"))?;
            if id.is_empty() || id.chars().count() > MAX_ID || !block_ids.insert(id.to_owned()) {
                return Err(at("block_id empty, too long or repeated"));
            }
        }
        match block.get("type").and_then(Value::as_str) {
            Some("section") => section(block).map_err(|e| at(&e))?,
            Some("header") => {
                text_object(block.get("text"), MAX_HEADER_TEXT, false).map_err(|e| at(&e))?
            }
            Some("divider") => {}
            Some("context") => {
                let elements = array(block, "elements", MAX_CONTEXT).map_err(|e| at(&e))?;
                for e in elements {
                    if e.get("type").and_then(Value::as_str) != Some("image") {
                        text_object(Some(e), MAX_SECTION_TEXT, true).map_err(|e| at(&e))?;
                    }
                }
            }
            Some("actions") => {
                let elements = array(block, "elements", MAX_ACTIONS).map_err(|e| at(&e))?;
                let mut action_ids = HashSet::new();
                for e in elements {
                    element(e, &mut action_ids).map_err(|e| at(&e))?;
                }
            }
            Some("image" | "rich_text" | "input" | "file" | "video") => {}
            other => return Err(at(&format!("unknown block type {other:?}"))),
        }
    }
    Ok(())
}

fn section(block: &Value) -> Result<(), String> {
    let text = block.get("text");
    let fields = block.get("fields");
    if text.is_none() && fields.is_none() {
        return Err("a section needs text or fields".into());
    }
    if text.is_some() {
        text_object(text, MAX_SECTION_TEXT, true)?;
    }
    if fields.is_some() {
        for f in array(block, "fields", MAX_FIELDS)? {
            text_object(Some(f), 2000, true)?;
        }
    }
    if let Some(accessory) = block.get("accessory") {
        element(accessory, &mut HashSet::new())?;
    }
    Ok(())
}

fn array<'a>(block: &'a Value, key: &str, max: usize) -> Result<&'a Vec<Value>, String> {
    match block.get(key).and_then(Value::as_array) {
        Some(items) if !items.is_empty() && items.len() <= max => Ok(items),
        Some(items) => Err(format!("{key}: {} items, 1 to {max} allowed", items.len())),
        None => Err(format!("{key} missing or not an array")),
    }
}

/// `{"type": "plain_text" | "mrkdwn", "text": ...}`, non-empty and within `max` characters.
fn text_object(value: Option<&Value>, max: usize, mrkdwn_ok: bool) -> Result<(), String> {
    let value = value.ok_or("text missing")?;
    let kind = value.get("type").and_then(Value::as_str);
    let kind_ok = kind == Some("plain_text") || (mrkdwn_ok && kind == Some("mrkdwn"));
    if !kind_ok {
        return Err(format!("text object of type {kind:?}"));
    }
    let text = value
        .get("text")
        .and_then(Value::as_str)
        .ok_or("text not a string")?;
    let n = text.chars().count();
    if n == 0 || n > max {
        return Err(format!("text of {n} characters, 1 to {max} allowed"));
    }
    Ok(())
}

fn element(e: &Value, action_ids: &mut HashSet<String>) -> Result<(), String> {
    if let Some(id) = e.get("action_id") {
        let id = id.as_str().ok_or("action_id is not a string")?;
        if id.is_empty() || id.chars().count() > MAX_ID || !action_ids.insert(id.to_owned()) {
            return Err("action_id empty, too long or repeated".into());
        }
    }
    match e.get("type").and_then(Value::as_str) {
        Some("button") => {
            text_object(e.get("text"), MAX_BUTTON_TEXT, false)?;
            let value = e.get("value").and_then(Value::as_str).unwrap_or("");
            if value.chars().count() > MAX_BUTTON_VALUE {
                return Err("button value too long".into());
            }
            match e.get("style").and_then(Value::as_str) {
                None | Some("primary" | "danger") => Ok(()),
                Some(style) => Err(format!("button style {style:?}")),
            }
        }
        Some(
            "static_select"
            | "overflow"
            | "datepicker"
            | "timepicker"
            | "checkboxes"
            | "radio_buttons"
            | "image"
            | "users_select"
            | "conversations_select"
            | "channels_select"
            | "multi_static_select",
        ) => Ok(()),
        other => Err(format!("unknown element type {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_chat_ops_message_passes_and_mistakes_do_not() {
        let ok = [
            json!({"type": "header", "text": {"type": "plain_text", "text": "restart"}}),
            json!({"type": "section", "text": {"type": "mrkdwn", "text": "*logs*"}}),
            json!({"type": "actions", "elements": [
                {"type": "button", "action_id": "approve", "value": "r-1",
                 "style": "danger", "text": {"type": "plain_text", "text": "Approve"}}]}),
        ];
        assert_eq!(check(&ok), Ok(()));
        let header_mrkdwn = json!({"type": "header", "text": {"type": "mrkdwn", "text": "x"}});
        assert!(check(&[header_mrkdwn]).is_err());
        assert!(check(&[json!({"type": "section"})]).is_err());
        assert!(check(&[json!({"type": "banner"})]).is_err());
        let long = "x".repeat(MAX_SECTION_TEXT + 1);
        assert!(
            check(&[json!({"type": "section", "text": {"type": "mrkdwn", "text": long}})]).is_err()
        );
        assert!(check(&vec![json!({"type": "divider"}); MAX_BLOCKS + 1]).is_err());
    }
}
