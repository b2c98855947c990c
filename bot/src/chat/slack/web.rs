//! Slack's Web API with one token: `POST {base}{method}`, the token in the `Authorization`
//! header only (never in a body, a URL, a log line or an error), and Slack's answer decoded into
//! the body of an `ok` call or a [`WebError`] that says what the caller may do next.
//!
//! Two things are remembered across calls, because Slack counts what it refuses against the
//! app: a 429 holds its method back until `Retry-After` has passed, for every caller at once,
//! and a refused token stops every further call made with it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap, RETRY_AFTER};
use secrecy::{ExposeSecret, SecretString};
use serde_json::Value;
use tokio::time::Instant;

use crate::backend::transport::fault;

/// Slack's answers that refuse the token itself rather than the call: every later call with it
/// would be refused the same way.
const TOKEN_REFUSALS: [&str; 5] = [
    "invalid_auth",
    "not_authed",
    "token_revoked",
    "token_expired",
    "account_inactive",
];

/// The wait after a 429 that does not say (or says nonsense): Slack always sends `Retry-After`,
/// a proxy in between may not.
const RETRY_AFTER_DEFAULT: Duration = Duration::from_secs(1);
/// The longest wait a 429 imposes: beyond it a method is tried again (and held back anew if
/// still limited) rather than silenced for as long as one bad header says.
const RETRY_AFTER_MAX: Duration = Duration::from_secs(60);

/// A Web API call that did not succeed. The text names Slack, the method and Slack's own
/// error code, as an operator would look it up; it never holds the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum WebError {
    /// `{"ok": false, "error": ...}`; `needed` is the scope a `missing_scope` names.
    #[error("Slack: {method}: {error}{}", needing(.needed.as_deref()))]
    Slack {
        method: &'static str,
        error: String,
        needed: Option<String>,
    },
    /// HTTP 429: the method is held back for `retry_after`.
    #[error("Slack: {method}: rate limited for {}s", .retry_after.as_secs())]
    RateLimited {
        method: &'static str,
        retry_after: Duration,
    },
    /// No answer (DNS, refused, timeout, TLS), or a 5xx.
    #[error("Slack: {method}: {cause}")]
    Unreachable { method: &'static str, cause: String },
    /// An answer that is not Slack's JSON envelope: a proxy's page, or a body cut short.
    #[error("Slack: {method}: answered {status} with something other than Slack's JSON")]
    Unreadable { method: &'static str, status: u16 },
    /// Not sent: Slack refused this token before, and would again.
    #[error("Slack: {method}: not sent, since Slack refused the token ({refusal})")]
    NotSent {
        method: &'static str,
        refusal: String,
    },
}

fn needing(needed: Option<&str>) -> String {
    needed
        .map(|scope| format!(" (needs {scope})"))
        .unwrap_or_default()
}

impl WebError {
    /// Whether the token itself is refused, so that nothing more should be asked with it.
    pub(super) fn refuses_token(&self) -> bool {
        match self {
            Self::Slack { error, .. } => TOKEN_REFUSALS.contains(&error.as_str()),
            Self::NotSent { .. } => true,
            Self::RateLimited { .. } | Self::Unreachable { .. } | Self::Unreadable { .. } => false,
        }
    }
}

/// A Web API client for one token. Clones share the token's state: a method held back after a
/// 429, or the token refused, holds for every clone.
#[derive(Clone)]
pub(super) struct Web {
    shared: Arc<Shared>,
}

struct Shared {
    client: reqwest::Client,
    /// `https://slack.com/api/`: the method's name is appended.
    base: String,
    token: SecretString,
    /// Per method, the instant before which Slack asked not to be called again.
    not_before: Mutex<HashMap<&'static str, Instant>>,
    /// Slack's code for the token's refusal, once it has refused it.
    refused: OnceLock<String>,
}

/// The base URL alone: the token stays out of every log line.
impl std::fmt::Debug for Web {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Web")
            .field("base", &self.shared.base)
            .finish_non_exhaustive()
    }
}

impl Web {
    /// `base` ends in `/` (the config checks it); `client` carries the timeout and the CA.
    pub(super) fn new(client: reqwest::Client, base: &str, token: SecretString) -> Self {
        Self {
            shared: Arc::new(Shared {
                client,
                base: base.to_owned(),
                token,
                not_before: Mutex::new(HashMap::new()),
                refused: OnceLock::new(),
            }),
        }
    }

