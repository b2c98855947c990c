//! A schedule's fires in the store: each is taken once, with its run in the same transaction,
//! whatever the order in which a restarted bot tries them again.

use crate::common::Place;
use opsbot_commands::audit::AuditKind;
use opsbot_commands::retention::RetentionDays;
use opsbot_commands::schedule::bounds::Bounds;
use opsbot_commands::schedule::{
    FireOutcome, FireRecord, Pause, ScheduleName, StandingApproval, StandingId, StandingState,
};
use opsbot_state::{StoreError, UpdateError};
use time::macros::datetime;

fn nightly() -> ScheduleName {
    ScheduleName::parse("nightly-prune").unwrap()
}

fn a_fire_creates_one_run_and_a_second_try_of_the_same_fire_creates_none(place: Place) {
    let store = place.open().unwrap();
    let fire = datetime!(2026-11-28 01:00 UTC);
    let run = store
        .create_fired_run(crate::common::new_run("logs"), &nightly(), fire)
        .unwrap();
    assert_eq!(
        store.last_fire(&nightly()).unwrap(),
        Some(FireRecord {
            at: fire,
            outcome: FireOutcome::Started {
                run: run.id,
                waits: None
            }
        })
    );
    // A restarted bot that tries the same fire again (its run finished in between, so the
    // cluster is free) is refused, and no run is created.
    let again = store.create_fired_run(crate::common::finished_run("audit"), &nightly(), fire);
    assert!(
        matches!(again, Err(StoreError::AlreadyFired { .. })),
        "{again:?}"
    );
    let earlier = store.record_fire(
        &nightly(),
        &FireRecord {
            at: fire - time::Duration::days(1),
            outcome: FireOutcome::Missed,
        },
    );
    assert!(
        matches!(earlier, Err(StoreError::AlreadyFired { .. })),
        "{earlier:?}"
    );
    assert_eq!(store.unfinished_runs().unwrap().len(), 1);
    // The next fire is taken.
    let next = FireRecord {
        at: fire + time::Duration::days(1),
        outcome: FireOutcome::Paused,
    };
    store.record_fire(&nightly(), &next).unwrap();
    assert_eq!(store.last_fire(&nightly()).unwrap(), Some(next));
}

fn a_fire_refused_for_a_busy_cluster_records_nothing(place: Place) {
    let store = place.open().unwrap();
    store
        .create_run(crate::common::new_run("logs"), None)
        .unwrap();
    let fire = datetime!(2026-11-28 01:00 UTC);
    let busy = store.create_fired_run(crate::common::new_run("logs"), &nightly(), fire);
    assert!(matches!(busy, Err(StoreError::Locked { .. })), "{busy:?}");
    assert_eq!(store.last_fire(&nightly()).unwrap(), None);
}

fn standing(id: StandingId) -> StandingApproval {
    StandingApproval {
        id,
        schedule: nightly(),
        digest: crate::common::restart_plan("logs").digest(),
        command: "/indices prune cluster:logs".to_owned(),
        bounds: Bounds {
            max_indices: 10,
            min_age_days: RetentionDays::parse("30").unwrap(),
            prefix: None,
            max_total_bytes: None,
        },
        asked_by: crate::common::alice(),
        asked_at: datetime!(2026-11-27 09:00 UTC),
        state: StandingState::Asked {
            expires_at: datetime!(2026-11-28 09:00 UTC),
        },
    }
}

fn pauses_standing_approvals_and_quiet_fires_are_kept_with_their_audit(place: Place) {
    let store = place.open().unwrap();
    let bob = crate::common::speaking(crate::common::bob());
    let pause = Pause {
        by: crate::common::bob(),
        at: datetime!(2026-11-27 10:00 UTC),
    };
    assert_eq!(
        store.set_pause(&nightly(), Some(&pause), &bob).unwrap(),
        None
    );
    // The scheduler's first look is recorded but not audited; a fire while paused is both.
    let armed = FireRecord {
        at: datetime!(2026-11-27 01:00 UTC),
        outcome: FireOutcome::Armed,
    };
    store.record_fire(&nightly(), &armed).unwrap();
    let paused = FireRecord {
        at: datetime!(2026-11-28 01:00 UTC),
        outcome: FireOutcome::Paused,
    };
    store.record_fire(&nightly(), &paused).unwrap();
    assert!(matches!(
        store.record_fire(&nightly(), &armed),
        Err(StoreError::AlreadyFired { .. })
    ));
    let refused: Result<_, UpdateError<&str>> =
        store.create_standing(&bob, |_| Err("no schedule nightly-prune"));
    assert!(matches!(refused, Err(UpdateError::Refused(_))));
    let asked = store
        .create_standing(&bob, |id| Ok::<_, ()>(standing(id)))
        .unwrap();
    assert_eq!(asked.id, StandingId::new(1), "a refusal takes no id");
    let voided = StandingState::Voided {
        at: datetime!(2026-11-27 11:00 UTC),
    };
    let updated = store
        .update_standing(asked.id, &bob, |standing| {
            standing.state = voided.clone();
            Ok::<_, ()>(Some("voided".to_owned()))
        })
        .unwrap();
    // A change with nothing to record writes nothing.
    store
        .update_standing(asked.id, &bob, |standing| {
            standing.command = "ignored".to_owned();
            Ok::<_, ()>(None)
        })
        .unwrap();
    assert!(matches!(
        store.update_standing(StandingId::new(9), &bob, |_| Ok::<_, ()>(None)),
        Err(UpdateError::Store(StoreError::NoStanding { .. }))
    ));
    drop(store);

    let store = place.open().unwrap();
    assert_eq!(store.pause(&nightly()).unwrap(), Some(pause.clone()));
    assert_eq!(store.last_fire(&nightly()).unwrap(), Some(paused));
    assert_eq!(store.standing_approvals().unwrap(), [updated]);
    assert_eq!(
        store.set_pause(&nightly(), None, &bob).unwrap(),
        Some(pause)
    );
    assert_eq!(store.pause(&nightly()).unwrap(), None);
    let changes: Vec<String> = store
        .audit()
        .unwrap()
        .into_iter()
        .map(|event| match event.event {
            AuditKind::ScheduleChanged { what, .. } => what,
            AuditKind::ScheduleFired { outcome, .. } => format!("fired: {outcome}"),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(changes.len(), 5, "{changes:?}");
    assert_eq!(changes[0], "paused");
    assert!(changes[1].starts_with("fired: "), "{changes:?}");
    assert!(
        changes[2].starts_with("asked for standing approval sa-1"),
        "{changes:?}"
    );
    assert_eq!(changes[3..], ["voided", "resumed"]);
}

crate::backends!(
    pauses_standing_approvals_and_quiet_fires_are_kept_with_their_audit,
    a_fire_creates_one_run_and_a_second_try_of_the_same_fire_creates_none,
    a_fire_refused_for_a_busy_cluster_records_nothing,
);
