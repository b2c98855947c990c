//! The bounds of a standing approval: what a scheduled run may delete without a per-run
//! approval. They are part of what the second person approved (the schedule's digest covers
//! them), and every scheduled run's plan is checked against them when it is created and again,
//! from the stored run, before its first destructive step.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::index::IndexName;
use crate::plan::{ClusterDestructive, ClusterStep, Plan, Targeted};
use crate::render;
use crate::retention::{Retention, RetentionDays, Verdict};

/// What a run under a standing approval may delete: index deletions only, at most
/// `max_indices` of them, none younger than `min_age_days`, only names starting with `prefix`,
/// at most `max_total_bytes` in all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bounds {
    pub max_indices: u32,
    pub min_age_days: RetentionDays,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<IndexName>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_total_bytes: Option<u64>,
}

/// The bound a plan goes beyond, in words for the channel: the run waits for an ordinary
/// approval and says this.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Exceeded {
    #[error(
        "step {step} is not an index deletion; a standing approval covers index deletions only"
    )]
    NotIndexDeletion { step: usize },
    #[error("it deletes {count} indices, more than the bound of {max} per run")]
    TooMany { count: usize, max: u32 },
    #[error("{index} does not start with the bound's prefix {prefix}")]
    OtherPrefix { index: IndexName, prefix: IndexName },
    #[error("{index} is not older than the bound of {min} days")]
    TooYoung {
        index: IndexName,
        min: RetentionDays,
    },
    #[error(
        "{index} was created {created}, less than the bound of {min} days ago, whatever its \
         name says"
    )]
    CreatedRecently {
        index: IndexName,
        created: String,
        min: RetentionDays,
    },
    #[error("the size of {index} is unknown, and the bound allows at most {max} in all")]
    SizeUnknown { index: IndexName, max: String },
    #[error("it deletes {total}, more than the bound of {max} in all")]
    TooLarge { total: String, max: String },
}

impl Bounds {
    /// Checks `plan`, made at `now`, against every bound; the first one exceeded is returned.
    pub fn admit(&self, plan: &Plan, now: OffsetDateTime) -> Result<(), Exceeded> {
        // Only a deletion of indices is covered: a gate or any other destructive step is not.
        let beyond = match plan.targeted() {
            Targeted::Cluster { steps, .. } => steps.iter().position(|step| match step {
                ClusterStep::Destructive(ClusterDestructive::DeleteIndices { .. })
                | ClusterStep::Safe(_)
                | ClusterStep::Wait(_) => false,
                ClusterStep::Destructive(
                    ClusterDestructive::RetireNode { .. } | ClusterDestructive::UnlistNode { .. },
                )
                | ClusterStep::Gate { .. } => true,
            }),
            Targeted::Cloud { .. } | Targeted::Hosts { .. } => plan
                .steps()
                .position(|step| step.is_destructive() || step.is_gate()),
        };
        if let Some(step) = beyond {
            return Err(Exceeded::NotIndexDeletion { step: step + 1 });
        }
        let deleted: Vec<_> = plan.deleted().collect();
        if deleted.len() > self.max_indices as usize {
            return Err(Exceeded::TooMany {
                count: deleted.len(),
                max: self.max_indices,
            });
        }
        let age = Retention {
            prefix: None,
            older_than: self.min_age_days,
        };
        let mut total: u64 = 0;
        for index in &deleted {
            if let Some(prefix) = &self.prefix
                && !index.name.as_str().starts_with(prefix.as_str())
            {
                return Err(Exceeded::OtherPrefix {
                    index: index.name.clone(),
                    prefix: prefix.clone(),
                });
            }
            if !matches!(age.judge(index.name.as_str(), now), Verdict::Expired { .. }) {
                return Err(Exceeded::TooYoung {
                    index: index.name.clone(),
                    min: self.min_age_days,
                });
            }
            if let Some(created) = index.created
                && created > age.cutoff(now)
            {
                return Err(Exceeded::CreatedRecently {
                    index: index.name.clone(),
                    created: render::utc(created),
                    min: self.min_age_days,
                });
            }
            if let Some(max) = self.max_total_bytes {
                let Some(bytes) = index.bytes else {
                    return Err(Exceeded::SizeUnknown {
                        index: index.name.clone(),
                        max: render::bytes(max),
                    });
                };
                total = total.saturating_add(bytes);
            }
        }
        match self.max_total_bytes {
            Some(max) if total > max => Err(Exceeded::TooLarge {
                total: render::bytes(total),
                max: render::bytes(max),
            }),
            _ => Ok(()),
        }
    }
}

