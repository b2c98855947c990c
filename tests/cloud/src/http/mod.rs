//! The OpenStack APIs over HTTP: call logging, faults, then the service the path prefix names.

mod auth;
mod compute;
mod errors;
mod faults;
mod identity;
mod image;
mod image_patch;
pub(crate) mod microversion;
mod migrations;
mod placement;
mod placement_create;
mod reply;
mod routing;

use std::sync::Arc;

use axum::Router;
use axum::body::{Bytes, to_bytes};
use axum::extract::{Query, Request, State};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use axum::response::Response;
use opsbot_search_sim::{Dropped, FaultEffect, take_matching};

use crate::app::App;
use crate::calls::Arrival;

pub(crate) use reply::json;

/// Largest request body read; far above anything these APIs take.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// The simulated services, each under its own path prefix of the one base URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Identity,
    Placement,
    Compute,
    Image,
}

impl Api {
    const PREFIXES: [(&'static str, Api); 4] = [
        ("/identity/v3", Api::Identity),
        ("/placement", Api::Placement),
        ("/compute/v2.1", Api::Compute),
        ("/image", Api::Image),
    ];

    /// The API a path belongs to and the path below its prefix.
    fn locate(path: &str) -> Option<(Api, &str)> {
        Self::PREFIXES.iter().find_map(|(prefix, api)| {
            let rest = path.strip_prefix(prefix)?;
            (rest.is_empty() || rest.starts_with('/')).then_some((*api, rest))
        })
    }
}

/// One request as the handlers see it.
#[derive(Debug)]
struct Ctx<'a> {
    app: &'a App,
    parts: &'a Parts,
    body: &'a Bytes,
    /// The path below the API's prefix, e.g. `/resource_providers`.
    rest: &'a str,
}

impl Ctx<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        self.parts
            .headers
            .get(name)
            .and_then(|value| value.to_str().ok())
    }

    /// The decoded query parameters; `None` if the query string cannot be decoded.
    fn query(&self) -> Option<Vec<(String, String)>> {
        Query::<Vec<(String, String)>>::try_from_uri(&self.parts.uri)
            .ok()
            .map(|Query(pairs)| pairs)
    }

    /// Keystone's URL, which 401 responses point clients to.
    fn identity_url(&self) -> String {
        format!("{}/identity/v3", self.app.base_url)
    }
}

/// The whole HTTP surface: the admin API under `/_sim`, the OpenStack APIs everywhere else.
pub(crate) fn router(app: Arc<App>) -> Router {
    Router::new()
        .nest("/_sim", crate::admin::router())
        .fallback(openstack)
        .with_state(app)
}

/// Entry point of every OpenStack request: logs it, answers it, records the outcome.
async fn openstack(State(app): State<Arc<App>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = to_bytes(body, MAX_BODY_BYTES).await;
    let path = parts.uri.path();
    // Identity bodies carry passwords (and other secrets), so none is ever recorded.
    let recorded = matches!(parts.method, Method::POST | Method::PUT | Method::PATCH)
        && Api::locate(path).is_none_or(|(api, _)| api != Api::Identity);
    let seq = app.calls().begin(Arrival {
        method: parts.method.as_str(),
        path,
        query: parts.uri.query().unwrap_or(""),
        token_present: parts.headers.contains_key("x-auth-token"),
        body: body
            .as_ref()
            .ok()
            .filter(|_| recorded)
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned()),
    });
    let response = match body {
        Ok(body) => respond(&app, &parts, &body).await,
        Err(_) => reply::text(
            StatusCode::PAYLOAD_TOO_LARGE,
            "text/plain",
            "request body too large or unreadable".to_owned(),
        ),
    };
    let status = if response.extensions().get::<Dropped>().is_some() {
        0
    } else {
        response.status().as_u16()
    };
    let microversion = response
        .headers()
        .get("openstack-api-version")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    app.calls().finish(seq, status, microversion);
    response
}

/// Faults first (they model the network and the proxy), then the service.
async fn respond(app: &App, parts: &Parts, body: &Bytes) -> Response {
    let path = parts.uri.path();
    let Some((api, rest)) = Api::locate(path) else {
        return reply::text(
            StatusCode::NOT_FOUND,
            "text/plain",
            "no simulated OpenStack API under this path; see /identity/v3, /placement, /compute/v2.1, /image".to_owned(),
        );
    };
    let ctx = Ctx {
        app,
        parts,
        body,
        rest,
    };
    let fault = take_matching(&mut app.faults(), parts.method.as_str(), path);
    if let Some(kind) = fault {
        match kind.apply().await {
            FaultEffect::Proceed => {}
            FaultEffect::Status(status) => return faults::status(&ctx, api, status),
            FaultEffect::MalformedJson => return faults::malformed(api),
            FaultEffect::Drop(response) => return response,
            FaultEffect::Lost => return faults::lost(),
        }
    }
    match api {
        Api::Identity => identity::handle(&ctx),
        Api::Placement => placement::handle(&ctx),
        Api::Compute => compute::handle(&ctx),
        Api::Image => image::handle(&ctx),
    }
}
