//! The configured clouds and the means to act on them: observing one and planning against it
//! needs no store, like the clusters.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context;
use futures::{StreamExt, TryStreamExt, stream};
use opsbot_commands::name::{CloudName, HostName};
use opsbot_commands::openstack::compute::{ComputeService, Instance, Migration};
use opsbot_commands::openstack::ids::ConsumerId;
use opsbot_commands::openstack::placement::provider_of;
use opsbot_commands::plan::Plan;
use opsbot_commands::planner::{
    self, Facts, FactsKind, ImageFacts, PlanError, RpcCapFacts, StaleFacts,
};
use opsbot_commands::request::ProcedureRequest;

use crate::backend::openstack::{CloudClient, Credentials};
use crate::backend::{BackendError, Retry};
use crate::clock::Clock;
use crate::config::{CloudConfig, Config};
use crate::host_control::HostControl;
use crate::metrics::BackendErrors;
use crate::refusal::{EngineError, Refusal};

/// Compute API lookups in flight at once while planning (instances of a stale-allocation
/// cleanup, migrations at the hypervisors of an RPC-cap fix): each costs a token validation.
const LOOKUPS_IN_FLIGHT: usize = 8;

/// One configured cloud.
#[derive(Debug)]
pub struct Cloud {
    pub name: CloudName,
    pub client: CloudClient,
    pub hosts: HostControl,
}

/// Every configured cloud, by name.
#[derive(Debug)]
pub struct Clouds {
    map: BTreeMap<CloudName, Cloud>,
    retry: Retry,
}

impl Cloud {
    /// The cloud's client (its password read now, its tokens renewed by `clock`) and the means
    /// to restart its hosts.
    pub fn new(
        c: &CloudConfig,
        request_timeout: Duration,
        errors: &BackendErrors,
        clock: &Clock,
    ) -> anyhow::Result<Self> {
        let credentials = Credentials {
            auth_url: c.auth_url.clone(),
            username: c.username.clone(),
            user_domain: c.user_domain.clone(),
            project: c.project.clone(),
            project_domain: c.project_domain.clone(),
            password: c
                .password
                .read()
                .with_context(|| format!("cloud `{}`: the password", c.name))?,
            region: c.region.clone(),
            interface: c.interface,
        };
        Ok(Self {
            name: c.name.clone(),
            client: CloudClient::new(
                &c.name,
                credentials,
                &c.tls(),
                request_timeout,
                errors,
                clock.clone(),
            )
            .with_context(|| format!("cloud `{}`", c.name))?,
            hosts: HostControl::new(c.compute_control.clone(), &c.auth_url, &c.tls())
                .with_context(|| format!("cloud `{}`", c.name))?,
        })
    }
}

impl Clouds {
    /// The clouds of `config`, their retries and tokens on `clock` (the engine's; the system's
    /// for `opsbot plan`).
    pub fn new(config: &Config, errors: &BackendErrors, clock: Clock) -> anyhow::Result<Self> {
        let mut map = BTreeMap::new();
        for c in &config.clouds {
            map.insert(
                c.name.clone(),
                Cloud::new(c, config.engine.request_timeout, errors, &clock)?,
            );
        }
        Ok(Self {
            map,
            retry: Retry::new(config.engine.retry, clock),
        })
    }

    pub fn names(&self) -> impl Iterator<Item = &CloudName> {
        self.map.keys()
    }

    pub fn get(&self, name: &CloudName) -> Result<&Cloud, Refusal> {
        self.map.get(name).ok_or_else(|| Refusal::UnknownCloud {
            name: name.clone(),
            known: known(self.map.keys()),
        })
    }

    /// What the request's planner needs, observed now.
    async fn facts(&self, cloud: &Cloud, request: &ProcedureRequest) -> Result<Facts, EngineError> {
        let quiet = |_: &_, _| {};
        match planner::facts_needed(request) {
            FactsKind::Stale { host } => Ok(Facts::Stale(self.stale_facts(cloud, &host).await?)),
            FactsKind::RpcCap => Ok(Facts::RpcCap(self.rpc_cap_facts(cloud).await?)),
            FactsKind::Image { image } => Ok(Facts::Image(ImageFacts {
                matches: self
                    .retry
                    .run(|| cloud.client.images(&image), quiet)
                    .await?,
            })),
            FactsKind::Cluster
            | FactsKind::Indices
            | FactsKind::Removal { .. }
            | FactsKind::Runbook => Err(Refusal::Plan(PlanError::FactsMismatch {
                needed: planner::facts_needed(request),
            })
            .into()),
        }
    }

