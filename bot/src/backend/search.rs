//! The search-cluster client (Elasticsearch 6-8, OpenSearch 1-2). One request per method: callers
//! decide whether to retry (actions) or to treat a fault as an observation (polls).

mod indices;
pub mod privileges;
mod wire;

pub use indices::{Deleted, InFlight};

use std::time::Duration;

use opsbot_commands::cluster::{
    AllocationSettings, CatAllocationRow, CatHealthRow, CatNodeRow, CatRecoveryRow, ClusterHealth,
    Distribution, EXCLUDE_IP, Exclusion, FlushMode, Membership, ServerVersion, SettingScope,
};
use opsbot_commands::name::{ClusterName, NodeAddr};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use reqwest::{Body, Method};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::error::{BackendError, Fault};
use super::gate::{Gate, Gated};
use super::transport::Cause;
use super::{http, transport};
use crate::config::{ClusterAuth, Tls};
use crate::metrics::BackendErrors;

/// What a flush reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlushReport {
    pub total: u64,
    pub successful: u64,
    pub failed: u64,
}

/// A client for one cluster.
#[derive(Debug, Clone)]
pub struct SearchClient {
    http: reqwest::Client,
    base: String,
    service: String,
    cluster: ClusterName,
    errors: BackendErrors,
    /// Sent with every request; marked sensitive, so that Debug shows no secret.
    authorization: Option<HeaderValue>,
    /// Asked before the end of every request that changes the cluster leaves.
    gate: Gate,
}

const ALLOCATION_ENABLE: &str = "cluster.routing.allocation.enable";

