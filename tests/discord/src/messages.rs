//! Channel messages (bot token): create, get, edit, delete, and the per-channel rate limit.

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::mentions::{self, Source, Target};
use crate::nonces::{self, Earlier};
use crate::payloads::{self, NewMessage};
use crate::rest::{Limit, Reply, unknown_message};
use crate::state::{Inner, Shared};
use crate::{permissions, rules};

/// Counts one message create or edit against the channel's window, or answers 429.
fn take(s: &Shared, inner: &mut Inner, channel: u64) -> Result<Limit, Reply> {
    let cfg = &s.cfg;
    let now = s.now();
    let state = inner.channels.entry(channel).or_default();
    let (opened, count) = match state.window {
        Some((opened, count)) if now.duration_since(opened) < cfg.window => (opened, count),
        _ => (now, 0),
    };
    let reset_after = cfg.window.saturating_sub(now.duration_since(opened));
    let bucket = "80c17d2f203122d936070c88c8d10f33";
    if count >= cfg.edits_per_window {
        state.window = Some((opened, count));
        inner.rate_limited += 1;
        let retry = reset_after.max(Duration::from_millis(1));
        let body = json!({
            "message": "You are being rate limited.",
            "retry_after": (retry.as_secs_f64() * 1000.0).ceil() / 1000.0,
            "global": false,
            "code": 0,
        });
        let limit = Limit {
            limit: cfg.edits_per_window,
            remaining: 0,
            reset_after: retry,
            bucket,
            retry_after: Some(retry),
        };
        return Err(Reply {
            status: StatusCode::TOO_MANY_REQUESTS,
            body: Some(body),
            limit,
        });
    }
    state.window = Some((opened, count + 1));
    Ok(Limit {
        limit: cfg.edits_per_window,
        remaining: cfg.edits_per_window - count - 1,
        reset_after,
        bucket,
        retry_after: None,
    })
}

pub(crate) fn create(s: &Shared, channel: u64, body: &Value) -> Reply {
    let mut inner = s.lock();
    let limit = match take(s, &mut inner, channel) {
        Ok(limit) => limit,
        Err(too_many) => return too_many,
    };
    let bits = inner.bot_permissions(&s.cfg, channel);
    if let Err(denied) = permissions::create(bits, body) {
        tracing::debug!(
            channel,
            bits,
            "fake discord: message create refused: permissions"
        );
        return denied.with_limit(limit);
    }
    if let Err(invalid) = rules::message(body, "").and_then(|()| nonces::validate(body)) {
        inner.violation(format!(
            "message to channel {channel}: {}: {}",
            invalid.path, invalid.message
        ));
        return Reply::invalid(&invalid).with_limit(limit);
    }
    if rules::is_empty(body) {
        inner.violation(format!("empty message to channel {channel}"));
        return Reply::empty_message().with_limit(limit);
    }
    // `enforce_nonce`: a create repeated with the nonce of a recent message returns that
    // message instead of posting another (how a bot that crashed mid-post avoids duplicates).
    let nonce = nonces::key(body);
    if let Some(nonce) = nonce.as_ref().filter(|_| body["enforce_nonce"] == true) {
        match nonces::earlier(s, &inner, nonce) {
            Earlier::Live(earlier) => return Reply::ok(earlier).with_limit(limit),
            Earlier::Deleted => return unknown_message().with_limit(limit),
            Earlier::None => {}
        }
    }
    let id = s.snowflake();
    let mut message = payloads::message(
        &s.cfg,
        &NewMessage {
            id,
            channel_id: channel,
            body,
            kind: 0,
            from_interaction: false,
            server_flags: 0,
        },
    );
    let sent = body.get("nonce").filter(|n| !n.is_null());
    if let (Some(nonce), Some(object)) = (sent, message.as_object_mut()) {
        object.insert("nonce".to_owned(), nonce.clone());
    }
    let target = Target {
        channel,
        message: id,
        source: Source::Channel,
        edit: false,
    };
    mentions::apply(&mut inner, &s.cfg, &target, body, &mut message);
    if let Some(nonce) = nonce {
        nonces::remember(s, &mut inner, nonce, channel, id);
    }
    inner.store_message(channel, id, message.clone());
    Reply::ok(message).with_limit(limit)
}

pub(crate) fn existing(s: &Shared, method: &str, channel: u64, mid: &str, body: &Value) -> Reply {
    let mut inner = s.lock();
    let bits = inner.bot_permissions(&s.cfg, channel);
    let allowed = if method == "GET" {
        permissions::read(bits)
    } else {
        permissions::view(bits)
    };
    if let Err(denied) = allowed {
        return denied;
    }
    let Ok(mid) = mid.parse::<u64>() else {
        return unknown_message();
    };
    // Ephemeral messages exist only for their interaction's webhook.
    let visible = inner.message_mut(channel, mid).is_some_and(|m| {
        m.current.get("flags").and_then(Value::as_u64).unwrap_or(0) & payloads::EPHEMERAL == 0
    });
    if !visible {
        return unknown_message();
    }
    match method {
        "GET" => inner
            .message_mut(channel, mid)
            .map_or_else(unknown_message, |m| Reply::ok(m.current.clone())),
        "DELETE" => {
            inner.delete_message(s.cfg.guild_id, channel, mid);
            Reply::no_content()
        }
        _ => {
            let limit = match take(s, &mut inner, channel) {
                Ok(limit) => limit,
                Err(too_many) => return too_many,
            };
            if let Err(denied) = permissions::embeds(bits, body) {
                return denied.with_limit(limit);
            }
            if let Err(invalid) = rules::message(body, "") {
                inner.violation(format!(
                    "edit of message {mid}: {}: {}",
                    invalid.path, invalid.message
                ));
                return Reply::invalid(&invalid).with_limit(limit);
            }
            let Some(stored) = inner.message_mut(channel, mid) else {
                return unknown_message();
            };
            let mut next = stored.current.clone();
            payloads::apply_edit(&mut next, body);
            if rules::is_empty(&next) {
                inner.violation(format!("edit would leave message {mid} empty"));
                return Reply::empty_message().with_limit(limit);
            }
            let target = Target {
                channel,
                message: mid,
                source: Source::Channel,
                edit: true,
            };
            mentions::apply(&mut inner, &s.cfg, &target, body, &mut next);
            if let Some(stored) = inner.message_mut(channel, mid) {
                stored.replace(next.clone());
            }
            Reply::ok(next).with_limit(limit)
        }
    }
}
