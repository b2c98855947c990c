//! Interaction responses (`/interactions/{id}/{token}/callback`) and the interaction webhook
//! (`/webhooks/{app}/{token}...`: follow-ups and `@original`).

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::payloads::{self, EPHEMERAL, LOADING, NewMessage};
use crate::rest::{Reply, id_is, unknown_message};
use crate::rules;
use crate::state::{Inner, Interaction, Response, Shared};

fn unknown_interaction() -> Reply {
    Reply::error(StatusCode::NOT_FOUND, 10062, "Unknown interaction")
}

fn unknown_webhook() -> Reply {
    Reply::error(StatusCode::NOT_FOUND, 10015, "Unknown Webhook")
}

fn flags(v: &Value) -> u64 {
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
            ix.dispatched.elapsed(),
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
            let message = payloads::message(
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
            inner.store_message(channel, mid, message);
            (Some(mid), ephemeral_asked, kind == 5)
        }
        6 | 7 => {
            let source_ephemeral = source
                .and_then(|m| inner.message_mut(channel, m))
                .is_some_and(|m| flags(&m.current) & EPHEMERAL != 0);
            if kind == 7 {
                if let Some(stored) = source.and_then(|m| inner.message_mut(channel, m)) {
                    let mut next = stored.current.clone();
                    payloads::apply_edit(&mut next, &data);
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

/// The live interaction a webhook token belongs to, or the answer for a dead one.
fn by_token(s: &Shared, inner: &mut Inner, app: &str, token: &str) -> Result<u64, Reply> {
    let found = inner
        .interactions
        .iter()
        .find(|(_, ix)| ix.token == token)
        .map(|(id, ix)| (*id, ix.dispatched.elapsed(), ix.response.is_some()));
    let Some((id, age, answered)) = found.filter(|_| id_is(app, s.cfg.application_id)) else {
        inner.violation(format!(
            "interaction webhook call with an unknown application or token (app {app})"
        ));
        return Err(unknown_webhook());
    };
    if age > s.cfg.interaction_token_ttl {
        inner.violation(format!(
            "interaction webhook call for interaction {id} with an expired token ({age:?} old)"
        ));
        return Err(unknown_webhook());
    }
    if !answered {
        inner.violation(format!(
            "interaction webhook call for interaction {id} before its first response"
        ));
        return Err(unknown_webhook());
    }
    Ok(id)
}

fn interaction(inner: &mut Inner, id: u64) -> Result<&mut Interaction, Reply> {
    inner.interactions.get_mut(&id).ok_or_else(unknown_webhook)
}

pub(crate) fn followup(s: &Shared, app: &str, token: &str, body: &Value) -> Reply {
    let mut inner = s.lock();
    let id = match by_token(s, &mut inner, app, token) {
        Ok(id) => id,
        Err(reply) => return reply,
    };
    if let Err(invalid) = rules::message(body, "") {
        inner.violation(format!(
            "follow-up to interaction {id}: {}: {}",
            invalid.path, invalid.message
        ));
        return Reply::invalid(&invalid);
    }
    if rules::is_empty(body) {
        inner.violation(format!("empty follow-up to interaction {id}"));
        return Reply::empty_message();
    }
    let asked = flags(body) & EPHEMERAL != 0;
    let (channel, thinking, original, ephemeral, kind) = match interaction(&mut inner, id) {
        Ok(ix) => {
            ix.followups.push(body.clone());
            let r = ix.response.as_ref().is_some_and(|r| r.ephemeral);
            (ix.channel_id, ix.thinking, ix.original, r, ix.kind)
        }
        Err(reply) => return reply,
    };
    // After a deferred response, the first follow-up fills in the "thinking" message; its
    // ephemerality was fixed by the deferral.
    if let (true, Some(mid)) = (thinking, original) {
        if asked != ephemeral {
            inner.violation(format!(
                "follow-up to interaction {id} asks ephemeral={asked}, but the deferred response fixed ephemeral={ephemeral}"
            ));
        }
        if let Ok(ix) = interaction(&mut inner, id) {
            ix.thinking = false;
            ix.said(text_of(body), ephemeral);
        }
        let Some(stored) = inner.message_mut(channel, mid) else {
            return unknown_message();
        };
        let mut next = stored.current.clone();
        payloads::apply_edit(&mut next, body);
        payloads::clear_loading(&mut next);
        stored.replace(next.clone());
        return Reply::ok(next);
    }
    let mid = s.snowflake();
    let message = payloads::message(
        &s.cfg,
        &NewMessage {
            id: mid,
            channel_id: channel,
            body,
            kind: if kind == 2 { 20 } else { 0 },
            from_interaction: true,
            server_flags: if asked { EPHEMERAL } else { 0 },
        },
    );
    inner.store_message(channel, mid, message.clone());
    if let Ok(ix) = interaction(&mut inner, id) {
        ix.followup_ids.push(mid);
        ix.said(text_of(body), asked);
    }
    Reply::ok(message)
}

pub(crate) fn webhook_message(
    s: &Shared,
    method: &str,
    app: &str,
    token: &str,
    mid: &str,
    body: &Value,
) -> Reply {
    let mut inner = s.lock();
    let id = match by_token(s, &mut inner, app, token) {
        Ok(id) => id,
        Err(reply) => return reply,
    };
    let (channel, original, followups, ephemeral) = match interaction(&mut inner, id) {
        Ok(ix) => (
            ix.channel_id,
            ix.original,
            ix.followup_ids.clone(),
            ix.response.as_ref().is_some_and(|r| r.ephemeral),
        ),
        Err(reply) => return reply,
    };
    let target = if mid == "@original" {
        original
    } else {
        mid.parse::<u64>()
            .ok()
            .filter(|m| Some(*m) == original || followups.contains(m))
    };
    let Some(target) = target else {
        return unknown_message();
    };
    let is_original = Some(target) == original;
    match method {
        "GET" => inner
            .message_mut(channel, target)
            .map_or_else(unknown_message, |m| Reply::ok(m.current.clone())),
        "DELETE" => {
            if let Some(c) = inner.channels.get_mut(&channel) {
                c.messages.remove(&target);
            }
            Reply::no_content()
        }
        _ => {
            if let Err(invalid) = rules::message(body, "") {
                inner.violation(format!(
                    "edit for interaction {id}: {}: {}",
                    invalid.path, invalid.message
                ));
                return Reply::invalid(&invalid);
            }
            if is_original
                && body.get("flags").is_some()
                && (flags(body) & EPHEMERAL != 0) != ephemeral
            {
                inner.violation(format!(
                    "edit of @original of interaction {id} tries to change ephemeral (fixed at {ephemeral} by the first response)"
                ));
            }
            let Some(stored) = inner.message_mut(channel, target) else {
                return unknown_message();
            };
            let mut next = stored.current.clone();
            payloads::apply_edit(&mut next, body);
            payloads::clear_loading(&mut next);
            if rules::is_empty(&next) {
                inner.violation(format!(
                    "edit would leave message {target} of interaction {id} empty"
                ));
                return Reply::empty_message();
            }
            stored.replace(next.clone());
            if is_original {
                if let Ok(ix) = interaction(&mut inner, id) {
                    ix.original_edits.push(body.clone());
                    ix.thinking = false;
                    ix.said(text_of(body), ephemeral);
                }
            }
            Reply::ok(next)
        }
    }
}
