//! Nova's migration listings: `GET /os-migrations` and `GET /servers/{id}/migrations[/{id}]`.
//!
//! Shapes and filters from `nova/api/openstack/compute/migrations.py`,
//! `server_migrations.py`, their JSON schemas and `migration_get_all_by_filters`
//! (`nova/db/main/api.py`): 2.23 adds `migration_type` (and links on in-progress live
//! migrations), 2.59 adds `uuid`, paging (`limit`, `marker`, newest first) and
//! `changes-since`, 2.66 `changes-before`, 2.80 `user_id` and `project_id`.

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
    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }

    /// A `date-time` parameter, as `timeutils.parse_isotime` reads it (naive means UTC).
    fn time(&self, key: &str) -> Result<Option<OffsetDateTime>, Failure> {
        let Some(raw) = self.get(key) else {
            return Ok(None);
        };
        OffsetDateTime::parse(raw, &Iso8601::DEFAULT)
            .or_else(|_| PrimitiveDateTime::parse(raw, &Iso8601::DEFAULT).map(|at| at.assume_utc()))
            .map(Some)
            .map_err(|_| {
                bad(format!(
                    "Invalid input for query parameters {key}. Value: {raw}. '{raw}' is not a 'date-time'"
                ))
            })
    }
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
    let mut filters = vec!["instance_uuid", "status", "migration_type"];
    // `host` matches either end and takes precedence over `source_compute`.
    if query.get("host").is_none() {
        filters.push("source_compute");
    }
    // From 2.59 nothing strips unlisted parameters, so these reach the database filter
    // before 2.80 documents them.
    if paged {
        filters.extend(["user_id", "project_id"]);
    }
    let since = if paged {
        query.time("changes-since")?
    } else {
        None
    };
    let before = if version >= Version::new(2, 66) {
        query.time("changes-before")?
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
    let limit = match query.get("limit") {
        None => MAX_LIMIT,
        Some(raw) if !raw.is_empty() && raw.bytes().all(|byte| byte.is_ascii_digit()) => {
            raw.parse::<usize>().unwrap_or(MAX_LIMIT).min(MAX_LIMIT)
        }
        Some(raw) => {
            return Err(bad(format!(
                "Invalid input for query parameters limit. Value: {raw}. '{raw}' does not match '^[0-9]*$'"
            )));
        }
    };
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
