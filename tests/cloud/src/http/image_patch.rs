//! Glance's `PATCH /v2/images/{id}`: JSON-patch parsing and its rules for image attributes.

use serde_json::{Map, Value};

use crate::world::Image;

/// The JSON-patch media types Glance accepts, and the JSON-schema draft each implies.
const MEDIA_TYPES: [(&str, Draft); 2] = [
    ("application/openstack-images-v2.0-json-patch", Draft::Four),
    ("application/openstack-images-v2.1-json-patch", Draft::Ten),
];

/// The `Accept-Patch` header of a 415.
pub(super) const ACCEPT_PATCH: &str =
    "application/openstack-images-v2.0-json-patch, application/openstack-images-v2.1-json-patch";

const READ_ONLY: [&str; 13] = [
    "created_at",
    "updated_at",
    "status",
    "checksum",
    "size",
    "virtual_size",
    "direct_url",
    "self",
    "file",
    "schema",
    "id",
    "os_hash_algo",
    "os_hash_value",
];
/// Base attributes a patch may set (`set_base` knows how); everything else writable is custom.
const BASE_WRITABLE: [&str; 10] = [
    "name",
    "owner",
    "disk_format",
    "container_format",
    "visibility",
    "protected",
    "os_hidden",
    "min_disk",
    "min_ram",
    "tags",
];
const RESERVED: [&str; 3] = ["location", "deleted", "deleted_at"];
const OPERATIONS: &str = "add, remove, replace";

/// v2.0 patches name the operation as a key (`{"add": "/x", ...}`); v2.1 use `op` and `path`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Draft {
    Four,
    Ten,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Remove,
    Replace,
}

/// One checked change.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Change {
    op: Op,
    property: String,
    value: Value,
    draft: Draft,
}

/// Why Glance refuses a patch, with its explanation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PatchError {
    UnsupportedMediaType(String),
    BadRequest(String),
    Forbidden(String),
    Conflict(String),
}

use PatchError::{BadRequest, Conflict, Forbidden};

fn operation(raw: &Map<String, Value>, draft: Draft) -> Result<(Op, &Value), PatchError> {
    let named = |name: &str| match name {
        "add" => Some(Op::Add),
        "remove" => Some(Op::Remove),
        "replace" => Some(Op::Replace),
        _ => None,
    };
    match draft {
        Draft::Ten => {
            let op = raw.get("op").ok_or_else(|| {
                BadRequest(format!(
                    "Unable to find `op` in JSON Schema change. It must be one of the following: {OPERATIONS}."
                ))
            })?;
            let op = op.as_str().and_then(named).ok_or_else(|| {
                BadRequest(format!(
                    "Invalid operation: `{}`. It must be one of the following: {OPERATIONS}.",
                    op.as_str().map_or_else(|| op.to_string(), str::to_owned)
                ))
            })?;
            let path = raw.get("path").ok_or_else(|| {
                BadRequest("Unable to find 'path' in JSON Schema change".to_owned())
            })?;
            Ok((op, path))
        }
        Draft::Four => {
            let mut found = raw
                .iter()
                .filter_map(|(key, path)| Some((named(key)?, path)));
            let first = found.next();
            match (first, found.next()) {
                (Some(op), None) => Ok(op),
                (Some(_), Some(_)) => Err(BadRequest(
                    "Operation objects must contain only one member named \"add\", \"remove\", or \"replace\".".to_owned(),
                )),
                (None, _) => Err(BadRequest(
                    "Operation objects must contain exactly one member named \"add\", \"remove\", or \"replace\".".to_owned(),
                )),
            }
        }
    }
}

/// The one property a JSON pointer like `/hw_disk_bus` names.
fn property(pointer: &Value) -> Result<String, PatchError> {
    let pointer = pointer
        .as_str()
        .ok_or_else(|| BadRequest(format!("Pointer `{pointer}` does not start with \"/\".")))?;
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(BadRequest(format!(
            "Pointer `{pointer}` does not start with \"/\"."
        )));
    };
    let parts: Vec<String> = rest
        .split('/')
        .map(|part| part.replace("~1", "/").replace("~0", "~").trim().to_owned())
        .collect();
    match parts.as_slice() {
        [one] if !one.is_empty() => Ok(one.clone()),
        _ => Err(BadRequest(format!(
            "Invalid JSON pointer for this resource: '/{}'",
            parts.join("/")
        ))),
    }
}

