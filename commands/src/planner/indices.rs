//! Index retention (`/indices prune`) and single deletion (`/indices delete`): the selection is
//! computed from one listing of every index with its UUID and whoever else keeps it, shown in
//! full, and deleted in chunks after approval, each index bound to the incarnation approved.

use std::collections::BTreeMap;

use time::OffsetDateTime;

use crate::index::{IndexName, PlannedIndex};
use crate::name::ClusterName;
use crate::plan::{ClusterDestructive, ClusterSafe, ClusterStep, MAX_DELETE_PATH, Plan};
use crate::planner::PlanError;
use crate::render;
use crate::request::ProcedureRequest;
use crate::retention::{IndexInfo, Keeper, Retention, Verdict};

/// What the index planners look at: every index, and the time it was listed (or the time the
/// plan is computed for, with `opsbot plan --now`).
#[derive(Debug, Clone)]
pub struct IndexFacts {
    pub indices: Vec<IndexInfo>,
    /// What the cluster could not say about who keeps its indices (no ISM plugin), for the
    /// plan's notes.
    pub notes: Vec<String>,
    pub now: OffsetDateTime,
}

/// Counts of what retention passed over, and why, for the plan's notes.
#[derive(Debug, Default)]
struct Passed<'a> {
    /// Indices someone else keeps, with the reason reported.
    kept: Vec<(&'a Keeper, &'a str)>,
    bad_dates: Vec<&'a str>,
    undeletable: Vec<String>,
    system: usize,
    undated: usize,
}

pub(super) fn prune(
    request: &ProcedureRequest,
    cluster: &ClusterName,
    retention: &Retention,
    facts: &IndexFacts,
) -> Result<Plan, PlanError> {
    let mut expired = Vec::new();
    let mut passed = Passed::default();
    for index in &facts.indices {
        let verdict = retention.judge(index.name(), facts.now);
        if matches!(verdict, Verdict::OtherPrefix) {
            continue;
        }
        if let Some(keeper) = index.keeper() {
            passed.kept.push((keeper, index.name()));
            continue;
        }
        match verdict {
            Verdict::Expired { name, date } => expired.push((name, date, index)),
            Verdict::BadDate { .. } => passed.bad_dates.push(index.name()),
            Verdict::Undeletable { reason } => passed.undeletable.push(reason),
            Verdict::System => passed.system += 1,
            Verdict::NoDate => passed.undated += 1,
            Verdict::Young { .. } | Verdict::OtherPrefix => {}
        }
    }
    expired.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    let cutoff = retention.cutoff(facts.now);
    let considered = match &retention.prefix {
        Some(prefix) => format!("indices of `{cluster}` starting with {prefix}"),
        None => format!("indices of `{cluster}`"),
    };
    let mut notes = vec![format!(
        "cut-off {}: {considered} whose name date (the first YYYY.MM.DD in the name, midnight \
         UTC) is older are selected, as Curator's age filter (source name, %Y.%m.%d, {} days, \
         older)",
        render::utc(cutoff),
        retention.older_than,
    )];
    match (expired.first(), expired.last()) {
        (Some(oldest), Some(newest)) => {
            let bytes: u64 = expired
                .iter()
                .filter_map(|(_, _, index)| index.bytes())
                .sum();
            notes.push(format!(
                "selected {} of {} indices: oldest {}, newest {}, {} in all",
                expired.len(),
                facts.indices.len(),
                oldest.0,
                newest.0,
                render::bytes(bytes)
            ));
        }
        _ => notes.push(format!(
            "nothing to delete: no {} is older than {} days",
            considered.replacen("indices", "index", 1),
            retention.older_than
        )),
    }
    notes.extend(passed.notes());
    notes.extend(facts.notes.iter().cloned());
    // The name's date says old, the cluster says new: someone named a new index by an old
    // date. Selected (as Curator would), and said; an unattended run refuses it (its bounds).
    let recent: Vec<String> = expired
        .iter()
        .filter_map(|(name, _, index)| {
            let created = index.created.filter(|created| *created > cutoff)?;
            Some(format!("{name} (created {})", render::utc(created)))
        })
        .collect();
    if !recent.is_empty() {
        notes.push(format!(
            "named as older than the cut-off but created after it: {}; check them before \
             approving",
            recent.join(", ")
        ));
    }
    let planned = expired
        .into_iter()
        .map(|(name, _, index)| PlannedIndex {
            name,
            uuid: Some(index.uuid.clone()),
            bytes: index.bytes(),
            created: index.created,
        })
        .collect();
    Ok(Plan::new(request.clone(), deletion_steps(planned), notes)?)
}

