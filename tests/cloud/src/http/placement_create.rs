//! `POST /placement/resource_providers`: creating a root provider, with placement's checks.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use uuid::Uuid;

use super::Ctx;
use super::errors::placement_detail;
use super::microversion::Version;
use super::placement::{Failure, provider_view};
use super::reply::{json, set};
use crate::world::World;

fn invalid(message: &str) -> Failure {
    (
        StatusCode::BAD_REQUEST,
        placement_detail(StatusCode::BAD_REQUEST, message),
    )
}

fn conflict(message: &str) -> Failure {
    (
        StatusCode::CONFLICT,
        placement_detail(StatusCode::CONFLICT, message),
    )
}

/// The name and uuid of a valid creation body (the JSON schema check, in short).
fn parse(body: &[u8], version: Version) -> Result<(String, Option<Uuid>), Failure> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|error| invalid(&format!("Malformed JSON: {error}")))?;
    let Value::Object(fields) = value else {
        return Err(invalid(&format!(
            "JSON does not validate: {value} is not of type 'object'"
        )));
    };
    let known: &[&str] = if version >= Version::new(1, 14) {
        &["name", "uuid", "parent_provider_uuid"]
    } else {
        &["name", "uuid"]
    };
    if let Some(key) = fields.keys().find(|key| !known.contains(&key.as_str())) {
        return Err(invalid(&format!(
            "JSON does not validate: Additional properties are not allowed ('{key}' was unexpected)"
        )));
    }
    let name = match fields.get("name") {
        Some(Value::String(name)) if name.chars().count() <= 200 => name.clone(),
        Some(Value::String(name)) => {
            return Err(invalid(&format!(
                "JSON does not validate: '{name}' is too long"
            )));
        }
        Some(other) => {
            return Err(invalid(&format!(
                "JSON does not validate: {other} is not of type 'string'"
            )));
        }
        None => {
            return Err(invalid(
                "JSON does not validate: 'name' is a required property",
            ));
        }
    };
    let uuid =
        match fields.get("uuid") {
            None => None,
            Some(Value::String(text)) => Some(Uuid::parse_str(text).map_err(|_| {
                invalid(&format!("JSON does not validate: '{text}' is not a 'uuid'"))
            })?),
            Some(other) => {
                return Err(invalid(&format!(
                    "JSON does not validate: {other} is not of type 'string'"
                )));
            }
        };
    match fields.get("parent_provider_uuid") {
        None | Some(Value::Null) => Ok((name, uuid)),
        Some(_) => Err(invalid(
            "The simulator keeps every resource provider a root: parent_provider_uuid must be null.",
        )),
    }
}

/// Creates the provider: 201 and a `Location` before 1.20, 200 with the provider from 1.20.
pub(super) fn create(
    ctx: &Ctx<'_>,
    world: &mut World,
    version: Version,
) -> Result<Response, Failure> {
    let (name, uuid) = parse(ctx.body, version)?;
    if world
        .providers()
        .iter()
        .any(|provider| provider.name == name)
    {
        return Err(conflict(&format!(
            "Conflicting resource provider name: {name} already exists."
        )));
    }
    let uuid = uuid.unwrap_or_else(Uuid::new_v4);
    if world.provider(uuid).is_some() {
        return Err(conflict(&format!(
            "Conflicting resource provider uuid: {uuid} already exists."
        )));
    }
    world.add_provider(uuid, &name, &[]);
    let mut response = match world.provider(uuid) {
        Some(provider) if version >= Version::new(1, 20) => {
            json(StatusCode::OK, &provider_view(provider, version))
        }
        _ => StatusCode::CREATED.into_response(),
    };
    set(
        &mut response,
        header::LOCATION,
        &format!("{}/placement/resource_providers/{uuid}", ctx.app.base_url),
    );
    Ok(response)
}
