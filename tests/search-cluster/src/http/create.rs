//! `PUT /{index}`: a new index with the request's settings (on top of a matching template's),
//! checked as the imitated server checks them, answered once its primary has started.
//!
//! From `CreateIndexRequest.source` (only `settings`, `mappings` and `aliases` keys) and
//! `MetadataCreateIndexService` (settings validated first, then the name, then registered
//! private settings; a template with `data_stream` refuses plain index creation).

use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;

use super::errors::{ApiError, Exception};
use super::json::{object_body, reply};
use super::params::Params;
use super::wait::primary_started;
use crate::app::App;
use crate::world::IndexSettings;
use crate::world::index_settings::{self, Refusal};

#[derive(Debug, Serialize)]
struct Created<'a> {
    acknowledged: bool,
    shards_acknowledged: bool,
    index: &'a str,
}

/// What is wrong with an index (or data stream) name, as `validateIndexOrAliasName` says it.
pub(crate) fn name_problem(name: &str) -> Option<&'static str> {
    const INVALID: &[char] = &['\\', '/', '*', '?', '"', '<', '>', '|', ' ', ',', '#', ':'];
    if name.chars().any(|c| INVALID.contains(&c)) {
        Some(r#"must not contain the following characters [ , ", *, \, <, |, ,, >, /, ?]"#)
    } else if name.chars().any(char::is_uppercase) {
        Some("must be lowercase")
    } else if name.starts_with(['_', '-', '+']) {
        Some("must not start with '_', '-', or '+'")
    } else if name == "." || name == ".." {
        Some("must not be '.' or '..'")
    } else {
        None
    }
}

/// `MetadataCreateIndexService.validateIndexOrAliasName` and friends.
fn validate_name(name: &str) -> Result<(), ApiError> {
    name_problem(name).map_or(Ok(()), |problem| Err(invalid_name(name, problem)))
}

/// `InvalidIndexNameException(name, problem)`.
pub(crate) fn invalid_name(name: &str, problem: &str) -> ApiError {
    Exception::new(
        StatusCode::BAD_REQUEST,
        "invalid_index_name_exception",
        format!("Invalid index name [{name}], {problem}"),
    )
    .into()
}

/// The error a refused setting gets.
pub(crate) fn refused(refusal: Refusal) -> ApiError {
    let kind = match refusal {
        Refusal::Illegal(_) | Refusal::Unsupported(_) => "illegal_argument_exception",
        Refusal::Private(_) => "validation_exception",
    };
    ApiError::exception(StatusCode::BAD_REQUEST, kind, refusal.reason())
}

/// The request's settings from a create body: `{"settings": {...}, "mappings": ..., "aliases": ...}`.
/// Mappings are accepted and not modelled; aliases are not modelled at all.
fn requested_settings(body: &[u8]) -> Result<IndexSettings, ApiError> {
    let Some(object) = object_body(body, "create index")? else {
        return Ok(IndexSettings::new());
    };
    let mut settings = IndexSettings::new();
    for (key, value) in &object {
        match (key.as_str(), value) {
            ("settings", Value::Object(map)) => {
                settings = index_settings::from_json(map).map_err(ApiError::illegal_argument)?;
            }
            ("settings", _) => return Err(ApiError::parse("key [settings] must be an object")),
            ("mappings", _) => {}
            ("aliases", Value::Object(map)) if map.is_empty() => {}
            ("aliases", _) => {
                return Err(ApiError::illegal_argument(
                    "the simulator does not model aliases",
                ));
            }
            (other, _) => {
                return Err(ApiError::parse(format!(
                    "unknown key [{other}] for create index"
                )));
            }
        }
    }
    Ok(settings)
}

/// `PUT /{index}`: waits (like `wait_for_active_shards=1`) for the primary to start.
pub(crate) async fn create(
    app: &App,
    params: &Params,
    name: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let requested = requested_settings(body)?;
    index_settings::validate(app.product, &requested).map_err(refused)?;
    validate_name(name)?;
    let timeout = params.millis("timeout", 30_000)?;
    app.with_world(|world| {
        if let Some(existing) = world.index(name) {
            return Err(ApiError::index_exists(name, &existing.uuid));
        }
        let mut settings = IndexSettings::new();
        if let Some(template) = world.matching_template(name) {
            if template.data_stream.is_some() {
                return Err(ApiError::illegal_argument(format!(
                    "cannot create index with name [{name}], because it matches with template [{}] that creates data streams only, use create data stream api instead",
                    template.name
                )));
            }
            settings = template.settings.clone();
        }
        settings.extend(requested);
        world
            .create_index(name, &settings)
            .map_err(|_| ApiError::index_exists(name, ""))
    })?;
    let started = primary_started(app, name, timeout).await;
    let body = Created {
        acknowledged: true,
        shards_acknowledged: started,
        index: name,
    };
    Ok(reply(StatusCode::OK, &body, params.pretty()))
}
