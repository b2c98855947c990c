//! The cluster API over HTTP: logging, faults, the proxy and quorum checks, then routing to the
//! endpoint handlers, in the order a real request meets them.

mod cat;
mod cluster;
mod errors;
mod faults;
mod indices;
mod info;
mod json;
mod params;
mod routes;
mod table;
mod wait;

use std::sync::Arc;

use axum::Router;
use axum::body::{Bytes, to_bytes};
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::Response;

use crate::app::App;
use crate::config::Flavor;
use crate::fault::take_matching;
use crate::world::World;
use errors::ApiError;
use params::Params;
use routes::{Endpoint, Route};

pub(crate) use json::reply;

/// Largest request body read; ES's default `http.max_content_length` is 100mb, far above need.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// The whole HTTP surface: the admin API under `/_sim`, the cluster API everywhere else.
pub(crate) fn router(app: Arc<App>) -> Router {
    Router::new()
        .nest("/_sim", crate::admin::router())
        .fallback(cluster_api)
        .with_state(app)
}

/// Entry point of every cluster API request: logs it, answers it, records the status.
async fn cluster_api(State(app): State<Arc<App>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = to_bytes(body, MAX_BODY_BYTES).await;
    let logged_body = body.as_ref().map_or(&[][..], |bytes| &bytes[..]);
    let seq = app.calls().begin(
        parts.method.as_str(),
        parts.uri.path(),
        parts.uri.query().unwrap_or(""),
        logged_body,
    );
    let response = match body {
        Ok(body) => respond(&app, &parts, &body).await,
        Err(_) => ApiError::parse("failed to read the request body").into_response(false),
    };
    let status = if response
        .extensions()
        .get::<crate::fault::Dropped>()
        .is_some()
    {
        0
    } else {
        response.status().as_u16()
    };
    app.calls().finish(seq, status);
    response
}

/// Faults first (they model the network), then haproxy (no node up), then ES itself.
async fn respond(app: &App, parts: &Parts, body: &Bytes) -> Response {
    let fault = take_matching(&mut app.faults(), parts.method.as_str(), parts.uri.path());
    if let Some(kind) = fault {
        let cluster_name = app.with_world(|world| world.cluster_name().to_owned());
        if let Some(response) = faults::apply(&kind, app.flavor, &cluster_name).await {
            return response;
        }
    }
    if app.with_world(|world| world.joined_nodes().next().is_none()) {
        return ApiError::Haproxy(StatusCode::SERVICE_UNAVAILABLE).into_response(false);
    }
    let params = Params::parse(parts.uri.query().unwrap_or(""));
    let mut response = match dispatch(app, parts, &params, body).await {
        Ok(response) => response,
        Err(error) => error.into_response(params.pretty()),
    };
    if app.flavor == Flavor::Es8 {
        // ES 8 marks every response; its official clients refuse servers that do not.
        response.headers_mut().insert(
            HeaderName::from_static("x-elastic-product"),
            HeaderValue::from_static("Elasticsearch"),
        );
    }
    response
}

/// ES accepts JSON-family content types for request bodies and nothing else.
fn check_content_type(parts: &Parts) -> Result<(), ApiError> {
    let value = parts
        .headers
        .get(header::CONTENT_TYPE)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
    let Some(value) = value else {
        return Err(ApiError::ContentType { header: None });
    };
    let media_type = value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match media_type.as_str() {
        "application/json" | "application/x-ndjson" | "application/vnd.elasticsearch+json" => {
            Ok(())
        }
        _ => Err(ApiError::ContentType {
            header: Some(value),
        }),
    }
}

/// ES's `RestController`: route (400 no handler / 405), content type (406), parameters, handler.
async fn dispatch(
    app: &App,
    parts: &Parts,
    params: &Params,
    body: &Bytes,
) -> Result<Response, ApiError> {
    let path = parts.uri.path();
    let uri = parts
        .uri
        .path_and_query()
        .map_or(path, |uri| uri.as_str())
        .to_owned();
    let method = parts.method.clone();
    let Some(route) = routes::route(path, app.flavor) else {
        return Err(ApiError::NoHandler { method, uri });
    };
    if !route.allows(&method) {
        return Err(ApiError::WrongMethod {
            method,
            uri,
            allowed: route.methods.to_vec(),
        });
    }
    if !body.is_empty() {
        check_content_type(parts)?;
    }
    params.check_known(path, route.accepted_params(&method))?;
    if route.endpoint != Endpoint::Root {
        // `GET /` is answered by any node, master or not.
        wait::require_master(app, params).await?;
    }
    handle(app, &route, &method, params, body).await
}

/// Resolves the optional index pattern of a `_cat` path; a missing concrete name is a 404.
fn resolve(world: &World, pattern: Option<&str>) -> Result<Vec<usize>, ApiError> {
    world
        .resolve(pattern.unwrap_or("_all"), false)
        .map(|resolution| resolution.indices)
        .map_err(|missing| ApiError::index_not_found(&missing.0))
}

async fn handle(
    app: &App,
    route: &Route,
    method: &Method,
    params: &Params,
    body: &Bytes,
) -> Result<Response, ApiError> {
    let table = match &route.endpoint {
        Endpoint::Root => return Ok(info::root(app, params)),
        Endpoint::ClusterHealth => return cluster::health(app, params).await,
        Endpoint::ClusterSettings if *method == Method::PUT => {
            return cluster::put_settings(app, params, body);
        }
        Endpoint::ClusterSettings => return cluster::get_settings(app, params),
        Endpoint::Flush => return Ok(indices::flush(app, params)),
        Endpoint::FlushSynced => return Ok(indices::flush_synced(app, params)),
        Endpoint::Index(name) if *method == Method::PUT => {
            return indices::create(app, params, name).await;
        }
        Endpoint::Index(name) => return indices::delete(app, params, name),
        Endpoint::CatHealth => {
            app.with_world(|world| cat::health(world, app.clock.wall_time(world.now_ms())))
        }
        Endpoint::CatNodes => app.with_world(|world| cat::nodes(world)),
        Endpoint::CatAllocation => app.with_world(|world| cat::allocation(world)),
        Endpoint::CatIndices(pattern) => app.with_world(|world| {
            resolve(world, pattern.as_deref()).map(|positions| cat::indices(world, &positions))
        })?,
        Endpoint::CatRecovery(pattern) => {
            let active_only = params.flag("active_only")?;
            app.with_world(|world| {
                resolve(world, pattern.as_deref())
                    .map(|positions| cat::recovery(world, &positions, active_only))
            })?
        }
    };
    table::render(table, params)
}
