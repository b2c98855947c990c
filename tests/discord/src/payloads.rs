//! The JSON objects Discord sends, shaped as Discord shapes them (snowflakes as strings).

use serde_json::{Map, Value, json};

use crate::permissions::{MEMBER, overwrites};
use crate::state::timestamp;
use crate::{FakeConfig, FakeUser};

/// Size limit of an upload, as Discord reports it for an unboosted guild.
pub(crate) const ATTACHMENT_SIZE_LIMIT: u64 = 10 * 1024 * 1024;
/// `flags` bit of an ephemeral message.
pub(crate) const EPHEMERAL: u64 = 1 << 6;
/// `flags` bit of a deferred response's "thinking" message.
pub(crate) const LOADING: u64 = 1 << 7;
/// `flags` bits a client may set on a message it sends: SUPPRESS_EMBEDS, SUPPRESS_NOTIFICATIONS.
const CLIENT_FLAGS: u64 = (1 << 2) | (1 << 12);

pub(crate) fn bot_user(cfg: &FakeConfig) -> Value {
    json!({
        "id": cfg.bot_user_id.to_string(),
        "username": "opsbot",
        "discriminator": "0",
        "global_name": null,
        "avatar": null,
        "bot": true,
        "system": false,
        "mfa_enabled": true,
        "verified": true,
        "email": null,
        "flags": 0,
        "public_flags": 0,
        "banner": null,
        "accent_color": null,
        "avatar_decoration_data": null,
    })
}

pub(crate) fn user(u: &FakeUser) -> Value {
    json!({
        "id": u.id.to_string(),
        "username": u.name,
        "discriminator": "0",
        "global_name": u.name,
        "avatar": null,
        "public_flags": 0,
        "avatar_decoration_data": null,
    })
}

pub(crate) fn member(u: &FakeUser) -> Value {
    json!({
        "user": user(u),
        "nick": null,
        "avatar": null,
        "banner": null,
        "roles": u.roles.iter().map(u64::to_string).collect::<Vec<_>>(),
        "joined_at": "2024-01-01T00:00:00.000000+00:00",
        "premium_since": null,
        "deaf": false,
        "mute": false,
        "flags": 0,
        "pending": false,
        "permissions": u.permissions.to_string(),
        "communication_disabled_until": null,
        "unusual_dm_activity_until": null,
    })
}

/// A text channel of the guild, in which the bot has `bot_permissions`.
pub(crate) fn channel(cfg: &FakeConfig, id: u64, bot_permissions: u64) -> Value {
    let position = cfg.channels.iter().position(|c| *c == id).unwrap_or(0);
    json!({
        "id": id.to_string(),
        "type": 0,
        "guild_id": cfg.guild_id.to_string(),
        "name": format!("channel-{id}"),
        "position": position,
        "permission_overwrites": overwrites(cfg, bot_permissions),
        "parent_id": null,
        "topic": null,
        "nsfw": false,
        "last_message_id": null,
        "rate_limit_per_user": 0,
        "flags": 0,
    })
}

pub(crate) fn guild(cfg: &FakeConfig) -> Value {
    let id = cfg.guild_id.to_string();
    json!({
        "id": id,
        "name": "opsbot test guild",
        "icon": null, "icon_hash": null, "splash": null, "discovery_splash": null,
        "owner_id": cfg.owner_id.to_string(),
        "region": "deprecated",
        "afk_channel_id": null, "afk_timeout": 300,
        "widget_enabled": false, "widget_channel_id": null,
        "verification_level": 0, "default_message_notifications": 0, "explicit_content_filter": 0,
        "roles": [{
            "id": id, "name": "@everyone", "description": null,
            "color": 0, "colors": {"primary_color": 0, "secondary_color": null, "tertiary_color": null},
            "hoist": false, "icon": null, "unicode_emoji": null, "position": 0,
            "permissions": MEMBER.to_string(), "managed": false, "mentionable": false,
            "flags": 0,
        }],
        "emojis": [], "stickers": [], "features": [],
        "mfa_level": 0, "application_id": null,
        "system_channel_id": cfg.channels.first().map(u64::to_string),
        "system_channel_flags": 0, "rules_channel_id": null,
        "max_presences": null, "max_members": 500_000, "vanity_url_code": null,
        "description": null, "banner": null, "premium_tier": 0, "premium_subscription_count": 0,
        "preferred_locale": "en-US", "public_updates_channel_id": null,
        "max_video_channel_users": 25, "max_stage_video_channel_users": 50,
        "nsfw_level": 0, "nsfw": false, "hub_type": null,
        "premium_progress_bar_enabled": false, "safety_alerts_channel_id": null,
        "incidents_data": null,
    })
}

