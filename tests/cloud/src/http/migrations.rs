//! Nova's migration listings: `GET /os-migrations` and `GET /servers/{id}/migrations[/{id}]`.
//!
//! Shapes and filters from `nova/api/openstack/compute/migrations.py`,
//! `server_migrations.py`, their JSON schemas and `migration_get_all_by_filters`
//! (`nova/db/main/api.py`): 2.23 adds `migration_type` (and links on in-progress live
//! migrations), 2.59 adds `uuid`, paging (`limit`, `marker`, newest first) and
//! `changes-since`, 2.66 `changes-before`, 2.80 `user_id` and `project_id`. Before 2.59 the
//! query schema lets any parameter through and Nova strips the ones it does not name; from
//! 2.59 it allows only those it names (`additionalProperties: False`), so anything else, a
//! later version's parameter included, is a 400.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use serde_json::{Value, json};
use time::format_description::well_known::Iso8601;
use time::{OffsetDateTime, PrimitiveDateTime};
use uuid::Uuid;

use super::Ctx;
use super::compute::Failure;
use super::microversion::Version;
use crate::timestamps;
use crate::world::{Migration, MigrationType, World};

/// Nova's default `[api] max_limit`.
const MAX_LIMIT: usize = 1000;

fn bad(message: String) -> Failure {
    (StatusCode::BAD_REQUEST, message)
}

fn not_found(message: String) -> Failure {
    (StatusCode::NOT_FOUND, message)
}

/// The query parameters; a repeated one counts with its last value, as Nova's
/// `search_opts.update(req.GET)` takes it.
struct Query(Vec<(String, String)>);

impl Query {
    /// Every value of a parameter, in the request's order.
    fn all(&self, key: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
            .collect()
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }

    /// A `date-time` parameter the schema has already checked.
    fn time(&self, key: &str) -> Option<OffsetDateTime> {
        self.get(key).and_then(parse_time)
    }
}

/// `timeutils.parse_isotime`, roughly (naive means UTC).
fn parse_time(raw: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(raw, &Iso8601::DEFAULT)
        .or_else(|_| PrimitiveDateTime::parse(raw, &Iso8601::DEFAULT).map(|at| at.assume_utc()))
        .ok()
}

/// What a query schema accepts for one parameter.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Param {
    /// `common_query_param`: any number of strings.
    Any,
    /// `single_param(non_negative_integer)`.
    Limit,
    /// `single_param({'type': 'string'})`.
    Text,
    /// `single_param({'type': 'string', 'format': 'date-time'})`.
    Time,
}

impl Param {
    /// jsonschema's complaint about one value, if any.
    fn reject(self, raw: &str) -> Option<String> {
        match self {
            Param::Any | Param::Text => None,
            // `'pattern': '^[0-9]*$'` (`re.search`: `$` also matches before a final newline),
            // then `'minLength': 1`.
            Param::Limit => {
                let digits = raw.strip_suffix('\n').unwrap_or(raw);
                if !digits.bytes().all(|byte| byte.is_ascii_digit()) {
                    Some(format!("{} does not match '^[0-9]*$'", python_repr(raw)))
                } else if raw.is_empty() {
                    Some("'' should be non-empty".to_owned())
                } else {
                    None
                }
            }
            Param::Time => parse_time(raw)
                .is_none()
                .then(|| format!("{} is not a 'date-time'", python_repr(raw))),
        }
    }
}

/// The parameters `GET /os-migrations`'s query schema names at a microversion from 2.59
/// (`index_query_v259`, `_v266`, `_v280` in `nova/api/openstack/compute/schemas/migrations.py`),
/// in the schema's order.
fn schema(version: Version) -> Vec<(&'static str, Param)> {
    let mut named = vec![
        ("hidden", Param::Any),
        ("host", Param::Any),
        ("instance_uuid", Param::Any),
        ("source_compute", Param::Any),
        ("status", Param::Any),
        ("migration_type", Param::Any),
        ("limit", Param::Limit),
        ("marker", Param::Text),
        ("changes-since", Param::Time),
    ];
    if version >= Version::new(2, 66) {
        named.push(("changes-before", Param::Time));
    }
    if version >= Version::new(2, 80) {
        named.extend([("user_id", Param::Text), ("project_id", Param::Text)]);
    }
    named
}

