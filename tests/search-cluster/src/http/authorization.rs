//! Elasticsearch security's authorization, for principals given a role: each request's action
//! needs a cluster or an index privilege, refused with ES's 403 `security_exception` naming the
//! action, the principal, its role and the privileges that grant it; and the has-privileges API
//! (`/_security/user/_has_privileges`) that lets a client ask before it acts. A principal with
//! no role in [`super::Security::roles`] may do everything (a superuser), as `elastic` does.
//!
//! Privileges are granted on every index (`names: ["*"]`); the implication between them follows
//! ES's built-in privileges: `all` implies every other, cluster `manage` implies `monitor`, index
//! `manage` implies `monitor`, `view_index_metadata`, `delete_index` and `maintenance`.

use axum::body::Bytes;
use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde::Deserialize;

use super::errors::{ApiError, Exception};
use super::json::{Ordered, reply};
use super::routes::Endpoint;
use super::security::Principal;

/// A role: the privileges it grants, on the cluster and on every index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Role {
    pub name: String,
    pub cluster: Vec<String>,
    pub index: Vec<String>,
}

/// What a request's action is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Cluster,
    Index,
}

/// The action of a request, and the privileges that grant it (ES lists them in its refusal).
struct Action {
    scope: Scope,
    name: &'static str,
    granted_by: &'static [&'static str],
}

