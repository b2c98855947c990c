//! What each method does once the token is admitted, in the order Slack checks: scope, then
//! channel, then message, then content (each method's reference page at
//! api.slack.com/methods/<name>, and the spec's `paths./<name>` for its arguments and errors).

use serde_json::{Value, json};

use crate::methods::WebMethod;
use crate::state::{Channel, StoredMessage};
use crate::web::{Call, Refusal};
use crate::{Ephemeral, Ping, Visibility, blocks, mentions};

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
fn visible<'a>(call: &'a Call<'_>) -> Result<&'a Channel, Refusal> {
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

fn message_json(call: &Call<'_>, ts: &str, text: &str, blocks: &[Value]) -> Value {
    let cfg = &call.shared.cfg;
    json!({
        "type": "message",
        "user": cfg.bot_user_id,
        "bot_id": cfg.bot_id,
        "app_id": cfg.app_id,
        "team": cfg.team_id,
        "text": text,
        "blocks": blocks,
        "ts": ts,
    })
}

fn post_message(mut call: Call<'_>) -> Result<Value, Refusal> {
    call.need("chat:write")?;
    let channel = writable(&call)?;
    let (text, blocks) = content(&call)?;
    let blocks = blocks.unwrap_or_default();
    let ts = call.shared.next_ts(call.inner);
    let stored = StoredMessage {
        user: call.shared.cfg.bot_user_id.clone(),
        text: text.clone(),
        blocks: blocks.clone(),
        history: vec![(text.clone(), blocks.clone())],
        posted: call.shared.now(),
        deleted: false,
    };
    if let Some(c) = call.inner.channels.get_mut(&channel) {
        c.messages.insert(ts.clone(), stored);
    }
    record_pings(&mut call, &channel, &ts, &text, &blocks, false);
    let message = message_json(&call, &ts, &text, &blocks);
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
    let now = call.shared.now();
    let window = call.shared.cfg.edit_window;
    let (channel, ts, message) = own_message(&mut call, "cant_update_message")?;
    if window.is_some_and(|w| now.saturating_duration_since(message.posted) > w) {
        return Err(Refusal::Code("edit_window_closed"));
    }
    // Without `blocks` an update keeps the message's blocks; `[]` removes them.
    if let Some(blocks) = blocks {
        message.blocks = blocks;
    }
    message.text = text;
    message
        .history
        .push((message.text.clone(), message.blocks.clone()));
    let (text, blocks) = (message.text.clone(), message.blocks.clone());
    record_pings(&mut call, &channel, &ts, &text, &blocks, true);
    let message = message_json(&call, &ts, &text, &blocks);
    Ok(json!({"channel": channel, "ts": ts, "text": text, "message": message}))
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
