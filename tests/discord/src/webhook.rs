//! The interaction webhook (`/webhooks/{app}/{token}...`): follow-ups, and reading, editing and
//! deleting `@original` and follow-up messages, while the interaction token lives.

use serde_json::Value;

use crate::interactions::{flags, said_in, text_of, unknown_webhook};
use crate::mentions;
use crate::payloads::{self, EPHEMERAL, NewMessage};
use crate::rest::{Reply, id_is, unknown_message};
use crate::rules;
use crate::state::{Inner, Interaction, Shared};

/// The live interaction a webhook token belongs to, or the answer for a dead one.
fn by_token(s: &Shared, inner: &mut Inner, app: &str, token: &str) -> Result<u64, Reply> {
    let found = inner
        .interactions
        .iter()
        .find(|(_, ix)| ix.token == token)
        .map(|(id, ix)| (*id, s.since(ix.dispatched), ix.response.is_some()));
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
        mentions::apply(
            &mut inner,
            &s.cfg,
            &said_in(channel, mid, false),
            body,
            &mut next,
        );
        if let Some(stored) = inner.message_mut(channel, mid) {
            stored.replace(next.clone());
        }
        return Reply::ok(next);
    }
    let mid = s.snowflake();
    let mut message = payloads::message(
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
    mentions::apply(
        &mut inner,
        &s.cfg,
        &said_in(channel, mid, false),
        body,
        &mut message,
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
    let (channel, original, followups, ephemeral, thinking) = match interaction(&mut inner, id) {
        Ok(ix) => (
            ix.channel_id,
            ix.original,
            ix.followup_ids.clone(),
            ix.response.as_ref().is_some_and(|r| r.ephemeral),
            ix.thinking,
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
            if inner.delete_message(s.cfg.guild_id, channel, target) {
                Reply::no_content()
            } else {
                unknown_message()
            }
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
            // Filling in a deferred response's "thinking" message is its first content.
            let edit = !(is_original && thinking);
            let said = said_in(channel, target, edit);
            mentions::apply(&mut inner, &s.cfg, &said, body, &mut next);
            if let Some(stored) = inner.message_mut(channel, target) {
                stored.replace(next.clone());
            }
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
