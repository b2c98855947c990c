//! `GET _cluster/pending_tasks` (the master's queue) and `GET _tasks` (the running transport
//! tasks: the deletions waiting for their answer, and the list request itself).
//!
//! Shapes from `PendingClusterTasksResponse` (both `time_in_queue_millis` and `time_in_queue`,
//! always) and `ListTasksResponse`/`TaskInfo`: grouped by node (default), by parent, or flat
//! (`group_by=none`); `description` only with `detailed` (a delete request's is empty before
//! ES 9: it names no index); `cancelled` only for cancellable tasks (ES 7.14+) but always on
//! OpenSearch 2; `headers` carries the request's `X-Opaque-Id`.

use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;

use super::RequestContext;
use super::errors::ApiError;
use super::json::{Ordered, reply};
use super::params::{Params, comma_list};
use crate::app::App;
use crate::units::{format_date_millis, format_millis};
use crate::world::{NodeId, TaskView, World, glob_match, node_id};

/// `TransportListTasksAction`'s own action names: the request and its per-node children.
const LIST_ACTION: &str = "cluster:monitor/tasks/lists";
const LIST_NODE_ACTION: &str = "cluster:monitor/tasks/lists[n]";

#[derive(Debug, Serialize)]
struct PendingJson {
    insert_order: u64,
    priority: &'static str,
    source: String,
    executing: bool,
    time_in_queue_millis: u64,
    time_in_queue: String,
}

#[derive(Debug, Serialize)]
struct PendingBody {
    tasks: Vec<PendingJson>,
}

/// `GET _cluster/pending_tasks`.
pub(crate) fn pending(app: &App, params: &Params) -> Response {
    let tasks = app.with_world(|world| {
        world
            .pending_tasks()
            .into_iter()
            .map(|task| PendingJson {
                insert_order: task.insert_order,
                priority: "URGENT",
                source: task.source,
                executing: task.executing,
                time_in_queue_millis: task.time_in_queue_ms,
                time_in_queue: format_millis(task.time_in_queue_ms),
            })
            .collect()
    });
    reply(StatusCode::OK, &PendingBody { tasks }, params.pretty())
}

#[derive(Debug, Serialize)]
struct TaskJson {
    node: String,
    id: u64,
    #[serde(rename = "type")]
    kind: &'static str,
    action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_time: Option<String>,
    start_time_in_millis: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    running_time: Option<String>,
    running_time_in_nanos: u64,
    cancellable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    cancelled: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_task_id: Option<String>,
    headers: Ordered<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    children: Vec<TaskJson>,
}

#[derive(Debug, Serialize)]
struct NodeJson {
    name: String,
    transport_address: String,
    host: String,
    ip: String,
    roles: &'static [&'static str],
    #[serde(skip_serializing_if = "is_empty")]
    attributes: Ordered<&'static str>,
    tasks: Ordered<TaskJson>,
}

fn is_empty(map: &Ordered<&'static str>) -> bool {
    map.0.is_empty()
}

#[derive(Debug, Serialize)]
struct ByNode {
    nodes: Ordered<NodeJson>,
}

#[derive(Debug, Serialize)]
struct ByParent {
    tasks: Ordered<TaskJson>,
}

#[derive(Debug, Serialize)]
struct Flat {
    tasks: Vec<TaskJson>,
}

/// How `GET _tasks` groups what it lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GroupBy {
    Nodes,
    Parents,
    None,
}

/// The filters and rendering switches of a list request.
struct Query {
    actions: Vec<String>,
    nodes: Vec<String>,
    parent: Option<(String, u64)>,
    detailed: bool,
    human: bool,
    group_by: GroupBy,
}

impl Query {
    fn parse(params: &Params) -> Result<Self, ApiError> {
        let group_by = match params.get("group_by").unwrap_or("nodes") {
            "nodes" => GroupBy::Nodes,
            "parents" => GroupBy::Parents,
            "none" => GroupBy::None,
            other => {
                return Err(ApiError::illegal_argument(format!(
                    "[group_by] must be one of [nodes], [parents] or [none] but was [{other}]"
                )));
            }
        };
        let parent = match params.get("parent_task_id") {
            None | Some("" | "unset") => None,
            Some(text) => {
                let parsed = text
                    .split_once(':')
                    .and_then(|(node, id)| Some((node.to_owned(), id.parse().ok()?)));
                Some(parsed.ok_or_else(|| {
                    ApiError::illegal_argument(format!("malformed task id {text}"))
                })?)
            }
        };
        params.millis("timeout", 0)?;
        Ok(Query {
            actions: comma_list(params.get("actions")),
            nodes: comma_list(params.get("nodes")),
            parent,
            detailed: params.flag("detailed")?,
            human: params.get("human").is_some(),
            group_by,
        })
    }

    /// `DiscoveryNodes.resolveNodes`: ids, names, addresses, `_local`, `_master`, `_all`, `*`.
    fn node_selected(&self, world: &World, node: NodeId, local: NodeId) -> bool {
        self.nodes.is_empty()
            || self.nodes.iter().any(|wanted| {
                let ip = world.node_ip(node).to_string();
                match wanted.as_str() {
                    "_all" => true,
                    "_local" => node == local,
                    "_master" => world.master() == Some(node),
                    pattern => [
                        node_id(world.node_ip(node)),
                        ip.clone(),
                        world.nodes()[node].name.clone(),
                    ]
                    .iter()
                    .any(|name| glob_match(pattern, name)),
                }
            })
    }

