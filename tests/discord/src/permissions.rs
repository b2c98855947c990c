//! Discord's permission bits, the bot's permissions per channel, and the checks Discord makes
//! with them before a channel message is read, created or edited.
//!
//! Relied on: `topics/permissions.mdx` of discord/discord-api-docs (bit values, the overwrite
//! algorithm, implicit denials), `resources/message.mdx` (Create Message needs SEND_MESSAGES,
//! a reply READ_MESSAGE_HISTORY, `tts` SEND_TTS_MESSAGES; Get Channel Message needs VIEW_CHANNEL
//! and READ_MESSAGE_HISTORY), and what bot authors report from the real API: a channel the bot
//! cannot view answers 403 `50001 Missing Access`, a missing permission 403
//! `50013 Missing Permissions`, embeds without EMBED_LINKS included (discord-api-docs #2601,
//! discord.js #7544, where the same embed in an interaction response went through).

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::FakeConfig;
use crate::rest::Reply;
use crate::rules::items;

pub const ADMINISTRATOR: u64 = 1 << 3;
pub const ADD_REACTIONS: u64 = 1 << 6;
pub const VIEW_CHANNEL: u64 = 1 << 10;
pub const SEND_MESSAGES: u64 = 1 << 11;
pub const SEND_TTS_MESSAGES: u64 = 1 << 12;
pub const MANAGE_MESSAGES: u64 = 1 << 13;
pub const EMBED_LINKS: u64 = 1 << 14;
pub const ATTACH_FILES: u64 = 1 << 15;
pub const READ_MESSAGE_HISTORY: u64 = 1 << 16;
pub const MENTION_EVERYONE: u64 = 1 << 17;
pub const USE_EXTERNAL_EMOJIS: u64 = 1 << 18;
pub const USE_APPLICATION_COMMANDS: u64 = 1 << 31;
pub const SEND_MESSAGES_IN_THREADS: u64 = 1 << 38;

/// What the guild's `@everyone` role grants, so every member has it: VIEW_CHANNEL,
/// SEND_MESSAGES, EMBED_LINKS, ATTACH_FILES, READ_MESSAGE_HISTORY, ADD_REACTIONS,
/// USE_EXTERNAL_EMOJIS, USE_APPLICATION_COMMANDS, SEND_MESSAGES_IN_THREADS.
pub const MEMBER: u64 = VIEW_CHANNEL
    | SEND_MESSAGES
    | EMBED_LINKS
    | ATTACH_FILES
    | READ_MESSAGE_HISTORY
    | ADD_REACTIONS
    | USE_EXTERNAL_EMOJIS
    | USE_APPLICATION_COMMANDS
    | SEND_MESSAGES_IN_THREADS;

/// The bot's default in every channel: a member's permissions and MENTION_EVERYONE, which a
/// new guild's `@everyone` role has until an admin takes it away. With it, an `@everyone` the
/// bot lets through pings the whole channel, the worst case a test should see.
pub const BOT_DEFAULT: u64 = MEMBER | MENTION_EVERYONE;

/// Permissions a channel cannot use without SEND_MESSAGES ("implicit permissions").
const NEED_SEND: u64 = MENTION_EVERYONE | SEND_TTS_MESSAGES | ATTACH_FILES | EMBED_LINKS;

/// The permissions that count, after Discord's implicit denials: nothing without
/// VIEW_CHANNEL, and nothing that sends without SEND_MESSAGES.
pub(crate) fn effective(bits: u64) -> u64 {
    if bits & VIEW_CHANNEL == 0 {
        0
    } else if bits & SEND_MESSAGES == 0 {
        bits & !NEED_SEND
    } else {
        bits
    }
}

fn missing_access() -> Reply {
    Reply::error(StatusCode::FORBIDDEN, 50001, "Missing Access")
}

fn missing_permissions() -> Reply {
    Reply::error(StatusCode::FORBIDDEN, 50013, "Missing Permissions")
}

fn require(bits: u64, need: u64) -> Result<(), Reply> {
    if effective(bits) & need == need {
        Ok(())
    } else {
        Err(missing_permissions())
    }
}

/// `GET /channels/{id}`, or any route on a channel's messages: the bot must see the channel.
pub(crate) fn view(bits: u64) -> Result<(), Reply> {
    if bits & VIEW_CHANNEL == 0 {
        return Err(missing_access());
    }
    Ok(())
}

/// `GET /channels/{id}/messages/{mid}`. Which code Discord gives without READ_MESSAGE_HISTORY
/// is not documented; the fake answers as for a channel it cannot read.
pub(crate) fn read(bits: u64) -> Result<(), Reply> {
    view(bits)?;
    if bits & READ_MESSAGE_HISTORY == 0 {
        return Err(missing_access());
    }
    Ok(())
}

/// `POST /channels/{id}/messages`, checked before the body is.
pub(crate) fn create(bits: u64, body: &Value) -> Result<(), Reply> {
    view(bits)?;
    require(bits, SEND_MESSAGES)?;
    if body.get("tts").and_then(Value::as_bool) == Some(true) {
        require(bits, SEND_TTS_MESSAGES)?;
    }
    if body.get("message_reference").is_some_and(|r| !r.is_null()) {
        require(bits, READ_MESSAGE_HISTORY)?;
    }
    embeds(bits, body)
}

/// Embeds need EMBED_LINKS, in a create and in an edit of a channel message alike.
pub(crate) fn embeds(bits: u64, body: &Value) -> Result<(), Reply> {
    if items(body, "embeds").is_empty() {
        return Ok(());
    }
    require(bits, EMBED_LINKS)
}

/// The channel's `permission_overwrites` that give the bot exactly `bits`: the `@everyone` role
/// grants [`MEMBER`], one member overwrite for the bot allows and denies the difference, so a
/// client that computes permissions as Discord documents arrives at `bits`.
pub(crate) fn overwrites(cfg: &FakeConfig, bits: u64) -> Value {
    let (allow, deny) = (bits & !MEMBER, MEMBER & !bits);
    if allow == 0 && deny == 0 {
        return json!([]);
    }
    json!([{
        "id": cfg.bot_user_id.to_string(),
        "type": 1,
        "allow": allow.to_string(),
        "deny": deny.to_string(),
    }])
}