/// Nova's query schema check from 2.59 (`validation.query_schema`, strict for a v2.1 request):
/// jsonschema's first error, the named parameters' in the schema's order, then the unnamed
/// parameters (`additionalProperties: False`), sorted as jsonschema lists them.
fn validate(query: &Query, version: Version) -> Result<(), Failure> {
    let named = schema(version);
    for (key, param) in &named {
        let values = query.all(key);
        if *param == Param::Any {
            continue;
        }
        if let Some(reason) = values.iter().find_map(|value| {
            param
                .reject(value)
                .map(|reason| format!("Value: {value}. {reason}"))
        }) {
            return Err(bad(format!(
                "Invalid input for query parameters {key}. {reason}"
            )));
        }
        // `single_param`'s `'maxItems': 1`.
        if values.len() > 1 {
            let list = format!(
                "[{}]",
                values
                    .iter()
                    .map(|value| python_repr(value))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            return Err(bad(format!(
                "Invalid input for query parameters {key}. Value: {list}. {list} is too long"
            )));
        }
    }
    let mut unexpected: Vec<&str> = query
        .0
        .iter()
        .map(|(key, _)| key.as_str())
        .filter(|key| !named.iter().any(|(name, _)| name == key))
        .collect();
    unexpected.sort_unstable();
    unexpected.dedup();
    if unexpected.is_empty() {
        return Ok(());
    }
    let verb = if unexpected.len() == 1 { "was" } else { "were" };
    let names: Vec<String> = unexpected.into_iter().map(python_repr).collect();
    Err(bad(format!(
        "Additional properties are not allowed ({} {verb} unexpected)",
        names.join(", ")
    )))
}

/// Python's `repr` of a string.
fn python_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::from(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if u32::from(c) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// `urllib.parse.urlencode`'s spelling of a query value.
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'~' => {
                char::from(byte).to_string()
            }
            b' ' => "+".to_owned(),
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

/// `GET /os-migrations`.
pub(super) fn index(
    ctx: &Ctx<'_>,
    world: &World,
    version: Version,
    base: &str,
) -> Result<Value, Failure> {
    let query = Query(
        ctx.query()
            .ok_or_else(|| bad("Query string is not UTF-8 encoded".to_owned()))?,
    );
    let paged = version >= Version::new(2, 59);
    if paged {
        validate(&query, version)?;
    }
    let mut filters = vec!["instance_uuid", "status", "migration_type"];
    // `host` matches either end and takes precedence over `source_compute`.
    if query.get("host").is_none() {
        filters.push("source_compute");
    }
    // Before 2.80 these are stripped (below 2.59) or refused (from 2.59).
    if version >= Version::new(2, 80) {
        filters.extend(["user_id", "project_id"]);
    }
    // `changes-since` and `changes-before` are stripped below 2.59 (and deleted from the
    // search options below 2.59 and 2.66 respectively, which the schema makes moot).
    let since = if paged {
        query.time("changes-since")
    } else {
        None
    };
    let before = if version >= Version::new(2, 66) {
        query.time("changes-before")
    } else {
        None
    };
    if since
        .zip(before)
        .is_some_and(|(since, before)| before < since)
    {
        return Err(bad(
            "The value of changes-since must be less than or equal to changes-before.".to_owned(),
        ));
    }
    let mut found: Vec<&Migration> = world
        .migrations()
        .filter(|migration| {
            filters.iter().all(|key| {
                query
                    .get(key)
                    .is_none_or(|wanted| field(migration, key) == wanted)
            })
        })
        .filter(|migration| {
            query.get("host").is_none_or(|host| {
                migration.source_compute == host || migration.dest_compute == host
            })
        })
        .filter(|migration| since.is_none_or(|since| migration.updated_at >= since))
        .filter(|migration| before.is_none_or(|before| migration.updated_at <= before))
        .collect();
    let next = if paged {
        page(&query, world, &mut found, base)?
    } else {
        None
    };
    let migrations: Vec<Value> = found
        .into_iter()
        .map(|migration| view(migration, version, base))
        .collect();
    let mut body = json!({ "migrations": migrations });
    if let Some(next) = next {
        body["migrations_links"] = json!([next]);
    }
    Ok(body)
}

/// Paging from 2.59: newest first (`created_at`, then `id`), after the `marker` migration, at
/// most `limit` (Nova's `max_limit` by default); the `next` link when the page is full.
fn page<'w>(
    query: &Query,
    world: &'w World,
    found: &mut Vec<&'w Migration>,
    base: &str,
) -> Result<Option<Value>, Failure> {
    // The schema has checked it: digits (perhaps then a newline, as Python's `int` takes it);
    // Nova caps it at `max_limit`.
    let limit = query.get("limit").map_or(MAX_LIMIT, |raw| {
        raw.trim_end()
            .parse::<usize>()
            .unwrap_or(MAX_LIMIT)
            .min(MAX_LIMIT)
    });
    found.sort_by_key(|migration| std::cmp::Reverse((migration.created_at, migration.id)));
    if let Some(marker) = query.get("marker") {
        let after = world
            .migrations()
            .find(|migration| migration.uuid.to_string() == marker)
            .map(|migration| (migration.created_at, migration.id))
            .ok_or_else(|| bad(format!("Marker {marker} could not be found.")))?;
        found.retain(|migration| (migration.created_at, migration.id) < after);
    }
    found.truncate(limit);
    let Some(last) = found.last().filter(|_| limit > 0 && found.len() == limit) else {
        return Ok(None);
    };
    // Nova's `_get_next_link`: the request's parameters, sorted, with the new marker.
    let mut sorted = query.0.clone();
    sorted.sort();
    let mut params: BTreeMap<String, String> = sorted.into_iter().collect();
    params.insert("marker".to_owned(), last.uuid.to_string());
    let encoded: Vec<String> = params
        .iter()
        .map(|(key, value)| format!("{}={}", encode(key), encode(value)))
        .collect();
    Ok(Some(json!({
        "rel": "next",
        "href": format!("{base}/v2.1/os-migrations?{}", encoded.join("&")),
    })))
}

/// A migration's column by its filter name.
fn field(migration: &Migration, key: &str) -> String {
    match key {
        "instance_uuid" => migration.instance_uuid.to_string(),
        "status" => migration.status.clone(),
        "migration_type" => migration.migration_type.as_str().to_owned(),
        "source_compute" => migration.source_compute.clone(),
        "user_id" => migration.user_id.clone(),
        "project_id" => migration.project_id.clone(),
        _ => String::new(),
    }
}

/// The columns both listings share.
fn common(migration: &Migration, version: Version) -> Value {
    let mut view = json!({
        "created_at": timestamps::nova(migration.created_at),
        "dest_compute": migration.dest_compute,
        "dest_host": migration.dest_host,
        "dest_node": migration.dest_compute,
        "id": migration.id,
        "source_compute": migration.source_compute,
        "source_node": migration.source_compute,
        "status": migration.status,
        "updated_at": timestamps::nova(migration.updated_at),
    });
    if version >= Version::new(2, 59) {
        view["uuid"] = json!(migration.uuid);
    }
    if version >= Version::new(2, 80) {
        view["user_id"] = json!(migration.user_id);
        view["project_id"] = json!(migration.project_id);
    }
    view
}

/// A migration as `os-migrations` shows it at a microversion.
fn view(migration: &Migration, version: Version, base: &str) -> Value {
    let mut view = common(migration, version);
    view["instance_uuid"] = json!(migration.instance_uuid);
    view["old_instance_type_id"] = json!(migration.old_instance_type_id);
    view["new_instance_type_id"] = json!(migration.new_instance_type_id);
    if version >= Version::new(2, 23) {
        view["migration_type"] = json!(migration.migration_type.as_str());
        if migration.live_in_progress() {
            let path = format!(
                "servers/{}/migrations/{}",
                migration.instance_uuid, migration.id
            );
            view["links"] = json!([
                {"rel": "self", "href": format!("{base}/v2.1/{path}")},
                {"rel": "bookmark", "href": format!("{base}/{path}")},
            ]);
        }
    }
    view
}

/// A live migration as `GET /servers/{id}/migrations` shows it (no progress figures: the
/// simulator has no hypervisor to report them).
fn server_view(migration: &Migration, version: Version) -> Value {
    let mut view = common(migration, version);
    view["server_uuid"] = json!(migration.instance_uuid);
    for key in ["memory", "disk"] {
        for part in ["total", "processed", "remaining"] {
            view[format!("{key}_{part}_bytes")] = Value::Null;
        }
    }
    view
}

/// The server a path names, which must exist; and 404 below 2.23, where the API has no
/// server migrations.
fn server(world: &World, raw: &str, version: Version) -> Result<Uuid, Failure> {
    if version < Version::new(2, 23) {
        return Err(not_found("The resource could not be found.".to_owned()));
    }
    Uuid::parse_str(raw)
        .ok()
        .filter(|id| world.server(*id).is_some())
        .ok_or_else(|| not_found(format!("Instance {raw} could not be found.")))
}

/// `GET /servers/{id}/migrations`: the server's live migrations in progress.
pub(super) fn server_index(world: &World, raw: &str, version: Version) -> Result<Value, Failure> {
    let id = server(world, raw, version)?;
    let migrations: Vec<Value> = world
        .migrations()
        .filter(|migration| migration.instance_uuid == id && migration.live_in_progress())
        .map(|migration| server_view(migration, version))
        .collect();
    Ok(json!({ "migrations": migrations }))
}

/// `GET /servers/{id}/migrations/{migration id}`, with Nova's three 404s.
pub(super) fn server_show(
    world: &World,
    raw: &str,
    migration_id: &str,
    version: Version,
) -> Result<Value, Failure> {
    let id = server(world, raw, version)?;
    let migration = migration_id
        .parse::<u32>()
        .ok()
        .and_then(|wanted| {
            world
                .migrations()
                .find(|migration| migration.id == wanted && migration.instance_uuid == id)
        })
        .ok_or_else(|| {
            not_found(format!(
                "In-progress live migration {migration_id} is not found for server {raw}."
            ))
        })?;
    if migration.migration_type != MigrationType::LiveMigration {
        return Err(not_found(format!(
            "Migration {migration_id} for server {raw} is not live-migration."
        )));
    }
    if !migration.live_in_progress() {
        return Err(not_found(format!(
            "Live migration {migration_id} for server {raw} is not in progress."
        )));
    }
    Ok(json!({ "migration": server_view(migration, version) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_repr_quotes_as_python_does() {
        assert_eq!(python_repr("colour"), "'colour'");
        assert_eq!(python_repr("it's"), "\"it's\"");
        assert_eq!(python_repr("'\""), "'\\'\"'");
        assert_eq!(python_repr("a\\b\n\u{1}"), "'a\\\\b\\n\\x01'");
    }

    #[test]
    fn the_schema_grows_with_the_microversion() {
        let names = |minor| -> Vec<&str> {
            schema(Version::new(2, minor))
                .into_iter()
                .map(|(name, _)| name)
                .collect()
        };
        assert_eq!(names(59).len(), 9);
        assert_eq!(names(66).last(), Some(&"changes-before"));
        assert_eq!(names(80)[9..], ["changes-before", "user_id", "project_id"]);
        assert_eq!(Param::Limit.reject("7\n"), None);
        assert_eq!(
            Param::Limit.reject("-1").as_deref(),
            Some("'-1' does not match '^[0-9]*$'")
        );
    }
}
