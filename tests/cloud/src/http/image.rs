//! Glance v2 under `/image/v2`: image list and show, and property updates by JSON patch.

use axum::http::{HeaderName, Method, StatusCode};
use axum::response::Response;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha512};
use uuid::Uuid;

use super::errors::{explanation, webob, with_allow};
use super::image_patch::{ACCEPT_PATCH, PatchError, apply, parse};
use super::reply::{json, set};
use super::routing::{Miss, allow, segments, select};
use super::{Ctx, auth};
use crate::timestamps;
use crate::world::Image;

enum Endpoint<'a> {
    Images,
    Image(&'a str),
}

fn route(path: &str) -> Option<(Endpoint<'_>, &'static [Method])> {
    match segments(path).as_slice() {
        ["v2", "images"] => Some((Endpoint::Images, &[Method::GET])),
        ["v2", "images", id] => Some((Endpoint::Image(id), &[Method::GET, Method::PATCH])),
        _ => None,
    }
}

/// List parameters that page or sort rather than filter.
const NOT_FILTERS: [&str; 6] = [
    "limit",
    "marker",
    "sort",
    "sort_key",
    "sort_dir",
    "member_status",
];

pub(super) fn handle(ctx: &Ctx<'_>) -> Response {
    if let Some(refused) = auth::refusal(ctx) {
        return refused;
    }
    let accept = ctx.header("accept");
    let error = |status: StatusCode, message: &str| webob(status, message, accept);
    match select(route(ctx.rest), &ctx.parts.method) {
        Ok(Endpoint::Images) => list(ctx),
        Ok(Endpoint::Image(raw)) if ctx.parts.method == Method::PATCH => patch(ctx, raw),
        Ok(Endpoint::Image(raw)) => show(ctx, raw),
        Err(Miss::NotFound) => error(StatusCode::NOT_FOUND, explanation(StatusCode::NOT_FOUND)),
        Err(Miss::Method(allowed)) => with_allow(
            error(
                StatusCode::METHOD_NOT_ALLOWED,
                explanation(StatusCode::METHOD_NOT_ALLOWED),
            ),
            &allow(allowed),
        ),
    }
}

/// An image as Glance shows it: custom properties as top-level string keys beside the base
/// attributes.
fn image_view(image: &Image) -> Value {
    let hash = Sha512::digest(image.id.as_bytes());
    let hex: String = hash.iter().map(|byte| format!("{byte:02x}")).collect();
    let mut view: Map<String, Value> = image
        .properties
        .iter()
        .map(|(key, value)| (key.clone(), json!(value)))
        .collect();
    let base = json!({
        "name": image.name,
        "disk_format": image.disk_format,
        "container_format": image.container_format,
        "visibility": image.visibility,
        "size": image.size,
        "virtual_size": null,
        "status": image.status,
        "checksum": hex[..32],
        "protected": image.protected,
        "min_ram": image.min_ram,
        "min_disk": image.min_disk,
        "owner": image.owner,
        "os_hidden": image.os_hidden,
        "os_hash_algo": "sha512",
        "os_hash_value": hex,
        "id": image.id,
        "created_at": timestamps::glance(image.created_at),
        "updated_at": timestamps::glance(image.updated_at),
        "tags": image.tags,
        "self": format!("/v2/images/{}", image.id),
        "file": format!("/v2/images/{}/file", image.id),
        "schema": "/v2/schemas/image",
    });
    if let Value::Object(base) = base {
        view.extend(base);
    }
    Value::Object(view)
}

/// Glance's 404 for an image id (any string: a malformed id is just not found).
fn no_image(ctx: &Ctx<'_>, raw: &str) -> Response {
    webob(
        StatusCode::NOT_FOUND,
        &format!("No image found with ID {raw}"),
        ctx.header("accept"),
    )
}

fn show(ctx: &Ctx<'_>, raw: &str) -> Response {
    let view = Uuid::parse_str(raw)
        .ok()
        .and_then(|id| ctx.app.world().image(id).map(image_view));
    match view {
        Some(view) => json(StatusCode::OK, &view),
        None => no_image(ctx, raw),
    }
}

/// `GET /v2/images`: every parameter that is not paging or sorting filters on equality.
fn list(ctx: &Ctx<'_>) -> Response {
    let Some(query) = ctx.query() else {
        return webob(
            StatusCode::BAD_REQUEST,
            "Invalid query string",
            ctx.header("accept"),
        );
    };
    let filters: Vec<&(String, String)> = query
        .iter()
        .filter(|(key, _)| !NOT_FILTERS.contains(&key.as_str()))
        .collect();
    let images: Vec<Value> = ctx
        .app
        .world()
        .images()
        .iter()
        .map(image_view)
        .filter(|view| {
            filters.iter().all(|(key, wanted)| match view.get(key) {
                Some(Value::String(value)) => value == wanted,
                Some(other) => {
                    serde_json::from_str::<Value>(wanted).is_ok_and(|value| value == *other)
                }
                None => false,
            })
        })
        .collect();
    let first = match ctx.parts.uri.query() {
        Some(query) if !query.is_empty() => format!("/v2/images?{query}"),
        _ => "/v2/images".to_owned(),
    };
    json(
        StatusCode::OK,
        &json!({"images": images, "schema": "/v2/schemas/images", "first": first}),
    )
}

/// `PATCH /v2/images/{id}`: the body is checked first (415, 400, 403), then the image is
/// looked up (404), then all changes apply or none (403, 409).
fn patch(ctx: &Ctx<'_>, raw: &str) -> Response {
    let changes = match parse(ctx.header("content-type"), ctx.body) {
        Ok(changes) => changes,
        Err(refused) => return patch_error(ctx, refused),
    };
    let mut world = ctx.app.world();
    let Some(image) = Uuid::parse_str(raw).ok().and_then(|id| world.image_mut(id)) else {
        return no_image(ctx, raw);
    };
    match apply(image, &changes) {
        Ok(mut patched) => {
            patched.updated_at = timestamps::now_seconds();
            *image = patched;
            json(StatusCode::OK, &image_view(image))
        }
        Err(refused) => patch_error(ctx, refused),
    }
}

fn patch_error(ctx: &Ctx<'_>, refused: PatchError) -> Response {
    let accept = ctx.header("accept");
    match refused {
        PatchError::UnsupportedMediaType(message) => {
            let mut response = webob(StatusCode::UNSUPPORTED_MEDIA_TYPE, &message, accept);
            set(
                &mut response,
                HeaderName::from_static("accept-patch"),
                ACCEPT_PATCH,
            );
            response
        }
        PatchError::BadRequest(message) => webob(StatusCode::BAD_REQUEST, &message, accept),
        PatchError::Forbidden(message) => webob(StatusCode::FORBIDDEN, &message, accept),
        PatchError::Conflict(message) => webob(StatusCode::CONFLICT, &message, accept),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_only_v2_images() {
        assert!(route("/v2/images").is_some());
        assert!(route("/v2/images/x").is_some());
        assert!(route("/v1/images").is_none());
    }
}
