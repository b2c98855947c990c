//! What a Slack message looks like: the `text` and `blocks` arguments of `chat.postMessage` and
//! `chat.update`. Everything shown is escaped, so that a mention an operator typed into a
//! command, a runbook or a reason is shown as text and never pings anyone, and cut to Slack's
//! limits, so that no message is refused for its size.

use opsbot_commands::button::ApprovalButton;
use opsbot_commands::render::{ApprovalButtons, ProgressView};
use serde_json::{Map, Value, json};

/// A message's `text`: Slack refuses a longer one (`msg_too_long`).
const MAX_TEXT: usize = 40_000;
/// A section's text (Block Kit's limit; a longer one is `invalid_blocks`).
const MAX_SECTION: usize = 3000;
/// The text of all of a message's sections. Slack also refuses blocks beyond an undocumented
/// total (`msg_blocks_too_long`, reported at about 13,000 characters); this leaves room for the
/// JSON around the text, and keeps the sections far below the 50 blocks a message may hold.
const MAX_SECTIONS_TEXT: usize = 10_000;
/// What a cut text ends with: the words Discord's messages use (`render::fit`).
const CUT: &str = "\n… (cut to fit; /run status shows the rest)";

/// Slack's escaping (api.slack.com/reference/surfaces/formatting#escaping): with `<` and `>`
/// escaped, `<!here>`, `<@U…>` and the like are text, not mentions, and `&` is escaped first so
/// that a literal `&lt;` stays what it was.
pub(super) fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            c => escaped.push(c),
        }
    }
    escaped
}

/// A run's progress message: its text, then the plan while it waits, in sections, and under
/// them the Approve and Reject buttons while the plan waits for a decision. The fallback
/// `text`, which notifications show, is the progress text alone.
pub(super) fn progress(view: &ProgressView) -> Map<String, Value> {
    let mut shown = escape(&view.text);
    if let Some(plan) = &view.plan {
        shown.push_str("\n\n");
        shown.push_str(&escape(plan));
    }
    let mut blocks: Vec<Value> = pieces(&fit(shown, MAX_SECTIONS_TEXT))
        .into_iter()
        .enumerate()
        .map(|(i, text)| section(i, text))
        .collect();
    blocks.extend(view.buttons.as_ref().map(decision));
    let mut message = plain(&view.text);
    message.insert("blocks".to_owned(), Value::Array(blocks));
    message.insert("metadata".to_owned(), metadata(&view.message_key));
    message
}

/// The message metadata that names a run's message for good: what a restarted bot looks for
/// in the channel's history (Slack has no nonce to make a repeated post return the first).
fn metadata(key: &str) -> Value {
    serde_json::json!({ "event_type": METADATA_TYPE, "event_payload": { "key": key } })
}

/// The event type of a run's message metadata.
pub(super) const METADATA_TYPE: &str = "opsbot_progress";

/// Whether a message from `conversations.history` is the one posted for `key`.
pub(super) fn is_posted_for(message: &Value, key: &str) -> bool {
    let metadata = &message["metadata"];
    metadata["event_type"] == METADATA_TYPE && metadata["event_payload"]["key"] == key
}

/// A message of text alone: a notice, an announcement.
pub(super) fn plain(text: &str) -> Map<String, Value> {
    let mut message = Map::new();
    message.insert("text".to_owned(), fit(escape(text), MAX_TEXT).into());
    message
}

/// `text` within `max` characters, saying so when it had to be cut.
fn fit(text: String, max: usize) -> String {
    if text.chars().count() <= max {
        return text;
    }
    let (kept, _) = split(&text, max.saturating_sub(CUT.chars().count()));
    format!("{kept}{CUT}")
}

/// The longest head of escaped `text` within `max` characters that does not end inside an
/// entity (`&am` would show as text), and the rest.
fn split(text: &str, max: usize) -> (&str, &str) {
    let end = text
        .char_indices()
        .nth(max)
        .map_or(text.len(), |(at, _)| at);
    let (head, _) = text.split_at(end);
    let end = match head.rfind('&') {
        Some(amp) if !head[amp..].contains(';') => amp,
        _ => end,
    };
    text.split_at(end)
}

/// `text` in pieces of at most a section's length, broken at line ends, and within a line only
/// when the line alone is longer than a section.
fn pieces(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut piece = String::new();
    let mut length = 0;
    for line in text.split('\n') {
        let mut line = line;
        while line.chars().count() > MAX_SECTION {
            let (head, rest) = split(line, MAX_SECTION);
            pieces.push(std::mem::take(&mut piece));
            pieces.push(head.to_owned());
            (line, length) = (rest, 0);
        }
        let wanted = line.chars().count();
        if length > 0 && length + 1 + wanted > MAX_SECTION {
            pieces.push(std::mem::take(&mut piece));
            length = 0;
        }
        if length > 0 {
            piece.push('\n');
            length += 1;
        }
        piece.push_str(line);
        length += wanted;
    }
    pieces.push(piece);
    // Slack refuses a section without text; blank lines between two pieces show as the gap.
    pieces.retain(|piece| !piece.trim().is_empty());
    pieces
}

/// A section of mrkdwn: bold and code show, but `verbatim` keeps Slack from turning bare names
/// and URLs into links or mentions of its own accord.
fn section(index: usize, text: String) -> Value {
    json!({
        "type": "section",
        "block_id": format!("text-{index}"),
        "text": {"type": "mrkdwn", "text": text, "verbatim": true},
    })
}

/// The buttons of a plan that waits for a decision. Slack cannot show a disabled button, so a
/// decided plan says so instead, and its buttons are gone.
fn decision(buttons: &ApprovalButtons) -> Value {
    if !buttons.enabled {
        let decided = format!(
            "The plan is decided; its {} and {} buttons are gone.",
            buttons.approve.decision.label(),
            buttons.reject.decision.label()
        );
        return json!({
            "type": "context",
            "block_id": "decided",
            "elements": [{"type": "plain_text", "text": decided}],
        });
    }
    json!({
        "type": "actions",
        "block_id": "decision",
        "elements": [
            button(&buttons.approve, "primary"),
            button(&buttons.reject, "danger"),
        ],
    })
}

/// A button whose `action_id` (what a press reports) and `value` are the button's own id, read
/// back with [`ApprovalButton::parse`].
fn button(button: &ApprovalButton, style: &str) -> Value {
    let id = button.to_string();
    json!({
        "type": "button",
        "action_id": id,
        "value": id,
        "style": style,
        "text": {"type": "plain_text", "text": button.decision.label()},
    })
}

#[cfg(test)]
mod tests;
