//! Interaction responses (`/interactions/{id}/{token}/callback`), and what they share with the
//! interaction webhook (`webhook.rs`).

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::mentions::{self, Source, Target};
use crate::payloads::{self, EPHEMERAL, LOADING, NewMessage};
use crate::rest::{Reply, unknown_message};
use crate::rules;
use crate::state::{Response, Shared};

fn unknown_interaction() -> Reply {
    Reply::error(StatusCode::NOT_FOUND, 10062, "Unknown interaction")
}

pub(crate) fn unknown_webhook() -> Reply {
    Reply::error(StatusCode::NOT_FOUND, 10015, "Unknown Webhook")
}

pub(crate) fn flags(v: &Value) -> u64 {
    v.get("flags").and_then(Value::as_u64).unwrap_or(0)
}

/// Text of a message body: its content, else its first embed's description or title.
pub(crate) fn text_of(body: &Value) -> String {
    let content = body.get("content").and_then(Value::as_str).unwrap_or("");
    if !content.is_empty() {
        return content.to_owned();
    }
    let embed = body.get("embeds").and_then(|e| e.get(0));
    ["description", "title"]
        .iter()
        .find_map(|k| embed.and_then(|e| e.get(*k)).and_then(Value::as_str))
        .unwrap_or("")
        .to_owned()
}

/// A message an interaction's response or webhook created or edited, for [`mentions::apply`].
pub(crate) fn said_in(channel: u64, message: u64, edit: bool) -> Target {
    Target {
        channel,
        message,
        source: Source::Interaction,
        edit,
    }
}

/// Response types each interaction type accepts.
fn allowed(interaction: u8, response: u8) -> bool {
    match interaction {
        2 => matches!(response, 4 | 5 | 9),
        3 => matches!(response, 4..=7 | 9),
        4 => response == 8,
        _ => false,
    }
}

pub(crate) fn callback(s: &Shared, id: &str, token: &str, body: &Value) -> Reply {
    let mut inner = s.lock();
    let Some(id) = id
        .parse::<u64>()
        .ok()
        .filter(|id| inner.interactions.contains_key(id))
    else {
        inner.violation(format!("response to unknown interaction {id}"));
        return unknown_interaction();
    };
    let (ix_kind, elapsed, answered, token_ok) = match inner.interactions.get(&id) {
        Some(ix) => (
            ix.kind,
            s.since(ix.dispatched),
            ix.response.is_some(),
            ix.token == token,
        ),
        None => return unknown_interaction(),
    };
    if !token_ok {
        inner.violation(format!("response to interaction {id} with a wrong token"));
        return unknown_interaction();
    }
    if answered {
        inner.violation(format!("second response to interaction {id}"));
        return Reply::error(
            StatusCode::BAD_REQUEST,
            40060,
            "Interaction has already been acknowledged.",
        );
    }
    if elapsed > s.cfg.first_response_deadline {
        inner.violation(format!(
            "late first response to interaction {id}: {elapsed:?} after dispatch (limit {:?})",
            s.cfg.first_response_deadline
        ));
        return unknown_interaction();
    }
    let kind = body
        .get("type")
        .and_then(Value::as_u64)
        .and_then(|k| u8::try_from(k).ok())
        .unwrap_or(0);
    let data = body
        .get("data")
        .filter(|d| !d.is_null())
        .cloned()
        .unwrap_or_else(|| json!({}));
    let checked = if !allowed(ix_kind, kind) {
        Err(rules::Invalid {
            path: "type".into(),
            code: "INTERACTION_RESPONSE_TYPE_INVALID",
            message: format!(
                "Response type {kind} is not valid for an interaction of type {ix_kind}"
            ),
        })
    } else {
        match kind {
            4 | 7 => rules::message(&data, "data"),
            8 => rules::autocomplete(&data),
            9 => rules::modal(&data),
            _ => Ok(()),
        }
    };
    if let Err(invalid) = checked {
        inner.violation(format!(
            "response to interaction {id}: {}: {}",
            invalid.path, invalid.message
        ));
        return Reply::invalid(&invalid);
    }
    if kind == 4 && rules::is_empty(&data) {
        inner.violation(format!("empty response to interaction {id}"));
        return Reply::empty_message();
    }
    let Some(ix) = inner.interactions.get(&id) else {
        return unknown_interaction();
    };
    let (channel, source) = (ix.channel_id, ix.source_message);
    let ephemeral_asked = flags(&data) & EPHEMERAL != 0;
    let (original, ephemeral, thinking) = match kind {
        4 | 5 => {
            let mid = s.snowflake();
            let server_flags =
                if ephemeral_asked { EPHEMERAL } else { 0 } | if kind == 5 { LOADING } else { 0 };
            let body = if kind == 5 { json!({}) } else { data.clone() };
            let mut message = payloads::message(
                &s.cfg,
                &NewMessage {
                    id: mid,
                    channel_id: channel,
                    body: &body,
                    kind: if ix_kind == 2 { 20 } else { 0 },
                    from_interaction: true,
                    server_flags,
                },
            );
            let target = said_in(channel, mid, false);
            mentions::apply(&mut inner, &s.cfg, &target, &body, &mut message);
            inner.store_message(channel, mid, message);
            (Some(mid), ephemeral_asked, kind == 5)
        }
        6 | 7 => {
            let source_ephemeral = source
                .and_then(|m| inner.message_mut(channel, m))
                .is_some_and(|m| flags(&m.current) & EPHEMERAL != 0);
            if kind == 7 {
                // The message the component sits on may have been deleted since.
                let Some((mid, stored)) =
                    source.and_then(|m| Some((m, inner.message_mut(channel, m)?)))
                else {
                    return unknown_message();
                };
                let mut next = stored.current.clone();
                payloads::apply_edit(&mut next, &data);
                let target = said_in(channel, mid, true);
                mentions::apply(&mut inner, &s.cfg, &target, &data, &mut next);
                if let Some(stored) = inner.message_mut(channel, mid) {
                    stored.replace(next);
                }
            }
            (source, source_ephemeral, false)
        }
        _ => (None, false, false),
    };
    inner.latencies.push(elapsed);
    if let Some(ix) = inner.interactions.get_mut(&id) {
        if matches!(kind, 4 | 7) {
            ix.said(text_of(&data), ephemeral);
        }
        ix.response = Some(Response {
            kind,
            data,
            ephemeral,
            at: elapsed,
        });
        ix.original = original;
        ix.thinking = thinking;
    }
    Reply::no_content()
}