/// GUILD_CREATE's data: the guild, plus what only the gateway tells (channels, members, ...).
/// `bot_permissions` gives the bot's bits in each channel.
pub(crate) fn guild_create(cfg: &FakeConfig, bot_permissions: impl Fn(u64) -> u64) -> Value {
    let mut guild = guild(cfg);
    let bot = bot_member(cfg);
    let extra = json!({
        "joined_at": "2024-01-01T00:00:00.000000+00:00",
        "large": false,
        "unavailable": false,
        "member_count": 1,
        "voice_states": [],
        "members": [bot],
        "channels": cfg
            .channels
            .iter()
            .map(|c| channel(cfg, *c, bot_permissions(*c)))
            .collect::<Vec<_>>(),
        "threads": [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
        "embedded_activities": [],
        "lazy": true,
    });
    if let (Some(g), Value::Object(extra)) = (guild.as_object_mut(), extra) {
        g.extend(extra);
    }
    guild
}

/// The bot as a guild member: no roles of its own, so `@everyone` and the channels' overwrites
/// decide its permissions.
pub(crate) fn bot_member(cfg: &FakeConfig) -> Value {
    json!({
        "user": bot_user(cfg), "nick": null, "avatar": null, "banner": null, "roles": [],
        "joined_at": "2024-01-01T00:00:00.000000+00:00", "premium_since": null,
        "deaf": false, "mute": false, "flags": 0, "pending": false,
        "communication_disabled_until": null,
    })
}

pub(crate) fn application(cfg: &FakeConfig) -> Value {
    json!({
        "id": cfg.application_id.to_string(),
        "name": "opsbot",
        "icon": null,
        "description": "",
        "summary": "",
        "type": null,
        "hook": true,
        "bot_public": false,
        "bot_require_code_grant": false,
        "verify_key": "0".repeat(64),
        "flags": 0,
        "owner": {
            "id": cfg.owner_id.to_string(), "username": "owner", "discriminator": "0",
            "global_name": "owner", "avatar": null, "public_flags": 0,
        },
        "team": null,
        "bot": bot_user(cfg),
        "rpc_origins": [],
        "redirect_uris": [],
        "interactions_endpoint_url": null,
        "role_connections_verification_url": null,
        "approximate_guild_count": 1,
        "integration_types_config": {"0": {}},
    })
}

/// Who and what a new message is.
pub(crate) struct NewMessage<'a> {
    pub(crate) id: u64,
    pub(crate) channel_id: u64,
    /// The client's body (content, embeds, components, flags, ...).
    pub(crate) body: &'a Value,
    /// 0 default, 19 reply, 20 chat-input command response.
    pub(crate) kind: u8,
    /// Sent through an interaction webhook.
    pub(crate) from_interaction: bool,
    /// Flags the server sets (EPHEMERAL, LOADING).
    pub(crate) server_flags: u64,
}

pub(crate) fn message(cfg: &FakeConfig, m: &NewMessage<'_>) -> Value {
    let body = m.body;
    let client_flags = body.get("flags").and_then(Value::as_u64).unwrap_or(0) & CLIENT_FLAGS;
    let reference = body.get("message_reference").filter(|r| !r.is_null());
    let kind = if reference.is_some() && m.kind == 0 {
        19
    } else {
        m.kind
    };
    let mut out = json!({
        "id": m.id.to_string(),
        "channel_id": m.channel_id.to_string(),
        "author": bot_user(cfg),
        "content": body.get("content").and_then(Value::as_str).unwrap_or(""),
        "timestamp": timestamp(),
        "edited_timestamp": null,
        "tts": body.get("tts").and_then(Value::as_bool).unwrap_or(false),
        "mention_everyone": false,
        "mentions": [],
        "mention_roles": [],
        "attachments": [],
        "embeds": embeds(body.get("embeds")),
        "components": array(body.get("components")),
        "pinned": false,
        "type": kind,
        "flags": client_flags | m.server_flags,
    });
    if let Some(obj) = out.as_object_mut() {
        if m.from_interaction {
            obj.insert("webhook_id".into(), json!(cfg.application_id.to_string()));
            obj.insert(
                "application_id".into(),
                json!(cfg.application_id.to_string()),
            );
        }
        if let Some(reference) = reference {
            let mut r = reference.clone();
            if let Some(r) = r.as_object_mut() {
                r.entry("channel_id")
                    .or_insert_with(|| json!(m.channel_id.to_string()));
                r.entry("type").or_insert(json!(0));
            }
            obj.insert("message_reference".into(), r);
        }
    }
    out
}

