//! The configured clusters and the means to act on them; observing one and planning against it
//! needs no store, so `opsbot plan` works while the bot runs.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context;
use opsbot_commands::cluster::{AllocationSettings, CatIndexRow, Membership};
use opsbot_commands::index::IndexUuid;
use opsbot_commands::name::{ClusterName, NodeAddr};
use opsbot_commands::plan::Plan;
use opsbot_commands::planner::{self, ClusterFacts, Facts, FactsKind, IndexFacts, RemovalFacts};
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::retention::IndexInfo;
use time::OffsetDateTime;

use crate::backend::search::SearchClient;
use crate::backend::{BackendError, Fault, Gate, Retry};
use crate::clock::Clock;
use crate::config::{ClusterConfig, Config};
use crate::metrics::BackendErrors;
use crate::node_control::NodeControl;
use crate::refusal::{EngineError, Refusal};

/// One configured cluster.
#[derive(Debug)]
pub struct Cluster {
    pub name: ClusterName,
    pub search: SearchClient,
    pub nodes: NodeControl,
    pub inventory: Vec<NodeAddr>,
}

impl Cluster {
    /// The cluster's clients, its secrets read now; `request_timeout` bounds each request,
    /// faults are counted into `errors`, and `gate` is asked before each change is sent.
    pub fn new(
        config: &ClusterConfig,
        request_timeout: Duration,
        errors: &BackendErrors,
        gate: Gate,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            name: config.name.clone(),
            search: SearchClient::new(
                &config.name,
                &config.url,
                &config.tls,
                config.auth.as_ref(),
                request_timeout,
                errors.clone(),
                gate,
            )?,
            nodes: NodeControl::new(config.node_control.clone(), &config.url, &config.tls)?,
            inventory: config.nodes.clone(),
        })
    }
}

/// Every configured cluster, by name.
#[derive(Debug)]
pub struct Clusters {
    map: BTreeMap<ClusterName, Cluster>,
    retry: Retry,
}

impl Clusters {
    /// The clusters of `config`, retrying on the system's clock (`opsbot plan`).
    pub fn new(config: &Config, errors: &BackendErrors) -> anyhow::Result<Self> {
        Self::with_clock(config, errors, Clock::system(), Gate::open())
    }

    /// The clusters of `config`, retrying on `clock` (the engine's); each request that
    /// changes one is held back by `gate` once this bot may no longer act.
    pub fn with_clock(
        config: &Config,
        errors: &BackendErrors,
        clock: Clock,
        gate: Gate,
    ) -> anyhow::Result<Self> {
        let mut map = BTreeMap::new();
        for c in &config.clusters {
            let cluster = Cluster::new(c, config.engine.request_timeout, errors, gate.clone())
                .with_context(|| format!("cluster `{}`", c.name))?;
            map.insert(c.name.clone(), cluster);
        }
        Ok(Self {
            map,
            retry: Retry::new(config.engine.retry, clock),
        })
    }

    pub fn names(&self) -> impl Iterator<Item = &ClusterName> {
        self.map.keys()
    }

    pub fn get(&self, name: &ClusterName) -> Result<&Cluster, Refusal> {
        self.map.get(name).ok_or_else(|| Refusal::UnknownCluster {
            name: name.clone(),
            known: crate::clouds::known(self.map.keys()),
        })
    }

    /// What the request's planner needs, observed now; time-dependent choices are made for
    /// `now`.
    pub async fn facts(
        &self,
        cluster: &Cluster,
        request: &ProcedureRequest,
        now: OffsetDateTime,
    ) -> Result<Facts, EngineError> {
        match planner::facts_needed(request) {
            FactsKind::Cluster => self.cluster_facts(cluster).await,
            FactsKind::Indices => {
                let (indices, notes) = self.index_infos(cluster).await?;
                Ok(Facts::Indices(IndexFacts {
                    indices,
                    notes,
                    now,
                }))
            }
            FactsKind::Removal { node } => self.removal_facts(cluster, node).await,
            FactsKind::Stale { .. }
            | FactsKind::RpcCap
            | FactsKind::Image { .. }
            | FactsKind::Runbook => Err(Refusal::Plan(planner::PlanError::FactsMismatch {
                needed: planner::facts_needed(request),
            })
            .into()),
        }
    }

