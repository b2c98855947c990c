//! Placement under `/placement`, as Placement 16 answers (shapes recorded from it).

use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use super::errors::{placement, placement_detail, with_allow};
use super::microversion::{self, Version, VersionError, stamp_placement};
use super::reply::{json, set};
use super::routing::{Miss, allow, segments, select};
use super::{Ctx, auth};
use crate::timestamps;
use crate::world::{Provider, World};

/// Placement's paths carry this prefix (its `SCRIPT_NAME`), and so do its links.
const PREFIX: &str = "/placement";

enum Endpoint<'a> {
    Root,
    Providers,
    Provider(&'a str),
    ProviderAllocations(&'a str),
    Allocations(&'a str),
}

fn route(path: &str) -> Option<(Endpoint<'_>, &'static [Method])> {
    const GET: &[Method] = &[Method::GET];
    match segments(path).as_slice() {
        [] => Some((Endpoint::Root, GET)),
        ["resource_providers"] => Some((Endpoint::Providers, &[Method::GET, Method::POST])),
        ["resource_providers", uuid] => Some((Endpoint::Provider(uuid), GET)),
        ["resource_providers", uuid, "allocations"] => {
            Some((Endpoint::ProviderAllocations(uuid), GET))
        }
        ["allocations", consumer] => Some((
            Endpoint::Allocations(consumer),
            &[Method::GET, Method::DELETE],
        )),
        _ => None,
    }
}

/// A failed request: status and placement's detail text.
pub(super) type Failure = (StatusCode, String);

fn not_found(message: &str) -> Failure {
    (
        StatusCode::NOT_FOUND,
        placement_detail(StatusCode::NOT_FOUND, message),
    )
}

/// Token check (except for the version document), then the microversion, then the endpoint.
pub(super) fn handle(ctx: &Ctx<'_>) -> Response {
    let found = route(ctx.rest);
    if !matches!(found, Some((Endpoint::Root, _))) {
        if let Some(refused) = auth::refusal(ctx) {
            return refused;
        }
    }
    let max = ctx.app.placement_max;
    let version = match microversion::placement(&ctx.parts.headers, max) {
        Ok(version) => version,
        Err(VersionError::Invalid(message)) => {
            return placement(
                StatusCode::BAD_REQUEST,
                placement_detail(StatusCode::BAD_REQUEST, &message),
                None,
                max,
            );
        }
        Err(VersionError::Unacceptable(message)) => {
            let detail = format!(
                "The resource could not be generated that was acceptable to your browser (content of type application/json. \n\n {message}"
            );
            return placement(StatusCode::NOT_ACCEPTABLE, detail, None, max);
        }
    };
    let method = &ctx.parts.method;
    let result = match select(found, method) {
        Ok(endpoint) => dispatch(ctx, endpoint, version),
        Err(Miss::NotFound) => Err(not_found("")),
        Err(Miss::Method(allowed)) => {
            let detail = format!(
                "The method {method} is not allowed for this resource. \n\n The method specified is not allowed for this resource."
            );
            let refused = placement(StatusCode::METHOD_NOT_ALLOWED, detail, Some(version), max);
            return with_allow(refused, &allow(allowed));
        }
    };
    let mut response = match result {
        Ok(response) => response,
        Err((status, detail)) => return placement(status, detail, Some(version), max),
    };
    if *method == Method::GET
        && response.status() == StatusCode::OK
        && version >= Version::new(1, 15)
    {
        // Microversion 1.15 added caching headers to every GET.
        set(
            &mut response,
            header::LAST_MODIFIED,
            &timestamps::http_date(OffsetDateTime::now_utc()),
        );
        set(&mut response, header::CACHE_CONTROL, "no-cache");
    }
    stamp_placement(&mut response, version);
    response
}

fn dispatch(ctx: &Ctx<'_>, endpoint: Endpoint<'_>, version: Version) -> Result<Response, Failure> {
    let method = &ctx.parts.method;
    let mut world = ctx.app.world();
    match endpoint {
        Endpoint::Root => Ok(json(
            StatusCode::OK,
            &json!({"versions": [{
                "id": "v1.0",
                "max_version": ctx.app.placement_max.to_string(),
                "min_version": microversion::PLACEMENT_MIN.to_string(),
                "status": "CURRENT",
                "links": [{"rel": "self", "href": ""}],
            }]}),
        )),
        Endpoint::Providers if *method == Method::POST => {
            super::placement_create::create(ctx, &mut world, version)
        }
        Endpoint::Providers => list_providers(ctx, &world, version),
        Endpoint::Provider(raw) => find(&world, raw)
            .map(|provider| json(StatusCode::OK, &provider_view(provider, version)))
            .ok_or_else(|| not_found(&format!("No resource provider with uuid {raw} found"))),
        Endpoint::ProviderAllocations(raw) => {
            let provider = find(&world, raw).ok_or_else(|| {
                not_found(&format!(
                    "Resource provider '{raw}' not found: No resource provider with uuid {raw} found"
                ))
            })?;
            // From 1.28 each consumer carries its generation; never its type (placement's
            // `_serialize_allocations_for_resource_provider`, checked against Placement 16).
            let allocations: Map<String, Value> = provider
                .allocations
                .iter()
                .map(|(consumer, resources)| {
                    let mut entry = json!({"resources": resources});
                    if version >= Version::new(1, 28) {
                        entry["consumer_generation"] =
                            json!(world.consumer(*consumer).map(|record| record.generation));
                    }
                    (consumer.to_string(), entry)
                })
                .collect();
            Ok(json(
                StatusCode::OK,
                &json!({
                    "allocations": allocations,
                    "resource_provider_generation": provider.generation,
                }),
            ))
        }
        Endpoint::Allocations(raw) if *method == Method::DELETE => {
            let deleted =
                Uuid::parse_str(raw).is_ok_and(|consumer| world.delete_allocations(consumer));
            if deleted {
                Ok(StatusCode::NO_CONTENT.into_response())
            } else {
                Err(not_found(&format!("No allocations for consumer '{raw}'")))
            }
        }
        Endpoint::Allocations(raw) => {
            Ok(json(StatusCode::OK, &consumer_view(&world, raw, version)))
        }
    }
}

/// The provider a path segment names; a segment that is no uuid names none.
fn find<'w>(world: &'w World, raw: &str) -> Option<&'w Provider> {
    Uuid::parse_str(raw)
        .ok()
        .and_then(|uuid| world.provider(uuid))
}