/// Applies an edit body to a message, as PATCH does: fields present replace, absent stay.
pub(crate) fn apply_edit(current: &mut Value, body: &Value) {
    let Some(obj) = current.as_object_mut() else {
        return;
    };
    if let Some(content) = body.get("content") {
        obj.insert("content".into(), json!(content.as_str().unwrap_or("")));
    }
    if body.get("embeds").is_some() {
        obj.insert("embeds".into(), embeds(body.get("embeds")));
    }
    if body.get("components").is_some() {
        obj.insert("components".into(), array(body.get("components")));
    }
    if body.get("attachments").is_some() {
        obj.insert("attachments".into(), array(body.get("attachments")));
    }
    if let Some(flags) = body.get("flags").and_then(Value::as_u64) {
        let old = obj.get("flags").and_then(Value::as_u64).unwrap_or(0);
        obj.insert(
            "flags".into(),
            json!((old & !CLIENT_FLAGS) | (flags & CLIENT_FLAGS)),
        );
    }
    obj.insert("edited_timestamp".into(), json!(timestamp()));
}

/// Clears a "thinking" message's LOADING flag.
pub(crate) fn clear_loading(message: &mut Value) {
    if let Some(obj) = message.as_object_mut() {
        let flags = obj.get("flags").and_then(Value::as_u64).unwrap_or(0);
        obj.insert("flags".into(), json!(flags & !LOADING));
    }
}

fn array(v: Option<&Value>) -> Value {
    match v {
        Some(Value::Array(items)) => Value::Array(items.clone()),
        _ => json!([]),
    }
}

/// Embeds as Discord returns them: `type` defaults to `rich`.
fn embeds(v: Option<&Value>) -> Value {
    let Some(Value::Array(items)) = v else {
        return json!([]);
    };
    let out = items.iter().map(|e| {
        let mut e = e.as_object().cloned().unwrap_or_else(Map::new);
        e.entry("type").or_insert(json!("rich"));
        e.retain(|_, v| !v.is_null());
        Value::Object(e)
    });
    Value::Array(out.collect())
}

/// The fields every interaction carries, for a guild text channel.
pub(crate) struct NewInteraction<'a> {
    pub(crate) id: u64,
    pub(crate) kind: u8,
    pub(crate) token: &'a str,
    pub(crate) user: &'a FakeUser,
    pub(crate) channel_id: u64,
    pub(crate) data: Value,
    pub(crate) message: Option<Value>,
    /// The bot's permissions in the channel.
    pub(crate) app_permissions: u64,
}

pub(crate) fn interaction(cfg: &FakeConfig, i: NewInteraction<'_>) -> Value {
    let guild = cfg.guild_id.to_string();
    let mut channel = channel(cfg, i.channel_id, i.app_permissions);
    if let Some(obj) = channel.as_object_mut() {
        obj.insert("permissions".into(), json!(i.user.permissions.to_string()));
    }
    let mut out = json!({
        "id": i.id.to_string(),
        "application_id": cfg.application_id.to_string(),
        "type": i.kind,
        "data": i.data,
        "guild_id": guild,
        "guild": {"id": guild, "locale": "en-US", "features": []},
        "channel_id": i.channel_id.to_string(),
        "channel": channel,
        "member": member(i.user),
        "token": i.token,
        "version": 1,
        "locale": "en-US",
        "guild_locale": "en-US",
        "entitlements": [],
        "entitlement_sku_ids": [],
        "authorizing_integration_owners": {"0": guild},
        "context": 0,
        "app_permissions": i.app_permissions.to_string(),
        "attachment_size_limit": ATTACHMENT_SIZE_LIMIT,
    });
    if let (Some(obj), Some(message)) = (out.as_object_mut(), i.message) {
        obj.insert("message".into(), message);
    }
    out
}
