use super::*;
use crate::cluster::CatIndexRow;
use crate::index::IndexUuid;
use crate::plan::{Action, ClusterDestructive, ClusterSafe};
use crate::planner::{Facts, plan};
use crate::retention::{Keeper, RetentionDays};
use time::macros::datetime;

/// An index of 1 GiB with a UUID made from its name, kept by `keepers`.
fn index(name: &str, keepers: Vec<Keeper>) -> IndexInfo {
    let uuid: String = format!("u{name}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(64)
        .collect();
    IndexInfo {
        row: CatIndexRow {
            index: name.into(),
            uuid: Some(uuid.clone()),
            health: Some("green".into()),
            status: Some("open".into()),
            docs_count: Some("1000".into()),
            store_size: Some("1073741824".into()),
        },
        uuid: IndexUuid::parse(&uuid).unwrap(),
        keepers,
        created: None,
    }
}

fn facts(names: &[&str]) -> Facts {
    facts_of(names.iter().map(|n| index(n, vec![])).collect())
}

fn facts_of(indices: Vec<IndexInfo>) -> Facts {
    Facts::Indices(IndexFacts {
        indices,
        notes: Vec::new(),
        now: datetime!(2026-11-21 03:00:00 UTC),
    })
}

fn prune_request(days: &str) -> ProcedureRequest {
    ProcedureRequest::IndicesPrune {
        cluster: ClusterName::parse("logs").unwrap(),
        older_than: RetentionDays::parse(days).unwrap(),
        prefix: Some(IndexName::parse("flog-").unwrap()),
    }
}

fn daily(from: time::Date, days: i64) -> Vec<String> {
    (0..days)
        .map(|d| {
            let date = from + time::Duration::days(d);
            format!(
                "flog-{:04}.{:02}.{:02}",
                date.year(),
                u8::from(date.month()),
                date.day()
            )
        })
        .collect()
}

#[test]
fn prune_selects_shows_and_skips_as_the_operator_needs_to_see() {
    let mut names = daily(time::macros::date!(2026 - 08 - 24), 90);
    names.extend([
        "flog-2026.02.30".into(),
        ".kibana_1".into(),
        "flog-current".into(),
        "audit-2020.01.01".into(),
    ]);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let plan = plan(&prune_request("30"), &facts(&names)).unwrap();
    assert!(plan.needs_approval());
    insta::assert_snapshot!(render::plan(&plan, &plan.digest()));
}

#[test]
fn nothing_to_delete_is_a_plan_without_steps_that_says_so() {
    let plan = plan(
        &prune_request("30"),
        &facts(&["flog-2026.11.20", ".kibana_1"]),
    )
    .unwrap();
    assert!(plan.cluster_steps().is_empty());
    assert!(plan.notes().iter().any(|n| n.starts_with(
        "nothing to delete: no index of `logs` starting with flog- is older than 30 days"
    )));
}

#[test]
fn chunks_keep_each_delete_path_under_the_limit_and_lose_nothing() {
    let names: Vec<String> = daily(time::macros::date!(2016 - 01 - 01), 3000);
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let plan = plan(&prune_request("30"), &facts(&refs)).unwrap();
    let mut seen = 0;
    for step in plan.cluster_steps() {
        if let Action::Destructive(ClusterDestructive::DeleteIndices { indices }) = step {
            let path: usize = indices.iter().map(|i| i.name.as_str().len() + 1).sum();
            assert!(path <= MAX_DELETE_PATH, "{path}");
            seen += indices.len();
        }
    }
    assert_eq!(seen, plan.deleted_indices().count());
    assert!(seen > 2900);
    assert_eq!(
        plan.cluster_steps().last(),
        Some(&Action::Safe(ClusterSafe::VerifyDeleted))
    );
}

#[test]
fn deleting_an_index_that_is_not_there_is_refused() {
    let request = ProcedureRequest::IndicesDelete {
        cluster: ClusterName::parse("logs").unwrap(),
        index: IndexName::parse("flog-2026.09.01").unwrap(),
    };
    let error = plan(&request, &facts(&["flog-2026.09.02"])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "no index `flog-2026.09.01` in cluster `logs`; /indices list cluster:logs shows the indices there are"
    );
    let plan = plan(&request, &facts(&["flog-2026.09.01"])).unwrap();
    assert_eq!(plan.deleted_indices().count(), 1);
}

#[test]
fn indices_someone_else_keeps_are_never_selected_and_the_plan_says_why() {
    let old = |name: &str, keepers| index(name, keepers);
    let indices = vec![
        old("flog-2026.01.01", vec![]),
        old(
            "flog-2026.01.02",
            vec![Keeper::Ilm {
                policy: "logs-30d".into(),
            }],
        ),
        old(
            "flog-2026.01.03",
            vec![Keeper::Ism {
                policy: "hot-warm".into(),
            }],
        ),
        old("flog-2026.01.04", vec![Keeper::Hidden]),
        old(
            "flog-2026.01.05",
            vec![
                Keeper::Hidden,
                Keeper::DataStream {
                    stream: "flog".into(),
                },
            ],
        ),
        old("flog-0000.01.01", vec![]),
        old("2026.01.06-flog", vec![]),
    ];
    let flog = plan(&prune_request("30"), &facts_of(indices.clone())).unwrap();
    let deleted: Vec<&str> = flog.deleted_indices().map(IndexName::as_str).collect();
    assert_eq!(deleted, ["flog-2026.01.01"]);
    let kept = flog
        .notes()
        .iter()
        .find(|n| n.starts_with("kept, someone else's"))
        .unwrap();
    assert_eq!(
        kept,
        "kept, someone else's to delete (Curator leaves them too): 1 backing a data stream \
         (flog-2026.01.05); 1 managed by an ILM policy (flog-2026.01.02); 1 managed by an ISM \
         policy (flog-2026.01.03); 1 hidden (flog-2026.01.04)"
    );
    assert!(
        flog.notes()
            .iter()
            .any(|n| n.contains("no calendar date") && n.contains("flog-0000.01.01")),
        "{:?}",
        flog.notes()
    );
    // Without a prefix every index is considered: the date-first one too; the keepers still hold.
    let every = ProcedureRequest::IndicesPrune {
        cluster: ClusterName::parse("logs").unwrap(),
        older_than: RetentionDays::DEFAULT,
        prefix: None,
    };
    assert_eq!(
        every.to_string(),
        "/indices prune cluster:logs older_than_days:30"
    );
    let all = plan(&every, &facts_of(indices)).unwrap();
    let deleted: Vec<&str> = all.deleted_indices().map(IndexName::as_str).collect();
    assert_eq!(deleted, ["flog-2026.01.01", "2026.01.06-flog"]);
    // Each is bound to the incarnation that was listed.
    let bound: Vec<String> = all
        .deleted()
        .map(|i| i.uuid.as_ref().unwrap().to_string())
        .collect();
    assert_eq!(bound, ["uflog_2026_01_01", "u2026_01_06_flog"]);
}

#[test]
fn facts_of_the_wrong_kind_are_caught() {
    let request = prune_request("30");
    let cluster_facts = Facts::Cluster(crate::planner::ClusterFacts {
        inventory: vec![],
        version: None,
        membership: crate::cluster::Membership::Unreachable,
    });
    assert!(matches!(
        plan(&request, &cluster_facts),
        Err(PlanError::FactsMismatch { .. })
    ));
}

proptest::proptest! {
    #[test]
    fn no_generated_listing_puts_a_wildcard_all_or_dot_index_into_a_delete(
        names in proptest::collection::vec("[a-z._*,?-]{0,6}(flog-)?[0-9]{4}\\.[0-9]{2}\\.[0-9]{2}[a-z*_.-]{0,4}|_all|\\*|\\.kibana", 0..60),
        days in 1u32..400,
    ) {
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        if let Ok(plan) = plan(&prune_request(&days.to_string()), &facts(&refs)) {
            for index in plan.deleted_indices() {
                let name = index.as_str();
                proptest::prop_assert!(!name.contains(['*', '?', ',']), "{}", name);
                proptest::prop_assert!(!name.starts_with('.') && name != "_all", "{}", name);
            }
        }
    }
}
