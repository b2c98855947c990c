//! Deleting indices under the two-person rule. Right before each chunk the indices are listed
//! again, and only those both in the approved plan and still present are deleted: one that
//! vanished meanwhile is reported, one that appeared meanwhile can never be deleted. This also
//! makes a chunk found started after a crash safe to run again: what is gone is not deleted twice.

use std::collections::HashSet;

use opsbot_commands::approval::Approved;
use opsbot_commands::index::IndexName;
use opsbot_commands::render;
use opsbot_commands::run::Run;

use super::Inner;
use super::step::StepOutcome;
use crate::clusters::Cluster;

/// The names present in the cluster now.
async fn present(inner: &Inner, cluster: &Cluster) -> Result<HashSet<String>, String> {
    let rows = inner
        .clusters
        .indices(cluster)
        .await
        .map_err(|e| e.to_string())?;
    Ok(rows.into_iter().map(|row| row.index).collect())
}

pub(super) async fn chunk(
    inner: &Inner,
    cluster: &Cluster,
    approved: &Approved,
    indices: &[IndexName],
) -> Result<StepOutcome, String> {
    let present = present(inner, cluster).await?;
    let (still, vanished): (Vec<IndexName>, Vec<IndexName>) = indices
        .iter()
        .cloned()
        .partition(|name| present.contains(name.as_str()));
    if !still.is_empty() {
        inner
            .config
            .retry
            .run(
                || cluster.search.delete_indices(approved, &still),
                |_, _| {},
            )
            .await
            .map_err(|e| e.to_string())?;
    }
    let mut note = format!("deleted {}", still.len());
    if !vanished.is_empty() {
        note.push_str(&format!(
            "; already gone before the delete (not an error): {}",
            render::compact(&vanished)
        ));
    }
    Ok(StepOutcome::Done(note))
}

/// One listing at the end: none of the plan's indices may remain.
pub(super) async fn verify(
    inner: &Inner,
    cluster: &Cluster,
    run: &Run,
) -> Result<StepOutcome, String> {
    let present = present(inner, cluster).await?;
    let planned: Vec<IndexName> = run.plan.deleted_indices().cloned().collect();
    let remaining: Vec<IndexName> = planned
        .iter()
        .filter(|name| present.contains(name.as_str()))
        .cloned()
        .collect();
    if remaining.is_empty() {
        Ok(StepOutcome::Done(format!(
            "verified: none of the {} selected indices remains",
            planned.len()
        )))
    } else {
        Err(format!(
            "still present after the delete: {}; the cluster acknowledged it, so check its log, \
             then /indices list cluster:{}",
            render::compact(&remaining),
            cluster.name
        ))
    }
}