    fn task_selected(&self, world: &World, task: &TaskView, local: NodeId) -> bool {
        (self.actions.is_empty() || self.actions.iter().any(|a| glob_match(a, task.action)))
            && self.node_selected(world, task.node, local)
            && self.parent.as_ref().is_none_or(|(node, id)| {
                task.parent
                    .is_some_and(|(p, pid)| node_id(world.node_ip(p)) == *node && pid == *id)
            })
    }
}

fn task_json(world: &World, task: &TaskView, query: &Query) -> TaskJson {
    let start = world.wall_ms(task.start_ms);
    let running_ms = world.now_ms().saturating_sub(task.start_ms);
    let id_of = |node: NodeId, id: u64| format!("{}:{id}", node_id(world.node_ip(node)));
    let mut headers = Ordered::default();
    if let Some(opaque) = &task.opaque_id {
        headers.0.push(("X-Opaque-Id".to_owned(), opaque.clone()));
    }
    TaskJson {
        node: node_id(world.node_ip(task.node)),
        id: task.id,
        kind: "transport",
        action: task.action,
        description: query.detailed.then_some(""),
        start_time: query.human.then(|| format_date_millis(start)),
        start_time_in_millis: start,
        running_time: query.human.then(|| format_millis(running_ms)),
        running_time_in_nanos: running_ms.saturating_mul(1_000_000),
        cancellable: false,
        cancelled: world.product().has_ism().then_some(false),
        parent_task_id: task.parent.map(|(node, id)| id_of(node, id)),
        headers,
        children: Vec::new(),
    }
}

/// The list request's own tasks: one on the coordinating node, a child on each node asked.
fn list_tasks(world: &mut World, query: &Query, opaque_id: Option<&str>) -> Vec<TaskView> {
    let Some(local) = world.coordinating_node() else {
        return Vec::new();
    };
    let now = world.now_ms();
    let parent = (local, world.take_task_id(local));
    let view = |node, id, action, parent| TaskView {
        node,
        id,
        action,
        start_ms: now,
        parent,
        opaque_id: opaque_id.map(str::to_owned),
    };
    let mut tasks = vec![view(local, parent.1, LIST_ACTION, None)];
    let asked: Vec<NodeId> = world
        .joined_nodes()
        .map(|(node, _)| node)
        .filter(|&node| query.node_selected(world, node, local))
        .collect();
    for node in asked {
        let id = world.take_task_id(node);
        tasks.push(view(node, id, LIST_NODE_ACTION, Some(parent)));
    }
    tasks
}

fn node_json(world: &World, node: NodeId, tasks: Ordered<TaskJson>) -> NodeJson {
    let ip = world.node_ip(node).to_string();
    let product = world.product();
    NodeJson {
        name: world.nodes()[node].name.clone(),
        transport_address: format!("{ip}:9300"),
        host: ip.clone(),
        ip: format!("{ip}:9300"),
        roles: product.node_roles(),
        attributes: Ordered(
            product
                .node_attributes()
                .iter()
                .map(|(key, value)| ((*key).to_owned(), *value))
                .collect(),
        ),
        tasks,
    }
}

/// `GET _tasks`.
pub(crate) fn list(
    app: &App,
    params: &Params,
    context: &RequestContext,
) -> Result<Response, ApiError> {
    let query = Query::parse(params)?;
    let pretty = params.pretty();
    Ok(app.with_world(|world| {
        let local = world.coordinating_node().unwrap_or_default();
        let mut tasks = world.running_tasks();
        tasks.extend(list_tasks(world, &query, context.opaque_id.as_deref()));
        tasks.retain(|task| query.task_selected(world, task, local));
        tasks.sort_by_key(|task| (task.node, task.id));
        let key = |task: &TaskView| format!("{}:{}", node_id(world.node_ip(task.node)), task.id);
        match query.group_by {
            GroupBy::Nodes => {
                let mut nodes: Vec<(String, NodeJson)> = Vec::new();
                for node in 0..world.nodes().len() {
                    let mine: Vec<(String, TaskJson)> = tasks
                        .iter()
                        .filter(|task| task.node == node)
                        .map(|task| (key(task), task_json(world, task, &query)))
                        .collect();
                    if !mine.is_empty() {
                        let entry = node_json(world, node, Ordered(mine));
                        nodes.push((node_id(world.node_ip(node)), entry));
                    }
                }
                reply(
                    StatusCode::OK,
                    &ByNode {
                        nodes: Ordered(nodes),
                    },
                    pretty,
                )
            }
            GroupBy::Parents => {
                let listed = |parent: Option<(NodeId, u64)>| {
                    parent.is_some_and(|(node, id)| {
                        tasks.iter().any(|task| task.node == node && task.id == id)
                    })
                };
                let groups: Vec<(String, TaskJson)> = tasks
                    .iter()
                    .filter(|task| !listed(task.parent))
                    .map(|root| {
                        let mut json = task_json(world, root, &query);
                        json.children = tasks
                            .iter()
                            .filter(|task| task.parent == Some((root.node, root.id)))
                            .map(|task| task_json(world, task, &query))
                            .collect();
                        (key(root), json)
                    })
                    .collect();
                reply(
                    StatusCode::OK,
                    &ByParent {
                        tasks: Ordered(groups),
                    },
                    pretty,
                )
            }
            GroupBy::None => {
                let flat: Vec<TaskJson> = tasks
                    .iter()
                    .map(|task| task_json(world, task, &query))
                    .collect();
                reply(StatusCode::OK, &Flat { tasks: flat }, pretty)
            }
        }
    }))
}
