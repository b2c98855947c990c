//! What opsbot acts on: the configured clusters, clouds, and runbooks with their hosts. Planning
//! needs these and no store, so the engine and `opsbot plan` (which works while the bot runs)
//! plan through the same [`Targets::plan`].

use opsbot_commands::consent::ConsentPolicy;
use opsbot_commands::plan::Plan;
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::target::Target;
use time::OffsetDateTime;

use crate::backend::Gate;
use crate::clock::Clock;
use crate::clouds::Clouds;
use crate::clusters::Clusters;
use crate::config::{Config, RunbooksConfig};
use crate::metrics::BackendErrors;
use crate::refusal::{EngineError, Refusal};
use crate::runbooks::Library;

#[derive(Debug)]
pub struct Targets {
    pub clusters: Clusters,
    pub clouds: Clouds,
    pub library: Library,
    /// Who must agree before each procedure's plan acts; every plan is made under it.
    pub consent: ConsentPolicy,
}

/// Which part of the targets a request plans against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Clusters,
    Clouds,
    Runbooks,
}

impl Part {
    pub fn of(request: &ProcedureRequest) -> Self {
        match request.target() {
            Target::Cluster(_) => Self::Clusters,
            Target::Cloud(_) => Self::Clouds,
            Target::Hosts(_) => Self::Runbooks,
        }
    }
}

impl Targets {
    /// Every target of `config`, their clients counting faults into `errors`, going by
    /// `clock` (the engine's) for retries and token expiry, and asking `gate` before each
    /// change to a cluster is sent.
    pub fn new(
        config: &Config,
        errors: &BackendErrors,
        clock: &Clock,
        gate: Gate,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            clusters: Clusters::with_clock(config, errors, clock.clone(), gate)?,
            clouds: Clouds::new(config, errors, clock.clone())?,
            library: Library::load(&config.runbooks)?,
            consent: config.approval.clone(),
        })
    }

    /// Only `part`, the others empty: `opsbot plan` of a cluster restart needs no cloud's
    /// password and no runbook directory, and one of them being unreadable must not stop it.
    pub fn only(config: &Config, part: Part) -> anyhow::Result<Self> {
        let none = Config {
            clusters: Vec::new(),
            clouds: Vec::new(),
            ..config.clone()
        };
        let pick = |wanted: Part| if part == wanted { config } else { &none };
        // Planning serves no metrics.
        let errors = BackendErrors::default();
        Ok(Self {
            clusters: Clusters::new(pick(Part::Clusters), &errors)?,
            clouds: Clouds::new(pick(Part::Clouds), &errors, Clock::system())?,
            library: match part {
                Part::Runbooks => Library::load(&config.runbooks)?,
                Part::Clusters | Part::Clouds => Library::load(&RunbooksConfig::default())?,
            },
            consent: config.approval.clone(),
        })
    }

    /// Observes the request's target and computes the plan it would run at `now` (the time
    /// every time-dependent choice is made for, such as a prune's cut-off).
    pub async fn plan(
        &self,
        request: &ProcedureRequest,
        now: OffsetDateTime,
    ) -> Result<Plan, EngineError> {
        let plan = match (request, request.target()) {
            (ProcedureRequest::Runbook(runbook), _) => self.library.plan(runbook)?,
            (_, Target::Cluster(cluster)) => self.clusters.plan(&cluster, request, now).await?,
            (_, Target::Cloud(cloud)) => self.clouds.plan(&cloud, request).await?,
            // Only a runbook request has hosts for its target, and it was planned above.
            (_, Target::Hosts(_)) => return Err(Refusal::NotARunbook.into()),
        };
        Ok(plan.under(self.consent.of(request)))
    }
}
