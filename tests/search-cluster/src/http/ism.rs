//! OpenSearch ISM's REST API as the index-management plugin 2.11.1.0 answers it: storing a
//! policy, attaching indices to it, and the explain API that says which indices are managed.
//!
//! Sources: `RestIndexPolicyAction`/`IndexPolicyResponse` (201 with a `Location` header, the
//! policy nested as `policy.policy`, a second create of the same id a version conflict),
//! `Policy.parse` and its `init` checks, `RestAddPolicyAction`/`ISMStatusResponse`, and
//! `TransportExplainAction`/`ExplainResponse` (see [`explain`]; named indices resolve leniently,
//! hidden ones included, and unmanaged ones list with null policy ids). Right after the add API the
//! job has not initialised the policy yet, so a managed index shows no state: the simulator
//! never runs the job.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::errors::ApiError;
use super::json::{object_body, reply};
use super::params::Params;
use crate::app::App;
use crate::world::{AddError, CONFIG_INDEX, IndicesOptions, Policy, Targets};

mod explain;
pub(crate) use explain::explain;

/// `Policy.parse` and `Policy.init`: the checks a stored policy passes.
fn parse_policy(policy: &Map<String, Value>) -> Result<(), String> {
    const FIELDS: [&str; 9] = [
        "schema_version",
        "last_updated_time",
        "policy_id",
        "description",
        "error_notification",
        "default_state",
        "states",
        "ism_template",
        "user",
    ];
    if let Some(field) = policy.keys().find(|key| !FIELDS.contains(&key.as_str())) {
        return Err(format!("Invalid field: [{field}] found in Policy."));
    }
    let states = policy
        .get("states")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = states
        .iter()
        .map(|state| {
            state
                .get("name")
                .and_then(Value::as_str)
                .ok_or("name is null")
        })
        .collect::<Result<_, _>>()?;
    for state in &states {
        let transitions = state.get("transitions").and_then(Value::as_array);
        for target in transitions.into_iter().flatten() {
            let target = target
                .get("state_name")
                .and_then(Value::as_str)
                .unwrap_or("");
            if !names.contains(&target) {
                let from = state.get("name").and_then(Value::as_str).unwrap_or("");
                return Err(format!(
                    "Policy contains a transition in state={from} pointing to a nonexistent state={target}"
                ));
            }
        }
    }
    let mut distinct = names.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() != names.len() {
        return Err("Policy cannot have duplicate state names".to_owned());
    }
    if names.is_empty() {
        return Err("Policy must contain at least one State".to_owned());
    }
    if policy.get("description").and_then(Value::as_str).is_none() {
        return Err("description is null".to_owned());
    }
    let default = policy.get("default_state").and_then(Value::as_str);
    match default {
        None => Err("default_state is null".to_owned()),
        Some(default) if !names.contains(&default) => {
            Err("Policy must have a valid default state".to_owned())
        }
        Some(_) => Ok(()),
    }
}

/// The policy as `Policy.toXContent` writes it (without type and user). The states are echoed
/// as given: the real plugin also fills in each action's defaults (retry and so on).
#[derive(Debug, Serialize)]
struct PolicyJson<'a> {
    policy_id: &'a str,
    description: &'a Value,
    last_updated_time: i64,
    schema_version: Value,
    error_notification: &'a Value,
    default_state: &'a Value,
    states: &'a Value,
    ism_template: &'a Value,
}

const NULL: Value = Value::Null;
/// `IndexUtils.DEFAULT_SCHEMA_VERSION`, for a policy that gives none.
const DEFAULT_SCHEMA_VERSION: u64 = 1;

fn policy_json(policy: &Policy) -> PolicyJson<'_> {
    let field = |key: &str| policy.body.get(key).unwrap_or(&NULL);
    PolicyJson {
        policy_id: &policy.id,
        description: field("description"),
        last_updated_time: policy.last_updated_ms,
        schema_version: policy
            .body
            .get("schema_version")
            .cloned()
            .unwrap_or_else(|| json!(DEFAULT_SCHEMA_VERSION)),
        error_notification: field("error_notification"),
        default_state: field("default_state"),
        states: field("states"),
        ism_template: field("ism_template"),
    }
}

