//! Executing one step of a cloud run. Every step looks at the cloud again right before it acts,
//! which also settles a step found started after a restart: a consumer already without
//! allocations, a service already deleted, a property already set are done, not redone.

use opsbot_commands::approval::{Approved, CloudAct};
use opsbot_commands::name::CloudName;
use opsbot_commands::openstack::compute::Instance;
use opsbot_commands::openstack::ids::ConsumerId;
use opsbot_commands::openstack::image::PropertyChange;
use opsbot_commands::plan::{Action, CloudSafe, CloudStep, CloudWait, OnCloud};
use opsbot_commands::planner::{self, Holder};
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::run::Run;
use opsbot_state::StoreError;
use tokio::sync::Notify;

use super::failure::StepFailure;
use super::step::{StepOutcome, controlled, gate, mark_started, retried};
use super::{Inner, compute};
use crate::backend::openstack::Deletion;
use crate::clouds::Cloud;

pub(super) async fn execute(
    inner: &Inner,
    cloud: &CloudName,
    run: &Run,
    index: usize,
    action: &CloudStep,
    resumed: bool,
    waker: &Notify,
) -> Result<StepOutcome, StoreError> {
    let Ok(cloud) = inner.targets.clouds.get(cloud) else {
        return Ok(StepFailure::TargetGone {
            kind: "cloud",
            name: cloud.to_string(),
        }
        .into());
    };
    Ok(match action {
        Action::Gate { .. } => gate(run),
        Action::Wait(CloudWait::ComputeUp { host }) => {
            compute::up(inner, cloud, run, host, waker).await?
        }
        Action::Safe(safe) => {
            if let CloudSafe::RestartCompute { host } = safe {
                if let Some(refused) = compute::held_back(inner, cloud, run, host, resumed).await {
                    return Ok(refused);
                }
                if let Some(asked) = compute::settled(run, index, host).filter(|_| resumed) {
                    return Ok(asked);
                }
            }
            if !resumed {
                mark_started(inner, run, index).await?;
            }
            perform(inner, cloud, run, safe)
                .await
                .unwrap_or_else(StepOutcome::from)
        }
        Action::Destructive(_) => {
            if !resumed {
                mark_started(inner, run, index).await?;
            }
            destroy(inner, cloud, run, index)
                .await
                .unwrap_or_else(StepOutcome::from)
        }
    })
}

/// A destructive step: only what its approval proof names, looked at again right before.
async fn destroy(
    inner: &Inner,
    cloud: &Cloud,
    run: &Run,
    step: usize,
) -> Result<StepOutcome, StepFailure> {
    match Approved::<OnCloud>::verify(run, step)?.act() {
        CloudAct::DeleteAllocation {
            consumer: approved,
            resources,
        } => {
            let consumer = approved.id();
            // Looked at again right before deleting, as the plan did: an instance restored or
            // re-created since keeps its allocations, and so does a migration started since (a
            // resize moves the source's allocations to the migration's UUID). A delete that
            // happened before a crash is found done rather than sent again.
            let (held, holder) = holding(inner, cloud, run, consumer).await?;
            if !held {
                return Ok(StepOutcome::Done(format!(
                    "the allocations of {consumer} were already gone"
                )));
            }
            if let Some(why) = holder {
                return Ok(StepOutcome::Done(format!(
                    "kept the allocations of {consumer}: {why}"
                )));
            }
            let deletion = retried(inner, run, || cloud.client.delete_allocation(approved)).await?;
            Ok(StepOutcome::Done(match deletion {
                Deletion::Deleted => format!("deleted the allocations of {consumer} ({resources})"),
                Deletion::AlreadyGone => {
                    format!("the allocations of {consumer} were already gone")
                }
            }))
        }
        CloudAct::DeleteComputeService {
            service: approved,
            host,
        } => {
            let id = approved.id();
            let services = retried(inner, run, || cloud.client.services()).await?;
            match services.iter().find(|s| s.id == id) {
                None => {
                    return Ok(StepOutcome::Done(format!(
                        "the compute service record of {host} was already gone"
                    )));
                }
                Some(service) if !service.is_stale_registration() => {
                    return Ok(StepOutcome::Done(format!(
                        "kept the compute service of {host}: it is {} and {} now",
                        service.status, service.state
                    )));
                }
                Some(_) => {}
            }
            let deletion = retried(inner, run, || cloud.client.delete_service(approved)).await?;
            Ok(StepOutcome::Done(match deletion {
                Deletion::Deleted => format!("deleted the compute service record of {host} ({id})"),
                Deletion::AlreadyGone => {
                    format!("the compute service record of {host} was already gone")
                }
            }))
        }
    }
}

