//! Flushes (plain and synced, per flavor) and the deprecation `Warning` header ES sends.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::Serialize;

use super::info::version;
use super::json::{Ordered, reply};
use super::params::Params;
use crate::app::App;
use crate::config::Flavor;
use crate::world::{CopyState, World};

/// Shard counts of a broadcast or synced flush.
#[derive(Debug, Clone, Copy, Default, Serialize)]
struct Counts {
    total: usize,
    successful: usize,
    failed: usize,
}

#[derive(Debug, Serialize)]
struct FlushBody {
    _shards: Counts,
}

/// A normal flush reaches every active copy; unassigned ones are not failures.
fn flush_counts(world: &World) -> Counts {
    let health = world.health();
    Counts {
        total: health.active_shards + health.initializing_shards + health.unassigned_shards,
        successful: health.active_shards,
        failed: 0,
    }
}

/// `POST /_flush`.
pub(crate) fn flush(app: &App, params: &Params) -> Response {
    let counts = app.with_world(|world| flush_counts(world));
    reply(
        StatusCode::OK,
        &FlushBody { _shards: counts },
        params.pretty(),
    )
}

#[derive(Debug, Serialize)]
struct ShardFailure {
    shard: u32,
    reason: String,
}

#[derive(Debug, Serialize)]
struct SyncedEntry {
    #[serde(flatten)]
    counts: Counts,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    failures: Vec<ShardFailure>,
}

/// The ES 6/7 synced flush body: `_shards`, then one entry per index. A shard group with a
/// recovery or relocation in flight has ongoing operations, and the whole group fails (409).
fn synced_body(world: &World) -> (Counts, Ordered<SyncedEntry>) {
    let mut total = Counts::default();
    let mut entries = Vec::new();
    for index in world.indices() {
        let busy = index.copies.iter().any(|copy| {
            matches!(
                copy.state,
                CopyState::Initializing(_) | CopyState::Relocating { .. }
            )
        });
        let copies = index.copies.len();
        let entry = if busy {
            SyncedEntry {
                counts: Counts {
                    total: copies,
                    successful: 0,
                    failed: copies,
                },
                failures: vec![ShardFailure {
                    shard: 0,
                    reason: "[1] ongoing operations on primary".to_owned(),
                }],
            }
        } else {
            let active = index.copies.iter().filter(|copy| copy.is_active()).count();
            SyncedEntry {
                counts: Counts {
                    total: copies,
                    successful: active,
                    failed: 0,
                },
                failures: Vec::new(),
            }
        };
        total.total += entry.counts.total;
        total.successful += entry.counts.successful;
        total.failed += entry.counts.failed;
        entries.push((index.name.clone(), entry));
    }
    (total, Ordered(entries))
}

/// Adds a deprecation `Warning` header the way ES's `HeaderWarning` formats it.
pub(crate) fn with_warning(mut response: Response, flavor: Flavor, text: &str) -> Response {
    let build = version(flavor);
    let product = if flavor.is_opensearch() {
        "OpenSearch"
    } else {
        "Elasticsearch"
    };
    let value = format!(
        "299 {product}-{}-{} \"{text}\"",
        build.number, build.build_hash
    );
    if let Ok(value) = HeaderValue::from_str(&value) {
        response.headers_mut().append(header::WARNING, value);
    }
    response
}

/// `POST /_flush/synced`: real on ES 6/7 (deprecated in 7.6+), a plain flush on OpenSearch 2.
/// ES 8 has no such route at all (see [`super::routes`]).
pub(crate) fn flush_synced(app: &App, params: &Params) -> Response {
    match app.flavor {
        Flavor::Os2 => with_warning(
            flush(app, params),
            Flavor::Os2,
            "Synced flush was removed and a normal flush was performed instead. This transition will be removed in a future version.",
        ),
        flavor => {
            let (counts, entries) = app.with_world(|world| synced_body(world));
            let mut body = Ordered(vec![(
                "_shards".to_owned(),
                SyncedEntry {
                    counts,
                    failures: Vec::new(),
                },
            )]);
            body.0.extend(entries.0);
            let status = if counts.failed > 0 {
                StatusCode::CONFLICT
            } else {
                StatusCode::OK
            };
            let response = reply(status, &body, params.pretty());
            if flavor == Flavor::Es7 {
                with_warning(
                    response,
                    flavor,
                    "Synced flush is deprecated and will be removed in 8.0. Use flush at /_flush or /{index}/_flush instead.",
                )
            } else {
                response
            }
        }
    }
}
