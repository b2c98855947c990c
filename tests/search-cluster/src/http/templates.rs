//! Parsing a `PUT _index_template/{name}` body as `ComposableIndexTemplate`'s parser does:
//! known fields only, `index_patterns` required, template settings validated like a create
//! request's, component templates (not modelled) refused as missing.

use axum::http::StatusCode;
use serde_json::{Map, Value};

use super::create::refused;
use super::errors::ApiError;
use super::json::object_body;
use crate::config::Flavor;
use crate::flavor::Product;
use crate::world::Template;
use crate::world::index_settings::{self, IndexSettings};

fn unknown_field(parser: &str, field: &str) -> ApiError {
    ApiError::exception(
        StatusCode::BAD_REQUEST,
        "x_content_parse_exception",
        format!("[{parser}] unknown field [{field}]"),
    )
}

/// `index_patterns`: a string or an array of strings.
fn patterns(value: &Value) -> Result<Vec<String>, ApiError> {
    let strings = match value {
        Value::String(pattern) => vec![pattern.clone()],
        Value::Array(items) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    if strings.is_empty() {
        return Err(ApiError::illegal_argument(
            "index patterns are missing or not strings",
        ));
    }
    Ok(strings)
}

/// `template`: settings (validated), mappings (not modelled), aliases (not modelled).
fn template_settings(product: Product, value: &Value) -> Result<IndexSettings, ApiError> {
    let Some(object) = value.as_object() else {
        return Err(ApiError::parse("[template] expected an object"));
    };
    let mut settings = IndexSettings::new();
    for (key, value) in object {
        match (key.as_str(), value) {
            ("settings", Value::Object(map)) => {
                settings = index_settings::from_json(map).map_err(ApiError::illegal_argument)?;
                index_settings::validate(product, &settings).map_err(refused)?;
            }
            ("mappings", _) => {}
            ("aliases", Value::Object(map)) if map.is_empty() => {}
            ("aliases", _) => {
                return Err(ApiError::illegal_argument(
                    "the simulator does not model aliases",
                ));
            }
            (other, _) => return Err(unknown_field("template", other)),
        }
    }
    Ok(settings)
}

/// `data_stream`: ES 7.10 takes `{}`; ES 8 `hidden` and `allow_custom_routing`; OpenSearch a
/// `timestamp_field` of its choice. Returns the timestamp field.
fn stream_template(product: Product, value: &Value) -> Result<String, ApiError> {
    let empty = Map::new();
    let object = match value {
        Value::Object(object) => object,
        Value::Null => &empty,
        _ => return Err(ApiError::parse("[data_stream] expected an object")),
    };
    let mut timestamp = "@timestamp".to_owned();
    for (key, value) in object {
        match (product.flavor, key.as_str()) {
            (Flavor::Es8, "hidden" | "allow_custom_routing") if value.is_boolean() => {}
            (Flavor::Os2, "timestamp_field") => match value.get("name").and_then(Value::as_str) {
                Some(name) => timestamp = name.to_owned(),
                None => return Err(unknown_field("timestamp_field", "name")),
            },
            (_, other) => return Err(unknown_field("data_stream_template", other)),
        }
    }
    Ok(timestamp)
}

/// A template from its body.
pub(crate) fn parse_template(
    product: Product,
    name: &str,
    body: &[u8],
) -> Result<Template, ApiError> {
    let Some(object) = object_body(body, "index_template")? else {
        return Err(ApiError::parse("request body is required"));
    };
    let mut template = Template {
        name: name.to_owned(),
        index_patterns: Vec::new(),
        priority: 0,
        settings: IndexSettings::new(),
        data_stream: None,
        body: Value::Object(object.clone()),
    };
    for (key, value) in &object {
        match key.as_str() {
            "index_patterns" => template.index_patterns = patterns(value)?,
            "template" => template.settings = template_settings(product, value)?,
            "priority" => {
                template.priority = value
                    .as_i64()
                    .filter(|priority| *priority >= 0)
                    .ok_or_else(|| {
                        ApiError::illegal_argument("priority must be a non-negative number")
                    })?;
            }
            "composed_of" => {
                let names: Vec<&str> = value
                    .as_array()
                    .map(|items| items.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if !names.is_empty() {
                    return Err(ApiError::illegal_argument(format!(
                        "index template [{name}] specifies component templates [{}] that do not exist",
                        names.join(", ")
                    )));
                }
            }
            "data_stream" => template.data_stream = Some(stream_template(product, value)?),
            "version" | "_meta" => {}
            "allow_auto_create" if product.flavor == Flavor::Es8 => {}
            other => return Err(unknown_field("index_template", other)),
        }
    }
    if template.index_patterns.is_empty() {
        return Err(ApiError::exception(
            StatusCode::BAD_REQUEST,
            "x_content_parse_exception",
            "[index_template] Required [index_patterns]",
        ));
    }
    Ok(template)
}
