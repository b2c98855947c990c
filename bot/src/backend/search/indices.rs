//! Indices: the listing with the UUID of every index and whoever else keeps it, a chunk's names
//! checked right before and after its deletion (one scoped request each, so a prune reads about
//! one row per index it deletes), the deletion itself, and recognising a deletion the cluster is
//! still applying after the bot that sent it was killed.

use std::collections::{BTreeMap, HashMap};

use opsbot_commands::approval::ApprovedIndices;
use opsbot_commands::cluster::{CatIndexRow, Distribution, ServerVersion};
use opsbot_commands::index::IndexName;
use opsbot_commands::plan::MAX_DELETE_PATH;
use opsbot_commands::retention::Keeper;
use reqwest::Method;
use serde::Deserialize;
use serde_json::Value;

use super::SearchClient;
use super::wire::Acknowledged;
use crate::backend::{BackendError, Fault};

/// What a `DELETE` was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    /// Applied: the indices are gone.
    Acknowledged,
    /// The server's own timeout passed first: the deletion goes on being applied.
    Pending,
}

/// A deletion the cluster is still applying, as its task APIs show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InFlight {
    /// Nothing of this step's, and no deletion of these indices, is under way.
    Settled,
    /// Still being applied; what the cluster shows, in a few words.
    Applying(String),
}

/// `GET /{index}/_settings/...?flat_settings=true`: setting values are strings.
type SettingsByIndex = BTreeMap<String, IndexSettings>;

#[derive(Debug, Deserialize)]
struct IndexSettings {
    #[serde(default)]
    settings: Settings,
}

/// The settings opsbot asks for, by their flat names; any other is skipped unread. A map of
/// each index's settings cost hundreds of bytes per index, and the plan of a prune reads every
/// index's creation date: 30 MB more at the peak of a prune of a 30,000-index cluster.
#[derive(Debug, Default, Deserialize)]
struct Settings {
    #[serde(rename = "index.uuid")]
    uuid: Option<Value>,
    #[serde(rename = "index.creation_date")]
    creation_date: Option<Value>,
    #[serde(rename = "index.lifecycle.name")]
    lifecycle_name: Option<Value>,
    #[serde(rename = "index.hidden")]
    hidden: Option<Value>,
}

/// `GET /_data_stream`.
#[derive(Debug, Deserialize)]
struct DataStreams {
    data_streams: Vec<DataStream>,
}

#[derive(Debug, Deserialize)]
struct DataStream {
    name: String,
    indices: Vec<BackingIndex>,
}

#[derive(Debug, Deserialize)]
struct BackingIndex {
    index_name: String,
}

/// `GET /_tasks?actions=indices:admin/delete&detailed=true`, grouped by node.
#[derive(Debug, Deserialize)]
struct Tasks {
    #[serde(default)]
    nodes: BTreeMap<String, NodeTasks>,
}

#[derive(Debug, Deserialize)]
struct NodeTasks {
    #[serde(default)]
    tasks: BTreeMap<String, Task>,
}

#[derive(Debug, Deserialize)]
struct Task {
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// `GET /_cluster/pending_tasks`.
#[derive(Debug, Deserialize)]
struct PendingTasks {
    tasks: Vec<PendingTask>,
}

#[derive(Debug, Deserialize)]
struct PendingTask {
    source: String,
}

/// A setting's value as the settings API writes it: a string, or a bool/number elsewhere.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Bool(_) | Value::Number(_) => Some(value.to_string()),
        _ => None,
    }
}

/// Who keeps which index besides opsbot, by name, and what the server could not say about it.
#[derive(Debug, Default)]
pub struct Kept {
    pub by_index: HashMap<String, Vec<Keeper>>,
    /// When each index was created (`index.creation_date`), read with the same request.
    pub created: HashMap<String, time::OffsetDateTime>,
    /// For the plan's notes.
    pub notes: Vec<String>,
}

/// A route the server does not have: Elasticsearch's and OpenSearch's `RestController` answer
/// 400 with a bare `no handler found for uri [...]` string.
fn is_no_handler(fault: &Fault) -> bool {
    matches!(fault, Fault::Status { status: 400, reason } if reason.starts_with("no handler found"))
}

