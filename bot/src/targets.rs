//! What opsbot acts on: the configured clusters, clouds, and runbooks with their hosts. Planning
//! needs these and no store, so the engine and `opsbot plan` (which works while the bot runs)
//! plan through the same [`Targets::plan`].

use opsbot_commands::plan::Plan;
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::target::Target;
use time::OffsetDateTime;

use crate::clouds::Clouds;
use crate::clusters::Clusters;
use crate::config::Config;
use crate::engine::{EngineError, Refusal};
use crate::runbooks::Library;

#[derive(Debug)]
pub struct Targets {
    pub clusters: Clusters,
    pub clouds: Clouds,
    pub library: Library,
}

impl Targets {
    pub fn new(config: &Config) -> anyhow::Result<Self> {
        Ok(Self {
            clusters: Clusters::new(config)?,
            clouds: Clouds::new(config)?,
            library: Library::load(&config.runbooks)?,
        })
    }

    /// Observes the request's target and computes the plan it would run at `now` (the time
    /// every time-dependent choice is made for, such as a prune's cut-off).
    pub async fn plan(
        &self,
        request: &ProcedureRequest,
        now: OffsetDateTime,
    ) -> Result<Plan, EngineError> {
        match (request, request.target()) {
            (ProcedureRequest::Runbook(runbook), _) => Ok(self.library.plan(runbook)?),
            (_, Target::Cluster(cluster)) => self.clusters.plan(&cluster, request, now).await,
            (_, Target::Cloud(cloud)) => self.clouds.plan(&cloud, request).await,
            // Only a runbook request has hosts for its target, and it was planned above.
            (_, Target::Hosts(_)) => Err(Refusal::NotARunbook.into()),
        }
    }
}
