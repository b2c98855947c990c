//! `DELETE /{names}`: the names resolved and bound to their uuids on receipt, then a task in the
//! master's queue (see `world::deletion`); the request waits for its answer, which the client
//! may not be there to read.

use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;

use super::RequestContext;
use super::errors::ApiError;
use super::json::reply;
use super::options;
use super::params::Params;
use super::wait::wait_for;
use crate::app::App;
use crate::config::Flavor;
use crate::units::format_millis;
use crate::world::{Answer, DeleteFailure, DeleteRequest, IndicesOptions, Targets, java_indices};

/// `timeout` and `master_timeout` defaults.
const DEFAULT_TIMEOUT_MS: u64 = 30_000;

#[derive(Debug, Serialize)]
struct Acknowledged {
    acknowledged: bool,
}

/// `DestructiveOperations.failDestructive`: looks at the expression as sent, before anything
/// is resolved.
fn destructive(expression: &str) -> bool {
    expression
        .split(',')
        .any(|part| part == "_all" || part.contains('*'))
}

fn failure(failure: DeleteFailure) -> ApiError {
    match failure {
        DeleteFailure::NotFound { name, uuid } => ApiError::index_not_found_with_uuid(&name, &uuid),
        DeleteFailure::WriteIndex { index, stream } => ApiError::illegal_argument(format!(
            "index [{index}] is the write index for data stream [{stream}] and cannot be deleted"
        )),
        DeleteFailure::Snapshotting { indices } => ApiError::exception(
            StatusCode::BAD_REQUEST,
            "snapshot_in_progress_exception",
            format!(
                "Cannot delete indices that are being snapshotted: {}. Try again after snapshot finishes or cancel the currently running snapshot.",
                java_indices(&indices)
            ),
        ),
        DeleteFailure::QueueTimeout { source, timeout_ms } => ApiError::exception(
            StatusCode::SERVICE_UNAVAILABLE,
            "process_cluster_event_timeout_exception",
            format!(
                "failed to process cluster event ({source}) within {}",
                format_millis(timeout_ms)
            ),
        ),
    }
}

/// `DELETE /{names}`. ES <= 7 and OpenSearch delete whatever a wildcard or `_all` matches
/// (hidden indices only with `expand_wildcards` asking for them); ES 8 refuses such expressions
/// because `action.destructive_requires_name` defaults to true. A data stream's name names
/// nothing here (`DeleteIndexRequest.includeDataStreams()` is false): `no such index`, or
/// skipped under `ignore_unavailable`. An expression left with no index (a wildcard matching
/// nothing, only skipped names) is acknowledged at once, without a task
/// (`TransportDeleteIndexAction.masterOperation`).
pub(crate) async fn delete(
    app: &App,
    params: &Params,
    expression: &str,
    context: &RequestContext,
) -> Result<Response, ApiError> {
    // `DeleteIndexRequest`'s own options: strict, open (and closed) indices, no hidden ones.
    let options = options::from_params(params, IndicesOptions::STRICT_EXPAND_OPEN, app.product)?;
    let ack_timeout_ms = params.millis("timeout", DEFAULT_TIMEOUT_MS)?;
    let master_timeout_ms = params.millis("master_timeout", DEFAULT_TIMEOUT_MS)?;
    let ticket = app.with_world(|world| {
        if destructive(expression)
            && world
                .settings()
                .destructive_requires_name(world.flavor() == Flavor::Es8)
        {
            return Err(ApiError::illegal_argument(
                "Wildcard expressions or all indices are not allowed",
            ));
        }
        let resolution = world
            .resolve(expression, &options, Targets::Indices)
            .map_err(options::unresolved)?;
        if resolution.indices.is_empty() {
            return Ok(None);
        }
        let targets = resolution
            .indices
            .iter()
            .filter_map(|&position| world.indices().get(position))
            .map(|index| (index.name.clone(), index.uuid.clone()))
            .collect();
        Ok(Some(world.submit_delete(DeleteRequest {
            targets,
            opaque_id: context.opaque_id.clone(),
            ack_timeout_ms,
            master_timeout_ms,
        })))
    })?;
    let answer = match ticket {
        None => Some(Answer::Acknowledged(true)),
        Some(ticket) => {
            let (_, answer) = wait_for(app, u64::MAX, |world| {
                let answer = world.delete_answer(ticket);
                (answer.is_some(), answer)
            })
            .await;
            answer
        }
    };
    match answer {
        Some(Answer::Acknowledged(acknowledged)) => Ok(reply(
            StatusCode::OK,
            &Acknowledged { acknowledged },
            params.pretty(),
        )),
        Some(Answer::Failed(error)) => Err(failure(error)),
        // Only if the answer was evicted unread, which a waiting request never lets happen.
        None => Err(ApiError::exception(
            StatusCode::INTERNAL_SERVER_ERROR,
            "exception",
            "the simulator lost the answer of this deletion",
        )),
    }
}