    /// Every index of a cluster as `/indices list` shows it (hidden ones left out, as the
    /// server leaves them out), read with the retry policy.
    pub async fn indices(&self, cluster: &Cluster) -> Result<Vec<CatIndexRow>, BackendError> {
        self.listing(cluster, false).await
    }

    async fn listing(
        &self,
        cluster: &Cluster,
        with_hidden: bool,
    ) -> Result<Vec<CatIndexRow>, BackendError> {
        self.retry
            .run(|| cluster.search.cat_indices(with_hidden), |_, _| {})
            .await
    }

    /// Every index bound to its UUID, with whoever else keeps it: what retention plans from;
    /// and what the cluster could not say about its keepers, for the plan's notes.
    pub async fn index_infos(
        &self,
        cluster: &Cluster,
    ) -> Result<(Vec<IndexInfo>, Vec<String>), BackendError> {
        let quiet = |_: &_, _| {};
        let version = self.retry.run(|| cluster.search.version(), quiet).await?;
        let rows = self.listing(cluster, version.has_hidden_indices()).await?;
        let names: Vec<&str> = rows.iter().map(|row| row.index.as_str()).collect();
        let mut kept = self
            .retry
            .run(|| cluster.search.keepers(version, &names), quiet)
            .await?;
        let infos = rows
            .into_iter()
            .map(|row| {
                let uuid = row
                    .uuid
                    .as_deref()
                    .and_then(|uuid| IndexUuid::parse(uuid).ok())
                    .ok_or_else(|| {
                        cluster.search.error(
                            "GET /_cat/indices",
                            Fault::Decode(format!("index `{}` has no UUID", row.index)),
                        )
                    })?;
                Ok(IndexInfo {
                    keepers: kept.by_index.remove(&row.index).unwrap_or_default(),
                    created: kept.created.remove(&row.index),
                    uuid,
                    row,
                })
            })
            .collect::<Result<_, BackendError>>()?;
        Ok((infos, kept.notes))
    }

    /// Who has joined and, when the cluster answers, its version.
    async fn cluster_facts(&self, cluster: &Cluster) -> Result<Facts, EngineError> {
        let quiet = |_: &_, _| {};
        let membership = self.settled_membership(cluster).await?;
        let version = match membership {
            Membership::Formed { .. } => {
                Some(self.retry.run(|| cluster.search.version(), quiet).await?)
            }
            Membership::NoMaster | Membership::Unreachable => None,
        };
        Ok(Facts::Cluster(ClusterFacts {
            inventory: cluster.inventory.clone(),
            version,
            membership,
        }))
    }

    /// Membership, allocation settings and the shards on the node to remove. The last two
    /// need a master, so they are read only when the cluster has one.
    async fn removal_facts(&self, cluster: &Cluster, node: NodeAddr) -> Result<Facts, EngineError> {
        let quiet = |_: &_, _| {};
        let membership = self.settled_membership(cluster).await?;
        let (mut allocation, mut node_shards) = (AllocationSettings::default(), None);
        if let Membership::Formed { .. } = membership {
            allocation = self
                .retry
                .run(|| cluster.search.allocation(), quiet)
                .await?;
            node_shards = self
                .retry
                .run(|| cluster.search.shards_on(node), quiet)
                .await?;
        }
        Ok(Facts::Removal(RemovalFacts {
            inventory: cluster.inventory.clone(),
            membership,
            allocation,
            node_shards,
        }))
    }

    /// Membership, looked at again (with the retry policy's backoff) while the cluster shows no
    /// master: a master election lasts seconds and must not be mistaken for a lost quorum.
    async fn settled_membership(&self, cluster: &Cluster) -> Result<Membership, EngineError> {
        let mut looks = 0;
        loop {
            looks += 1;
            let membership = self
                .retry
                .run(|| cluster.search.membership(), |_, _| {})
                .await?;
            if matches!(membership, Membership::Formed { .. })
                || looks >= self.retry.policy.attempts
            {
                return Ok(membership);
            }
            self.retry.pause(looks).await;
        }
    }

    /// Observes the cluster and computes the plan a request would run at `now`.
    pub async fn plan(
        &self,
        cluster: &ClusterName,
        request: &ProcedureRequest,
        now: OffsetDateTime,
    ) -> Result<Plan, EngineError> {
        let cluster = self.get(cluster)?;
        let facts = self.facts(cluster, request, now).await?;
        planner::plan(request, &facts).map_err(|e| Refusal::Plan(e).into())
    }
}