    /// Calls `method` with `args` (a JSON object), once it is no longer held back; the whole
    /// body of an `ok` answer.
    pub(super) async fn call(&self, method: &'static str, args: &Value) -> Result<Value, WebError> {
        self.call_with_scopes(method, args)
            .await
            .map(|(body, _)| body)
    }

    /// [`Web::call`], with the token's scopes as Slack lists them on every answer
    /// (`X-OAuth-Scopes`): `None` when the answer did not say (a proxy may drop the header).
    pub(super) async fn call_with_scopes(
        &self,
        method: &'static str,
        args: &Value,
    ) -> Result<(Value, Option<Vec<String>>), WebError> {
        if let Some(refusal) = self.shared.refused.get() {
            return Err(WebError::NotSent {
                method,
                refusal: refusal.clone(),
            });
        }
        self.turn(method).await;
        let answer = match self.request(method, args).send().await {
            Ok(response) => self.answer(method, response).await,
            Err(error) => Err(unreachable(method, &error)),
        };
        if let Err(error @ WebError::Slack { error: code, .. }) = &answer {
            if error.refuses_token() {
                tracing::error!(%error, "Slack refused the token; nothing more is sent with it");
                let _first = self.shared.refused.set(code.clone());
            }
        }
        answer
    }

    /// Answers an interaction through its `response_url`, which needs no token (the URL is
    /// the credential, good for five answers within 30 minutes) and neither `chat:write` nor
    /// the bot's membership: a command typed where the bot may not post still gets its answer.
    /// Slack answers `ok` in plain text, or an error code with a 4xx.
    pub(super) async fn respond(&self, url: &str, answer: &Value) -> Result<(), WebError> {
        let json = "application/json; charset=utf-8";
        self.post_to("response_url", url, json, answer.to_string())
            .await
    }

    /// POSTs `body` to a URL Slack handed out (a `response_url`, an upload URL): without the
    /// token, since the URL is the credential and the token goes to Slack's API alone. Slack
    /// answers 2xx, or its error code in plain text with a 4xx.
    async fn post_to(
        &self,
        what: &'static str,
        url: &str,
        content_type: &str,
        body: String,
    ) -> Result<(), WebError> {
        let sent = self
            .shared
            .client
            .post(url)
            .header(CONTENT_TYPE, content_type)
            .body(body)
            .send()
            .await
            .map_err(|error| unreachable(what, &error))?;
        let status = sent.status();
        if status.is_success() {
            return Ok(());
        }
        let said = sent.text().await.unwrap_or_default();
        let error = said.trim().chars().take(40).collect::<String>();
        Err(match status {
            StatusCode::TOO_MANY_REQUESTS => WebError::RateLimited {
                method: what,
                retry_after: RETRY_AFTER_DEFAULT,
            },
            status if status.is_server_error() => WebError::Unreachable {
                method: what,
                cause: format!("answered {status}"),
            },
            _ => WebError::Slack {
                method: what,
                error,
                needed: None,
            },
        })
    }

    /// Shares `content` as a file `name` in `channel`, introduced by `comment`, in Slack's three
    /// steps (`files.upload` is retired): `files.getUploadURLExternal` gives a file id and a
    /// URL; the bytes are POSTed there, without the token (the URL is the credential, and the
    /// token goes to Slack's API alone); `files.completeUploadExternal` shares the file. Both
    /// methods need `files:write`; sharing needs the bot in the channel.
    pub(super) async fn upload(
        &self,
        channel: &str,
        name: &str,
        content: &str,
        comment: &str,
    ) -> Result<(), WebError> {
        const GET_URL: &str = "files.getUploadURLExternal";
        let args = serde_json::json!({ "filename": name, "length": content.len().to_string() });
        let answer = self.call(GET_URL, &args).await?;
        let field = |key: &str| answer.get(key).and_then(Value::as_str).map(str::to_owned);
        let (Some(url), Some(id)) = (field("upload_url"), field("file_id")) else {
            return Err(WebError::Unreadable {
                method: GET_URL,
                status: 200,
            });
        };
        let bytes = "application/octet-stream";
        self.post_to("upload_url", &url, bytes, content.to_owned())
            .await?;
        let files = serde_json::json!([{ "id": id, "title": name }]);
        let args = serde_json::json!({
            "files": files,
            "channel_id": channel,
            "initial_comment": comment,
        });
        self.call("files.completeUploadExternal", &args).await?;
        Ok(())
    }

