//! Composable index templates (`_index_template`), data streams (`_data_stream`) and rollover,
//! with each flavor's response shapes.
//!
//! `GET _data_stream` follows `GetDataStreamAction.Response`: ES 7.10 (default distribution)
//! and OpenSearch 2.11 list `name`, `timestamp_field`, `indices` (`index_name`,
//! `index_uuid`), `generation`, `status` (upper case) and `template` (ES 7.10 adds
//! `ilm_policy` when the template sets one); ES 8.11 adds per-index `prefer_ilm`/`ilm_policy`/
//! `managed_by` and the stream's `next_generation_managed_by`, `prefer_ilm`, `hidden`,
//! `system`, `allow_custom_routing`, `replicated`.

use axum::body::Bytes;
use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;

use super::create::name_problem;
use super::errors::ApiError;
use super::json::{Ordered, reply};
use super::params::Params;
use super::templates::parse_template;
use super::wait::primary_started;
use crate::app::App;
use crate::config::Flavor;
use crate::world::index_settings::LIFECYCLE_NAME;
use crate::world::{DataStream, HealthStatus, StreamError, World, glob_match};

#[derive(Debug, Serialize)]
struct Acknowledged {
    acknowledged: bool,
}

fn acknowledged(params: &Params) -> Response {
    reply(
        StatusCode::OK,
        &Acknowledged { acknowledged: true },
        params.pretty(),
    )
}

fn stream_error(error: StreamError) -> ApiError {
    let reason = error.reason();
    match error {
        StreamError::Illegal(_) => ApiError::illegal_argument(reason),
        StreamError::Exists(_) => ApiError::exception(
            StatusCode::BAD_REQUEST,
            "resource_already_exists_exception",
            reason,
        ),
        StreamError::Missing(name) => ApiError::index_not_found(&name),
    }
}

fn not_found(reason: String) -> ApiError {
    ApiError::exception(
        StatusCode::NOT_FOUND,
        "resource_not_found_exception",
        reason,
    )
}

#[derive(Debug, Serialize)]
struct NamedTemplate<'a> {
    name: &'a str,
    index_template: &'a Value,
}

#[derive(Debug, Serialize)]
struct TemplatesBody<'a> {
    index_templates: Vec<NamedTemplate<'a>>,
}

/// `GET|PUT|POST|DELETE _index_template[/{name}]`.
pub(crate) fn template(
    app: &App,
    method: &Method,
    params: &Params,
    name: Option<&str>,
    body: &Bytes,
) -> Result<Response, ApiError> {
    match (method, name) {
        (&Method::PUT | &Method::POST, Some(name)) => {
            let template = parse_template(app.product, name, body)?;
            app.with_world(|world| world.put_template(template))
                .map_err(ApiError::illegal_argument)?;
            Ok(acknowledged(params))
        }
        (&Method::DELETE, Some(name)) => {
            let in_use: Vec<String> = app.with_world(|world| {
                world
                    .data_streams()
                    .iter()
                    .filter(|stream| stream.template == name)
                    .map(|stream| stream.name.clone())
                    .collect()
            });
            if !in_use.is_empty() {
                return Err(ApiError::illegal_argument(format!(
                    "unable to remove composable templates [{name}] as they are in use by a data streams [{}]",
                    in_use.join(", ")
                )));
            }
            if app.with_world(|world| world.delete_template(name)) {
                Ok(acknowledged(params))
            } else {
                Err(not_found(format!("index_template [{name}] missing")))
            }
        }
        (_, name) => {
            let pattern = name.unwrap_or("*");
            app.with_world(|world| {
                let found: Vec<NamedTemplate> = world
                    .templates()
                    .iter()
                    .filter(|template| glob_match(pattern, &template.name))
                    .map(|template| NamedTemplate {
                        name: &template.name,
                        index_template: &template.body,
                    })
                    .collect();
                if found.is_empty() && name.is_some_and(|name| !name.contains('*')) {
                    return Err(not_found(format!(
                        "index template matching [{pattern}] not found"
                    )));
                }
                Ok(reply(
                    StatusCode::OK,
                    &TemplatesBody {
                        index_templates: found,
                    },
                    params.pretty(),
                ))
            })
        }
    }
}

