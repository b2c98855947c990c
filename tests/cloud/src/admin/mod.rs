//! The simulator's own control API under `/_sim/`: state, call log, faults, token revocation,
//! and (in [`nova`]) the clock, compute restarts and migrations. Not part of OpenStack; never
//! logged as calls, never faulted, never token-checked.

mod nova;

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use opsbot_search_sim::FaultRule;
use serde_json::json;

use crate::app::App;
use crate::http::json;

async fn state(State(app): State<Arc<App>>) -> Response {
    json(StatusCode::OK, &app.world().state())
}

async fn calls(State(app): State<Arc<App>>) -> Response {
    json(StatusCode::OK, &app.calls().list())
}

async fn clear_calls(State(app): State<Arc<App>>) -> StatusCode {
    app.calls().clear();
    StatusCode::NO_CONTENT
}

async fn faults(State(app): State<Arc<App>>) -> Response {
    let rules = app.faults().clone();
    json(StatusCode::OK, &rules)
}

async fn set_faults(State(app): State<Arc<App>>, body: Bytes) -> Response {
    match serde_json::from_slice::<Vec<FaultRule>>(&body) {
        Ok(rules) => {
            *app.faults() = rules.clone();
            json(StatusCode::OK, &rules)
        }
        Err(problem) => error(
            StatusCode::BAD_REQUEST,
            &format!("invalid fault rules: {problem}"),
        ),
    }
}

async fn clear_faults(State(app): State<Arc<App>>) -> StatusCode {
    app.faults().clear();
    StatusCode::NO_CONTENT
}

async fn revoke_tokens(State(app): State<Arc<App>>) -> StatusCode {
    app.tokens().revoke_all();
    StatusCode::NO_CONTENT
}

/// The admin API's error body: `{"error": "..."}`.
pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({ "error": message }))).into_response()
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such simulator endpoint")
}

pub(crate) fn router() -> Router<Arc<App>> {
    Router::new()
        .route("/state", get(state))
        .route("/calls", get(calls).delete(clear_calls))
        .route("/faults", get(faults).put(set_faults).delete(clear_faults))
        .route("/revoke-tokens", post(revoke_tokens))
        .merge(nova::router())
        .fallback(not_found)
}
