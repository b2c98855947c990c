//! The Web API over HTTP: `GET`/`POST /api/{method}`, the token checks every method shares,
//! test-queued failures, rate limits, and Slack's envelope (`ok`, `error`, warnings, 429).

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::methods::WebMethod;
use crate::params::Params;
use crate::state::{Inner, Shared, TokenKind};
use crate::{Failure, TokenStatus, Visibility, chat};

pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    let app = Router::new()
        .route("/api/{method}", get(handle).post(handle))
        .route(
            "/hooks/{kind}/{team}/{id}",
            axum::routing::post(crate::response::handle),
        )
        .route("/upload/{id}", axum::routing::post(crate::files::receive))
        .with_state(Arc::clone(&shared));
    let listener = AwayListener { listener, shared };
    let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
        let _ = stop.wait_for(|stop| *stop).await;
    });
    if let Err(e) = serve.await {
        tracing::warn!("fake slack: web server failed: {e}");
    }
}

/// Accepts connections, and while Slack is "away" closes them at once unanswered, as a client
/// meets an outage: a connection reset rather than any HTTP status.
struct AwayListener {
    listener: TcpListener,
    shared: Arc<Shared>,
}

impl axum::serve::Listener for AwayListener {
    type Io = TcpStream;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.listener.accept().await {
                Ok(_) if self.shared.cuts() => {}
                Ok(conn) => return conn,
                Err(e) => {
                    tracing::debug!("fake slack: accept failed: {e}");
                    tokio::task::yield_now().await;
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.listener.local_addr()
    }
}

/// A method's refusal, before it becomes Slack's JSON.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// `{"ok": false, "error": code}`
    Code(&'static str),
    /// `missing_scope`, with the scope needed and those the token has, comma-separated.
    MissingScope {
        needed: &'static str,
        provided: String,
    },
}

/// What the client gets.
enum Answer {
    Ok(Value),
    Refused(Refusal),
    NotFound(String),
    RateLimited(u64),
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    Path(name): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (answer, granted) = match WebMethod::parse(&name) {
        None => (Answer::NotFound(name.clone()), None),
        Some(method) => answer(&shared, method, &uri, &headers, &body),
    };
    tracing::debug!(method = %name, "fake slack: answered");
    let (status, body, retry) = match answer {
        Answer::Ok(body) => (StatusCode::OK, body, None),
        Answer::Refused(Refusal::Code(code)) => {
            (StatusCode::OK, json!({"ok": false, "error": code}), None)
        }
        Answer::Refused(Refusal::MissingScope { needed, provided }) => (
            StatusCode::OK,
            json!({"ok": false, "error": "missing_scope", "needed": needed, "provided": provided}),
            None,
        ),
        // Slack answers an unknown method with 404 and says which it did not know.
        Answer::NotFound(name) => (
            StatusCode::NOT_FOUND,
            json!({"ok": false, "error": "unknown_method", "req_method": name}),
            None,
        ),
        Answer::RateLimited(secs) => (
            StatusCode::TOO_MANY_REQUESTS,
            json!({"ok": false, "error": "ratelimited"}),
            Some(secs),
        ),
    };
    let mut response = (status, axum::Json(body)).into_response();
    if let Some(secs) = retry {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    if let Some(granted) = granted {
        granted.add_to(response.headers_mut());
    }
    response
}

/// What Slack says of the scopes on every answer to a token it admitted: `X-OAuth-Scopes`, the
/// token's scopes, and `X-Accepted-OAuth-Scopes`, those that let the method be called (absent
/// for a method that needs none), each comma-separated as Slack writes them.
struct Granted {
    scopes: String,
    accepted: Option<String>,
}

impl Granted {
    fn new(method: WebMethod, scopes: &BTreeSet<String>) -> Self {
        // `conversations.info` and `.history` take either kind of channel's scope.
        let mut accepted: Vec<&str> = [Visibility::Public, Visibility::Private]
            .into_iter()
            .filter_map(|kind| method.scope(Some(kind)))
            .collect();
        accepted.dedup();
        Self {
            scopes: scopes.iter().cloned().collect::<Vec<_>>().join(","),
            accepted: (!accepted.is_empty()).then(|| accepted.join(",")),
        }
    }