/// The `indices` entries and stream fields ES 8.11 adds about ILM.
fn stream_json(world: &World, stream: &DataStream) -> Value {
    let flavor = world.flavor();
    let backing: Vec<_> = stream
        .indices
        .iter()
        .filter_map(|name| world.index(name))
        .collect();
    let status = backing
        .iter()
        .map(|index| World::index_health(index))
        .max()
        .unwrap_or(HealthStatus::Green);
    let template_policy = world
        .templates()
        .iter()
        .find(|template| template.name == stream.template)
        .and_then(|template| template.settings.get(LIFECYCLE_NAME).cloned());
    let mut indices = Vec::new();
    for index in &backing {
        let mut entry = Ordered(vec![
            ("index_name".to_owned(), Value::from(index.name.clone())),
            ("index_uuid".to_owned(), Value::from(index.uuid.clone())),
        ]);
        if flavor == Flavor::Es8 {
            let policy = index.settings.get(LIFECYCLE_NAME).cloned();
            entry.0.push(("prefer_ilm".to_owned(), Value::from(true)));
            if let Some(policy) = &policy {
                entry
                    .0
                    .push(("ilm_policy".to_owned(), Value::from(policy.clone())));
            }
            let managed = if policy.is_some() {
                "Index Lifecycle Management"
            } else {
                "Unmanaged"
            };
            entry
                .0
                .push(("managed_by".to_owned(), Value::from(managed)));
        }
        indices.push(entry);
    }
    let mut fields = Ordered(vec![
        ("name".to_owned(), Value::from(stream.name.clone())),
        (
            "timestamp_field".to_owned(),
            serde_json::json!({"name": stream.timestamp_field}),
        ),
        (
            "indices".to_owned(),
            serde_json::to_value(&indices).unwrap_or_default(),
        ),
        ("generation".to_owned(), Value::from(stream.generation)),
        (
            "status".to_owned(),
            Value::from(status.as_str().to_uppercase()),
        ),
        ("template".to_owned(), Value::from(stream.template.clone())),
    ]);
    if flavor != Flavor::Os2 {
        if let Some(policy) = &template_policy {
            fields
                .0
                .push(("ilm_policy".to_owned(), Value::from(policy.clone())));
        }
    }
    if flavor == Flavor::Es8 {
        let next = if template_policy.is_some() {
            "Index Lifecycle Management"
        } else {
            "Unmanaged"
        };
        fields.0.extend([
            ("next_generation_managed_by".to_owned(), Value::from(next)),
            ("prefer_ilm".to_owned(), Value::from(true)),
            ("hidden".to_owned(), Value::from(false)),
            ("system".to_owned(), Value::from(false)),
            ("allow_custom_routing".to_owned(), Value::from(false)),
            ("replicated".to_owned(), Value::from(false)),
        ]);
    }
    serde_json::to_value(&fields).unwrap_or_default()
}

/// `MetadataCreateDataStreamService`'s name rules.
fn validate_stream_name(name: &str) -> Result<(), ApiError> {
    let problem = if name.starts_with(".ds-") {
        Some("must not start with '.ds-'")
    } else {
        name_problem(name)
    };
    match problem {
        Some(problem) => Err(ApiError::illegal_argument(format!(
            "data_stream [{name}] {problem}"
        ))),
        None => Ok(()),
    }
}

#[derive(Debug, Serialize)]
struct StreamsBody {
    data_streams: Vec<Value>,
}

