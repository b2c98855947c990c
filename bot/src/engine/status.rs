//! `/cluster status`: a read-only look, as complete as the cluster allows.

use opsbot_commands::cluster::{CatIndexRow, ClusterStatus, Membership};
use opsbot_commands::name::ClusterName;
use opsbot_commands::target::Target;

use super::{Engine, EngineError};

impl Engine {
    /// Every index of a cluster, for `/indices list`.
    pub async fn indices(&self, name: &ClusterName) -> Result<Vec<CatIndexRow>, EngineError> {
        let clusters = &self.0.targets.clusters;
        Ok(clusters.indices(clusters.get(name)?).await?)
    }

    /// Health, nodes, shards, allocation settings and the runs on a cluster. A cluster that is
    /// down is a status too: the parts that did not answer are missing, with the reason.
    pub async fn cluster_status(&self, name: &ClusterName) -> Result<ClusterStatus, EngineError> {
        let cluster = self.0.targets.clusters.get(name)?;
        let retry = self.0.retry();
        let quiet = |_: &_, _| {};
        let membership = retry.run(|| cluster.search.membership(), quiet).await?;
        let mut status = ClusterStatus {
            cluster: name.clone(),
            inventory: cluster.inventory.clone(),
            version: None,
            membership: membership.clone(),
            health: None,
            allocation: None,
            problem: None,
            runs: Vec::new(),
        };
        if let Membership::Unreachable = membership {
            // The look at the nodes says only that no answer came: one more request says where
            // it was sent and why none came (refused, DNS, a timeout, TLS).
            if let Err(error) = cluster.search.version().await {
                status.problem = Some(error.to_string());
            }
        }
        if let Membership::Formed { .. } = membership {
            let answers = async {
                let version = retry.run(|| cluster.search.version(), quiet).await?;
                let health = retry.run(|| cluster.search.health(), quiet).await?;
                let allocation = retry.run(|| cluster.search.allocation(), quiet).await?;
                Ok::<_, crate::backend::BackendError>((version, health, allocation))
            };
            match answers.await {
                Ok((version, health, allocation)) => {
                    status.version = Some(version);
                    status.health = Some(health);
                    status.allocation = Some(allocation);
                }
                Err(error) => status.problem = Some(error.to_string()),
            }
        }
        status.runs = self
            .0
            .store
            .unfinished_runs()?
            .into_iter()
            .filter(|run| run.plan().request().target() == Target::Cluster(name.clone()))
            .map(|run| format!("{} {} {}", run.id, run.label(), run.plan().request()))
            .collect();
        Ok(status)
    }
}