impl Passed<'_> {
    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if !self.kept.is_empty() {
            // By reason, in the keepers' order of precedence.
            let mut by_reason: BTreeMap<(u8, &str), Vec<&str>> = BTreeMap::new();
            for (keeper, name) in &self.kept {
                by_reason
                    .entry((keeper.rank(), keeper.kind()))
                    .or_default()
                    .push(name);
            }
            let kept: Vec<String> = by_reason
                .iter()
                .map(|((_, why), names)| {
                    format!("{} {why} ({})", names.len(), compact_names(names))
                })
                .collect();
            notes.push(format!(
                "kept, someone else's to delete (Curator leaves them too): {}",
                kept.join("; ")
            ));
        }
        if !self.bad_dates.is_empty() {
            notes.push(format!(
                "skipped, their date is no calendar date (Curator would abort on them): {}",
                self.bad_dates.join(", ")
            ));
        }
        if !self.undeletable.is_empty() {
            notes.push(format!("skipped: {}", self.undeletable.join("; ")));
        }
        let never: Vec<String> = [
            (self.system, "system (dot) index", "system (dot) indices"),
            (
                self.undated,
                "index without a date",
                "indices without a date",
            ),
        ]
        .into_iter()
        .filter(|(n, _, _)| *n > 0)
        .map(|(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
        .collect();
        if !never.is_empty() {
            notes.push(format!("never selected: {}", never.join(", ")));
        }
        notes
    }
}

/// A few names and how many more: `a, b, c and 9 more`.
fn compact_names(names: &[&str]) -> String {
    const SHOWN: usize = 3;
    let shown = names[..names.len().min(SHOWN)].join(", ");
    match names.len().saturating_sub(SHOWN) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

pub(super) fn delete(
    request: &ProcedureRequest,
    cluster: &ClusterName,
    index: &IndexName,
    facts: &IndexFacts,
) -> Result<Plan, PlanError> {
    let Some(info) = facts.indices.iter().find(|i| i.name() == index.as_str()) else {
        return Err(PlanError::UnknownIndex {
            cluster: cluster.clone(),
            index: index.clone(),
        });
    };
    let row = &info.row;
    let size = row
        .store_size
        .as_deref()
        .and_then(|s| s.parse().ok())
        .map_or_else(|| "size unknown".to_owned(), render::bytes);
    let mut notes = vec![format!(
        "{index} (uuid {}): {}, {}, {size}",
        info.uuid,
        row.health.as_deref().unwrap_or("no health"),
        row.status.as_deref().unwrap_or("no status"),
    )];
    if let Some(keeper) = info.keeper() {
        notes.push(format!(
            "{index} is not only opsbot's: {keeper}; deleting it by hand goes around that"
        ));
    }
    notes.extend(facts.notes.iter().cloned());
    let planned = PlannedIndex {
        name: index.clone(),
        uuid: Some(info.uuid.clone()),
        bytes: info.bytes(),
        created: info.created,
    };
    Ok(Plan::new(
        request.clone(),
        deletion_steps(vec![planned]),
        notes,
    )?)
}

/// The chunked deletes, then one verifying listing; nothing at all when there is nothing to do.
fn deletion_steps(names: Vec<PlannedIndex>) -> Vec<ClusterStep> {
    if names.is_empty() {
        return Vec::new();
    }
    let mut steps: Vec<ClusterStep> = chunks(names)
        .into_iter()
        .map(|indices| ClusterStep::Destructive(ClusterDestructive::DeleteIndices { indices }))
        .collect();
    steps.push(ClusterStep::Safe(ClusterSafe::VerifyDeleted));
    steps
}

/// Splits names so that each `DELETE /a,b,c` path stays under [`MAX_DELETE_PATH`] bytes.
fn chunks(names: Vec<PlannedIndex>) -> Vec<Vec<PlannedIndex>> {
    let mut chunks: Vec<Vec<PlannedIndex>> = Vec::new();
    let mut length = 0;
    for name in names {
        let extra = name.name.as_str().len() + 1; // the leading `/` or a `,`
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
