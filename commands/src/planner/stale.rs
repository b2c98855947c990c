//! Stale placement allocations (spec 4.2, 7): the allocations against a hypervisor whose
//! instance the compute API does not know, and that are no migration's. Only those are deleted:
//! an instance that exists is never touched, even when named, nor a migration in progress (a
//! resize moves the source host's allocations to the migration's UUID, which is no instance;
//! deleting them breaks the resize's revert and leaves the host overcommitted).

use std::collections::BTreeMap;

use crate::name::{CloudName, HostName};
use crate::openstack::compute::{Instance, Migration};
use crate::openstack::ids::ConsumerId;
use crate::openstack::placement::ProviderAllocations;
use crate::plan::{CloudDestructive, CloudSafe, CloudStep, Plan};
use crate::planner::PlanError;
use crate::request::ProcedureRequest;

/// The provider named after the host, its allocations, and what the compute API and placement
/// say of each consumer.
#[derive(Debug, Clone)]
pub struct StaleFacts {
    pub allocations: ProviderAllocations,
    pub instances: BTreeMap<ConsumerId, Instance>,
    /// Nova's migrations with this host at either end (only those in progress hold
    /// allocations).
    pub migrations: Vec<Migration>,
    /// Placement's `consumer_type` (microversion 1.38) of each consumer whose instance is gone;
    /// empty where placement is older. Nova itself does not type its consumers yet, so this
    /// only adds to what `migrations` says.
    pub consumer_types: BTreeMap<ConsumerId, String>,
}

/// What a consumer of the host's allocations is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder<'a> {
    /// An instance the compute API knows.
    Instance { name: &'a str, status: &'a str },
    /// A migration in progress, as Nova lists it.
    Migration(&'a Migration),
    /// A consumer placement types as a migration's, though Nova lists no such migration in
    /// progress: kept all the same, for a person to look at.
    TypedMigration,
    /// Neither: the instance is not in the compute database.
    Stale,
    /// The compute API was not asked.
    Unknown,
}

impl StaleFacts {
    /// Who holds `consumer`'s allocations.
    pub fn holder(&self, consumer: &ConsumerId) -> Holder<'_> {
        holder(
            consumer,
            self.instances.get(consumer),
            &self.migrations,
            self.consumer_types.get(consumer).map(String::as_str),
        )
    }
}

/// Who holds `consumer`'s allocations, from what the compute API says of its instance (`None`:
/// not asked), Nova's migrations at the host and placement's type for it. The plan and the
/// look right before each delete both decide with this, so they cannot disagree.
pub fn holder<'a>(
    consumer: &ConsumerId,
    instance: Option<&'a Instance>,
    migrations: &'a [Migration],
    consumer_type: Option<&str>,
) -> Holder<'a> {
    match instance {
        Some(Instance::Exists { name, status }) => Holder::Instance { name, status },
        None => Holder::Unknown,
        Some(Instance::Gone) => {
            if let Some(migration) = migrations
                .iter()
                .find(|m| &m.uuid == consumer && m.in_progress())
            {
                Holder::Migration(migration)
            } else if consumer_type == Some("MIGRATION") {
                Holder::TypedMigration
            } else {
                Holder::Stale
            }
        }
    }
}

pub(super) fn stale(
    request: &ProcedureRequest,
    cloud: &CloudName,
    host: &HostName,
    instance: Option<ConsumerId>,
    facts: &StaleFacts,
) -> Result<Plan, PlanError> {
    let allocations = &facts.allocations;
    let provider = &allocations.provider;
    // The compute API must have been asked about every consumer.
    let lookup = |consumer: &ConsumerId| {
        facts
            .instances
            .get(consumer)
            .ok_or(PlanError::FactsMismatch {
                needed: super::FactsKind::Stale { host: host.clone() },
            })
    };
    let mut stale = Vec::new();
    let mut kept = Vec::new();
    let mut moving = Vec::new();
    for (consumer, resources) in &allocations.consumers {
        if instance.is_some_and(|wanted| wanted != *consumer) {
            continue;
        }
        lookup(consumer)?;
        match facts.holder(consumer) {
            Holder::Stale => stale.push((*consumer, resources.clone())),
            Holder::Instance { name, status } => {
                kept.push((*consumer, name.to_owned(), status.to_owned()));
            }
            Holder::Migration(migration) => {
                moving.push(format!("kept {consumer}: {}", migration.holding()));
            }
            Holder::TypedMigration => moving.push(format!(
                "kept {consumer}: migration in progress (placement types it MIGRATION; Nova \
                 lists no such migration in progress: confirm or revert the migration with \
                 `openstack server migration list`, then ask again)"
            )),
            Holder::Unknown => {}
        }
    }
    if let Some(wanted) = instance {
        if !allocations.consumers.contains_key(&wanted) {
            return Err(PlanError::NoAllocation {
                cloud: cloud.clone(),
                host: host.clone(),
                consumer: wanted,
            });
        }
        if let Some((_, name, status)) = kept.first() {
            return Err(PlanError::InstanceExists {
                consumer: wanted,
                name: name.clone(),
                status: status.clone(),
            });
        }
        if let Some(why) = moving.first() {
            return Err(PlanError::MigrationInProgress {
                consumer: wanted,
                why: why.clone(),
            });
        }
    }
    let mut notes = vec![format!(
        "provider `{}` ({}), generation {}: {} consumer(s): {} instance(s), {} migration(s) in \
         progress, {} not found in the compute database",
        provider.name,
        provider.uuid,
        allocations.generation,
        allocations.consumers.len(),
        kept.len(),
        moving.len(),
        stale.len(),
    )];
    for (consumer, name, status) in &kept {
        notes.push(format!(
            "kept {consumer}: instance `{name}` exists ({status})"
        ));
    }
    notes.extend(moving);
    if stale.is_empty() {
        notes.push(format!(
            "nothing to delete: every consumer with allocations on {host} is an instance that \
             exists or a migration in progress"
        ));
        return Ok(Plan::new(request.clone(), Vec::<CloudStep>::new(), notes)?);
    }
    let mut steps: Vec<CloudStep> = stale
        .into_iter()
        .map(|(consumer, resources)| {
            CloudStep::Destructive(CloudDestructive::DeleteAllocation {
                consumer,
                provider: provider.uuid,
                resources,
            })
        })
        .collect();
    steps.push(CloudStep::Safe(CloudSafe::VerifyReleased {
        provider: provider.uuid,
    }));
    Ok(Plan::new(request.clone(), steps, notes)?)
}
