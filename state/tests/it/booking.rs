//! A booked run in the store: it holds no lock before its time, and its plan is replaced once,
//! by the transition at its time; a reader never sees the new record with the old plan.

use std::sync::Arc;

use crate::common::{Place, T0, alice, cluster, new_run, restart_plan};
use opsbot_commands::run::{ChannelId, Outcome, Run, RunState, StepState};
use opsbot_commands::target::Target;
use opsbot_state::{StoreError, UpdateError};

fn booked(id: opsbot_commands::name::RunId) -> Run {
    Run::booked(
        id,
        restart_plan("logs"),
        alice(),
        ChannelId("c".into()),
        T0,
        time::Duration::minutes(30),
        T0 + time::Duration::days(2),
    )
}

/// A shorter plan for the same request: what the cluster needs at the booked time.
fn shorter() -> opsbot_commands::plan::Plan {
    let plan = restart_plan("logs");
    let steps = plan.cluster_steps()[..5].to_vec();
    crate::common::plan(plan.request().clone(), steps, plan.notes().to_vec())
}

fn a_booked_run_takes_its_targets_lock_at_its_time_and_its_plan_is_replaced_once(place: Place) {
    let store = place.open().unwrap();
    let run = store.create_run(booked, None).unwrap();
    assert_eq!(run.state, RunState::Booked);
    let target = Target::Cluster(cluster("logs"));
    assert_eq!(
        store.lock_holder(&target).unwrap(),
        None,
        "booked, not started"
    );
    // Another run may use the cluster meanwhile, and holds it while it does.
    let other = store.create_run(new_run("logs"), None).unwrap();
    assert_eq!(store.lock_holder(&target).unwrap(), Some(other.id));
    let done = |run: &mut Run| {
        run.finish(Outcome::Succeeded, T0);
        run.steps_mut().fill(StepState::done(T0, String::new()));
        Ok::<_, std::convert::Infallible>(vec![])
    };
    store.update_run(other.id, None, done).unwrap();

    // A run not booked never changes its plan.
    let refused = store.update_run(run.id, None, |run| {
        run.replan(Arc::new(shorter()));
        Ok::<_, std::convert::Infallible>(vec![])
    });
    assert!(
        matches!(
            refused,
            Err(UpdateError::Store(StoreError::Unencodable { .. }))
        ),
        "{refused:?}"
    );

    let at = T0 + time::Duration::days(2);
    let replanned = store
        .update_run(run.id, None, |run| {
            run.replan(Arc::new(shorter()));
            if let Some(booking) = &mut run.booking {
                booking.reached = Some(at);
            }
            run.state = RunState::Running;
            Ok::<_, std::convert::Infallible>(vec![])
        })
        .unwrap();
    assert_eq!(store.lock_holder(&target).unwrap(), Some(run.id));
    let read = store.run(run.id).unwrap().unwrap();
    assert_eq!(read, replanned);
    assert_eq!(read.plan().len(), 5);
    drop(store);
    let store = place.open().unwrap();
    assert_eq!(store.run(run.id).unwrap().unwrap(), replanned, "as stored");

    // Once reached, the plan is what the run runs: it never changes again.
    let again = store.update_run(run.id, None, |run| {
        run.replan(Arc::new(restart_plan("logs")));
        Ok::<_, std::convert::Infallible>(vec![])
    });
    assert!(again.is_err(), "{again:?}");
}

crate::backends!(a_booked_run_takes_its_targets_lock_at_its_time_and_its_plan_is_replaced_once,);
