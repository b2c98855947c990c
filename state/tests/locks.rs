//! Property: whatever sequence of creations and transitions happens, each unfinished run holds
//! exactly its cluster's lock and finished runs hold none (checked on the raw locks tree).

mod common;

use std::collections::BTreeMap;
use std::convert::Infallible;

use common::{T0, bob, cluster, new_run};
use opsbot_commands::name::RunId;
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::run::RunState;
use opsbot_state::{Store, StoreError, UpdateError};
use proptest::prelude::*;

const CLUSTERS: [&str; 3] = ["a", "b", "c"];

#[derive(Debug, Clone)]
enum Op {
    Create {
        cluster: usize,
    },
    /// Sets the state of the `run`-th created run (modulo how many there are).
    SetState {
        run: usize,
        state: usize,
    },
    /// Tries to move a run to another cluster: a run's plan never changes, so the store refuses
    /// it and the locks stay as they were.
    Move {
        run: usize,
        cluster: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..CLUSTERS.len()).prop_map(|cluster| Op::Create { cluster }),
        (0..8_usize, 0..7_usize).prop_map(|(run, state)| Op::SetState { run, state }),
        (0..8_usize, 0..CLUSTERS.len()).prop_map(|(run, cluster)| Op::Move { run, cluster }),
    ]
}

fn state(n: usize) -> RunState {
    match n {
        0 => RunState::Withdrawn {
            by: bob(),
            reason: None,
        },
        1 => RunState::Running,
        2 => RunState::Succeeded,
        3 => RunState::Failed { error: "x".into() },
        4 => RunState::Cancelled {
            by: bob(),
            note: "x".into(),
        },
        5 => RunState::Rejected {
            by: bob(),
            reason: "x".into(),
        },
        _ => RunState::Expired,
    }
}

/// Applies `op`: the id of a created run, or the store's refusal.
fn apply(store: &Store, created: &[RunId], op: &Op) -> Result<Option<RunId>, StoreError> {
    match *op {
        Op::Create { cluster } => Ok(Some(store.create_run(new_run(CLUSTERS[cluster]), None)?.id)),
        Op::SetState { run, state: n } | Op::Move { run, cluster: n } if !created.is_empty() => {
            let id = created[run % created.len()];
            let result = store.update_run(id, None, |run| {
                match op {
                    Op::SetState { .. } => {
                        let state = state(n);
                        run.finished_at = state.is_finished().then_some(T0);
                        run.state = state;
                    }
                    _ => {
                        std::sync::Arc::make_mut(&mut run.plan).request =
                            ProcedureRequest::ClusterStop {
                                cluster: cluster(CLUSTERS[n]),
                            };
                        run.digest = run.plan.digest();
                    }
                }
                Ok::<_, Infallible>(vec![])
            });
            match result {
                Ok(_) => Ok(None),
                Err(UpdateError::Store(StoreError::Unencodable { detail, .. }))
                    if matches!(op, Op::Move { .. }) && detail.contains("its plan changed") =>
                {
                    Ok(None)
                }
                Err(UpdateError::Store(error)) => Err(error),
                Err(UpdateError::Refused(never)) => match never {},
            }
        }
        _ => Ok(None),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_unfinished_run_holds_exactly_its_clusters_lock(ops in proptest::collection::vec(op(), 1..24)) {
        let dir = tempfile::tempdir().unwrap();
        let runs = {
            let store = common::open(dir.path()).unwrap();
            let mut created = Vec::new();
            for op in &ops {
                match apply(&store, &created, op) {
                    Ok(id) => created.extend(id),
                    // The only refusal: the cluster is busy with the run that holds its lock.
                    Err(StoreError::Locked { target, holder }) => {
                        prop_assert_eq!(store.lock_holder(&target).unwrap(), Some(holder));
                    }
                    Err(other) => panic!("unexpected error {other:?}"),
                }
            }
            store.runs().unwrap()
        };
        let db = common::raw_open(dir.path()).unwrap();
        let locks: BTreeMap<String, u64> = db
            .open_tree("locks")
            .unwrap()
            .iter()
            .map(|entry| {
                let (key, value) = entry.unwrap();
                let value: serde_json::Value = serde_json::from_slice(&value).unwrap();
                (String::from_utf8(key.to_vec()).unwrap(), value["data"].as_u64().unwrap())
            })
            .collect();
        let mut expected = BTreeMap::new();
        for run in runs.iter().filter(|r| !r.state.is_finished()) {
            let previous = expected.insert(run.plan.request.target().lock_keys()[0].clone(), run.id.get());
            prop_assert_eq!(previous, None, "two unfinished runs on one cluster");
        }
        prop_assert_eq!(locks, expected);
    }
}
