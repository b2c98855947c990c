//! Property: whatever sequence of creations and transitions happens, each unfinished run holds
//! exactly its cluster's lock and finished runs hold none (checked on the raw locks tree).

use std::collections::BTreeMap;
use std::convert::Infallible;

use crate::common::{Place, T0, bob, cluster, new_run};
use opsbot_commands::name::RunId;
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::run::{Outcome, RunState};
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
    let outcome = match n {
        1 => return RunState::Running,
        0 => Outcome::Withdrawn {
            by: bob(),
            reason: None,
        },
        2 => Outcome::Succeeded,
        3 => Outcome::Failed { error: "x".into() },
        4 => Outcome::Cancelled {
            by: bob(),
            note: "x".into(),
        },
        5 => Outcome::Rejected {
            by: bob(),
            reason: "x".into(),
        },
        _ => Outcome::Expired,
    };
    RunState::Finished { at: T0, outcome }
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
                        run.state = state(n);
                    }
                    _ => {
                        run.replan(std::sync::Arc::new(crate::common::plan(
                            ProcedureRequest::ClusterStop {
                                cluster: cluster(CLUSTERS[n]),
                            },
                            run.plan().cluster_steps().to_vec(),
                            run.plan().notes().to_vec(),
                        )));
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

/// Applies `ops` to a new store at `place`, then checks the raw locks against the runs.
fn locks_follow_runs(place: &Place, ops: &[Op]) -> Result<(), TestCaseError> {
    let runs = {
        let store = place.open().unwrap();
        let mut created = Vec::new();
        for op in ops {
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
    let locks = place.raw_locks();
    let mut expected = BTreeMap::new();
    for run in runs.iter().filter(|r| !r.state.is_finished()) {
        let previous = expected.insert(
            run.plan().request().target().lock_keys()[0].clone(),
            run.id.get(),
        );
        prop_assert_eq!(previous, None, "two unfinished runs on one cluster");
    }
    prop_assert_eq!(locks, expected);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_unfinished_run_holds_exactly_its_clusters_lock_on_sled(ops in proptest::collection::vec(op(), 1..24)) {
        locks_follow_runs(&Place::sled(), &ops)?;
    }
}

proptest! {
    // Each case is a schema of its own on the test server: fewer, so the suite stays quick.
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn every_unfinished_run_holds_exactly_its_clusters_lock_on_postgres(ops in proptest::collection::vec(op(), 1..24)) {
        locks_follow_runs(&Place::postgres(), &ops)?;
    }
}
