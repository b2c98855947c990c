//! The REST API under `/api/v10`: routing, authorization, rate-limit headers, and the routes
//! that are not about interactions.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::rules::Invalid;
use crate::state::Shared;
use crate::uploads::Refused;
use crate::{commands, interactions, invalid, messages, payloads, permissions, uploads, webhook};

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new().fallback(handle).with_state(shared)
}

/// A rate-limit bucket as the response headers describe it.
pub(crate) struct Limit {
    pub(crate) limit: u32,
    pub(crate) remaining: u32,
    pub(crate) reset_after: Duration,
    pub(crate) bucket: &'static str,
    /// Set on a 429.
    pub(crate) retry_after: Option<Duration>,
}

impl Default for Limit {
    /// A roomy bucket for routes the fake does not limit.
    fn default() -> Self {
        Self {
            limit: 50,
            remaining: 49,
            reset_after: Duration::from_secs(1),
            bucket: "f0a1c8e2d4b6a8c0e2f4a6b8c0d2e4f6",
            retry_after: None,
        }
    }
}

/// An answer before it becomes an HTTP response.
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) body: Option<Value>,
    pub(crate) limit: Limit,
}

impl Reply {
    pub(crate) fn ok(body: Value) -> Self {
        Self {
            status: StatusCode::OK,
            body: Some(body),
            limit: Limit::default(),
        }
    }

    pub(crate) fn no_content() -> Self {
        Self {
            status: StatusCode::NO_CONTENT,
            body: None,
            limit: Limit::default(),
        }
    }

    pub(crate) fn error(status: StatusCode, code: u32, message: &str) -> Self {
        Self {
            status,
            body: Some(json!({"code": code, "message": message})),
            limit: Limit::default(),
        }
    }

    pub(crate) fn invalid(invalid: &Invalid) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            body: Some(
                json!({"code": 50035, "errors": invalid.errors(), "message": "Invalid Form Body"}),
            ),
            limit: Limit::default(),
        }
    }

    pub(crate) fn empty_message() -> Self {
        Self::error(
            StatusCode::BAD_REQUEST,
            50006,
            "Cannot send an empty message",
        )
    }

    pub(crate) fn with_limit(mut self, limit: Limit) -> Self {
        self.limit = limit;
        self
    }
}

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        let mut response = match self.body {
            Some(body) => (self.status, axum::Json(body)).into_response(),
            None => self.status.into_response(),
        };
        let l = &self.limit;
        let reset_at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            + l.reset_after;
        let mut headers = vec![
            ("x-ratelimit-limit", l.limit.to_string()),
            ("x-ratelimit-remaining", l.remaining.to_string()),
            (
                "x-ratelimit-reset",
                format!("{:.3}", reset_at.as_secs_f64()),
            ),
            (
                "x-ratelimit-reset-after",
                format!("{:.3}", l.reset_after.as_secs_f64()),
            ),
            ("x-ratelimit-bucket", l.bucket.to_owned()),
        ];
        if let Some(retry) = l.retry_after {
            headers.push(("retry-after", format!("{:.3}", retry.as_secs_f64())));
            headers.push(("x-ratelimit-scope", "user".to_owned()));
        }
        for (name, value) in headers {
            if let Ok(value) = HeaderValue::from_str(&value) {
                response
                    .headers_mut()
                    .insert(HeaderName::from_static(name), value);
            }
        }
        response
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Reply {
    let path = uri.path();
    tracing::debug!(%method, %path, bytes = body.len(), "fake discord: request");
    shared.lock().requests.push(format!("{method} {path}"));
    if path.starts_with("/api/v10/channels/") && path.contains("/messages") && shared.take_hang() {
        tracing::debug!(%method, %path, "fake discord: holding a request open, unanswered");
        shared.lock().hung += 1;
        std::future::pending::<()>().await;
    }
    let reply = route(&shared, &method, path, &headers, &body);
    tracing::debug!(%method, %path, status = reply.status.as_u16(), "fake discord: answered");
    invalid::count(&shared, reply.status);
    reply
}

/// Routes that Discord serves without a bot token: the interaction token is the credential.
fn needs_no_token(rest: &[&str]) -> bool {
    matches!(rest, ["gateway"] | ["interactions", ..] | ["webhooks", ..])
}

