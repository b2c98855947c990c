//! Admin controls of the simulated Nova: the clock, compute service restarts (what a
//! `docker restart nova_compute` on the host would do) and migrations.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use super::error;
use crate::app::App;
use crate::http::json;
use crate::world::{Migration, MigrationError, MigrationType, RestartError, RestartFault};

/// A refused admin request: the status and the `error` message.
#[derive(Debug)]
struct Refusal(StatusCode, String);

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        error(self.0, &self.1)
    }
}

type Answer = Result<Response, Refusal>;

/// A JSON body, or 400; an empty body reads as `{}`.
fn parse<T: DeserializeOwned>(body: &Bytes) -> Result<T, Refusal> {
    let text: &[u8] = if body.is_empty() { b"{}" } else { body };
    serde_json::from_slice(text)
        .map_err(|problem| Refusal(StatusCode::BAD_REQUEST, format!("invalid body: {problem}")))
}

/// Seconds as a duration, or 400.
fn seconds(value: f64) -> Result<Duration, Refusal> {
    Duration::try_from_secs_f64(value).map_err(|_| {
        Refusal(
            StatusCode::BAD_REQUEST,
            format!("not a duration in seconds: {value}"),
        )
    })
}

fn now(app: &App) -> Response {
    let now = app.world().now();
    json(
        StatusCode::OK,
        &json!({"now": now.format(&Rfc3339).unwrap_or_default()}),
    )
}

async fn clock(State(app): State<Arc<App>>) -> Response {
    now(&app)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Advance {
    seconds: f64,
}

async fn advance(State(app): State<Arc<App>>, body: Bytes) -> Answer {
    let by = seconds(parse::<Advance>(&body)?.seconds)?;
    app.world().advance_clock(by);
    Ok(now(&app))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Restart {
    down_for_seconds: Option<f64>,
}

/// 404 for a host without a compute service, 500 for a restart that fails (its switch); a
/// restart answers after [`crate::CloudSimConfig::compute_restart_call`], as `docker restart`
/// does.
async fn restart(State(app): State<Arc<App>>, Path(host): Path<String>, body: Bytes) -> Answer {
    let down_for = parse::<Restart>(&body)?
        .down_for_seconds
        .map(seconds)
        .transpose()?;
    let (restarted, call) = {
        let mut world = app.world();
        (world.restart_compute(&host, down_for), world.restart_call())
    };
    match restarted {
        Ok(restart) => {
            tokio::time::sleep(call).await;
            Ok(json(StatusCode::OK, &restart))
        }
        Err(refused @ RestartError::NoComputeService(_)) => {
            Err(Refusal(StatusCode::NOT_FOUND, refused.to_string()))
        }
        Err(refused @ RestartError::Failed(_)) => Err(Refusal(
            StatusCode::INTERNAL_SERVER_ERROR,
            refused.to_string(),
        )),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultSwitch {
    fault: RestartFault,
}

async fn set_restart_fault(
    State(app): State<Arc<App>>,
    Path(host): Path<String>,
    body: Bytes,
) -> Answer {
    let switch = parse::<FaultSwitch>(&body)?;
    app.world().set_restart_fault(&host, Some(switch.fault));
    Ok(json(
        StatusCode::OK,
        &json!({"host": host, "fault": switch.fault}),
    ))
}

async fn clear_restart_fault(State(app): State<Arc<App>>, Path(host): Path<String>) -> StatusCode {
    app.world().set_restart_fault(&host, None);
    StatusCode::NO_CONTENT
}

async fn restarts(State(app): State<Arc<App>>) -> Response {
    json(StatusCode::OK, app.world().compute_restarts())
}

async fn migrations(State(app): State<Arc<App>>) -> Response {
    let world = app.world();
    json(StatusCode::OK, &world.migrations().collect::<Vec<_>>())
}

/// A migration step's outcome: the record, or 404 for what does not exist and 409 for what
/// Nova would refuse.
fn outcome(result: Result<Migration, MigrationError>, status: StatusCode) -> Answer {
    match result {
        Ok(migration) => Ok(json(status, &migration)),
        Err(
            refused @ (MigrationError::UnknownServer(_)
            | MigrationError::UnknownMigration(_)
            | MigrationError::UnknownHost(_)),
        ) => Err(Refusal(StatusCode::NOT_FOUND, refused.to_string())),
        Err(refused) => Err(Refusal(StatusCode::CONFLICT, refused.to_string())),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Start {
    server: Uuid,
    dest: String,
    migration_type: MigrationType,
}

async fn start_migration(State(app): State<Arc<App>>, body: Bytes) -> Answer {
    let start = parse::<Start>(&body)?;
    let started = app
        .world()
        .start_migration(start.server, &start.dest, start.migration_type);
    outcome(started, StatusCode::CREATED)
}

/// The migration a path segment names, or 404.
fn migration_id(raw: &str) -> Result<Uuid, Refusal> {
    Uuid::parse_str(raw).map_err(|_| {
        Refusal(
            StatusCode::NOT_FOUND,
            format!("Migration {raw} could not be found."),
        )
    })
}

async fn step(State(app): State<Arc<App>>, Path((raw, action)): Path<(String, String)>) -> Answer {
    let uuid = migration_id(&raw)?;
    let mut world = app.world();
    let result = match action.as_str() {
        "finish" => world.finish_migration(uuid),
        "confirm" => world.confirm_migration(uuid),
        "revert" => world.revert_migration(uuid),
        "fail" => world.fail_migration(uuid),
        _ => {
            return Err(Refusal(
                StatusCode::NOT_FOUND,
                "no such migration step: finish, confirm, revert or fail".to_owned(),
            ));
        }
    };
    outcome(result, StatusCode::OK)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Status {
    status: String,
}

async fn set_status(State(app): State<Arc<App>>, Path(raw): Path<String>, body: Bytes) -> Answer {
    let uuid = migration_id(&raw)?;
    let status = parse::<Status>(&body)?;
    let set = app.world().set_migration_status(uuid, &status.status);
    outcome(set, StatusCode::OK)
}

pub(super) fn router() -> Router<Arc<App>> {
    Router::new()
        .route("/clock", get(clock))
        .route("/clock/advance", post(advance))
        .route("/compute/restarts", get(restarts))
        .route("/compute/{host}/restart", post(restart))
        .route(
            "/compute/{host}/restart-fault",
            put(set_restart_fault).delete(clear_restart_fault),
        )
        .route("/migrations", get(migrations).post(start_migration))
        .route("/migrations/{uuid}/status", put(set_status))
        .route("/migrations/{uuid}/{action}", post(step))
}
