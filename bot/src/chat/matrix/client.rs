//! The Matrix client-server API (spec.matrix.org, v3) with the bot's access token: JSON in and
//! out, the token in the `Authorization` header only (never in a URL, a log line or an error),
//! and the homeserver's answer decoded into a body or a [`MatrixError`] that says what the
//! caller may do next.
//!
//! Two things are shared by every caller: a 429 (`M_LIMIT_EXCEEDED`) holds every request
//! back until its `retry_after_ms` has passed, and messages are paced by the bot's
//! `messages_per_second`, since the homeserver counts posts, edits and answers alike.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use reqwest::{Method, StatusCode};
use secrecy::{ExposeSecret, SecretString};
use serde_json::Value;
use tokio::time::Instant;

use crate::backend::transport::fault;
use crate::progress::Pace;

/// The wait after a 429 that does not say how long: Synapse always says; a proxy may not.
const RETRY_AFTER_DEFAULT: Duration = Duration::from_secs(1);
/// The longest wait one 429 imposes: beyond it a request is tried (and held back) anew.
const RETRY_AFTER_MAX: Duration = Duration::from_secs(60);

/// A request that did not succeed. The text names the homeserver's `errcode` and its words, as
/// an operator would look them up; it never holds the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum MatrixError {
    /// A 4xx with the homeserver's `errcode` (`M_FORBIDDEN`, `M_UNKNOWN_TOKEN`, …).
    #[error("Matrix: {what}: {status} {errcode}: {error}")]
    Refused {
        what: &'static str,
        status: u16,
        errcode: String,
        error: String,
    },
    /// HTTP 429: every request is held back for `retry_after`.
    #[error("Matrix: {what}: rate limited for {} ms", .retry_after.as_millis())]
    RateLimited {
        what: &'static str,
        retry_after: Duration,
    },
    /// No answer (DNS, refused, timeout, TLS), or a 5xx.
    #[error("Matrix: {what}: {cause}")]
    Unreachable { what: &'static str, cause: String },
}

impl MatrixError {
    /// The homeserver's `errcode`, when it refused.
    pub(super) fn errcode(&self) -> Option<&str> {
        match self {
            Self::Refused { errcode, .. } => Some(errcode),
            _ => None,
        }
    }

    /// The access token is not (or no longer) valid: logged out, deactivated, or wrong.
    pub(super) fn refuses_token(&self) -> bool {
        matches!(
            self.errcode(),
            Some("M_UNKNOWN_TOKEN" | "M_MISSING_TOKEN" | "M_USER_DEACTIVATED")
        )
    }

    /// May pass: a 429, no answer, a 5xx.
    pub(super) fn is_transient(&self) -> bool {
        matches!(self, Self::RateLimited { .. } | Self::Unreachable { .. })
    }
}

/// A client for the bot's user. Clones share the token, the 429 hold and the message pace.
#[derive(Clone)]
pub(super) struct Client {
    shared: Arc<Shared>,
}

struct Shared {
    http: reqwest::Client,
    /// `https://matrix.example.org`, without a trailing `/`.
    base: String,
    token: Mutex<Option<SecretString>>,
    /// The instant before which the homeserver asked not to be called again.
    not_before: Mutex<Option<Instant>>,
    messages: tokio::sync::Mutex<Pace>,
}

/// The base URL alone: the token stays out of every log line.
impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.shared.base)
            .finish_non_exhaustive()
    }
}

impl Client {
    pub(super) fn new(http: reqwest::Client, base: &str, messages: Pace) -> Self {
        Self {
            shared: Arc::new(Shared {
                http,
                base: base.trim_end_matches('/').to_owned(),
                token: Mutex::new(None),
                not_before: Mutex::new(None),
                messages: tokio::sync::Mutex::new(messages),
            }),
        }
    }

    /// Uses `token` from now on (given, or from a login).
    pub(super) fn set_token(&self, token: SecretString) {
        *self
            .shared
            .token
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(token);
    }

    /// `method path` (under `/_matrix/client`, its version first: `/v3/sync`) with `body`; the
    /// answer's JSON.
    pub(super) async fn call(
        &self,
        what: &'static str,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, MatrixError> {
        self.call_waiting(what, method, path, body, Duration::ZERO)
            .await
    }

