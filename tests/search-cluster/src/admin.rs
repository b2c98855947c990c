//! The simulator's own control API under `/_sim/`: node containers, state, call log, faults.
//! Not part of ES; never logged as calls and never subject to faults.

use std::net::Ipv4Addr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};

use crate::app::App;
use crate::fault::FaultRule;
use crate::http::reply;
use crate::world::NodeStatus;

/// The result of stopping or starting a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeChange {
    /// Node IP.
    pub node: Ipv4Addr,
    /// State after the request.
    pub state: NodeStatus,
    /// Whether the request changed anything.
    pub changed: bool,
}

/// No node has this IP.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown node [{0}]")]
pub struct UnknownNode(pub String);

/// Container action on a node.
#[derive(Debug, Clone, Copy)]
pub(crate) enum NodeAction {
    Stop,
    Start,
}

/// Stops or starts the node with this IP (shared by [`crate::SimHandle`] and the HTTP API).
pub(crate) fn change_node(
    app: &App,
    ip: Ipv4Addr,
    action: NodeAction,
) -> Result<NodeChange, UnknownNode> {
    app.with_world(|world| {
        let changed = match action {
            NodeAction::Stop => world.stop_node(ip),
            NodeAction::Start => world.start_node(ip),
        }
        .ok_or_else(|| UnknownNode(ip.to_string()))?;
        let state = world
            .nodes()
            .iter()
            .find(|node| node.ip == ip)
            .map_or(NodeStatus::Stopped, |node| node.status);
        Ok(NodeChange {
            node: ip,
            state,
            changed,
        })
    })
}

#[derive(Serialize)]
struct AdminError {
    error: String,
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    reply(
        status,
        &AdminError {
            error: message.into(),
        },
        false,
    )
}

fn node_action(app: &App, ip: &str, action: NodeAction) -> Response {
    let result = ip
        .parse()
        .map_err(|_| UnknownNode(ip.to_owned()))
        .and_then(|ip| change_node(app, ip, action));
    match result {
        Ok(change) => reply(StatusCode::OK, &change, false),
        Err(unknown) => error(StatusCode::NOT_FOUND, unknown.to_string()),
    }
}

async fn stop(State(app): State<Arc<App>>, Path(ip): Path<String>) -> Response {
    node_action(&app, &ip, NodeAction::Stop)
}

async fn start(State(app): State<Arc<App>>, Path(ip): Path<String>) -> Response {
    node_action(&app, &ip, NodeAction::Start)
}

async fn state(State(app): State<Arc<App>>) -> Response {
    reply(
        StatusCode::OK,
        &app.with_world(|world| world.snapshot()),
        false,
    )
}

async fn calls(State(app): State<Arc<App>>) -> Response {
    reply(StatusCode::OK, &app.calls().list(), false)
}

async fn clear_calls(State(app): State<Arc<App>>) -> StatusCode {
    app.calls().clear();
    StatusCode::NO_CONTENT
}

async fn faults(State(app): State<Arc<App>>) -> Response {
    let rules = app.faults().clone();
    reply(StatusCode::OK, &rules, false)
}

async fn set_faults(State(app): State<Arc<App>>, body: Bytes) -> Response {
    match serde_json::from_slice::<Vec<FaultRule>>(&body) {
        Ok(rules) => {
            *app.faults() = rules.clone();
            reply(StatusCode::OK, &rules, false)
        }
        Err(problem) => error(
            StatusCode::BAD_REQUEST,
            format!("invalid fault rules: {problem}"),
        ),
    }
}

async fn clear_faults(State(app): State<Arc<App>>) -> StatusCode {
    app.faults().clear();
    StatusCode::NO_CONTENT
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such simulator endpoint")
}

pub(crate) fn router() -> Router<Arc<App>> {
    Router::new()
        .route("/nodes/{ip}/stop", post(stop))
        .route("/nodes/{ip}/start", post(start))
        .route("/state", get(state))
        .route("/calls", get(calls).delete(clear_calls))
        .route("/faults", get(faults).put(set_faults).delete(clear_faults))
        .fallback(not_found)
}