/// A provider as placement shows it at a microversion.
pub(super) fn provider_view(provider: &Provider, version: Version) -> Value {
    let href = format!("{PREFIX}/resource_providers/{}", provider.uuid);
    let mut rels = vec!["self", "inventories", "usages"];
    for (rel, since) in [("aggregates", 1), ("traits", 6), ("allocations", 11)] {
        if version >= Version::new(1, since) {
            rels.push(rel);
        }
    }
    let links: Vec<Value> = rels
        .into_iter()
        .map(|rel| match rel {
            "self" => json!({"rel": rel, "href": href}),
            _ => json!({"rel": rel, "href": format!("{href}/{rel}")}),
        })
        .collect();
    let mut view = json!({
        "uuid": provider.uuid,
        "name": provider.name,
        "generation": provider.generation,
        "links": links,
    });
    if version >= Version::new(1, 14) {
        // Nested providers (1.14); the simulator's providers are all roots.
        view["parent_provider_uuid"] = Value::Null;
        view["root_provider_uuid"] = json!(provider.uuid);
    }
    view
}

/// `GET /resource_providers[?name=&uuid=]`; other filters are refused, not ignored.
fn list_providers(ctx: &Ctx<'_>, world: &World, version: Version) -> Result<Response, Failure> {
    let bad = |message: String| {
        (
            StatusCode::BAD_REQUEST,
            placement_detail(StatusCode::BAD_REQUEST, &message),
        )
    };
    let query = ctx
        .query()
        .ok_or_else(|| bad("Invalid query string parameters".to_owned()))?;
    if let Some((key, _)) = query.iter().find(|(key, _)| key != "name" && key != "uuid") {
        return Err(bad(format!(
            "Invalid query string parameters: Additional properties are not allowed ('{key}' was unexpected)"
        )));
    }
    let wanted = |key: &str| {
        query
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
    };
    let providers: Vec<Value> = world
        .providers()
        .iter()
        .filter(|provider| wanted("name").is_none_or(|name| *name == provider.name))
        .filter(|provider| wanted("uuid").is_none_or(|uuid| *uuid == provider.uuid.to_string()))
        .map(|provider| provider_view(provider, version))
        .collect();
    Ok(json(
        StatusCode::OK,
        &json!({"resource_providers": providers}),
    ))
}

/// `GET /allocations/{consumer}`: empty (still 200) for a consumer without allocations.
fn consumer_view(world: &World, raw: &str, version: Version) -> Value {
    let consumer = Uuid::parse_str(raw).ok();
    let allocations: Map<String, Value> = consumer
        .map(|consumer| world.consumer_allocations(consumer))
        .unwrap_or_default()
        .into_iter()
        .map(|(provider, resources)| {
            (
                provider.uuid.to_string(),
                json!({"resources": resources, "generation": provider.generation}),
            )
        })
        .collect();
    let mut view = json!({"allocations": allocations});
    let Some(record) = consumer.and_then(|consumer| world.consumer(consumer)) else {
        return view;
    };
    if version >= Version::new(1, 12) {
        view["project_id"] = json!(record.project_id);
        view["user_id"] = json!(record.user_id);
    }
    if version >= Version::new(1, 28) {
        view["consumer_generation"] = json!(record.generation);
    }
    if version >= Version::new(1, 38) {
        // `unknown` for a consumer written without a type, as placement's ct_cache names NULL.
        view["consumer_type"] = json!(record.consumer_type);
    }
    view
}
