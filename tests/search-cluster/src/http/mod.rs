//! The cluster API over HTTP: logging, faults, the proxy and quorum checks, then routing to the
//! endpoint handlers, in the order a real request meets them.

mod authorization;
mod cat;
mod cluster;
mod create;
mod delete;
mod errors;
mod faults;
mod handle;
mod indices;
mod info;
mod ism;
mod json;
mod options;
mod params;
mod routes;
mod security;
mod settings_api;
mod streams;
mod table;
mod tasks;
mod templates;
mod tree;
mod wait;

use std::sync::Arc;

use axum::Router;
use axum::body::{Bytes, to_bytes};
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::app::App;
use crate::config::Flavor;
use crate::fault::take_matching;
use errors::ApiError;
use params::Params;
use routes::Endpoint;

pub(crate) use json::reply;
use security::Principal;
pub use security::{Role, Security};

/// The has-privileges API of ES security (under `_security` since 6.7).
const HAS_PRIVILEGES: &str = "/_security/user/_has_privileges";

/// Largest request body read: ES's default `http.max_content_length`, past which it answers 413.
const MAX_BODY_BYTES: usize = 100 * 1024 * 1024;

/// The whole HTTP surface: the admin API under `/_sim`, the cluster API everywhere else.
pub(crate) fn router(app: Arc<App>) -> Router {
    Router::new()
        .nest("/_sim", crate::admin::router())
        .fallback(cluster_api)
        .with_state(app)
}

/// The header ES copies into the request's tasks and echoes in its response.
const OPAQUE_ID: &str = "x-opaque-id";

/// A request's entry in the call log while it is being answered: if the client goes away
/// first, hyper drops the handler and with it this guard, which marks the call as hung up.
struct LoggedCall<'a> {
    app: &'a App,
    seq: u64,
    answered: bool,
}

impl LoggedCall<'_> {
    fn finish(mut self, status: u16) {
        self.answered = true;
        self.app.calls().finish(self.seq, status);
    }
}

impl Drop for LoggedCall<'_> {
    fn drop(&mut self) {
        if !self.answered {
            self.app.calls().hang_up(self.seq);
        }
    }
}

/// What a handler may need to know about the request beyond its path, query and body.
#[derive(Debug, Clone, Default)]
pub(crate) struct RequestContext {
    /// The `X-Opaque-Id` header.
    pub opaque_id: Option<String>,
}

/// A body past [`MAX_BODY_BYTES`], rather than one cut off.
fn too_large(error: &axum::Error) -> bool {
    std::error::Error::source(error).is_some_and(|e| e.is::<http_body_util::LengthLimitError>())
}

/// Entry point of every cluster API request: logs it, answers it, records the status.
async fn cluster_api(State(app): State<Arc<App>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let context = RequestContext {
        opaque_id: parts
            .headers
            .get(OPAQUE_ID)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned()),
    };
    // ES handles a request only once it is whole (Netty aggregates it first). One whose body
    // never ended (its client went away, as opsbot does when its gate holds back a change's
    // last chunk) never reached the cluster API: it is neither logged nor done.
    let body = match to_bytes(body, MAX_BODY_BYTES).await {
        Ok(body) => body,
        Err(error) if too_large(&error) => return StatusCode::PAYLOAD_TOO_LARGE.into_response(),
        Err(_) => return StatusCode::BAD_REQUEST.into_response(),
    };
    let seq = app.calls().begin(
        parts.method.as_str(),
        parts.uri.path(),
        parts.uri.query().unwrap_or(""),
        &body,
        context.opaque_id.as_deref(),
    );
    let logged = LoggedCall {
        app: &app,
        seq,
        answered: false,
    };
    let mut response = respond(&app, &parts, &body, &context).await;
    let status = if response
        .extensions()
        .get::<crate::fault::Dropped>()
        .is_some()
    {
        0
    } else {
        response.status().as_u16()
    };
    logged.finish(status);
    if let Some(value) = context
        .opaque_id
        .as_deref()
        .and_then(|id| HeaderValue::from_str(id).ok())
    {
        response
            .headers_mut()
            .insert(HeaderName::from_static(OPAQUE_ID), value);
    }
    response
}

/// Faults first (they model the network), then haproxy (no node up), then ES itself.
async fn respond(app: &App, parts: &Parts, body: &Bytes, context: &RequestContext) -> Response {
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
    let principal = match &app.security {
        Some(security) => {
            match security::authenticate(security, app.flavor, parts, params.pretty()) {
                Ok(principal) => {
                    let role = security.role_of(&principal);
                    if parts.uri.path() == HAS_PRIVILEGES {
                        return match parts.method {
                            Method::GET | Method::POST => authorization::has_privileges(
                                role,
                                &principal,
                                body,
                                params.pretty(),
                            ),
                            // ES's REST controller: the path exists with other methods.
                            _ => ApiError::WrongMethod {
                                method: parts.method.clone(),
                                uri: parts.uri.to_string(),
                                allowed: vec![Method::GET, Method::POST],
                            }
                            .into_response(params.pretty()),
                        };
                    }
                    Some((principal, role))
                }
                Err(refusal) => return *refusal,
            }
        }
        None => None,
    };
    let mut response = match dispatch(app, parts, &params, body, context, principal).await {
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
    context: &RequestContext,
    principal: Option<(Principal, Option<&Role>)>,
) -> Result<Response, ApiError> {
    let path = parts.uri.path();
    let uri = parts
        .uri
        .path_and_query()
        .map_or(path, |uri| uri.as_str())
        .to_owned();
    let method = parts.method.clone();
    let Some(route) = routes::route(path, app.product) else {
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
    params.check_known(path, route.accepted_params(&method, app.product))?;
    // The REST layer's checks come first; the transport action is then authorized.
    if let Some((principal, role)) = &principal {
        // An index action names the indices of the path, or all of them.
        let target = path
            .trim_start_matches('/')
            .split('/')
            .next()
            .filter(|first| !first.is_empty() && !first.starts_with('_'))
            .unwrap_or("*");
        authorization::authorize(*role, principal, &route.endpoint, &method, target)?;
    }
    if route.endpoint != Endpoint::Root {
        // `GET /` is answered by any node, master or not.
        wait::require_master(app, params).await?;
    }
    let response = handle::handle(app, &route.endpoint, &method, params, body, context).await?;
    Ok(match route.replaced {
        Some(template) => indices::with_warning(
            response,
            app.flavor,
            &format!(
                "[{method} /_opendistro/_ism/{template}] is deprecated! Use [{method} /_plugins/_ism/{template}] instead."
            ),
        ),
        None => response,
    })
}
