//! Prune against a cluster that does what real ones do: indices a lifecycle policy or a data
//! stream owns, hidden ones, odd names, an index deleted and re-created under its name after
//! the approval, and a deletion the master takes longer to apply than the request waits.

use std::collections::BTreeSet;
use std::time::Duration;

use opsbot_commands::name::RunId;
use opsbot_commands::run::{Outcome, StepState};
use opsbot_search_sim::{DataStreamSpec, Distribution, Flavor, IndexSpec, SimConfig};
use opsbot_tests::{Harness, Setup};

/// What the cluster deleted, by the simulator's own record.
fn deleted(h: &Harness) -> BTreeSet<String> {
    h.sim.state().deleted.into_iter().collect()
}

/// The `X-Opaque-Id` of the test's own requests, standing for someone else at the cluster.
const SOMEONE_ELSE: &str = "someone-else";

/// The names opsbot's DELETE requests carried, each request's in one list. Fails unless there
/// is at least one, and unless every other DELETE was the test's own: checks of what opsbot
/// sent must not pass because it stopped marking its requests with its opaque id.
fn sent(h: &Harness) -> Vec<Vec<String>> {
    let (opsbot, others): (Vec<_>, Vec<_>) = h.calls_by("DELETE").into_iter().partition(|c| {
        c.opaque_id
            .as_deref()
            .is_some_and(|o| o.starts_with("opsbot/"))
    });
    assert!(
        others
            .iter()
            .all(|c| c.opaque_id.as_deref() == Some(SOMEONE_ELSE)),
        "DELETEs without opsbot's opaque id: {others:#?}"
    );
    assert!(!opsbot.is_empty(), "opsbot sent no DELETE");
    opsbot.into_iter().map(|c| c.path_names()).collect()
}

/// Every name in at most one DELETE.
fn assert_never_sent_twice(h: &Harness) {
    let mut seen = BTreeSet::new();
    for name in sent(h).into_iter().flatten() {
        assert!(seen.insert(name.clone()), "{name} was sent twice");
    }
}

fn done_notes(run: &opsbot_commands::run::Run) -> Vec<String> {
    run.steps()
        .iter()
        .filter_map(|step| match step {
            StepState::Done { note, .. } => Some(note.clone()),
            _ => None,
        })
        .collect()
}

const PRUNE_ALL: &str = "/indices prune cluster:logs older_than_days:30";
const PRUNE_FLOG: &str = "/indices prune cluster:logs older_than_days:30 prefix:flog-";