    /// [`Client::call`] for a request the homeserver may hold open for `wait` (a sync).
    pub(super) async fn call_waiting(
        &self,
        what: &'static str,
        method: Method,
        path: &str,
        body: Option<&Value>,
        wait: Duration,
    ) -> Result<Value, MatrixError> {
        let url = format!("{}/_matrix/client{path}", self.shared.base);
        let mut request = self.shared.http.request(method, url);
        if !wait.is_zero() {
            request = request.timeout(wait + Duration::from_secs(30));
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        self.request(what, request).await
    }

    /// Sends `request` with the token, once the homeserver no longer holds requests back; the
    /// answer's JSON.
    async fn request(
        &self,
        what: &'static str,
        mut request: reqwest::RequestBuilder,
    ) -> Result<Value, MatrixError> {
        self.turn().await;
        if let Some(token) = self.token() {
            request = request.bearer_auth(token.expose_secret());
        }
        let response = request
            .send()
            .await
            .map_err(|error| MatrixError::Unreachable {
                what,
                cause: fault(&error).to_string(),
            })?;
        self.answer(what, response).await
    }

    /// Sends one message event to a room, within the bot's message pace. `txn` makes the send
    /// idempotent: the homeserver answers a repeated transaction id of the same device with the
    /// event it made the first time, so a bot killed before it stored the id posts nothing twice.
    pub(super) async fn send(
        &self,
        room: &str,
        kind: &str,
        txn: &str,
        content: &Value,
    ) -> Result<String, MatrixError> {
        self.shared.messages.lock().await.ready().await;
        let path = format!(
            "/v3/rooms/{}/send/{}/{}",
            encode(room),
            encode(kind),
            encode(txn)
        );
        let sent = self
            .call("sending a message", Method::PUT, &path, Some(content))
            .await?;
        Ok(sent["event_id"].as_str().unwrap_or_default().to_owned())
    }

    /// Uploads `text` as a file `name` to the homeserver's media repository; its `mxc://` URI.
    pub(super) async fn upload(&self, name: &str, text: &str) -> Result<String, MatrixError> {
        let url = format!(
            "{}/_matrix/media/v3/upload?filename={}",
            self.shared.base,
            encode(name)
        );
        let request = (self.shared.http.post(url))
            .header(reqwest::header::CONTENT_TYPE, "text/plain; charset=utf-8")
            .body(text.to_owned());
        let uploaded = self.request("uploading a file", request).await?;
        Ok(uploaded["content_uri"]
            .as_str()
            .unwrap_or_default()
            .to_owned())
    }

    /// Whether the client has a token (given, or from a login).
    pub(super) fn has_token(&self) -> bool {
        self.token().is_some()
    }

    fn token(&self) -> Option<SecretString> {
        self.shared
            .token
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Waits while the homeserver asked not to be called.
    async fn turn(&self) {
        let until = *self
            .shared
            .not_before
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(until) = until {
            tokio::time::sleep_until(until).await;
        }
    }

    async fn answer(
        &self,
        what: &'static str,
        response: reqwest::Response,
    ) -> Result<Value, MatrixError> {
        let status = response.status();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        if status.is_success() {
            return Ok(body);
        }
        if status == StatusCode::TOO_MANY_REQUESTS {
            let retry_after = body["retry_after_ms"]
                .as_u64()
                .map_or(RETRY_AFTER_DEFAULT, Duration::from_millis)
                .min(RETRY_AFTER_MAX);
            let until = Instant::now() + retry_after;
            let mut held = self
                .shared
                .not_before
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            *held = Some(held.map_or(until, |held| held.max(until)));
            return Err(MatrixError::RateLimited { what, retry_after });
        }
        if status.is_server_error() {
            return Err(MatrixError::Unreachable {
                what,
                cause: format!("the homeserver answered {status}"),
            });
        }
        let text = |field: &str| {
            let said = body[field].as_str().unwrap_or_default();
            opsbot_commands::echo::visible(said, 200)
        };
        Err(MatrixError::Refused {
            what,
            status: status.as_u16(),
            errcode: text("errcode"),
            error: text("error"),
        })
    }
}

/// A path segment: room ids (`!a:b`), event ids (`$x`) and user ids carry `!`, `$`, `:`
/// and `@`, which a path must not take raw.
pub(super) fn encode(segment: &str) -> String {
    let mut encoded = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_encoded_as_path_segments() {
        assert_eq!(encode("!abc:localhost"), "%21abc%3Alocalhost");
        assert_eq!(encode("$ev/1+x"), "%24ev%2F1%2Bx");
        assert_eq!(encode("opsbot-r-1"), "opsbot-r-1");
    }
}
