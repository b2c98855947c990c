//! Executing one step of a cloud run. Every step looks at the cloud again right before it acts,
//! which also settles a step found started after a restart: a consumer already without
//! allocations, a service already deleted, a property already set are done, not redone.

use opsbot_commands::approval::Approved;
use opsbot_commands::name::CloudName;
use opsbot_commands::openstack::compute::Instance;
use opsbot_commands::openstack::image::PropertyChange;
use opsbot_commands::plan::{Action, DestructiveAction, SafeAction, Wait};
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::run::Run;
use opsbot_state::StoreError;
use tokio::sync::Notify;

use super::step::{StepOutcome, controlled, mark_started, misplaced, retried};
use super::{Inner, compute};
use crate::backend::openstack::Deletion;
use crate::clouds::Cloud;

pub(super) async fn execute(
    inner: &Inner,
    cloud: &CloudName,
    run: &Run,
    index: usize,
    resumed: bool,
    waker: &Notify,
) -> Result<StepOutcome, StoreError> {
    let Ok(cloud) = inner.targets.clouds.get(cloud) else {
        return Ok(StepOutcome::Failed(format!(
            "cloud `{cloud}` is no longer in the config; add it back to finish this run"
        )));
    };
    let action = &run.plan.steps[index];
    if let Action::Wait(Wait::ComputeUp { host }) = action {
        return compute::up(inner, cloud, run, host, waker).await;
    }
    if resumed {
        if let Some(outcome) = compute::settled(run, index) {
            return Ok(outcome);
        }
    } else {
        mark_started(inner, run, index)?;
    }
    let outcome = match action {
        Action::Safe(safe) => perform(inner, cloud, run, safe).await,
        Action::Destructive(destructive) => destroy(inner, cloud, run, destructive).await,
        Action::Wait(_) | Action::Gate { .. } => misplaced(action),
    };
    Ok(outcome.unwrap_or_else(StepOutcome::Failed))
}

async fn destroy(
    inner: &Inner,
    cloud: &Cloud,
    run: &Run,
    action: &DestructiveAction,
) -> Result<StepOutcome, String> {
    let approved = Approved::verify(run).map_err(|refusal| refusal.to_string())?;
    match action {
        DestructiveAction::DeleteAllocation {
            consumer,
            resources,
            ..
        } => {
            // The plan was made from a look at compute; an instance restored or re-created
            // since then keeps its allocations.
            let instance = retried(inner, run, || cloud.client.instance(*consumer)).await?;
            if let Instance::Exists { name, status } = instance {
                return Ok(StepOutcome::Done(format!(
                    "kept the allocations of {consumer}: instance `{name}` exists now ({status})"
                )));
            }
            // Nor one a migration started since holds (a resize moves the source's
            // allocations to the migration's UUID).
            if let Some(why) = migrating(inner, cloud, run, *consumer).await? {
                return Ok(StepOutcome::Done(format!(
                    "kept the allocations of {consumer}: {why}"
                )));
            }
            // Looked at before deleting, so that a delete that happened before a crash is
            // found done rather than sent again.
            if !retried(inner, run, || cloud.client.holds_allocations(*consumer)).await? {
                return Ok(StepOutcome::Done(format!(
                    "the allocations of {consumer} were already gone"
                )));
            }
            let deletion = retried(inner, run, || {
                cloud.client.delete_allocation(&approved, *consumer)
            })
            .await?;
            Ok(StepOutcome::Done(match deletion {
                Deletion::Deleted => format!("deleted the allocations of {consumer} ({resources})"),
                Deletion::AlreadyGone => {
                    format!("the allocations of {consumer} were already gone")
                }
            }))
        }
        DestructiveAction::DeleteComputeService { id, host } => {
            let services = retried(inner, run, || cloud.client.services()).await?;
            match services.iter().find(|s| s.id == *id) {
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
            let deletion =
                retried(inner, run, || cloud.client.delete_service(&approved, *id)).await?;
            Ok(StepOutcome::Done(match deletion {
                Deletion::Deleted => format!("deleted the compute service record of {host} ({id})"),
                Deletion::AlreadyGone => {
                    format!("the compute service record of {host} was already gone")
                }
            }))
        }
        DestructiveAction::DeleteIndices { .. }
        | DestructiveAction::RetireNode { .. }
        | DestructiveAction::UnlistNode { .. }
        | DestructiveAction::HostCommand(_) => misplaced(action),
    }
}

/// Why `consumer`'s allocations are a migration's now, if they are: Nova lists a migration in
/// progress with that UUID at the run's host, or placement types the consumer `MIGRATION`.
async fn migrating(
    inner: &Inner,
    cloud: &Cloud,
    run: &Run,
    consumer: opsbot_commands::openstack::ids::ConsumerId,
) -> Result<Option<String>, String> {
    if let ProcedureRequest::PlacementStale { host, .. } = &run.plan.request {
        let migrations = retried(inner, run, || cloud.client.migrations(host)).await?;
        if let Some(m) = migrations
            .iter()
            .find(|m| m.uuid == consumer && m.in_progress())
        {
            return Ok(Some(format!("migration in progress, {m}")));
        }
    }
    let typed = retried(inner, run, || cloud.client.consumer_type(consumer)).await?;
    Ok((typed.as_deref() == Some("MIGRATION"))
        .then(|| "placement types the consumer MIGRATION now".to_owned()))
}

async fn perform(
    inner: &Inner,
    cloud: &Cloud,
    run: &Run,
    action: &SafeAction,
) -> Result<StepOutcome, String> {
    match action {
        SafeAction::VerifyReleased { provider } => {
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
            for consumer in run.plan.deleted_consumers() {
                if now.consumers.contains_key(&consumer)
                    && retried(inner, run, || cloud.client.instance(consumer)).await?
                        == Instance::Gone
                    && migrating(inner, cloud, run, consumer).await?.is_none()
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
                Err(format!(
                    "still allocated after the delete: {}; placement acknowledged it, so check \
                     its log, then /placement allocations",
                    left.join(", ")
                ))
            }
        }
        SafeAction::RestartCompute { host } => {
            let outcome = cloud.hosts.restart(host).await;
            controlled(inner, run, &format!("host control on {host}"), outcome)
        }
        SafeAction::SetImageProperties {
            image,
            name,
            changes,
        } => {
            // Against the image as it is now: a value set meanwhile (or before a restart) is
            // not patched again, and `add`/`replace` follow what the image has.
            let reference = opsbot_commands::openstack::ids::ImageRef::Id(*image);
            let found = retried(inner, run, || cloud.client.images(&reference)).await?;
            let Some(current) = found.first() else {
                return Err(format!("image `{name}` ({image}) is gone"));
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
        _ => misplaced(action),
    }
}