/// Whether `consumer` holds allocations now, and, if it does, who holds them other than a
/// gone instance (`None`: they are stale), decided by the planner's own rule
/// ([`planner::holder`]). Nova's migrations at the run's host are listed only when the instance
/// is gone and the consumer still holds something.
async fn holding(
    inner: &Inner,
    cloud: &Cloud,
    run: &Run,
    consumer: ConsumerId,
) -> Result<(bool, Option<String>), StepFailure> {
    let instance = retried(inner, run, || cloud.client.instance(consumer)).await?;
    let state = retried(inner, run, || cloud.client.consumer(consumer)).await?;
    let migrations = match (&instance, run.plan().request()) {
        (Instance::Gone, ProcedureRequest::PlacementStale { host, .. }) if state.holds => {
            retried(inner, run, || cloud.client.migrations(host)).await?
        }
        _ => Vec::new(),
    };
    let why = match planner::holder(
        &consumer,
        Some(&instance),
        &migrations,
        state.kind.as_deref(),
    ) {
        Holder::Instance { name, status } => {
            Some(format!("instance `{name}` exists now ({status})"))
        }
        Holder::Migration(migration) => Some(migration.holding()),
        Holder::TypedMigration => Some("placement types the consumer MIGRATION now".to_owned()),
        Holder::Stale | Holder::Unknown => None,
    };
    Ok((state.holds, why))
}

async fn perform(
    inner: &Inner,
    cloud: &Cloud,
    run: &Run,
    action: &CloudSafe,
) -> Result<StepOutcome, StepFailure> {
    match action {
        CloudSafe::VerifyReleased { provider } => {
            let named = retried(inner, run, || cloud.client.provider(*provider)).await?;
            let Some(provider) = named else {
                return Ok(StepOutcome::Done(
                    "the provider itself is gone, and its allocations with it".to_owned(),
                ));
            };
            let now = retried(inner, run, || cloud.client.allocations(&provider)).await?;
            // A consumer kept because its instance exists again, or a migration holds it now,
            // is not a failure.
            let mut left = Vec::new();
            for consumer in run.plan().deleted_consumers() {
                if now.consumers.contains_key(&consumer)
                    && holding(inner, cloud, run, consumer).await? == (true, None)
                {
                    left.push(consumer.to_string());
                }
            }
            if left.is_empty() {
                Ok(StepOutcome::Done(format!(
                    "`{}` now holds allocations of {} consumer(s); no stale one remains",
                    provider.name,
                    now.consumers.len()
                )))
            } else {
                Err(StepFailure::StillAllocated {
                    consumers: left.join(", "),
                })
            }
        }
        CloudSafe::RestartCompute { host } => {
            let outcome = cloud.hosts.restart(host).await;
            controlled(inner, run, &format!("host control on {host}"), outcome).await
        }
        CloudSafe::SetImageProperties {
            image,
            name,
            changes,
        } => {
            // Against the image as it is now: a value set meanwhile (or before a restart) is
            // not patched again, and `add`/`replace` follow what the image has.
            let reference = opsbot_commands::openstack::ids::ImageRef::Id(*image);
            let found = retried(inner, run, || cloud.client.images(&reference)).await?;
            let Some(current) = found.first() else {
                return Err(StepFailure::ImageGone {
                    name: name.clone(),
                    image: *image,
                });
            };
            let wanted = changes.iter().map(|c| &c.property);
            let needed = PropertyChange::needed(wanted, &current.properties);
            if needed.is_empty() {
                return Ok(StepOutcome::Done(format!(
                    "`{name}` already has every property"
                )));
            }
            let after = retried(inner, run, || cloud.client.patch_image(*image, &needed)).await?;
            let set: Vec<String> = needed
                .iter()
                .map(|c| {
                    let key = c.property.key();
                    format!(
                        "{key}={}",
                        after.properties.get(&key).map_or("?", String::as_str)
                    )
                })
                .collect();
            Ok(StepOutcome::Done(format!(
                "image `{name}` now has {}",
                set.join(" ")
            )))
        }
    }
}