    fn add_to(self, headers: &mut HeaderMap) {
        let named = [
            ("x-oauth-scopes", Some(self.scopes)),
            ("x-accepted-oauth-scopes", self.accepted),
        ];
        for (name, value) in named {
            // Scope names are ASCII: a value is always a valid header.
            if let Some(Ok(value)) = value.map(HeaderValue::try_from) {
                headers.insert(name, value);
            }
        }
    }
}

/// The answer, with the scope headers once the token is admitted.
fn answer(
    s: &Shared,
    method: WebMethod,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> (Answer, Option<Granted>) {
    let refused = |code| (Answer::Refused(Refusal::Code(code)), None);
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let params = match Params::parse(content_type, uri.query().unwrap_or(""), body) {
        Ok(params) => params,
        Err(code) => return refused(code),
    };
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let mut inner = s.lock();
    let Some(token) = bearer.or_else(|| params.body_token.clone()) else {
        return refused("not_authed");
    };
    let Some(token_state) = inner.tokens.get(&token) else {
        return refused("invalid_auth");
    };
    match token_state.status {
        TokenStatus::Active => {}
        TokenStatus::Revoked => return refused("token_revoked"),
        TokenStatus::Inactive => return refused("account_inactive"),
    }
    let kind = token_state.kind;
    let scopes = token_state.scopes.clone();
    let granted = Granted::new(method, &scopes);
    let answer = admitted(s, &mut inner, method, &token, kind, &scopes, &params);
    (answer, Some(granted))
}

/// A call with an active token: its method acts, unless a queued failure, the token's kind
/// or a rate limit stops it first.
fn admitted(
    s: &Shared,
    inner: &mut Inner,
    method: WebMethod,
    token: &str,
    kind: TokenKind,
    scopes: &BTreeSet<String>,
    params: &Params,
) -> Answer {
    inner
        .calls
        .push((method, Value::Object(params.args.clone())));
    if let Some(failure) = inner.failures.get_mut(&method).and_then(|q| q.pop_front()) {
        return match failure {
            Failure::Error(code) => Answer::Ok(json!({"ok": false, "error": code})),
            Failure::RateLimited { retry_after_secs } => Answer::RateLimited(retry_after_secs),
        };
    }
    if kind != method.token_kind() {
        return Answer::Refused(Refusal::Code("not_allowed_token_type"));
    }
    let channel = params.str("channel");
    let now = s.now();
    let burst = s.cfg.post_burst;
    if let Err(secs) =
        inner
            .limiter
            .check(now, token, method, channel.as_deref(), burst, s.cfg.minute)
    {
        return Answer::RateLimited(secs);
    }
    let mut warnings = Vec::new();
    if params.missing_charset {
        warnings.push("missing_charset");
    }
    let call = Call {
        shared: s,
        inner,
        scopes,
        params,
        warnings: &mut warnings,
    };
    match chat::dispatch(method, call) {
        Ok(Value::Object(mut fields)) => {
            let mut body = serde_json::Map::new();
            body.insert("ok".into(), Value::Bool(true));
            body.append(&mut fields);
            warn(&mut body, &warnings);
            Answer::Ok(Value::Object(body))
        }
        Ok(_) => Answer::Ok(json!({"ok": true})),
        Err(refusal) => Answer::Refused(refusal),
    }
}

/// Slack's warnings on a successful answer: `warning`, comma-separated, and the list in
/// `response_metadata.warnings`, beside whatever else `response_metadata` holds (a cursor).
fn warn(body: &mut serde_json::Map<String, Value>, warnings: &[&'static str]) {
    if warnings.is_empty() {
        return;
    }
    body.insert("warning".into(), json!(warnings.join(",")));
    let meta = body.entry("response_metadata").or_insert_with(|| json!({}));
    if let Value::Object(meta) = meta {
        meta.insert("warnings".into(), json!(warnings));
    }
}

/// One authenticated, admitted call, for the method to act on.
pub(crate) struct Call<'a> {
    pub(crate) shared: &'a Shared,
    pub(crate) inner: &'a mut Inner,
    pub(crate) scopes: &'a BTreeSet<String>,
    pub(crate) params: &'a Params,
    /// Warnings for the answer, should the call succeed.
    pub(crate) warnings: &'a mut Vec<&'static str>,
}

impl Call<'_> {
    /// `missing_scope` unless the token has `needed`.
    pub(crate) fn need(&self, needed: &'static str) -> Result<(), Refusal> {
        if self.scopes.contains(needed) {
            return Ok(());
        }
        let provided = self.scopes.iter().cloned().collect::<Vec<_>>().join(",");
        Err(Refusal::MissingScope { needed, provided })
    }

    /// Adds a warning to the answer (`invalid_metadata_schema`, say), once.
    pub(crate) fn warn(&mut self, code: &'static str) {
        if !self.warnings.contains(&code) {
            self.warnings.push(code);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{FakeSlack, SlackConfig, TokenStatus, Visibility};

    /// `method` called with `token`: its two scope headers and its body.
    async fn call(
        fake: &FakeSlack,
        method: &str,
        token: &str,
        args: serde_json::Value,
    ) -> (Option<String>, Option<String>, serde_json::Value) {
        let response = reqwest::Client::new()
            .post(format!("{}{method}", fake.base_url()))
            .bearer_auth(token)
            .header("content-type", "application/json; charset=utf-8")
            .body(args.to_string())
            .send()
            .await
            .unwrap();
        let header = |name: &str| {
            let value = response.headers().get(name)?;
            Some(value.to_str().unwrap().to_owned())
        };
        let (scopes, accepted) = (header("x-oauth-scopes"), header("x-accepted-oauth-scopes"));
        (scopes, accepted, response.json().await.unwrap())
    }

    #[tokio::test]
    async fn an_admitted_token_is_told_its_scopes_and_those_the_method_accepts() {
        let fake = FakeSlack::start(SlackConfig::default()).await;
        let bot = fake.config().bot_token.clone();
        let none = serde_json::json!({});
        let (scopes, accepted, body) = call(&fake, "auth.test", &bot, none.clone()).await;
        assert_eq!(body["ok"], true);
        let all = "channels:read,chat:write,commands,groups:read";
        assert_eq!(scopes.as_deref(), Some(all));
        assert_eq!(accepted, None, "auth.test needs no scope");

        let ops = fake.add_channel("ops", Visibility::Public, true);
        let info = serde_json::json!({"channel": ops});
        let (_, accepted, _) = call(&fake, "conversations.info", &bot, info).await;
        assert_eq!(accepted.as_deref(), Some("channels:read,groups:read"));

        // A refusal of the call, not of the token, says them too.
        fake.set_scopes(&bot, &["channels:read"]);
        let post = serde_json::json!({"channel": ops, "text": "hi"});
        let (scopes, accepted, body) = call(&fake, "chat.postMessage", &bot, post).await;
        assert_eq!(body["error"], "missing_scope");
        assert_eq!(scopes.as_deref(), Some("channels:read"));
        assert_eq!(accepted.as_deref(), Some("chat:write"));
        fake.set_scopes(&bot, &[]);
        let (scopes, _, _) = call(&fake, "auth.test", &bot, none.clone()).await;
        assert_eq!(
            scopes.as_deref(),
            Some(""),
            "no scope at all is an empty list"
        );

        let app = fake.config().app_token.clone();
        let (scopes, accepted, _) = call(&fake, "apps.connections.open", &app, none).await;
        assert_eq!(scopes.as_deref(), Some("connections:write"));
        assert_eq!(accepted.as_deref(), Some("connections:write"));
    }

    #[tokio::test]
    async fn a_refused_token_is_told_no_scopes() {
        let fake = FakeSlack::start(SlackConfig::default()).await;
        let none = serde_json::json!({});
        let (scopes, accepted, body) = call(&fake, "auth.test", "xoxb-nope", none.clone()).await;
        assert_eq!(body["error"], "invalid_auth");
        assert_eq!((scopes, accepted), (None, None));
        let bot = fake.config().bot_token.clone();
        fake.set_token_status(&bot, TokenStatus::Revoked);
        let (scopes, _, body) = call(&fake, "auth.test", &bot, none).await;
        assert_eq!(body["error"], "token_revoked");
        assert_eq!(scopes, None);
    }
}