impl SearchClient {
    /// Every index with the columns `/indices list` shows, its UUID, sizes in bytes; hidden
    /// ones too when asked (a server that has them leaves them out by default), so that a plan
    /// can say it keeps them. No index pattern is sent, not even to read: filtering happens
    /// here, so no wildcard ever reaches the server.
    pub async fn cat_indices(&self, with_hidden: bool) -> Result<Vec<CatIndexRow>, BackendError> {
        let expand = if with_hidden {
            "&expand_wildcards=all"
        } else {
            ""
        };
        let path = format!(
            "/_cat/indices?format=json&bytes=b&h=index,uuid,health,status,docs.count,store.size{expand}"
        );
        self.json(Method::GET, &path, None).await
    }

    /// Who else keeps which index, by name: ILM policies, the hidden flag and the creation date
    /// from the settings API (hidden indices included), ISM policies of `names` from ISM's explain API on
    /// OpenSearch, and the backing indices of data streams where the server has them.
    pub async fn keepers(
        &self,
        version: ServerVersion,
        names: &[&str],
    ) -> Result<Kept, BackendError> {
        let mut keepers: HashMap<String, Vec<Keeper>> = HashMap::new();
        let mut notes = Vec::new();
        // Only indices that have one of the settings come back.
        let expand = if version.has_hidden_indices() {
            "all"
        } else {
            "open,closed"
        };
        let path = format!(
            "/_settings/index.lifecycle.name,index.hidden,index.creation_date?expand_wildcards={expand}&flat_settings=true"
        );
        let settings: SettingsByIndex = self.json(Method::GET, &path, None).await?;
        let mut created = HashMap::new();
        for (index, IndexSettings { settings }) in settings {
            // Milliseconds since the epoch, as a string.
            let creation = settings
                .creation_date
                .as_ref()
                .and_then(text)
                .and_then(|millis| millis.parse::<i128>().ok())
                .and_then(|millis| {
                    time::OffsetDateTime::from_unix_timestamp_nanos(millis * 1_000_000).ok()
                });
            if let Some(creation) = creation {
                created.insert(index.clone(), creation);
            }
            if let Some(policy) = settings.lifecycle_name.as_ref().and_then(text) {
                keepers
                    .entry(index.clone())
                    .or_default()
                    .push(Keeper::Ilm { policy });
            }
            if settings.hidden.as_ref().and_then(text).as_deref() == Some("true") {
                keepers.entry(index).or_default().push(Keeper::Hidden);
            }
        }
        if version.distribution == Distribution::OpenSearch {
            match self.ism_managed(names).await? {
                Some(managed) => {
                    for (index, policy) in managed {
                        keepers
                            .entry(index)
                            .or_default()
                            .push(Keeper::Ism { policy });
                    }
                }
                None => notes.push(
                    "this OpenSearch has no ISM plugin (its _plugins/_ism routes do not exist), \
                     so ISM manages no index here"
                        .to_owned(),
                ),
            }
        }
        if version.has_data_streams() {
            let streams: DataStreams = self.json(Method::GET, "/_data_stream", None).await?;
            for stream in streams.data_streams {
                for backing in stream.indices {
                    keepers
                        .entry(backing.index_name)
                        .or_default()
                        .push(Keeper::DataStream {
                            stream: stream.name.clone(),
                        });
                }
            }
        }
        Ok(Kept {
            by_index: keepers,
            created,
            notes,
        })
    }

    /// The ISM policies of those of `names` that OpenSearch manages, explained by name. Not
    /// the explain of all indices: it pages a search of ISM's config index, which counts and
    /// reaches no further than 10,000 documents (`index.max_result_window`), so past that
    /// managed indices would look unmanaged and a prune could take them. The names go in
    /// chunks whose path stays within [`MAX_DELETE_PATH`], the bound the deletions keep, which
    /// also keeps each chunk far below the 10,000 documents one explain finds.
    ///
    /// `None` when the server has no ISM plugin (`opensearch-min`): every route of it answers
    /// 400 `no handler found`, and no index can be managed by it.
    async fn ism_managed(
        &self,
        names: &[&str],
    ) -> Result<Option<Vec<(String, String)>>, BackendError> {
        const EXPLAIN: &str = "/_plugins/_ism/explain/";
        let mut managed = Vec::new();
        let mut rest = names;
        while !rest.is_empty() {
            let mut length = EXPLAIN.len();
            let fits = rest.iter().take_while(|name| {
                length += name.len() + 1;
                length <= MAX_DELETE_PATH
            });
            let (chunk, after) = rest.split_at(fits.count().max(1));
            rest = after;
            let path = format!("{EXPLAIN}{}", chunk.join(","));
            let explained: BTreeMap<String, Value> = match self.json(Method::GET, &path, None).await
            {
                Ok(explained) => explained,
                Err(error) if is_no_handler(&error.fault) => return Ok(None),
                Err(error) => return Err(error),
            };
            // An entry per named index (null policy ids when unmanaged), beside
            // `total_managed_indices`.
            managed.extend(explained.into_iter().filter_map(|(index, entry)| {
                Some((index, entry.get("policy_id").and_then(text)?))
            }));
        }
        Ok(Some(managed))
    }

