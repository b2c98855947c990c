//! `response_url` (api.slack.com/interactivity/handling#message_responses): the URL a slash
//! command or a button press carries, to which the app answers with JSON, up to five times
//! within 30 minutes, with no token: `ephemeral` (the default) shows the text to the user
//! alone, `in_channel` posts it in the channel. It needs neither `chat:write` nor the bot's
//! membership, which is why an app answers there rather than with `chat.postMessage`.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use serde_json::Value;
use tokio::time::Instant;

use crate::Ephemeral;
use crate::mentions;
use crate::state::{Shared, StoredMessage};

/// Uses of one URL, and how long it lives.
const MAX_USES: u32 = 5;
const LIFETIME: Duration = Duration::from_secs(30 * 60);

/// Who a `response_url` answers, and how often it was used.
pub(crate) struct ResponseUrl {
    pub(crate) channel: String,
    pub(crate) user: String,
    pub(crate) issued: Instant,
    pub(crate) uses: u32,
    /// The envelope that carried it, once delivered.
    pub(crate) envelope: Option<String>,
    /// What the app answered through it, in order.
    pub(crate) answers: Vec<Value>,
}

/// `POST /hooks/{kind}/{team}/{id}`: Slack answers `ok` in plain text, or a 404 naming why.
pub(crate) async fn handle(
    State(shared): State<Arc<Shared>>,
    Path((_kind, _team, id)): Path<(String, String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    match respond(&shared, &id, &headers, &body) {
        Ok(()) => (StatusCode::OK, "ok".to_owned()),
        Err((status, why)) => (status, why.to_owned()),
    }
}

fn respond(
    shared: &Shared,
    id: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(), (StatusCode, &'static str)> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json"));
    if !json {
        return Err((StatusCode::BAD_REQUEST, "invalid_payload"));
    }
    let payload: Value =
        serde_json::from_slice(body).map_err(|_| (StatusCode::BAD_REQUEST, "invalid_payload"))?;
    let text = payload["text"].as_str().unwrap_or_default().to_owned();
    let blocks = payload["blocks"].as_array().cloned().unwrap_or_default();
    if text.is_empty() && blocks.is_empty() {
        return Err((StatusCode::BAD_REQUEST, "no_text"));
    }
    if text.chars().count() > 40_000 {
        return Err((StatusCode::BAD_REQUEST, "msg_too_long"));
    }
    crate::blocks::check(&blocks).map_err(|_| (StatusCode::BAD_REQUEST, "invalid_blocks"))?;
    let now = shared.now();
    let mut inner = shared.lock();
    let url = inner
        .responses
        .get_mut(id)
        .ok_or((StatusCode::NOT_FOUND, "invalid_url"))?;
    if now.saturating_duration_since(url.issued) > LIFETIME {
        return Err((StatusCode::NOT_FOUND, "expired_url"));
    }
    if url.uses >= MAX_USES {
        return Err((StatusCode::NOT_FOUND, "used_url"));
    }
    url.uses += 1;
    url.answers.push(payload.clone());
    let (channel, user) = (url.channel.clone(), url.user.clone());
    let ts = shared.next_ts(&mut inner);
    if payload["response_type"] == "in_channel" {
        for mention in mentions::pings(&text, &blocks, false) {
            inner.pings.push(crate::Ping {
                channel: channel.clone(),
                ts: ts.clone(),
                mention,
                edit: false,
            });
        }
        let message = StoredMessage {
            user: shared.cfg.bot_user_id.clone(),
            text: text.clone(),
            blocks: blocks.clone(),
            history: vec![(text, blocks)],
            posted: now,
            deleted: false,
            metadata: None,
        };
        if let Some(c) = inner.channels.get_mut(&channel) {
            c.messages.insert(ts, message);
        }
    } else {
        inner.ephemerals.push(Ephemeral {
            channel,
            user,
            text,
            blocks,
            message_ts: ts,
        });
    }
    Ok(())
}
