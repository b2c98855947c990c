//! The `nonce` of a channel message create: its limits, and `enforce_nonce`.
//!
//! Relied on: `resources/message.mdx` (a nonce is an integer or a string of up to 25
//! characters; with `enforce_nonce` "if another message was created by the same author with the
//! same nonce" in "the past few minutes", that message is returned and none is created) and the
//! change log of 2024-02-12 ("deduped for the same sender within a few minutes"): the scope is
//! the author, not the channel. A client library's test quotes the 400 for a long nonce as
//! `nonce: BASE_TYPE_MAX_LENGTH "Must be 25 or fewer in length."`. From discord-api-docs #6647,
//! where Discord's engineer answered: a repeat after the earlier message was deleted is not
//! posted again but answered `10008 Unknown Message`, on purpose.

use serde_json::Value;

use crate::rules::{Check, fail, length};
use crate::state::{Inner, Shared};

/// A nonce must be an integer or a string of at most 25 characters.
pub(crate) fn validate(body: &Value) -> Check {
    match body.get("nonce") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(_)) => length(body, "", "nonce", 0, 25).map(drop),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(()),
        // Discord's code for this is not documented; the fake's is its own.
        Some(_) => fail(
            "nonce",
            "NONCE_TYPE_INVALID",
            "Nonce must be an integer or a string.",
        ),
    }
}

/// The nonce as the fake keys it (an integer by its decimal text).
pub(crate) fn key(body: &Value) -> Option<String> {
    match body.get("nonce")? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// What `enforce_nonce` finds for a nonce.
pub(crate) enum Earlier {
    /// No message of the bot's had it within the window: create one.
    None,
    /// The message that had it: return it.
    Live(Value),
    /// That message was deleted since: 404 Unknown Message.
    Deleted,
}

/// The bot's message that had this nonce within [`crate::FakeConfig::nonce_window`].
pub(crate) fn earlier(s: &Shared, inner: &Inner, nonce: &str) -> Earlier {
    let Some((channel, id, at)) = inner.nonces.get(nonce).copied() else {
        return Earlier::None;
    };
    if s.since(at) >= s.cfg.nonce_window {
        return Earlier::None;
    }
    let Some(c) = inner.channels.get(&channel) else {
        return Earlier::None;
    };
    match c.messages.get(&id) {
        Some(m) => Earlier::Live(m.current.clone()),
        None if c.deleted.contains_key(&id) => Earlier::Deleted,
        None => Earlier::None,
    }
}

/// Remembers the nonce of a message just created (with or without `enforce_nonce`).
pub(crate) fn remember(s: &Shared, inner: &mut Inner, nonce: String, channel: u64, id: u64) {
    let window = s.cfg.nonce_window;
    let now = s.now();
    inner
        .nonces
        .retain(|_, (_, _, at)| now.saturating_duration_since(*at) < window);
    inner.nonces.insert(nonce, (channel, id, now));
}
