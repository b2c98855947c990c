//! What each method does once the token is admitted, in the order Slack checks: scope, then
//! channel, then message, then content (each method's reference page at
//! api.slack.com/methods/<name>, and the spec's `paths./<name>` for its arguments and errors).

use serde_json::{Value, json};

use crate::metadata::{self, Metadata};
use crate::methods::WebMethod;
use crate::state::{Channel, Shared, StoredMessage};
use crate::web::{Call, Refusal};
use crate::{Ephemeral, Ping, Visibility, blocks, files, history, mentions};

/// Slack refuses `text` over 40,000 characters (`msg_too_long`).
pub(crate) const MAX_TEXT: usize = 40_000;

pub(crate) fn dispatch(method: WebMethod, call: Call<'_>) -> Result<Value, Refusal> {
    match method {
        WebMethod::AuthTest => Ok(auth_test(&call)),
        WebMethod::AppsConnectionsOpen => connections_open(call),
        WebMethod::ChatPostMessage => post_message(call),
        WebMethod::ChatUpdate => update(call),
        WebMethod::ChatPostEphemeral => post_ephemeral(call),
        WebMethod::ChatDelete => delete(call),
        WebMethod::ConversationsInfo => conversations_info(call),
        WebMethod::ConversationsHistory => history::conversations_history(call),
        WebMethod::FilesGetUploadUrlExternal => files::get_upload_url(call),
        WebMethod::FilesCompleteUploadExternal => files::complete_upload(call),
    }
}

fn auth_test(call: &Call<'_>) -> Value {
    let cfg = &call.shared.cfg;
    json!({
        "url": "https://fake-ops.slack.com/",
        "team": cfg.team_name,
        "user": "opsbot",
        "team_id": cfg.team_id,
        "user_id": cfg.bot_user_id,
        "bot_id": cfg.bot_id,
        "is_enterprise_install": false,
    })
}

fn connections_open(call: Call<'_>) -> Result<Value, Refusal> {
    call.need("connections:write")?;
    let ticket = call.inner.sockets.new_ticket();
    let url = format!(
        "{}?ticket={ticket}&app_id={}",
        call.shared.socket_url, call.shared.cfg.app_id
    );
    Ok(json!({"url": url}))
}

/// The channel as the bot sees it: a private channel it is not in does not exist for it.
pub(crate) fn visible<'a>(call: &'a Call<'_>) -> Result<&'a Channel, Refusal> {
    let id = call
        .params
        .str("channel")
        .ok_or(Refusal::Code("channel_not_found"))?;
    let channel = call
        .inner
        .channels
        .get(&id)
        .ok_or(Refusal::Code("channel_not_found"))?;
    let member = channel.members.contains(&call.shared.cfg.bot_user_id);
    if channel.visibility == Visibility::Private && !member {
        return Err(Refusal::Code("channel_not_found"));
    }
    Ok(channel)
}

/// A channel the bot may post in: a member, or a public channel with `chat:write.public`.
fn writable(call: &Call<'_>) -> Result<String, Refusal> {
    let channel = visible(call)?;
    let member = channel.members.contains(&call.shared.cfg.bot_user_id);
    if !member && !call.scopes.contains("chat:write.public") {
        return Err(Refusal::Code("not_in_channel"));
    }
    Ok(channel.id.clone())
}

/// `text` and `blocks` checked as Slack does; either may be missing, not both.
fn content(call: &Call<'_>) -> Result<(String, Option<Vec<Value>>), Refusal> {
    let blocks = call.params.blocks().map_err(Refusal::Code)?;
    let text = call.params.str("text").unwrap_or_default();
    let no_blocks = blocks.as_ref().is_none_or(Vec::is_empty);
    if text.is_empty() && no_blocks && call.params.str("attachments").is_none() {
        return Err(Refusal::Code("no_text"));
    }
    if let Some(blocks) = &blocks {
        if let Err(why) = blocks::check(blocks) {
            tracing::debug!("fake slack: invalid_blocks: {why}");
            return Err(Refusal::Code("invalid_blocks"));
        }
    }
    if text.chars().count() > MAX_TEXT {
        return Err(Refusal::Code("msg_too_long"));
    }
    Ok((text, blocks))
}

fn link_names(call: &Call<'_>) -> bool {
    call.params.flag("link_names") || call.params.str("parse").as_deref() == Some("full")
}

fn record_pings(
    call: &mut Call<'_>,
    channel: &str,
    ts: &str,
    text: &str,
    blocks: &[Value],
    edit: bool,
) {
    for mention in mentions::pings(text, blocks, link_names(call)) {
        call.inner.pings.push(Ping {
            channel: channel.to_owned(),
            ts: ts.to_owned(),
            mention,
            edit,
        });
    }
}

/// `metadata`, or the `invalid_metadata_format` refusal; metadata of the wrong shape is
/// dropped with Slack's `invalid_metadata_schema` warning.
fn read_metadata(call: &mut Call<'_>) -> Result<Metadata, Refusal> {
    let metadata = metadata::read(call.params).map_err(Refusal::Code)?;
    if metadata == Metadata::Ignored {
        call.warn("invalid_metadata_schema");
    }
    Ok(metadata)
}