const fn cluster(name: &'static str, granted_by: &'static [&'static str]) -> Action {
    Action {
        scope: Scope::Cluster,
        name,
        granted_by,
    }
}

const fn index(name: &'static str, granted_by: &'static [&'static str]) -> Action {
    Action {
        scope: Scope::Index,
        name,
        granted_by,
    }
}

const MONITOR: &[&str] = &["monitor", "manage", "all"];
const CLUSTER_MANAGE: &[&str] = &["manage", "all"];
const INDEX_MONITOR: &[&str] = &["monitor", "manage", "all"];
const VIEW_METADATA: &[&str] = &["view_index_metadata", "manage", "all"];
const DELETE: &[&str] = &["delete_index", "manage", "all"];
const MAINTENANCE: &[&str] = &["maintenance", "manage", "all"];
const CREATE: &[&str] = &["create_index", "manage", "all"];
const INDEX_MANAGE: &[&str] = &["manage", "all"];
const TEMPLATES: &[&str] = &["manage_index_templates", "manage", "all"];

/// The actions a request performs, in the order ES authorizes them: `_cat/indices` reads the
/// cluster state before the indices' stats, so it needs the cluster `monitor` privilege as well
/// as the index one (ES's "cat indices API" prerequisites); every other endpoint is one action.
/// None for the OpenSearch ISM endpoints, which ES security never sees.
fn actions(endpoint: &Endpoint, method: &Method) -> Vec<Action> {
    match endpoint {
        Endpoint::CatIndices(_) => vec![
            cluster("cluster:monitor/state", MONITOR),
            index("indices:monitor/stats", INDEX_MONITOR),
        ],
        other => action(other, method).into_iter().collect(),
    }
}

/// The one action of a request other than `_cat/indices`; `None` for the OpenSearch ISM
/// endpoints.
fn action(endpoint: &Endpoint, method: &Method) -> Option<Action> {
    let write = *method == Method::PUT || *method == Method::POST;
    Some(match endpoint {
        Endpoint::Root => cluster("cluster:monitor/main", MONITOR),
        Endpoint::CatHealth | Endpoint::ClusterHealth => cluster("cluster:monitor/health", MONITOR),
        Endpoint::CatNodes | Endpoint::CatAllocation => cluster("cluster:monitor/state", MONITOR),
        Endpoint::ClusterSettings if write => {
            cluster("cluster:admin/settings/update", CLUSTER_MANAGE)
        }
        Endpoint::ClusterSettings => cluster("cluster:monitor/state", MONITOR),
        Endpoint::ClusterPendingTasks => cluster("cluster:monitor/task", MONITOR),
        Endpoint::Tasks => cluster("cluster:monitor/tasks/lists", MONITOR),
        Endpoint::CatIndices(_) => return None,
        Endpoint::CatRecovery(_) => index("indices:monitor/recovery", INDEX_MONITOR),
        Endpoint::Flush | Endpoint::FlushSynced => index("indices:admin/flush", MAINTENANCE),
        Endpoint::Index(_) if *method == Method::DELETE => index("indices:admin/delete", DELETE),
        Endpoint::Index(_) if write => index("indices:admin/create", CREATE),
        Endpoint::Index(_) => index("indices:admin/get", VIEW_METADATA),
        Endpoint::Settings { .. } if write => index("indices:admin/settings/update", INDEX_MANAGE),
        Endpoint::Settings { .. } => index("indices:monitor/settings/get", VIEW_METADATA),
        Endpoint::IndexTemplate(_) if *method == Method::GET || *method == Method::HEAD => {
            cluster("indices:admin/index_template/get", TEMPLATES)
        }
        Endpoint::IndexTemplate(_) => cluster("indices:admin/index_template/put", TEMPLATES),
        Endpoint::DataStream(_) if write => index("indices:admin/data_stream/create", CREATE),
        Endpoint::DataStream(_) => index("indices:admin/data_stream/get", VIEW_METADATA),
        Endpoint::Rollover(_) => index("indices:admin/rollover", INDEX_MANAGE),
        Endpoint::IsmPolicy(_) | Endpoint::IsmAdd(_) | Endpoint::IsmExplain(_) => return None,
    })
}

/// Whether `role` grants `privilege` in `scope`, itself or through one that implies it.
fn grants(role: &Role, scope: Scope, privilege: &str) -> bool {
    let held = match scope {
        Scope::Cluster => &role.cluster,
        Scope::Index => &role.index,
    };
    held.iter().any(|have| {
        have == privilege
            || have == "all"
            || (have == "manage"
                && match scope {
                    Scope::Cluster => privilege == "monitor",
                    Scope::Index => matches!(
                        privilege,
                        "monitor" | "view_index_metadata" | "delete_index" | "maintenance"
                    ),
                })
    })
}

/// ES's 403 for a principal whose role does not grant the request's action; `target` names
/// the indices of an index action (the request path's first segment).
pub(crate) fn authorize(
    role: Option<&Role>,
    principal: &Principal,
    endpoint: &Endpoint,
    method: &Method,
    target: &str,
) -> Result<(), ApiError> {
    let Some(role) = role else {
        return Ok(());
    };
    let refused = actions(endpoint, method).into_iter().find(|action| {
        !action
            .granted_by
            .iter()
            .any(|privilege| grants(role, action.scope, privilege))
    });
    let Some(action) = refused else {
        return Ok(());
    };
    let (on, kind) = match action.scope {
        Scope::Cluster => (String::new(), "cluster"),
        Scope::Index => (format!(" on indices [{target}]"), "index"),
    };
    Err(ApiError::Exception(Exception::new(
        StatusCode::FORBIDDEN,
        "security_exception",
        format!(
            "action [{}] is unauthorized for {principal} with effective roles [{}]{on}, this \
             action is granted by the {kind} privileges [{}]",
            action.name,
            role.name,
            action.granted_by.join(",")
        ),
    )))
}

/// The body of a has-privileges request.
#[derive(Debug, Default, Deserialize)]
struct Asked {
    #[serde(default)]
    cluster: Vec<String>,
    #[serde(default)]
    index: Vec<AskedIndex>,
}

#[derive(Debug, Deserialize)]
struct AskedIndex {
    names: Vec<String>,
    privileges: Vec<String>,
}

/// `GET|POST /_security/user/_has_privileges`: which of the asked privileges the principal
/// holds (every one, for a principal without a role).
pub(crate) fn has_privileges(
    role: Option<&Role>,
    principal: &Principal,
    body: &Bytes,
    pretty: bool,
) -> Response {
    let asked: Asked = match serde_json::from_slice(body) {
        Ok(asked) => asked,
        Err(error) => {
            let refused = Exception::new(
                StatusCode::BAD_REQUEST,
                "x_content_parse_exception",
                format!("[has_privileges_request] failed to parse: {error}"),
            );
            return ApiError::Exception(refused).into_response(pretty);
        }
    };
    let held = |scope, privilege: &str| role.is_none_or(|role| grants(role, scope, privilege));
    let mut all = true;
    let mut check = |scope, privilege: &str| {
        let holds = held(scope, privilege);
        all &= holds;
        (privilege.to_owned(), holds)
    };
    let cluster = Ordered(
        asked
            .cluster
            .iter()
            .map(|privilege| check(Scope::Cluster, privilege))
            .collect(),
    );
    let mut index = Ordered::default();
    for asked in &asked.index {
        for name in &asked.names {
            let privileges = asked
                .privileges
                .iter()
                .map(|privilege| check(Scope::Index, privilege))
                .collect();
            index.0.push((name.clone(), Ordered(privileges)));
        }
    }
    let body = serde_json::json!({
        "username": principal.user(),
        "has_all_requested": all,
        "cluster": cluster,
        "index": index,
        "application": {},
    });
    reply(StatusCode::OK, &body, pretty)
}

#[cfg(test)]
mod tests;
