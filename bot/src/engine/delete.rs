//! Deleting indices under the two-person rule. Each index of the plan is bound to the UUID of
//! the incarnation that was approved. Right before a chunk is deleted, its names alone are
//! checked (one scoped request): only those still present with the approved UUID are deleted;
//! one that vanished is reported, one re-created since (another UUID) is kept. Every DELETE
//! carries `X-Opaque-Id: opsbot/<run>/<step>`, so that after a crash, or a DELETE that timed
//! out, the step first waits until the cluster shows no deletion of its own still being applied
//! (a deletion goes on after its client is gone) and never sends one twice. A chunk costs two
//! requests, its check and its DELETE; what the DELETEs left is read once, at the end, in one
//! listing (`verify`).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use opsbot_commands::approval::ApprovedIndices;
use opsbot_commands::index::{IndexName, PlannedIndex};
use opsbot_commands::render;
use opsbot_commands::run::Run;

use super::Inner;
use super::failure::StepFailure;
use super::step::{StepOutcome, acting, observe_retry, retried};
use super::wait;
use crate::backend::search::{Deleted, InFlight};
use crate::backend::{BackendError, Fault};
use crate::clusters::Cluster;

/// How the planned indices of a chunk stand in the cluster now.
#[derive(Debug, Default)]
struct Standing {
    /// Present with the approved UUID: to delete.
    approved: Vec<IndexName>,
    /// Present under another UUID: re-created since the plan, never deleted.
    recreated: Vec<IndexName>,
    /// Not present.
    gone: Vec<IndexName>,
}

/// Where `planned` stands, from one request scoped to its names.
async fn standing(
    inner: &Inner,
    cluster: &Cluster,
    run: &Run,
    planned: &[&PlannedIndex],
) -> Result<Standing, StepFailure> {
    let names: Vec<IndexName> = planned.iter().map(|p| p.name.clone()).collect();
    let found: HashMap<String, String> =
        retried(inner, run, || cluster.search.uuids(&names)).await?;
    let mut standing = Standing::default();
    for index in planned {
        let name = index.name.clone();
        match (found.get(index.name.as_str()), &index.uuid) {
            (None, _) => standing.gone.push(name),
            // Planned before opsbot bound names to UUIDs: by name, as it was approved.
            (Some(_), None) => standing.approved.push(name),
            (Some(now), Some(approved)) if now == approved.as_str() => {
                standing.approved.push(name);
            }
            (Some(_), Some(_)) => standing.recreated.push(name),
        }
    }
    Ok(standing)
}

/// The `X-Opaque-Id` of a step's requests.
fn opaque_id(run: &Run, step: usize) -> String {
    format!("opsbot/{}/{}", run.id, step + 1)
}

/// Waits, up to the deletion timeout, until the cluster shows no deletion of this step's (or of
/// these indices) still being applied.
async fn settle(
    inner: &Inner,
    cluster: &Cluster,
    run: &Run,
    opaque_id: &str,
    names: &[IndexName],
) -> Result<(), StepFailure> {
    let deadline = inner.clock.instant() + inner.config.deletion_timeout;
    loop {
        let seen = retried(inner, run, || cluster.search.in_flight(opaque_id, names)).await?;
        let InFlight::Applying(what) = seen else {
            return Ok(());
        };
        if inner.clock.instant() >= deadline {
            return Err(StepFailure::StillApplying {
                cluster: cluster.name.clone(),
                waited: wait::shown(inner.config.deletion_timeout),
                what,
            });
        }
        let interval = inner.config.poll_interval.min(Duration::from_secs(2));
        inner.clock.sleep(interval).await;
    }
}

/// A DELETE that may have reached the cluster although no answer says so. The other transient
/// faults (no elected master, 408, 429) are refusals before the cluster acted on it.
fn may_be_applying(error: &BackendError) -> bool {
    matches!(
        error.fault,
        Fault::Timeout
            | Fault::Connect(_)
            | Fault::Decode(_)
            | Fault::Status {
                status: 500..=599,
                ..
            }
    )
}

/// A DELETE the cluster turned down (a 4xx: no privilege, a block, a bad name) before it
/// deleted anything.
fn refused_before_acting(error: &BackendError) -> bool {
    matches!(
        error.fault,
        Fault::Status {
            status: 400..=499,
            ..
        }
    )
}

