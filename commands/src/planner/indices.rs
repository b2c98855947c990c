//! Index retention (`/indices prune`) and single deletion (`/indices delete`): the selection is
//! computed from one listing, shown in full, and deleted in chunks after approval.

use time::OffsetDateTime;

use crate::cluster::CatIndexRow;
use crate::index::IndexName;
use crate::name::ClusterName;
use crate::plan::{Action, DestructiveAction, MAX_DELETE_PATH, Plan, SafeAction};
use crate::planner::PlanError;
use crate::render;
use crate::request::ProcedureRequest;
use crate::retention::{Retention, Verdict};

/// What the index planners look at: one listing, and the time it was taken.
#[derive(Debug, Clone)]
pub struct IndexFacts {
    pub rows: Vec<CatIndexRow>,
    pub now: OffsetDateTime,
}

pub(super) fn prune(
    request: &ProcedureRequest,
    cluster: &ClusterName,
    retention: &Retention,
    facts: &IndexFacts,
) -> Result<Plan, PlanError> {
    let mut expired = Vec::new();
    let (mut bad_dates, mut undeletable) = (Vec::new(), Vec::new());
    let (mut system, mut undated) = (0, 0);
    for row in &facts.rows {
        match retention.judge(&row.index, facts.now) {
            Verdict::Expired { name, date } => expired.push((name, date, row)),
            Verdict::BadDate { .. } => bad_dates.push(row.index.clone()),
            Verdict::Undeletable { reason } => undeletable.push(reason),
            Verdict::System => system += 1,
            Verdict::NoDate => undated += 1,
            Verdict::Young { .. } | Verdict::OtherPrefix => {}
        }
    }
    expired.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    let cutoff = retention.cutoff(facts.now);
    let mut notes = vec![format!(
        "cut-off {}: indices of `{cluster}` starting with {} whose name date (midnight UTC) is \
         older are selected, as Curator's age filter (source name, %Y.%m.%d, {} days, older)",
        render::utc(cutoff),
        retention.prefix,
        retention.older_than,
    )];
    match (expired.first(), expired.last()) {
        (Some(oldest), Some(newest)) => {
            let bytes: u64 = expired
                .iter()
                .filter_map(|(_, _, row)| row.store_size.as_deref()?.parse::<u64>().ok())
                .sum();
            notes.push(format!(
                "selected {} of {} indices: oldest {}, newest {}, {} in all",
                expired.len(),
                facts.rows.len(),
                oldest.0,
                newest.0,
                render::bytes(bytes)
            ));
        }
        _ => notes.push(format!(
            "nothing to delete: no index of `{cluster}` starting with {} is older than {} days",
            retention.prefix, retention.older_than
        )),
    }
    if !bad_dates.is_empty() {
        notes.push(format!(
            "skipped, their date is no calendar date (Curator would abort on them): {}",
            bad_dates.join(", ")
        ));
    }
    if !undeletable.is_empty() {
        notes.push(format!("skipped: {}", undeletable.join("; ")));
    }
    let never: Vec<String> = [
        (system, "system (dot) index", "system (dot) indices"),
        (undated, "index without a date", "indices without a date"),
    ]
    .into_iter()
    .filter(|(n, _, _)| *n > 0)
    .map(|(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
    .collect();
    if !never.is_empty() {
        notes.push(format!("never selected: {}", never.join(", ")));
    }
    let names = expired.into_iter().map(|(name, _, _)| name).collect();
    Ok(Plan {
        request: request.clone(),
        steps: deletion_steps(names),
        notes,
    })
}

pub(super) fn delete(
    request: &ProcedureRequest,
    cluster: &ClusterName,
    index: &IndexName,
    facts: &IndexFacts,
) -> Result<Plan, PlanError> {
    let Some(row) = facts.rows.iter().find(|r| r.index == index.as_str()) else {
        return Err(PlanError::UnknownIndex {
            cluster: cluster.clone(),
            index: index.clone(),
        });
    };
    let size = row
        .store_size
        .as_deref()
        .and_then(|s| s.parse().ok())
        .map_or_else(|| "size unknown".to_owned(), render::bytes);
    Ok(Plan {
        request: request.clone(),
        steps: deletion_steps(vec![index.clone()]),
        notes: vec![format!(
            "{index}: {}, {}, {size}",
            row.health.as_deref().unwrap_or("no health"),
            row.status.as_deref().unwrap_or("no status"),
        )],
    })
}

/// The chunked deletes, then one verifying listing; nothing at all when there is nothing to do.
fn deletion_steps(names: Vec<IndexName>) -> Vec<Action> {
    if names.is_empty() {
        return Vec::new();
    }
    let mut steps: Vec<Action> = chunks(names)
        .into_iter()
        .map(|indices| Action::Destructive(DestructiveAction::DeleteIndices { indices }))
        .collect();
    steps.push(Action::Safe(SafeAction::VerifyDeleted));
    steps
}

/// Splits names so that each `DELETE /a,b,c` path stays under [`MAX_DELETE_PATH`] bytes.
fn chunks(names: Vec<IndexName>) -> Vec<Vec<IndexName>> {
    let mut chunks: Vec<Vec<IndexName>> = Vec::new();
    let mut length = 0;
    for name in names {
        let extra = name.as_str().len() + 1; // the leading `/` or a `,`
        match chunks.last_mut() {
            Some(chunk) if length + extra <= MAX_DELETE_PATH => {
                length += extra;
                chunk.push(name);
            }
            _ => {
                length = extra;
                chunks.push(vec![name]);
            }
        }
    }
    chunks
}

#[cfg(test)]
mod tests;