fn route(s: &Shared, method: &Method, path: &str, headers: &HeaderMap, body: &[u8]) -> Reply {
    let segments: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let Some(rest) = segments.strip_prefix(&["api", "v10"][..]) else {
        return unexpected(s, method, path);
    };
    let expected = format!("Bot {}", s.cfg.token);
    let auth = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if !needs_no_token(rest) && auth != Some(expected.as_str()) {
        s.lock()
            .violation(format!("{method} {path}: missing or wrong bot token"));
        return Reply::error(StatusCode::UNAUTHORIZED, 0, "401: Unauthorized");
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let json: Value = if content_type.starts_with("multipart/form-data") {
        match uploads::parse(content_type, body, &format!("{method} {path}")) {
            Ok((json, files)) => {
                s.lock().uploads.extend(files);
                json
            }
            Err(Refused::TooLarge { filename, size }) => {
                tracing::debug!(
                    filename,
                    size,
                    "fake discord: upload over the guild's limit"
                );
                return Reply::error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    40005,
                    "Request entity too large",
                );
            }
            Err(Refused::Malformed(why)) => {
                s.lock()
                    .violation(format!("{method} {path}: malformed form: {why}"));
                return Reply::error(StatusCode::BAD_REQUEST, 50035, "Invalid Form Body");
            }
        }
    } else if body.is_empty() {
        Value::Null
    } else {
        match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(_) => {
                s.lock()
                    .violation(format!("{method} {path}: body is not JSON"));
                return Reply::error(
                    StatusCode::BAD_REQUEST,
                    50109,
                    "The request body contains invalid JSON.",
                );
            }
        }
    };
    let cfg = &s.cfg;
    match (method.as_str(), rest) {
        ("GET", ["gateway"]) => Reply::ok(json!({"url": s.gateway_url})),
        ("GET", ["gateway", "bot"]) => Reply::ok(json!({
            "url": s.gateway_url,
            "shards": 1,
            "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 14_400_000, "max_concurrency": 1},
        })),
        ("GET", ["users", "@me"]) => Reply::ok(payloads::bot_user(cfg)),
        ("GET", ["oauth2", "applications", "@me"] | ["applications", "@me"]) => {
            Reply::ok(payloads::application(cfg))
        }
        ("GET", ["guilds", id]) if id_is(id, cfg.guild_id) => Reply::ok(payloads::guild(cfg)),
        ("GET", ["guilds", _]) => Reply::error(StatusCode::NOT_FOUND, 10004, "Unknown Guild"),
        ("GET", ["guilds", guild, "members", user]) if id_is(guild, cfg.guild_id) => {
            if id_is(user, cfg.bot_user_id) {
                Reply::ok(payloads::bot_member(cfg))
            } else {
                Reply::error(StatusCode::NOT_FOUND, 10007, "Unknown Member")
            }
        }
        ("GET", ["channels", id]) => match known_channel(s, id) {
            Some(id) => {
                let bits = s.read().bot_permissions(cfg, id);
                match permissions::view(bits) {
                    Ok(()) => Reply::ok(payloads::channel(cfg, id, bits)),
                    Err(denied) => denied,
                }
            }
            None => unknown_channel(),
        },
        (m @ ("GET" | "PUT"), ["applications", app, "guilds", guild, "commands"]) => {
            if !id_is(app, cfg.application_id) || !id_is(guild, cfg.guild_id) {
                return Reply::error(StatusCode::FORBIDDEN, 50001, "Missing Access");
            }
            if m == "GET" {
                Reply::ok(Value::Array(s.read().commands.clone()))
            } else {
                commands::put(s, &json)
            }
        }
        ("POST", ["interactions", id, token, "callback"]) => {
            interactions::callback(s, id, token, &json)
        }
        ("POST", ["webhooks", app, token]) => webhook::followup(s, app, token, &json),
        (m @ ("GET" | "PATCH" | "DELETE"), ["webhooks", app, token, "messages", mid]) => {
            webhook::webhook_message(s, m, app, token, mid, &json)
        }
        ("POST", ["channels", id, "messages"]) => match known_channel(s, id) {
            Some(id) => messages::create(s, id, &json),
            None => unknown_channel(),
        },
        (m @ ("GET" | "PATCH" | "DELETE"), ["channels", id, "messages", mid]) => {
            match known_channel(s, id) {
                Some(id) => messages::existing(s, m, id, mid, &json),
                None => unknown_channel(),
            }
        }
        _ => unexpected(s, method, path),
    }
}

fn unexpected(s: &Shared, method: &Method, path: &str) -> Reply {
    s.lock()
        .violation(format!("unexpected call: {method} {path}"));
    Reply::error(StatusCode::NOT_FOUND, 0, "404: Not Found")
}

pub(crate) fn id_is(text: &str, id: u64) -> bool {
    text.parse::<u64>() == Ok(id)
}

fn known_channel(s: &Shared, id: &str) -> Option<u64> {
    let id = id.parse::<u64>().ok()?;
    s.cfg.channels.contains(&id).then_some(id)
}

fn unknown_channel() -> Reply {
    Reply::error(StatusCode::NOT_FOUND, 10003, "Unknown Channel")
}

pub(crate) fn unknown_message() -> Reply {
    Reply::error(StatusCode::NOT_FOUND, 10008, "Unknown Message")
}
