//! Stale placement allocations (spec 4.2, 7): the allocations against a hypervisor whose
//! instance the compute API does not know. Only those are deleted; an instance that exists is
//! never touched, even when named.

use std::collections::BTreeMap;

use crate::name::{CloudName, HostName};
use crate::openstack::compute::Instance;
use crate::openstack::ids::ConsumerId;
use crate::openstack::placement::ProviderAllocations;
use crate::plan::{Action, DestructiveAction, Plan, SafeAction};
use crate::planner::PlanError;
use crate::request::ProcedureRequest;

/// The provider named after the host, its allocations, and what the compute API says of each
/// consumer.
#[derive(Debug, Clone)]
pub struct StaleFacts {
    pub allocations: ProviderAllocations,
    pub instances: BTreeMap<ConsumerId, Instance>,
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
    for (consumer, resources) in &allocations.consumers {
        if instance.is_some_and(|wanted| wanted != *consumer) {
            continue;
        }
        match lookup(consumer)? {
            Instance::Gone => stale.push((*consumer, resources.clone())),
            Instance::Exists { name, status } => {
                kept.push((*consumer, name.clone(), status.clone()))
            }
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
    }
    let mut notes = vec![format!(
        "provider `{}` ({}), generation {}: {} consumer(s), {} not found in the compute database",
        provider.name,
        provider.uuid,
        allocations.generation,
        allocations.consumers.len(),
        stale.len(),
    )];
    for (consumer, name, status) in &kept {
        notes.push(format!(
            "kept {consumer}: instance `{name}` exists ({status})"
        ));
    }
    if stale.is_empty() {
        notes.push(format!(
            "nothing to delete: every instance with allocations on {host} exists"
        ));
        return Ok(Plan {
            request: request.clone(),
            steps: Vec::new(),
            notes,
        });
    }
    let mut steps: Vec<Action> = stale
        .into_iter()
        .map(|(consumer, resources)| {
            Action::Destructive(DestructiveAction::DeleteAllocation {
                consumer,
                provider: provider.uuid,
                resources,
            })
        })
        .collect();
    steps.push(Action::Safe(SafeAction::VerifyReleased {
        provider: provider.uuid,
    }));
    Ok(Plan {
        request: request.clone(),
        steps,
        notes,
    })
}