    /// Waits until `method` is no longer held back; a 429 answered meanwhile holds it longer.
    async fn turn(&self, method: &'static str) {
        loop {
            let until = lock(&self.shared.not_before).get(method).copied();
            match until {
                Some(until) if until > Instant::now() => tokio::time::sleep_until(until).await,
                _ => return,
            }
        }
    }

    /// Holds `method` back for `wait`, or longer if another 429 asked for longer.
    fn hold_back(&self, method: &'static str, wait: Duration) {
        let until = Instant::now() + wait;
        let mut not_before = lock(&self.shared.not_before);
        let held = not_before.entry(method).or_insert(until);
        *held = (*held).max(until);
    }

    /// Write methods as JSON, which Slack takes for them (and which keeps `blocks` an array);
    /// the others as a form, the one encoding every method takes.
    fn request(&self, method: &'static str, args: &Value) -> reqwest::RequestBuilder {
        let request = self
            .shared
            .client
            .post(format!("{}{method}", self.shared.base))
            .bearer_auth(self.shared.token.expose_secret());
        if method.starts_with("chat.") {
            request
                .header(CONTENT_TYPE, "application/json; charset=utf-8")
                .body(args.to_string())
        } else {
            request.form(&form(args))
        }
    }

    async fn answer(
        &self,
        method: &'static str,
        response: reqwest::Response,
    ) -> Result<(Value, Option<Vec<String>>), WebError> {
        let status = response.status();
        if status == StatusCode::TOO_MANY_REQUESTS {
            let retry_after = retry_after(response.headers());
            self.hold_back(method, retry_after);
            return Err(WebError::RateLimited {
                method,
                retry_after,
            });
        }
        if status.is_server_error() {
            return Err(WebError::Unreachable {
                method,
                cause: format!("answered {status}"),
            });
        }
        let scopes = scopes(response.headers());
        let body = response
            .bytes()
            .await
            .map_err(|error| unreachable(method, &error))?;
        decode(method, status, serde_json::from_slice(&body).ok()).map(|body| (body, scopes))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A JSON object's fields as form fields: strings as they are, anything else as its JSON text
/// (Slack reads a form's `blocks` that way).
fn form(args: &Value) -> Vec<(&str, String)> {
    let fields = args.as_object().into_iter().flatten();
    fields
        .map(|(name, value)| match value {
            Value::String(text) => (name.as_str(), text.clone()),
            other => (name.as_str(), other.to_string()),
        })
        .collect()
}

/// `Retry-After` in whole seconds, as Slack sends it, kept within reason.
fn retry_after(headers: &HeaderMap) -> Duration {
    headers
        .get(RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok())
        .map_or(RETRY_AFTER_DEFAULT, |secs| {
            Duration::from_secs(secs).clamp(RETRY_AFTER_DEFAULT, RETRY_AFTER_MAX)
        })
}

/// `X-OAuth-Scopes: chat:write,commands`: an empty value is a token without any scope.
fn scopes(headers: &HeaderMap) -> Option<Vec<String>> {
    let listed = headers.get("x-oauth-scopes")?.to_str().ok()?;
    let scopes = listed.split(',').map(str::trim).filter(|s| !s.is_empty());
    Some(scopes.map(str::to_owned).collect())
}

/// Slack's envelope: `ok` true gives the body; false, its error code and the scope it needs.
fn decode(
    method: &'static str,
    status: StatusCode,
    body: Option<Value>,
) -> Result<Value, WebError> {
    let unreadable = WebError::Unreadable {
        method,
        status: status.as_u16(),
    };
    let Some(body) = body else {
        return Err(unreadable);
    };
    let text = |field: &str| body.get(field).and_then(Value::as_str).map(str::to_owned);
    match body.get("ok").and_then(Value::as_bool) {
        Some(true) => Ok(body),
        Some(false) => Err(WebError::Slack {
            method,
            error: text("error").unwrap_or_else(|| "unknown_error".to_owned()),
            needed: text("needed"),
        }),
        None => Err(unreadable),
    }
}

/// A request that got no answer, named as reqwest tells it: the origin (never a path, let alone
/// a token) and DNS, refused, timeout or TLS.
fn unreachable(method: &'static str, error: &reqwest::Error) -> WebError {
    WebError::Unreachable {
        method,
        cause: fault(error).to_string(),
    }
}

#[cfg(test)]
mod tests;
