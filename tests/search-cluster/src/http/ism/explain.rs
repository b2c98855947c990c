//! `GET _plugins/_ism/explain[/{index}]` as `TransportExplainAction` answers it: a search of the
//! config index for the managed-index documents, sorted by index name, bounded as any search is.
//!
//! Explaining all indices pages that search with the request's `from` and `size` (20 by
//! default) and lists only the hits. Explaining named indices searches with `MAX_HITS` (10,000)
//! as size, whatever `size` says, and lists every named index: one whose document is not among
//! the hits shows as unmanaged. Either way `from + size` beyond `index.max_result_window`
//! fails the search, and `total_managed_indices` is the search's total hits, which stop being
//! counted at 10,000: a client paging through more than 10,000 managed indices cannot.

use std::collections::{HashMap, HashSet};

use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;

use super::super::errors::ApiError;
use super::super::json::{Ordered, reply};
use super::super::params::Params;
use super::{PolicyJson, policy_json};
use crate::app::App;
use crate::world::{CONFIG_INDEX, IndicesOptions, Managed, Targets, World};

/// `SearchParams`' default page when explaining all indices.
const DEFAULT_PAGE_SIZE: u64 = 20;
/// `ManagedIndexCoordinator.MAX_HITS`: the search size when explaining named indices.
const MAX_HITS: u64 = 10_000;
/// `index.max_result_window`'s default, which the config index keeps.
const MAX_RESULT_WINDOW: u64 = 10_000;
/// `SearchContext.DEFAULT_TRACK_TOTAL_HITS_UP_TO`: total hits are exact up to here only.
const TRACK_TOTAL_HITS_UP_TO: usize = 10_000;

/// One index's explain entry: policy ids (null when unmanaged), the managed-index metadata as
/// the config document holds it before the job's first run, `enabled` (null when unmanaged).
#[derive(Debug, Serialize)]
struct ExplainEntry<'a> {
    #[serde(rename = "index.plugins.index_state_management.policy_id")]
    policy_id_setting: Option<&'a str>,
    #[serde(rename = "index.opendistro.index_state_management.policy_id")]
    legacy_policy_id_setting: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    index_uuid: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    policy_id: Option<&'a str>,
    enabled: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    policy: Option<PolicyJson<'a>>,
}

/// A field of the explain body: an index's entry, or the count at the end.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum ExplainField<'a> {
    Entry(ExplainEntry<'a>),
    Total(usize),
}

fn explain_entry<'a>(
    world: &'a World,
    managed: Option<&'a Managed>,
    show_policy: bool,
) -> ExplainEntry<'a> {
    let policy_id = managed.map(|managed| managed.policy_id.as_str());
    ExplainEntry {
        policy_id_setting: policy_id,
        legacy_policy_id_setting: policy_id,
        index: managed.map(|managed| managed.index.as_str()),
        index_uuid: managed.map(|managed| managed.uuid.as_str()),
        policy_id,
        enabled: managed.map(|_| true),
        policy: policy_id
            .filter(|_| show_policy)
            .and_then(|id| world.policy(id))
            .map(policy_json),
    }
}

/// The search's failure when `from + size` passes the window: every shard refuses it in its
/// query phase (`DefaultSearchContext.preProcess`).
#[derive(Debug, Serialize)]
struct WindowBody<'a> {
    error: WindowError<'a>,
    status: u16,
}

#[derive(Debug, Serialize)]
struct WindowError<'a> {
    root_cause: [&'a Cause; 1],
    #[serde(rename = "type")]
    kind: &'static str,
    reason: &'static str,
    phase: &'static str,
    grouped: bool,
    caused_by: &'a Cause,
}

#[derive(Debug, Serialize)]
struct Cause {
    #[serde(rename = "type")]
    kind: &'static str,
    reason: String,
}

