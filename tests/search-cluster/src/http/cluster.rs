//! `_cluster/health` (with its `wait_for_*` parameters) and `_cluster/settings`.

use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;

use super::errors::{ApiError, Exception};
use super::json::{object_body, reply};
use super::params::Params;
use super::tree::{Tree, render_settings};
use super::wait::wait_for;
use crate::app::App;
use crate::config::Flavor;
use crate::world::{HealthStatus, SettingsError, World};

/// `ClusterHealthResponse.toXContent` field order; the optional fields are flavor-specific.
#[derive(Debug, Serialize)]
struct HealthBody {
    cluster_name: String,
    status: HealthStatus,
    timed_out: bool,
    number_of_nodes: usize,
    number_of_data_nodes: usize,
    /// OpenSearch 2 keeps the deprecated name next to the new one.
    #[serde(skip_serializing_if = "Option::is_none")]
    discovered_master: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    discovered_cluster_manager: Option<bool>,
    active_primary_shards: usize,
    active_shards: usize,
    relocating_shards: usize,
    initializing_shards: usize,
    unassigned_shards: usize,
    /// Recent ES 8 only.
    #[serde(skip_serializing_if = "Option::is_none")]
    unassigned_primary_shards: Option<usize>,
    delayed_unassigned_shards: usize,
    number_of_pending_tasks: usize,
    number_of_in_flight_fetch: usize,
    task_max_waiting_in_queue_millis: u64,
    active_shards_percent_as_number: f64,
}

fn health_body(world: &World, timed_out: bool) -> HealthBody {
    let health = world.health();
    let flavor = world.flavor();
    let discovered = flavor.is_opensearch().then_some(world.master().is_some());
    HealthBody {
        cluster_name: world.cluster_name().to_owned(),
        status: health.status,
        timed_out,
        number_of_nodes: health.number_of_nodes,
        number_of_data_nodes: health.number_of_nodes,
        discovered_master: discovered,
        discovered_cluster_manager: discovered,
        active_primary_shards: health.active_primary_shards,
        active_shards: health.active_shards,
        relocating_shards: health.relocating_shards,
        initializing_shards: health.initializing_shards,
        unassigned_shards: health.unassigned_shards,
        unassigned_primary_shards: (flavor == Flavor::Es8)
            .then_some(health.unassigned_primary_shards),
        delayed_unassigned_shards: health.delayed_unassigned_shards,
        number_of_pending_tasks: health.number_of_pending_tasks,
        number_of_in_flight_fetch: 0,
        task_max_waiting_in_queue_millis: health.task_max_waiting_in_queue_millis,
        active_shards_percent_as_number: health.active_shards_percent,
    }
}

/// Compares the joined node count with the wanted number.
type Comparison = fn(&usize, &usize) -> bool;

/// `wait_for_nodes`: `N`, `>=N`, `<=N`, `>N`, `<N`, or `ge(N)`, `le(N)`, `gt(N)`, `lt(N)`.
fn parse_node_condition(spec: &str) -> Option<(Comparison, usize)> {
    let spec = spec.trim();
    let functional = |name: &str| {
        spec.strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('(')?.strip_suffix(')'))
    };
    let forms: [(&str, Comparison); 4] = [
        (">=", usize::ge),
        ("<=", usize::le),
        (">", usize::gt),
        ("<", usize::lt),
    ];
    let functions = ["ge", "le", "gt", "lt"];
    for ((symbol, compare), function) in forms.into_iter().zip(functions) {
        if let Some(number) = spec.strip_prefix(symbol).or_else(|| functional(function)) {
            return number.trim().parse().ok().map(|number| (compare, number));
        }
    }
    spec.parse()
        .ok()
        .map(|number| (usize::eq as Comparison, number))
}

/// The `wait_for_*` conditions of a health request.
struct Conditions {
    status: Option<HealthStatus>,
    nodes: Option<(Comparison, usize)>,
    no_relocating: bool,
    no_initializing: bool,
}