impl std::fmt::Display for Bounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "index deletions only, at most {} indices per run, none younger than {} days",
            self.max_indices, self.min_age_days
        )?;
        if let Some(prefix) = &self.prefix {
            write!(f, ", only names starting with {prefix}")?;
        }
        if let Some(max) = self.max_total_bytes {
            write!(f, ", at most {} in all", render::bytes(max))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use crate::index::PlannedIndex;
    use crate::name::ClusterName;
    use crate::request::ProcedureRequest;

    fn plan(indices: &[(&str, Option<u64>)]) -> Plan {
        Plan::new(
            ProcedureRequest::IndicesPrune {
                cluster: ClusterName::parse("logs").unwrap(),
                older_than: RetentionDays::parse("30").unwrap(),
                prefix: None,
            },
            vec![ClusterStep::Destructive(
                ClusterDestructive::DeleteIndices {
                    indices: indices
                        .iter()
                        .map(|(name, bytes)| PlannedIndex {
                            name: IndexName::parse(name).unwrap(),
                            uuid: None,
                            bytes: *bytes,
                            created: None,
                        })
                        .collect(),
                },
            )],
            vec![],
        )
        .unwrap()
    }

    fn bounds() -> Bounds {
        Bounds {
            max_indices: 2,
            min_age_days: RetentionDays::parse("30").unwrap(),
            prefix: Some(IndexName::parse_prefix("flog-").unwrap()),
            max_total_bytes: Some(1000),
        }
    }

    const NOW: OffsetDateTime = datetime!(2026-11-24 02:00 UTC);

    #[test]
    fn a_plan_within_every_bound_is_admitted() {
        let plan = plan(&[
            ("flog-2026.10.01", Some(400)),
            ("flog-2026.10.02", Some(600)),
        ]);
        assert_eq!(bounds().admit(&plan, NOW), Ok(()));
    }

    #[test]
    fn each_bound_is_named_when_exceeded() {
        let error = |indices: &[(&str, Option<u64>)]| {
            bounds().admit(&plan(indices), NOW).unwrap_err().to_string()
        };
        assert_eq!(
            error(&[
                ("flog-2026.10.01", Some(1)),
                ("flog-2026.10.02", Some(1)),
                ("flog-2026.10.03", Some(1))
            ]),
            "it deletes 3 indices, more than the bound of 2 per run"
        );
        assert_eq!(
            error(&[("audit-2026.10.01", Some(1))]),
            "audit-2026.10.01 does not start with the bound's prefix flog-"
        );
        assert_eq!(
            error(&[("flog-2026.11.01", Some(1))]),
            "flog-2026.11.01 is not older than the bound of 30 days"
        );
        assert_eq!(
            error(&[("flog-2026.10.01", None)]),
            "the size of flog-2026.10.01 is unknown, and the bound allows at most 1000b in all"
        );
        assert_eq!(
            error(&[
                ("flog-2026.10.01", Some(800)),
                ("flog-2026.10.02", Some(800))
            ]),
            "it deletes 1.6kb, more than the bound of 1000b in all"
        );
    }

    /// An unattended run deletes an index only when the cluster created it long enough ago
    /// too, not only when its name says so.
    #[test]
    fn an_index_created_recently_is_not_admitted_whatever_its_name_says() {
        let mut young = plan(&[("flog-2026.10.01", Some(1))]);
        let mut steps = young.cluster_steps().to_vec();
        let Some(ClusterStep::Destructive(ClusterDestructive::DeleteIndices { indices })) =
            steps.first_mut()
        else {
            panic!("a deletion")
        };
        indices[0].created = Some(datetime!(2026-11-22 08:00 UTC));
        young = Plan::new(young.request().clone(), steps, vec![]).unwrap();
        assert_eq!(
            bounds().admit(&young, NOW).unwrap_err().to_string(),
            "flog-2026.10.01 was created 2026-11-22 08:00 UTC, less than the bound of 30 days \
             ago, whatever its name says"
        );
    }

    #[test]
    fn a_plan_with_another_destructive_step_is_never_admitted() {
        let plan = Plan::new(
            plan(&[]).request().clone(),
            vec![ClusterStep::Destructive(ClusterDestructive::RetireNode {
                node: crate::name::NodeAddr::parse("10.0.0.12").unwrap(),
            })],
            vec![],
        )
        .unwrap();
        assert_eq!(
            bounds().admit(&plan, NOW),
            Err(Exceeded::NotIndexDeletion { step: 1 })
        );
    }
}