#[derive(Debug, Serialize)]
struct Typed<'a> {
    policy: PolicyJson<'a>,
}

/// `IndexPolicyResponse.toXContent`.
#[derive(Debug, Serialize)]
struct IndexPolicyBody<'a> {
    _id: &'a str,
    _version: u64,
    _primary_term: u64,
    _seq_no: u64,
    policy: Typed<'a>,
}

/// `PUT _plugins/_ism/policies/{policy_id}`.
pub(crate) fn put_policy(
    app: &App,
    params: &Params,
    id: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let Some(object) = object_body(body, "policy")? else {
        return Err(ApiError::parse("request body is required"));
    };
    let policy = match object.iter().next() {
        Some((_, Value::Object(policy))) if object.len() == 1 => policy.clone(),
        _ => {
            return Err(ApiError::exception(
                StatusCode::BAD_REQUEST,
                "parsing_exception",
                "Failed to parse object: expecting token of type [START_OBJECT] but found [VALUE_STRING]",
            ));
        }
    };
    parse_policy(&policy).map_err(ApiError::illegal_argument)?;
    let stored = app.with_world(|world| {
        let config_uuid = || world.index(CONFIG_INDEX).map(|index| index.uuid.clone());
        let uuid = config_uuid().unwrap_or_default();
        world.put_policy(id, policy).map_err(|version| {
            ApiError::version_conflict(
                &format!("[{id}]: version conflict, document already exists (current version [{version}])"),
                CONFIG_INDEX,
                &uuid,
            )
        })
    })?;
    let body = IndexPolicyBody {
        _id: &stored.id,
        _version: 1,
        _primary_term: stored.primary_term,
        _seq_no: stored.seq_no,
        policy: Typed {
            policy: policy_json(&stored),
        },
    };
    let mut response = reply(StatusCode::CREATED, &body, params.pretty());
    if let Ok(location) = HeaderValue::from_str(&format!("/_plugins/_ism/policies/{id}")) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    Ok(response)
}

#[derive(Debug, Serialize)]
struct FailedIndex {
    index_name: String,
    index_uuid: String,
    reason: String,
}

#[derive(Debug, Serialize)]
struct AddBody {
    updated_indices: usize,
    failures: bool,
    failed_indices: Vec<FailedIndex>,
}

/// `POST _plugins/_ism/add/{index}` with `{"policy_id": "..."}`.
pub(crate) fn add(
    app: &App,
    params: &Params,
    index: Option<&str>,
    body: &[u8],
) -> Result<Response, ApiError> {
    let Some(expression) = index.filter(|index| !index.is_empty()) else {
        return Err(ApiError::illegal_argument("Missing indices"));
    };
    let object = object_body(body, "add_policy")?.unwrap_or_default();
    let Some(policy_id) = object.get("policy_id").and_then(Value::as_str) else {
        return Err(ApiError::illegal_argument("Missing policy_id"));
    };
    let outcome = app.with_world(|world| {
        let options = IndicesOptions::LENIENT_EXPAND_HIDDEN;
        let positions = world
            .resolve(expression, &options, Targets::IndicesAndStreams)
            .map(|resolution| resolution.indices)
            .unwrap_or_default();
        world.ism_add(&positions, policy_id)
    });
    let outcome = outcome.map_err(|error| match error {
        AddError::NoConfigIndex => ApiError::index_not_found(CONFIG_INDEX),
        AddError::NoPolicy(id) => ApiError::exception(
            StatusCode::NOT_FOUND,
            "status_exception",
            format!("Could not find policy={id}"),
        ),
    })?;
    let body = AddBody {
        updated_indices: outcome.updated,
        failures: !outcome.failed.is_empty(),
        failed_indices: outcome
            .failed
            .into_iter()
            .map(|(index_name, index_uuid, reason)| FailedIndex {
                index_name,
                index_uuid,
                reason,
            })
            .collect(),
    };
    Ok(reply(StatusCode::OK, &body, params.pretty()))
}