#[tokio::test]
async fn prune_without_a_prefix_keeps_what_curator_keeps_and_says_why() {
    let h = Harness::start(Setup {
        days_of_indices: 40,
        sim: |config| SimConfig {
            distribution: Distribution::Default,
            indices: vec![
                IndexSpec::new("app-2020.01.01").setting("index.lifecycle.name", "app-policy"),
                IndexSpec::new("audit-2020.01.01").setting("index.hidden", "true"),
                IndexSpec::new("2020.01.02-date-first"),
                IndexSpec::new("mid-2020.01.03-x"),
                IndexSpec::new("log-0000.01.01"),
                IndexSpec::new("log-2020.02.30"),
                IndexSpec::new("no-date-at-all"),
            ],
            data_streams: vec![DataStreamSpec::new("logs-app-default", 2)],
            ..config
        },
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", PRUNE_ALL).await;
    let run = h.run(id);
    let plan = run.plan();
    let notes = plan.notes().join("\n");
    for expected in [
        "indices of `logs` whose name date (the first YYYY.MM.DD in the name",
        "kept, someone else's to delete (Curator leaves them too): 2 backing a data stream",
        "1 managed by an ILM policy (app-2020.01.01)",
        "1 hidden (audit-2020.01.01)",
        "skipped, their date is no calendar date (Curator would abort on them): log-0000.01.01, \
         log-2020.02.30",
        "1 index without a date",
    ] {
        assert!(notes.contains(expected), "{expected}\n---\n{notes}");
    }
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{:?}",
        run.steps()
    );

    let gone = deleted(&h);
    assert!(
        gone.contains("2020.01.02-date-first") && gone.contains("mid-2020.01.03-x"),
        "{gone:?}"
    );
    assert_eq!(
        gone.iter().filter(|n| n.starts_with("flog-")).count(),
        10,
        "the 10 daily indices older than 30 days: {gone:?}"
    );
    assert_eq!(gone.len(), 12, "{gone:?}");
    let left: BTreeSet<String> = h.index_names().into_iter().collect();
    for kept in [
        "app-2020.01.01",
        "audit-2020.01.01",
        "log-0000.01.01",
        "log-2020.02.30",
        "no-date-at-all",
    ] {
        assert!(left.contains(kept), "{kept}: {left:?}");
    }
    assert!(left.iter().filter(|n| n.starts_with(".ds-")).count() == 2);
}

#[tokio::test]
async fn opensearch_indices_an_ism_policy_manages_are_kept() {
    let h = Harness::start(Setup {
        flavor: Flavor::Os2,
        days_of_indices: 35,
        sim: |config| SimConfig {
            indices: vec![IndexSpec::new("flog-2020.01.01").ism_policy("hot-warm-delete")],
            ..config
        },
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", PRUNE_FLOG).await;
    let notes = h.run(id).plan().notes().join("\n");
    assert!(
        notes.contains("1 managed by an ISM policy (flog-2020.01.01)"),
        "{notes}"
    );
    h.approve("bob", id).await;
    assert_eq!(h.finished(id).await.outcome(), Some(&Outcome::Succeeded));
    let gone = deleted(&h);
    assert_eq!(gone.len(), 5, "{gone:?}");
    assert!(!gone.contains("flog-2020.01.01"));
}

/// An index named by an old date but created two days ago: the attended plan selects it (as
/// Curator would) and says so, for the approver to check.
#[tokio::test]
async fn an_index_named_old_but_created_recently_is_pointed_out_in_the_plan() {
    let h = Harness::start(Setup {
        days_of_indices: 35,
        sim: |config| SimConfig {
            indices: vec![
                IndexSpec::new("flog-2019.05.01")
                    .created(time::OffsetDateTime::now_utc() - time::Duration::days(2)),
            ],
            ..config
        },
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", PRUNE_FLOG).await;
    let notes = h.run(id).plan().notes().join("\n");
    assert!(
        notes.contains(
            "named as older than the cut-off but created after it: flog-2019.05.01 (created "
        ),
        "{notes}"
    );
    let planned = h
        .run(id)
        .plan()
        .deleted()
        .find(|p| p.name.as_str() == "flog-2019.05.01")
        .cloned();
    assert!(
        planned.is_some_and(|p| p.created.is_some()),
        "the plan keeps its creation date for the bounds"
    );
}

/// An OpenSearch without the ISM plugin (`opensearch-min`) answers its routes `no handler`:
/// that means no index is managed by ISM, which the plan says, and the prune goes on.
#[tokio::test]
async fn an_opensearch_without_ism_is_pruned_and_the_plan_says_so() {
    let h = Harness::start(Setup {
        flavor: Flavor::Os2,
        days_of_indices: 35,
        sim: |config| SimConfig {
            ism: false,
            ..config
        },
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", PRUNE_FLOG).await;
    let notes = h.run(id).plan().notes().join("\n");
    assert!(
        notes.contains(
            "this OpenSearch has no ISM plugin (its _plugins/_ism routes do not exist), so ISM \
             manages no index here"
        ),
        "{notes}"
    );
    assert!(
        h.calls_by("GET")
            .iter()
            .any(|c| c.path.starts_with("/_plugins/_ism/explain/") && c.status == 400),
        "ISM was asked"
    );
    h.approve("bob", id).await;
    assert_eq!(h.finished(id).await.outcome(), Some(&Outcome::Succeeded));
    assert_eq!(deleted(&h).len(), 5);
}

/// More ISM-managed indices than an OpenSearch search reaches (10,000): every one is still
/// found managed and kept, not only those explain's pages list.
#[tokio::test]
async fn more_than_ten_thousand_ism_managed_indices_are_all_kept() {
    const MANAGED: usize = 10_001;
    let h = Harness::start(Setup {
        flavor: Flavor::Os2,
        days_of_indices: 35,
        sim: |config| SimConfig {
            indices: (0..MANAGED)
                .map(|day| {
                    let date =
                        time::macros::date!(1990 - 01 - 01) + time::Duration::days(day as i64);
                    let name = format!(
                        "flog-{:04}.{:02}.{:02}",
                        date.year(),
                        u8::from(date.month()),
                        date.day()
                    );
                    IndexSpec::new(name).ism_policy("hot-warm-delete")
                })
                .collect(),
            ..config
        },
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", PRUNE_FLOG).await;
    let notes = h.run(id).plan().notes().join("\n");
    assert!(notes.contains("10001 managed by an ISM policy"), "{notes}");
    h.approve("bob", id).await;
    assert_eq!(h.finished(id).await.outcome(), Some(&Outcome::Succeeded));
    let gone = deleted(&h);
    assert_eq!(gone.len(), 5, "{gone:?}");
}

/// A snapshot copying one index of a chunk makes the cluster refuse the chunk's whole DELETE:
/// the run stops there saying so, and nothing of the chunk is gone.
#[tokio::test]
async fn a_chunk_with_an_index_being_snapshotted_fails_its_step_and_deletes_nothing() {
    let h = Harness::start(Setup {
        days_of_indices: 35,
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", PRUNE_FLOG).await;
    let planned: Vec<String> = h
        .run(id)
        .plan()
        .deleted_indices()
        .map(|index| index.as_str().to_owned())
        .collect();
    assert_eq!(planned.len(), 5, "one chunk: {planned:?}");
    h.sim.set_snapshotting(&[planned[2].as_str()]);
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert!(
        error.contains("answered 400 (snapshot_in_progress_exception)")
            && error.contains("deleted 0 of 5 selected indices"),
        "{error}"
    );
    assert!(deleted(&h).is_empty(), "{:?}", deleted(&h));
    assert_eq!(h.calls_by("DELETE").len(), 1, "a refusal is not retried");
}

#[tokio::test]
async fn an_index_re_created_after_the_approval_is_never_deleted() {
    let h = Harness::start(Setup {
        days_of_indices: 40,
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", PRUNE_ALL).await;
    let run = h.run(id);
    let plan = run.plan();
    let target = plan.deleted_indices().next().unwrap().to_string();
    // Someone deletes it and a shipper writes to the name again: a new index, a new UUID.
    let http = reqwest::Client::new();
    let url = format!("{}/{target}", h.sim.base_url());
    let status = http
        .delete(&url)
        .header("x-opaque-id", SOMEONE_ELSE)
        .send()
        .await
        .unwrap()
        .status();
    assert!(status.is_success(), "{status}");
    let status = http.put(&url).send().await.unwrap().status();
    assert!(status.is_success(), "{status}");

    h.approve("bob", id).await;
    let run = h.finished(id).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{:?}",
        run.steps()
    );
    assert!(
        h.index_names().contains(&target),
        "the new {target} is there"
    );
    assert!(
        !sent(&h).iter().flatten().any(|n| *n == target),
        "opsbot never asked to delete {target}"
    );
    let notes = done_notes(&run);
    assert!(
        notes.iter().any(|n| n.contains(&format!(
            "kept, re-created since the plan was approved (another UUID): {target}"
        ))),
        "{notes:#?}"
    );
}

#[tokio::test]
async fn a_deletion_slower_than_the_request_is_waited_for_never_sent_again() {
    // The master takes 60 simulated seconds to apply a deletion; the DELETE gives up after
    // its 30 s timeout (`acknowledged: false`) while the deletion goes on.
    let h = Harness::start(Setup {
        days_of_indices: 40,
        sim: |config| SimConfig {
            delete_apply: Duration::from_secs(60),
            ..config
        },
        ..Setup::default()
    })
    .await;
    let id = h.start_run("alice", PRUNE_ALL).await;
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{:?}",
        run.steps()
    );
    assert_never_sent_twice(&h);
    assert_eq!(deleted(&h).len(), 10);
    let notes = done_notes(&run);
    assert!(notes.iter().any(|n| n == "deleted 10"), "{notes:#?}");
    // While it was applied, opsbot looked at what the cluster was doing, not at the listing.
    let looks = h
        .calls_by("GET")
        .iter()
        .filter(|c| c.path == "/_cluster/pending_tasks" || c.path == "/_tasks")
        .count();
    assert!(looks > 0, "no look at the deletion in flight");
}

#[tokio::test]
async fn a_plan_binds_each_index_to_its_uuid_and_a_chunk_costs_two_requests() {
    let h = Harness::start(Setup::default()).await;
    let id = h.start_run("alice", PRUNE_ALL).await;
    let run = h.run(id);
    let plan = run.plan();
    let bound = plan.deleted().filter(|p| p.uuid.is_some()).count();
    assert_eq!(bound, plan.deleted().count(), "every index has its UUID");
    let chunks = plan.index_deletions().count();
    h.sim.clear_calls();
    h.approve("bob", id).await;
    assert_eq!(
        h.finished(RunId::new(1)).await.outcome(),
        Some(&Outcome::Succeeded)
    );
    // Per chunk, its scoped check and its DELETE; then one listing, the check at the end.
    let calls: Vec<String> = h
        .sim
        .calls()
        .into_iter()
        .map(|c| format!("{} {}", c.method, c.path))
        .collect();
    let scoped = |c: &&String| c.starts_with("GET /") && c.ends_with("/_settings/index.uuid");
    assert_eq!(calls.iter().filter(scoped).count(), chunks, "{calls:#?}");
    assert_eq!(
        calls.iter().filter(|c| c.starts_with("DELETE /")).count(),
        chunks
    );
    assert_eq!(
        calls.last().map(String::as_str),
        Some("GET /_cat/indices"),
        "{calls:#?}"
    );
    assert_eq!(calls.len(), 2 * chunks + 1, "{calls:#?}");
}