/// `GET|PUT|DELETE _data_stream[/{name}]`.
pub(crate) async fn data_stream(
    app: &App,
    method: &Method,
    params: &Params,
    name: Option<&str>,
) -> Result<Response, ApiError> {
    match (method, name) {
        (&Method::PUT, Some(name)) => {
            validate_stream_name(name)?;
            app.with_world(|world| world.create_data_stream(name))
                .map_err(stream_error)?;
            wait_for_write_index(app, name).await;
            Ok(acknowledged(params))
        }
        (&Method::DELETE, Some(name)) => {
            app.with_world(|world| world.delete_data_stream(name))
                .map_err(|_| not_found(format!("data_streams matching [{name}] not found")))?;
            Ok(acknowledged(params))
        }
        (_, names) => app.with_world(|world| {
            let mut found = Vec::new();
            for pattern in names.unwrap_or("*").split(',') {
                let matched: Vec<&DataStream> = world
                    .data_streams()
                    .iter()
                    .filter(|stream| glob_match(pattern, &stream.name))
                    .collect();
                if matched.is_empty() && !pattern.contains('*') && pattern != "_all" {
                    return Err(ApiError::index_not_found(pattern));
                }
                found.extend(matched);
            }
            found.sort_by(|a, b| a.name.cmp(&b.name));
            found.dedup_by(|a, b| a.name == b.name);
            let data_streams = found
                .into_iter()
                .map(|stream| stream_json(world, stream))
                .collect();
            Ok(reply(
                StatusCode::OK,
                &StreamsBody { data_streams },
                params.pretty(),
            ))
        }),
    }
}

/// Waits (like `wait_for_active_shards=1`) for a stream's write index's primary.
async fn wait_for_write_index(app: &App, stream: &str) -> bool {
    let write_index = app.with_world(|world| {
        world
            .data_streams()
            .iter()
            .find(|s| s.name == stream)
            .and_then(|s| s.indices.last().cloned())
    });
    match write_index {
        Some(index) => primary_started(app, &index, 30_000).await,
        None => false,
    }
}

#[derive(Debug, Serialize)]
struct RolledOver {
    acknowledged: bool,
    shards_acknowledged: bool,
    old_index: String,
    new_index: String,
    rolled_over: bool,
    dry_run: bool,
    conditions: Ordered<bool>,
}

/// `POST /{target}/_rollover`: data streams only (aliases are not modelled), unconditional.
pub(crate) async fn rollover(
    app: &App,
    params: &Params,
    target: &str,
) -> Result<Response, ApiError> {
    let dry_run = params.flag("dry_run")?;
    let es6 = app.flavor == Flavor::Es6;
    let rolled = app.with_world(|world| {
        let is_stream = world.data_streams().iter().any(|s| s.name == target);
        if !is_stream {
            let concrete = world.index(target).is_some();
            return Err(ApiError::illegal_argument(match (es6, concrete) {
                (true, false) => "source alias does not exist".to_owned(),
                (true, true) => "source alias is a concrete index".to_owned(),
                (false, false) => format!("rollover target [{target}] does not exist"),
                (false, true) => "rollover target is a [concrete index] but one of [alias,data_stream] was expected".to_owned(),
            }));
        }
        if dry_run {
            let stream = world.data_streams().iter().find(|s| s.name == target);
            let old = stream.and_then(|s| s.indices.last().cloned());
            let new = world.next_backing_index(target).unwrap_or_default();
            return Ok((old, new));
        }
        world
            .roll_data_stream(target)
            .ok_or_else(|| ApiError::index_not_found(target))
    })?;
    let (old, new) = rolled;
    let started = dry_run || wait_for_write_index(app, target).await;
    let body = RolledOver {
        acknowledged: !dry_run,
        shards_acknowledged: started && !dry_run,
        old_index: old.unwrap_or_default(),
        new_index: new,
        rolled_over: !dry_run,
        dry_run,
        conditions: Ordered::default(),
    };
    Ok(reply(StatusCode::OK, &body, params.pretty()))
}