impl Conditions {
    fn parse(params: &Params) -> Result<Self, ApiError> {
        let status = match params.get("wait_for_status") {
            None => None,
            Some("green") => Some(HealthStatus::Green),
            Some("yellow") => Some(HealthStatus::Yellow),
            Some("red") => Some(HealthStatus::Red),
            Some(other) => {
                return Err(ApiError::illegal_argument(format!(
                    "unknown cluster health status [{other}]"
                )));
            }
        };
        let nodes = params
            .get("wait_for_nodes")
            .map(|spec| {
                parse_node_condition(spec).ok_or_else(|| {
                    ApiError::illegal_argument(format!("cannot parse wait_for_nodes [{spec}]"))
                })
            })
            .transpose()?;
        Ok(Conditions {
            status,
            nodes,
            no_relocating: params.flag("wait_for_no_relocating_shards")?,
            no_initializing: params.flag("wait_for_no_initializing_shards")?,
        })
    }

    fn any(&self) -> bool {
        self.status.is_some() || self.nodes.is_some() || self.no_relocating || self.no_initializing
    }

    /// Green satisfies a wait for yellow, as in ES.
    fn met(&self, body: &HealthBody) -> bool {
        self.status.is_none_or(|wanted| body.status <= wanted)
            && self
                .nodes
                .is_none_or(|(compare, number)| compare(&body.number_of_nodes, &number))
            && (!self.no_relocating || body.relocating_shards == 0)
            && (!self.no_initializing || body.initializing_shards == 0)
    }
}

/// `GET _cluster/health`: waits in simulated time; 408 with `timed_out: true` if unmet.
pub(crate) async fn health(app: &App, params: &Params) -> Result<Response, ApiError> {
    let conditions = Conditions::parse(params)?;
    let timeout = params.millis("timeout", 30_000)?;
    let (met, mut body) = if conditions.any() {
        wait_for(app, timeout, |world| {
            let body = health_body(world, false);
            (conditions.met(&body), body)
        })
        .await
    } else {
        (true, app.with_world(|world| health_body(world, false)))
    };
    body.timed_out = !met;
    let status = if met {
        StatusCode::OK
    } else {
        StatusCode::REQUEST_TIMEOUT
    };
    Ok(reply(status, &body, params.pretty()))
}

#[derive(Debug, Serialize)]
struct SettingsBody {
    #[serde(skip_serializing_if = "Option::is_none")]
    acknowledged: Option<bool>,
    persistent: Tree,
    transient: Tree,
}

/// `GET _cluster/settings`.
pub(crate) fn get_settings(app: &App, params: &Params) -> Result<Response, ApiError> {
    let flat = params.flag("flat_settings")?;
    let body = app.with_world(|world| SettingsBody {
        acknowledged: None,
        persistent: render_settings(&world.settings().persistent, flat),
        transient: render_settings(&world.settings().transient, flat),
    });
    Ok(reply(StatusCode::OK, &body, params.pretty()))
}

/// `PUT _cluster/settings`: echoes only the keys it set.
pub(crate) fn put_settings(app: &App, params: &Params, body: &[u8]) -> Result<Response, ApiError> {
    let flat = params.flag("flat_settings")?;
    let Some(object) = object_body(body, "cluster_update_settings_request")? else {
        return Err(ApiError::parse("request body is required"));
    };
    let applied = app
        .with_world(|world| world.update_settings(&object))
        .map_err(|error| -> ApiError {
            match error {
                SettingsError::UnknownField(_) => Exception::new(
                    StatusCode::BAD_REQUEST,
                    "x_content_parse_exception",
                    error.to_string(),
                )
                .into(),
                SettingsError::Unknown { .. } | SettingsError::Invalid(_) => {
                    ApiError::illegal_argument(error.to_string())
                }
            }
        })?;
    let body = SettingsBody {
        acknowledged: Some(true),
        persistent: render_settings(&applied.persistent, flat),
        transient: render_settings(&applied.transient, flat),
    };
    Ok(reply(StatusCode::OK, &body, params.pretty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_conditions_parse_both_notations() {
        let (compare, number) = parse_node_condition(">=3").unwrap();
        assert!(compare(&3, &number) && !compare(&2, &number));
        let (compare, number) = parse_node_condition("lt(2)").unwrap();
        assert!(compare(&1, &number) && !compare(&2, &number));
        let (compare, number) = parse_node_condition("5").unwrap();
        assert!(compare(&5, &number));
        assert!(parse_node_condition("many").is_none());
    }
}
