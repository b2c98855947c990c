//! The Web API over HTTP: `GET`/`POST /api/{method}`, the token checks every method shares,
//! test-queued failures, rate limits, and Slack's envelope (`ok`, `error`, warnings, 429).

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
use crate::state::{Inner, Shared};
use crate::{Failure, TokenStatus, chat};

pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    let app = Router::new()
        .route("/api/{method}", get(handle).post(handle))
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
                Ok(_) if self.shared.is_away() => {}
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
    let answer = match WebMethod::parse(&name) {
        None => Answer::NotFound(name.clone()),
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
    response
}

fn answer(s: &Shared, method: WebMethod, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> Answer {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let params = match Params::parse(content_type, uri.query().unwrap_or(""), body) {
        Ok(params) => params,
        Err(code) => return Answer::Refused(Refusal::Code(code)),
    };
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let mut inner = s.lock();
    let Some(token) = bearer.or_else(|| params.body_token.clone()) else {
        return Answer::Refused(Refusal::Code("not_authed"));
    };
    let Some(token_state) = inner.tokens.get(&token) else {
        return Answer::Refused(Refusal::Code("invalid_auth"));
    };
    match token_state.status {
        TokenStatus::Active => {}
        TokenStatus::Revoked => return Answer::Refused(Refusal::Code("token_revoked")),
        TokenStatus::Inactive => return Answer::Refused(Refusal::Code("account_inactive")),
    }
    let kind = token_state.kind;
    let scopes = token_state.scopes.clone();
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
            .check(now, &token, method, channel.as_deref(), burst, s.cfg.minute)
    {
        return Answer::RateLimited(secs);
    }
    let call = Call {
        shared: s,
        inner: &mut inner,
        scopes: &scopes,
        params: &params,
    };
    match chat::dispatch(method, call) {
        Ok(Value::Object(mut fields)) => {
            let mut body = serde_json::Map::new();
            body.insert("ok".into(), Value::Bool(true));
            body.append(&mut fields);
            if params.missing_charset {
                body.insert("warning".into(), json!("missing_charset"));
                body.insert(
                    "response_metadata".into(),
                    json!({"warnings": ["missing_charset"]}),
                );
            }
            Answer::Ok(Value::Object(body))
        }
        Ok(_) => Answer::Ok(json!({"ok": true})),
        Err(refusal) => Answer::Refused(refusal),
    }
}

/// One authenticated, admitted call, for the method to act on.
pub(crate) struct Call<'a> {
    pub(crate) shared: &'a Shared,
    pub(crate) inner: &'a mut Inner,
    pub(crate) scopes: &'a std::collections::BTreeSet<String>,
    pub(crate) params: &'a Params,
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
}