/// Parses and checks a patch body sent with `content_type`, as Glance's deserializer does.
pub(super) fn parse(content_type: Option<&str>, body: &[u8]) -> Result<Vec<Change>, PatchError> {
    let media = content_type
        .and_then(|value| value.split(';').next())
        .map(str::trim)
        .unwrap_or("");
    let Some((_, draft)) = MEDIA_TYPES.iter().find(|(name, _)| *name == media) else {
        return Err(PatchError::UnsupportedMediaType(format!(
            "The request media type {media} is not supported by this server."
        )));
    };
    let body: Value = serde_json::from_slice(body)
        .map_err(|_| BadRequest("Malformed JSON in request body.".to_owned()))?;
    let Value::Array(raw_changes) = body else {
        return Err(BadRequest(
            "Request body must be a JSON array of operation objects.".to_owned(),
        ));
    };
    raw_changes
        .iter()
        .map(|raw| {
            let raw = raw
                .as_object()
                .ok_or_else(|| BadRequest("Operations must be JSON objects.".to_owned()))?;
            let (op, pointer) = operation(raw, *draft)?;
            let property = property(pointer)?;
            let value = match op {
                Op::Remove => Value::Null,
                Op::Add | Op::Replace => raw.get("value").cloned().ok_or_else(|| {
                    let name = if op == Op::Add { "add" } else { "replace" };
                    BadRequest(format!(
                        "Operation \"{name}\" requires a member named \"value\"."
                    ))
                })?,
            };
            check_writable(&property)?;
            Ok(Change {
                op,
                property,
                value,
                draft: *draft,
            })
        })
        .collect()
}

fn check_writable(property: &str) -> Result<(), PatchError> {
    if property == "locations" {
        return Err(Forbidden(
            "It's not allowed to update locations if locations are invisible.".to_owned(),
        ));
    }
    if READ_ONLY.contains(&property) {
        return Err(Forbidden(format!("Attribute '{property}' is read-only.")));
    }
    if RESERVED.contains(&property) || property.starts_with("os_glance") {
        return Err(Forbidden(format!("Attribute '{property}' is reserved.")));
    }
    Ok(())
}

fn schema_error(value: &Value, kind: &str) -> PatchError {
    BadRequest(format!(
        "Provided object does not match schema 'image': {value} is not of type '{kind}'"
    ))
}

/// Sets a base attribute; `None` if `property` is a custom property instead.
fn set_base(image: &mut Image, property: &str, value: &Value) -> Option<Result<(), PatchError>> {
    let text = |slot: &mut String| match value.as_str() {
        Some(text) => {
            *slot = text.to_owned();
            Ok(())
        }
        None => Err(schema_error(value, "string")),
    };
    let flag = |slot: &mut bool| match value.as_bool() {
        Some(flag) => {
            *slot = flag;
            Ok(())
        }
        None => Err(schema_error(value, "boolean")),
    };
    let number = |slot: &mut u64| match value.as_u64() {
        Some(number) => {
            *slot = number;
            Ok(())
        }
        None => Err(schema_error(value, "integer")),
    };
    Some(match property {
        "name" => text(&mut image.name),
        "owner" => text(&mut image.owner),
        "disk_format" => text(&mut image.disk_format),
        "container_format" => text(&mut image.container_format),
        "visibility" => match value.as_str() {
            Some(choice @ ("public" | "private" | "shared" | "community")) => {
                image.visibility = choice.to_owned();
                Ok(())
            }
            _ => Err(BadRequest(format!(
                "Provided object does not match schema 'image': {value} is not one of ['community', 'public', 'private', 'shared']"
            ))),
        },
        "protected" => flag(&mut image.protected),
        "os_hidden" => flag(&mut image.os_hidden),
        "min_disk" => number(&mut image.min_disk),
        "min_ram" => number(&mut image.min_ram),
        "tags" => match serde_json::from_value::<Vec<String>>(value.clone()) {
            Ok(tags) => {
                image.tags = tags;
                Ok(())
            }
            Err(_) => Err(schema_error(value, "array")),
        },
        _ => return None,
    })
}

/// Applies checked changes in order, as Glance's controller does; all or nothing.
pub(super) fn apply(image: &Image, changes: &[Change]) -> Result<Image, PatchError> {
    let mut patched = image.clone();
    for change in changes {
        let key = change.property.as_str();
        let is_custom = !BASE_WRITABLE.contains(&key);
        let present = !is_custom || patched.properties.contains_key(key);
        match change.op {
            Op::Add if present && change.draft == Draft::Four => {
                return Err(Conflict(format!("Property {key} already present.")));
            }
            Op::Replace if !present => {
                return Err(Conflict(format!("Property {key} does not exist.")));
            }
            Op::Remove if !is_custom => {
                return Err(Forbidden(format!("Property {key} may not be removed.")));
            }
            Op::Remove if !present => {
                return Err(Conflict(format!("Property {key} does not exist.")));
            }
            Op::Remove => {
                patched.properties.remove(key);
            }
            Op::Add | Op::Replace => {
                if let Some(result) = set_base(&mut patched, key, &change.value) {
                    result?;
                } else {
                    let text = change
                        .value
                        .as_str()
                        .ok_or_else(|| schema_error(&change.value, "string"))?;
                    patched.properties.insert(key.to_owned(), text.to_owned());
                }
            }
        }
    }
    Ok(patched)
}