    /// The UUIDs of those of `names` that exist now, by name, in one request scoped to them: a
    /// name missing from the answer is gone. The answer has a row per index found, so checking
    /// a chunk after its deletion reads nothing when the deletion worked. Exact names resolve
    /// to hidden indices too, whatever `expand_wildcards` says.
    pub async fn uuids(
        &self,
        names: &[IndexName],
    ) -> Result<HashMap<String, String>, BackendError> {
        let list: Vec<&str> = names.iter().map(IndexName::as_str).collect();
        let path = format!(
            "/{}/_settings/index.uuid?ignore_unavailable=true&allow_no_indices=true&flat_settings=true",
            list.join(",")
        );
        let settings: SettingsByIndex = self.json(Method::GET, &path, None).await?;
        Ok(settings
            .into_iter()
            .filter_map(|(index, found)| {
                Some((index, found.settings.uuid.as_ref().and_then(text)?))
            })
            .collect())
    }

    /// `DELETE /a,b,c` of exact index names, sent with `X-Opaque-Id: opaque_id`. The names
    /// come from an approval proof (`ApprovedIndices`): no code path can delete what one run's
    /// approved step does not name. `IndexName` cannot hold a wildcard, `_all` or a dot index;
    /// `ignore_unavailable` keeps one index that vanished meanwhile from failing the rest.
    pub async fn delete_indices(
        &self,
        indices: &ApprovedIndices<'_>,
        opaque_id: &str,
    ) -> Result<Deleted, BackendError> {
        let names: Vec<&str> = indices.iter().map(|index| index.name.as_str()).collect();
        let path = format!("/{}?ignore_unavailable=true", names.join(","));
        let ack: Acknowledged = self
            .json_as(Method::DELETE, &path, None, Some(opaque_id))
            .await?;
        Ok(if ack.acknowledged {
            Deleted::Acknowledged
        } else {
            Deleted::Pending
        })
    }

    /// Whether the cluster is still applying a deletion that carries `opaque_id` (the task
    /// management API shows the request's headers) or that names one of `indices` (the
    /// master's pending tasks name `index/uuid` pairs; before Elasticsearch 9 a delete task's
    /// description names no index).
    pub async fn in_flight(
        &self,
        opaque_id: &str,
        indices: &[IndexName],
    ) -> Result<InFlight, BackendError> {
        let tasks: Tasks = self
            .json(
                Method::GET,
                "/_tasks?actions=indices:admin/delete*&detailed=true",
                None,
            )
            .await?;
        let ours = tasks
            .nodes
            .values()
            .flat_map(|node| node.tasks.values())
            .filter(|task| task.headers.get("X-Opaque-Id").map(String::as_str) == Some(opaque_id))
            .count();
        if ours > 0 {
            return Ok(InFlight::Applying(format!(
                "{ours} delete task(s) of this step still run ({opaque_id})"
            )));
        }
        let pending: PendingTasks = self
            .json(Method::GET, "/_cluster/pending_tasks", None)
            .await?;
        let named = pending.tasks.iter().find(|task| {
            task.source.starts_with("delete-index")
                && indices
                    .iter()
                    .any(|index| task.source.contains(&format!("[{}/", index.as_str())))
        });
        Ok(match named {
            Some(task) => InFlight::Applying(format!("pending cluster task `{}`", task.source)),
            None => InFlight::Settled,
        })
    }
}