    /// The provider named after `host`, its allocations, and whether each consumer's instance
    /// exists: for `/placement stale` and `/placement allocations` alike.
    pub async fn stale_facts(
        &self,
        cloud: &Cloud,
        host: &HostName,
    ) -> Result<StaleFacts, EngineError> {
        let quiet = |_: &_, _| {};
        let named = self
            .retry
            .run(|| cloud.client.providers_named(host), quiet)
            .await?;
        let provider = provider_of(cloud.name.as_str(), host, named)
            .map_err(|e| Refusal::Plan(PlanError::Provider(e)))?;
        let allocations = self
            .retry
            .run(|| cloud.client.allocations(&provider), quiet)
            .await?;
        // One lookup per consumer, a few at a time: a hypervisor holds dozens of instances, and
        // each lookup costs a token validation in the compute API.
        let instances: BTreeMap<_, _> = stream::iter(allocations.consumers.keys().copied())
            .map(|consumer| async move {
                let instance = self
                    .retry
                    .run(|| cloud.client.instance(consumer), quiet)
                    .await?;
                Ok::<_, BackendError>((consumer, instance))
            })
            .buffer_unordered(LOOKUPS_IN_FLIGHT)
            .try_collect()
            .await?;
        // Placement's word on the consumers no instance stands for (Nova does not type its
        // consumers yet; another service may), and Nova's migrations, which only those can be.
        let gone: Vec<ConsumerId> = instances
            .iter()
            .filter(|(_, instance)| **instance == Instance::Gone)
            .map(|(consumer, _)| *consumer)
            .collect();
        let migrations = if gone.is_empty() {
            Vec::new()
        } else {
            self.retry
                .run(|| cloud.client.migrations(host), quiet)
                .await?
        };
        let consumer_types: BTreeMap<ConsumerId, String> = stream::iter(gone)
            .map(|consumer| async move {
                let state = self
                    .retry
                    .run(|| cloud.client.consumer(consumer), quiet)
                    .await?;
                Ok::<_, BackendError>(state.kind.map(|t| (consumer, t)))
            })
            .buffer_unordered(LOOKUPS_IN_FLIGHT)
            .try_filter_map(|typed| async move { Ok(typed) })
            .try_collect()
            .await?;
        Ok(StaleFacts {
            allocations,
            instances,
            migrations,
            consumer_types,
        })
    }

    /// The compute services, and the migrations at each hypervisor the fix would restart: a
    /// restart breaks a migration in progress there.
    async fn rpc_cap_facts(&self, cloud: &Cloud) -> Result<RpcCapFacts, BackendError> {
        let services = self.services(cloud).await?;
        let hosts: Vec<HostName> = planner::restart_candidates(&services)
            .map(|service| service.host.clone())
            .collect();
        let migrations = stream::iter(hosts)
            .map(|host| self.migrations(cloud, host))
            .buffer_unordered(LOOKUPS_IN_FLIGHT)
            .try_collect()
            .await?;
        Ok(RpcCapFacts {
            services,
            migrations,
        })
    }

    /// Nova's migrations with `host` at either end, read with the retry policy.
    async fn migrations(
        &self,
        cloud: &Cloud,
        host: HostName,
    ) -> Result<(HostName, Vec<Migration>), BackendError> {
        let migrations = self
            .retry
            .run(|| cloud.client.migrations(&host), |_, _| {})
            .await?;
        Ok((host, migrations))
    }

    /// The compute services, read with the retry policy.
    pub async fn services(&self, cloud: &Cloud) -> Result<Vec<ComputeService>, BackendError> {
        self.retry.run(|| cloud.client.services(), |_, _| {}).await
    }

    /// Observes the cloud and computes the plan a request would run.
    pub async fn plan(
        &self,
        cloud: &CloudName,
        request: &ProcedureRequest,
    ) -> Result<Plan, EngineError> {
        let cloud = self.get(cloud)?;
        let facts = self.facts(cloud, request).await?;
        planner::plan(request, &facts).map_err(|e| Refusal::Plan(e).into())
    }
}

/// `a, b` or `none`, for "unknown …; configured: …".
pub(crate) fn known<'a, T: std::fmt::Display + 'a>(names: impl Iterator<Item = &'a T>) -> String {
    let names: Vec<String> = names.map(ToString::to_string).collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}