impl SearchClient {
    /// `base_url` is the cluster's HTTP address (Kolla: the internal VIP on port 9200); the
    /// secret of `auth` is read now, once.
    pub fn new(
        cluster: &ClusterName,
        base_url: &str,
        tls: &Tls,
        auth: Option<&ClusterAuth>,
        timeout: Duration,
        errors: BackendErrors,
        gate: Gate,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            http: http::client(tls, timeout)?,
            base: base_url.trim_end_matches('/').to_owned(),
            service: format!("search cluster `{cluster}`"),
            cluster: cluster.clone(),
            errors,
            authorization: auth.map(http::authorization).transpose()?,
            gate,
        })
    }

    /// `GET /`: which server and version, which decides how to flush.
    pub async fn version(&self) -> Result<ServerVersion, BackendError> {
        let info: wire::Info = self.json(Method::GET, "/", None).await?;
        let distribution = match info.version.distribution.as_deref() {
            Some("opensearch") => Distribution::OpenSearch,
            _ => Distribution::Elasticsearch,
        };
        ServerVersion::parse(distribution, &info.version.number)
            .map(|version| version.with_build_flavor(info.version.build_flavor.as_deref()))
            .ok_or_else(|| {
                self.error(
                    "GET /",
                    Fault::Decode(format!("version `{}`", info.version.number)),
                )
            })
    }

    /// Who has joined, from `_cat/nodes`. "No master" and "nobody answers" are observations here,
    /// not errors: they are what a cluster looks like halfway through a stop or a start.
    pub async fn membership(&self) -> Result<Membership, BackendError> {
        // No `h=`: the master column is `master` on Elasticsearch and `cluster_manager` on
        // OpenSearch 2, and asking for a column a server does not know is an error.
        // `master_timeout`: without a master, ES holds the request this long before its 503;
        // the default (30 s) would race the client timeout while the cluster re-forms.
        let path = "/_cat/nodes?format=json&master_timeout=5s";
        match self
            .json::<Vec<wire::NodeIdentity>>(Method::GET, path, None)
            .await
        {
            Ok(rows) => {
                let mut nodes = Vec::with_capacity(rows.len());
                let mut master = None;
                for row in rows {
                    let node = NodeAddr::parse(&row.ip)
                        .map_err(|e| self.error("GET /_cat/nodes", Fault::Decode(e.to_string())))?;
                    if row.master == "*" {
                        master = Some(node);
                    }
                    nodes.push(node);
                }
                nodes.sort();
                Ok(Membership::Formed { nodes, master })
            }
            Err(e) if e.fault == Fault::NoMaster => Ok(Membership::NoMaster),
            Err(e) if is_unreachable(&e.fault) => Ok(Membership::Unreachable),
            Err(e) => Err(e),
        }
    }

    /// `GET /_cluster/health`.
    pub async fn health(&self) -> Result<ClusterHealth, BackendError> {
        let raw: wire::Health = self.json(Method::GET, "/_cluster/health", None).await?;
        raw.into_health().ok_or_else(|| {
            self.error(
                "GET /_cluster/health",
                Fault::Decode("unknown status".into()),
            )
        })
    }

    /// `GET /_cluster/settings`: the effective allocation settings (transient wins, as in ES).
    pub async fn allocation(&self) -> Result<AllocationSettings, BackendError> {
        let raw: wire::Settings = self
            .json(Method::GET, "/_cluster/settings?flat_settings=true", None)
            .await?;
        let pick = |key: &str| {
            let transient = raw.transient.get(key).map(|v| (SettingScope::Transient, v));
            let persistent = raw
                .persistent
                .get(key)
                .map(|v| (SettingScope::Persistent, v));
            transient
                .or(persistent)
                .and_then(|(scope, value)| Some((scope, value.as_str()?.to_owned())))
        };
        Ok(AllocationSettings {
            enable: pick(ALLOCATION_ENABLE).map(|(_, value)| value),
            // An empty exclusion is how a cleared transient one reads back on ES 6.
            exclusion: pick(EXCLUDE_IP)
                .filter(|(_, value)| !value.trim().is_empty())
                .map(|(scope, value)| Exclusion { scope, value }),
        })
    }

    /// Persistent `cluster.routing.allocation.enable`: `Some("none")` disables, `None` resets.
    pub async fn set_allocation_enable(&self, value: Option<&str>) -> Result<(), BackendError> {
        self.put_settings(json!({ "persistent": { ALLOCATION_ENABLE: value } }))
            .await
    }

    /// Transient `cluster.routing.allocation.exclude._ip`: addresses, or "" to clear it (spec 3.1).
    pub async fn set_exclusion(&self, value: &str) -> Result<(), BackendError> {
        self.put_settings(json!({ "transient": { EXCLUDE_IP: value } }))
            .await
    }

    async fn put_settings(&self, body: Value) -> Result<(), BackendError> {
        let ack: wire::Acknowledged = self
            .json(Method::PUT, "/_cluster/settings", Some(body))
            .await?;
        if ack.acknowledged {
            Ok(())
        } else {
            Err(self.error(
                "PUT /_cluster/settings",
                Fault::Decode("the change was not acknowledged".into()),
            ))
        }
    }

    /// Shard copies on `node` from `_cat/allocation`; `None` when the node has not joined.
    pub async fn shards_on(&self, node: NodeAddr) -> Result<Option<u64>, BackendError> {
        let rows: Vec<CatAllocationRow> = self
            .json(
                Method::GET,
                "/_cat/allocation?format=json&h=shards,ip",
                None,
            )
            .await?;
        let wanted = node.to_string();
        rows.iter()
            .find(|row| row.ip.as_deref() == Some(wanted.as_str()))
            .map(|row| {
                row.shards.parse::<u64>().map_err(|_| {
                    self.error(
                        "GET /_cat/allocation",
                        Fault::Decode(format!("shards `{}`", row.shards)),
                    )
                })
            })
            .transpose()
    }

    /// `POST /_flush/synced` or `POST /_flush`.
    pub async fn flush(&self, mode: FlushMode) -> Result<FlushReport, BackendError> {
        let raw: wire::ShardsEnvelope = self.json(Method::POST, mode.path(), None).await?;
        Ok(FlushReport {
            total: raw.shards.total,
            successful: raw.shards.successful,
            failed: raw.shards.failed,
        })
    }

    pub async fn cat_health(&self) -> Result<Vec<CatHealthRow>, BackendError> {
        self.json(Method::GET, "/_cat/health?format=json", None)
            .await
    }

    pub async fn cat_nodes(&self) -> Result<Vec<CatNodeRow>, BackendError> {
        self.json(Method::GET, "/_cat/nodes?format=json", None)
            .await
    }

    /// Only recoveries still running: the finished ones of a large cluster would fill the chat.
    pub async fn cat_recovery(&self) -> Result<Vec<CatRecoveryRow>, BackendError> {
        self.json(
            Method::GET,
            "/_cat/recovery?format=json&active_only=true&h=index,shard,type,stage,source_node,target_node,bytes_percent",
            None,
        )
        .await
    }

    /// The failure of `request` to this cluster, counted in the metrics: every fault of a
    /// cluster's answers is made here, also those found while reading a decoded answer.
    pub(crate) fn error(&self, request: &str, fault: Fault) -> BackendError {
        self.errors
            .count(self.cluster.as_str(), "search", fault.kind());
        BackendError::once(self.service.clone(), request, fault)
    }

    /// One request, its answer decoded from JSON, every failure classified.
    async fn json<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<T, BackendError> {
        self.json_as(method, path, body, None).await
    }

    /// [`Self::json`], sent with `X-Opaque-Id: opaque_id`: the task management API shows it
    /// on the tasks the request started, so that they can be recognised after a restart.
    async fn json_as<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        opaque_id: Option<&str>,
    ) -> Result<T, BackendError> {
        // The request is named without its query string: short, and never carries secrets.
        let request = format!("{method} {}", path.split('?').next().unwrap_or(path));
        let changes = !matches!(method, Method::GET | Method::HEAD);
        let mut builder = self.http.request(method, format!("{}{path}", self.base));
        let bytes = match body {
            // Without `Content-Type: application/json`, ES 6+ answers 406.
            Some(body) => {
                builder = builder.header(CONTENT_TYPE, "application/json");
                body.to_string()
            }
            None => String::new(),
        };
        if changes {
            builder = builder.body(Body::wrap(Gated::new(self.gate.clone(), bytes.into())));
        } else if !bytes.is_empty() {
            builder = builder.body(bytes);
        }
        if let Some(opaque_id) = opaque_id {
            builder = builder.header("X-Opaque-Id", opaque_id);
        }
        if let Some(authorization) = &self.authorization {
            builder = builder.header(AUTHORIZATION, authorization.clone());
        }
        let response = builder
            .send()
            .await
            .map_err(|e| self.error(&request, transport::fault(&e)))?;
        let status = response.status().as_u16();
        let text = http::body(response)
            .await
            .map_err(|fault| self.error(&request, fault))?;
        if !(200..300).contains(&status) {
            return Err(self.error(&request, wire::status_fault(status, &text)));
        }
        serde_json::from_str(&text).map_err(|e| self.error(&request, Fault::Decode(e.to_string())))
    }
}

/// Faults that mean "nothing is serving the cluster API": the load balancer has no server, or
/// the address refuses connections. A refused certificate is not one: something serves, and
/// opsbot's own settings (ca_file, the URL's host name) need fixing, which a poll must not hide
/// behind "no node answers".
fn is_unreachable(fault: &Fault) -> bool {
    match fault {
        Fault::Connect(unreachable) => !matches!(unreachable.cause, Cause::Tls(_)),
        Fault::Status {
            status: 502..=504, ..
        } => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