/// Deletes one chunk: `planned`, the indices of approved step `step`. A DELETE is sent again
/// within the retry policy's tries and after its delay: one the cluster refused before acting on
/// it (no elected master, 408, 429) as it was; one that may have reached the cluster only once
/// none of the step's is still being applied, for what is still there as approved. One the
/// cluster answered is never sent again: what it left is found and named by `verify`.
pub(super) async fn chunk(
    inner: &Inner,
    cluster: &Cluster,
    run: &Run,
    step: usize,
    planned: ApprovedIndices<'_>,
    resumed: bool,
) -> Result<StepOutcome, StepFailure> {
    let policy = inner.config.retry;
    let opaque = opaque_id(run, step);
    let names: Vec<IndexName> = planned.iter().map(|p| p.name.clone()).collect();
    if resumed {
        // The bot stopped after recording the step as started: its DELETE may be on its way.
        settle(inner, cluster, run, &opaque, &names).await?;
    }
    let before = standing(inner, cluster, run, planned.as_slice()).await?;
    let mut remaining = planned;
    remaining.retain(|p| before.approved.contains(&p.name));
    let mut tries = 0;
    while !remaining.is_empty() {
        if tries > 0 {
            inner.clock.sleep(policy.delay(tries)).await;
        }
        tries += 1;
        let doomed: Vec<IndexName> = remaining.iter().map(|p| p.name.clone()).collect();
        acting(inner)?;
        match cluster.search.delete_indices(&remaining, &opaque).await {
            // Answered: never sent again, and not looked at again before the check at the end
            // of the run, which looks at every chunk in one listing.
            Ok(Deleted::Acknowledged) => break,
            Ok(Deleted::Pending) => {
                settle(inner, cluster, run, &opaque, &doomed).await?;
                break;
            }
            Err(error) if error.fault.is_transient() && tries < policy.attempts => {
                observe_retry(inner, run, tries, policy.attempts, &error);
                if !may_be_applying(&error) {
                    // Refused before the cluster acted on it: nothing changed, nothing to settle.
                    tracing::warn!(%error, tries, "a delete was refused; sending it again");
                    continue;
                }
                tracing::warn!(%error, "a delete may still be applied; waiting before looking");
                settle(inner, cluster, run, &opaque, &doomed).await?;
                let after = standing(inner, cluster, run, remaining.as_slice()).await?;
                remaining.retain(|p| after.approved.contains(&p.name));
            }
            // Refused before the cluster acted on it, with no earlier try that may have:
            // nothing of this chunk was deleted.
            Err(error) if tries == 1 && !resumed && refused_before_acting(&error) => {
                return Err(StepFailure::Refused(Box::new(error)));
            }
            Err(error) => return Err(BackendError { tries, ..error }.into()),
        }
    }
    Ok(StepOutcome::Deleted {
        note: note(&before, resumed),
        deleted: before.approved.len(),
    })
}

/// `deleted 187; already gone before the delete (not an error): …; kept, re-created since
/// the plan: …`. The count is what this step's own request removed; on a step resumed after a
/// restart, what was gone already may be the work of the request sent before it.
fn note(before: &Standing, resumed: bool) -> String {
    let mut note = format!("deleted {}", before.approved.len());
    if !before.gone.is_empty() {
        let when = if resumed {
            "already gone when opsbot resumed (removed by its delete sent before the restart, or \
             by someone else)"
        } else {
            "already gone before the delete (not an error)"
        };
        note.push_str(&format!("; {when}: {}", render::compact(&before.gone)));
    }
    if !before.recreated.is_empty() {
        note.push_str(&format!(
            "; kept, re-created since the plan was approved (another UUID): {}",
            render::compact(&before.recreated)
        ));
    }
    note
}

/// At the end: none of the plan's indices may remain as approved, checked in one listing of
/// the cluster (a chunk is not looked at again after its DELETE was answered: two requests per
/// chunk). What the cluster answered it deleted and still shows is waited for while a deletion
/// of it is still being applied, then named; no DELETE is sent again.
pub(super) async fn verify(
    inner: &Inner,
    cluster: &Cluster,
    run: &Run,
) -> Result<StepOutcome, StepFailure> {
    let selected = run.plan().deleted().count();
    let mut left = remaining(inner, cluster, run).await?;
    if !left.stayed.is_empty() {
        for (step, names) in &left.stayed {
            settle(inner, cluster, run, &opaque_id(run, *step), names).await?;
        }
        left = remaining(inner, cluster, run).await?;
    }
    let stayed: Vec<IndexName> = left.stayed.into_values().flatten().collect();
    let Some(first) = stayed.first() else {
        return Ok(StepOutcome::Done(format!(
            "verified: none of the {selected} selected indices remains"
        )));
    };
    Err(StepFailure::Stayed {
        selected,
        gone: selected - stayed.len() - left.recreated,
        recreated: left.recreated,
        first: first.to_string(),
        stayed: render::compact(&stayed),
        stayed_count: stayed.len(),
        cluster: cluster.name.clone(),
    })
}

/// What the deletions left of the plan's indices, from one listing.
struct Left {
    /// Still there under their approved UUID, by deleting step.
    stayed: BTreeMap<usize, Vec<IndexName>>,
    /// There under another UUID: re-created since the plan, so kept.
    recreated: usize,
}

async fn remaining(inner: &Inner, cluster: &Cluster, run: &Run) -> Result<Left, StepFailure> {
    let rows = retried(inner, run, || cluster.search.cat_indices(true)).await?;
    let present: HashMap<&str, Option<&str>> = rows
        .iter()
        .map(|row| (row.index.as_str(), row.uuid.as_deref()))
        .collect();
    let mut left = Left {
        stayed: BTreeMap::new(),
        recreated: 0,
    };
    for (step, indices) in run.plan().index_deletions() {
        let mut stayed = Vec::new();
        for index in indices {
            match (present.get(index.name.as_str()), &index.uuid) {
                (None, _) => {}
                // Planned before names were bound to UUIDs, or listed without one: by name.
                (Some(_), None) | (Some(None), Some(_)) => stayed.push(index.name.clone()),
                (Some(Some(now)), Some(approved)) if *now == approved.as_str() => {
                    stayed.push(index.name.clone());
                }
                (Some(Some(_)), Some(_)) => left.recreated += 1,
            }
        }
        if !stayed.is_empty() {
            left.stayed.insert(step, stayed);
        }
    }
    Ok(left)
}