fn window_too_large(window: u64, pretty: bool) -> Response {
    let cause = Cause {
        kind: "illegal_argument_exception",
        reason: format!(
            "Result window is too large, from + size must be less than or equal to: [{MAX_RESULT_WINDOW}] but was [{window}]. See the scroll api for a more efficient way to request large data sets. This limit can be set by changing the [index.max_result_window] index level setting."
        ),
    };
    let body = WindowBody {
        error: WindowError {
            root_cause: [&cause],
            kind: "search_phase_execution_exception",
            reason: "all shards failed",
            phase: "query",
            grouped: true,
            caused_by: &cause,
        },
        status: StatusCode::BAD_REQUEST.as_u16(),
    };
    reply(StatusCode::BAD_REQUEST, &body, pretty)
}

/// `GET _plugins/_ism/explain[/{index}]`.
pub(crate) fn explain(
    app: &App,
    params: &Params,
    index: Option<&str>,
) -> Result<Response, ApiError> {
    let number = |key: &str, default: u64| {
        params.get(key).map_or(Ok(default), |value| {
            value.parse::<u64>().map_err(|_| {
                ApiError::illegal_argument(format!(
                    "Failed to parse int parameter [{key}] with value [{value}]"
                ))
            })
        })
    };
    let size = number("size", DEFAULT_PAGE_SIZE)?;
    let from = number("from", 0)?;
    let descending = params.get("sortOrder") == Some("desc");
    let show_policy = params.flag("show_policy")?;
    for timeout in ["master_timeout", "cluster_manager_timeout"] {
        params.millis(timeout, 0)?;
    }
    let pretty = params.pretty();
    let size = if index.is_some() { MAX_HITS } else { size };
    Ok(app.with_world(|world| {
        let named = index.map(|expression| {
            let options = IndicesOptions::LENIENT_EXPAND_HIDDEN;
            let positions = world
                .resolve(expression, &options, Targets::IndicesAndStreams)
                .map(|resolution| resolution.indices)
                .unwrap_or_default();
            let mut named: Vec<_> = positions
                .iter()
                .filter_map(|&position| world.indices().get(position))
                .collect();
            named.sort_by(|a, b| a.name.cmp(&b.name));
            named
        });
        // Without the config index the search fails before any window is checked, and the
        // handler answers as if nothing were managed.
        let window = from.saturating_add(size);
        if window > MAX_RESULT_WINDOW && world.index(CONFIG_INDEX).is_some() {
            return window_too_large(window, pretty);
        }
        let mut documents: Vec<&Managed> = match &named {
            None => world.managed_indices().iter().collect(),
            Some(named) => {
                let uuids: HashSet<&str> = named.iter().map(|index| index.uuid.as_str()).collect();
                let managed = world.managed_indices().iter();
                managed
                    .filter(|managed| uuids.contains(managed.uuid.as_str()))
                    .collect()
            }
        };
        documents.sort_by(|a, b| a.index.cmp(&b.index));
        if descending {
            documents.reverse();
        }
        let total = documents.len().min(TRACK_TOTAL_HITS_UP_TO);
        let hits = documents
            .into_iter()
            .skip(usize::try_from(from).unwrap_or(usize::MAX))
            .take(usize::try_from(size).unwrap_or(usize::MAX));
        let mut entries: Vec<(String, ExplainField)> = Vec::new();
        match named {
            None => {
                for managed in hits {
                    let entry = explain_entry(world, Some(managed), show_policy);
                    entries.push((managed.index.clone(), ExplainField::Entry(entry)));
                }
            }
            Some(named) => {
                let hits: HashMap<&str, &Managed> = hits
                    .map(|managed| (managed.uuid.as_str(), managed))
                    .collect();
                for index in named {
                    let managed = hits.get(index.uuid.as_str()).copied();
                    let entry = explain_entry(world, managed, show_policy);
                    entries.push((index.name.clone(), ExplainField::Entry(entry)));
                }
            }
        }
        entries.push((
            "total_managed_indices".to_owned(),
            ExplainField::Total(total),
        ));
        reply(StatusCode::OK, &Ordered(entries), pretty)
    }))
}