/// A message as Slack's answers show it: the bot's with its `bot_id` and `app_id`, and its
/// `metadata` where the caller asked for it.
pub(crate) fn message_json(
    shared: &Shared,
    ts: &str,
    m: &StoredMessage,
    with_metadata: bool,
) -> Value {
    let cfg = &shared.cfg;
    let mut message = json!({
        "type": "message",
        "user": m.user,
        "team": cfg.team_id,
        "text": m.text,
        "blocks": m.blocks,
        "ts": ts,
    });
    if let Value::Object(fields) = &mut message {
        if m.user == cfg.bot_user_id {
            fields.insert("bot_id".into(), json!(cfg.bot_id));
            fields.insert("app_id".into(), json!(cfg.app_id));
        }
        if let Some(metadata) = m.metadata.as_ref().filter(|_| with_metadata) {
            fields.insert("metadata".into(), metadata.clone());
        }
    }
    message
}

fn post_message(mut call: Call<'_>) -> Result<Value, Refusal> {
    call.need("chat:write")?;
    let channel = writable(&call)?;
    let (text, blocks) = content(&call)?;
    let metadata = match read_metadata(&mut call)? {
        Metadata::Valid(value) => Some(value),
        Metadata::Absent | Metadata::Ignored => None,
    };
    let blocks = blocks.unwrap_or_default();
    let ts = call.shared.next_ts(call.inner);
    let stored = StoredMessage {
        user: call.shared.cfg.bot_user_id.clone(),
        text: text.clone(),
        blocks: blocks.clone(),
        history: vec![(text.clone(), blocks.clone())],
        posted: call.shared.now(),
        deleted: false,
        metadata,
    };
    // Slack's answer echoes the message with its metadata.
    let message = message_json(call.shared, &ts, &stored, true);
    if let Some(c) = call.inner.channels.get_mut(&channel) {
        c.messages.insert(ts.clone(), stored);
    }
    record_pings(&mut call, &channel, &ts, &text, &blocks, false);
    Ok(json!({"channel": channel, "ts": ts, "message": message}))
}

/// The bot's own live message `ts` in the channel, for `chat.update` and `chat.delete`.
fn own_message<'a>(
    call: &'a mut Call<'_>,
    not_mine: &'static str,
) -> Result<(String, String, &'a mut StoredMessage), Refusal> {
    let channel = visible(call)?.id.clone();
    let ts = call
        .params
        .str("ts")
        .ok_or(Refusal::Code("message_not_found"))?;
    let bot = call.shared.cfg.bot_user_id.clone();
    let message = call
        .inner
        .channels
        .get_mut(&channel)
        .and_then(|c| c.messages.get_mut(&ts))
        .filter(|m| !m.deleted)
        .ok_or(Refusal::Code("message_not_found"))?;
    if message.user != bot {
        return Err(Refusal::Code(not_mine));
    }
    Ok((channel, ts, message))
}

fn update(mut call: Call<'_>) -> Result<Value, Refusal> {
    call.need("chat:write")?;
    let (text, blocks) = content(&call)?;
    let metadata = read_metadata(&mut call)?;
    let shared = call.shared;
    let now = shared.now();
    let window = shared.cfg.edit_window;
    let (channel, ts, message) = own_message(&mut call, "cant_update_message")?;
    if window.is_some_and(|w| now.saturating_duration_since(message.posted) > w) {
        return Err(Refusal::Code("edit_window_closed"));
    }
    // Without `blocks` an update keeps the message's blocks; `[]` removes them. Likewise an
    // update without `metadata` (or with metadata Slack ignored) keeps the message's.
    if let Some(blocks) = blocks {
        message.blocks = blocks;
    }
    if let Metadata::Valid(value) = metadata {
        message.metadata = Some(value);
    }
    message.text = text;
    message
        .history
        .push((message.text.clone(), message.blocks.clone()));
    let (text, blocks) = (message.text.clone(), message.blocks.clone());
    let json = message_json(shared, &ts, message, true);
    record_pings(&mut call, &channel, &ts, &text, &blocks, true);
    Ok(json!({"channel": channel, "ts": ts, "text": text, "message": json}))
}

fn delete(mut call: Call<'_>) -> Result<Value, Refusal> {
    call.need("chat:write")?;
    let (channel, ts, message) = own_message(&mut call, "cant_delete_message")?;
    message.deleted = true;
    Ok(json!({"channel": channel, "ts": ts}))
}

fn post_ephemeral(call: Call<'_>) -> Result<Value, Refusal> {
    call.need("chat:write")?;
    let channel = writable(&call)?;
    let user = call.params.str("user").unwrap_or_default();
    let in_channel = call
        .inner
        .channels
        .get(&channel)
        .is_some_and(|c| c.members.contains(&user));
    if !in_channel {
        return Err(Refusal::Code("user_not_in_channel"));
    }
    let (text, blocks) = content(&call)?;
    let message_ts = call.shared.next_ts(call.inner);
    call.inner.ephemerals.push(Ephemeral {
        channel,
        user,
        text,
        blocks: blocks.unwrap_or_default(),
        message_ts: message_ts.clone(),
    });
    Ok(json!({"message_ts": message_ts}))
}

fn conversations_info(call: Call<'_>) -> Result<Value, Refusal> {
    let channel = visible(&call)?;
    call.need(
        WebMethod::ConversationsInfo
            .scope(Some(channel.visibility))
            .unwrap_or("channels:read"),
    )?;
    let private = channel.visibility == Visibility::Private;
    let member = channel.members.contains(&call.shared.cfg.bot_user_id);
    Ok(json!({"channel": {
        "id": channel.id,
        "name": channel.name,
        "is_channel": !private,
        "is_group": false,
        "is_im": false,
        "is_mpim": false,
        "is_private": private,
        "is_archived": false,
        "is_general": false,
        "is_member": member,
        "context_team_id": call.shared.cfg.team_id,
    }}))
}
