//! The lease as two bots on one PostgreSQL see it: one active, the other standing by, and a
//! takeover when the active one stops renewing. The lease's expiry is the database's clock,
//! which no test can pause: these take the lease's real length (2 s).

use std::time::Duration;

use opsbot_state::{PgConfig, Store, StoreError};

use super::*;

fn timing() -> Timing {
    Timing::within(Duration::from_secs(3))
}

/// A fresh schema on the test process's PostgreSQL; every handle opened on it shares it.
fn shared_store() -> impl Fn() -> Store {
    let server = opsbot_tmp_postgres::shared().unwrap();
    let schema = format!("lease_{}", uuid::Uuid::new_v4().simple());
    let url = server.url("postgres");
    move || {
        let mut config = PgConfig::new(url.clone());
        config.schema = schema.clone();
        Store::open_postgres(&config).unwrap()
    }
}

#[test]
fn the_timing_leaves_room_for_a_standby_to_take_over_within_the_bound() {
    let timing = Timing::within(Duration::from_secs(15));
    assert_eq!(timing.ttl, Duration::from_secs(10));
    assert!(timing.ttl + timing.ask_every < Duration::from_secs(15));
    assert!(
        timing.renew_every * 3 < timing.ttl - timing.margin,
        "three renewals may fail"
    );
}

#[tokio::test(start_paused = true)]
async fn a_tenure_allows_acting_until_its_moment_then_refuses() {
    let tenure = Tenure::default();
    assert!(tenure.check().is_ok(), "alone on a sled store, always");
    tenure.set(Role::Active {
        holder: "a".into(),
        epoch: 3,
        until: Instant::now() + Duration::from_secs(5),
    });
    assert!(tenure.check().is_ok());
    tokio::time::advance(Duration::from_secs(6)).await;
    let refused = tenure.check().unwrap_err();
    assert!(matches!(refused, StoreError::NotActive { .. }));
    assert!(refused.to_string().contains("epoch 3"), "{refused}");
    tenure.set(Role::Standby { active: None });
    assert!(tenure.check().is_err(), "a standby never acts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standby_takes_over_when_the_active_one_stops_renewing_and_the_old_one_steps_down() {
    let open = shared_store();
    let (a, b) = (open(), open());
    let (ta, tb) = (Tenure::default(), Tenure::default());

    let Role::Active { epoch: first, .. } = take(&a, "a", timing(), &ta).await else {
        panic!("a takes a free lease");
    };
    assert!(ta.check().is_ok());
    // b stands by while a renews.
    let standby = tokio::spawn({
        let (b, tb) = (b.clone(), tb.clone());
        async move { take(&b, "b", timing(), &tb).await }
    });
    let keeping = tokio::spawn(keep(a.clone(), "a".into(), timing(), ta.clone()));
    tokio::time::sleep(timing().ttl * 2).await;
    assert!(!standby.is_finished(), "b took the lease a was renewing");
    assert!(matches!(tb.role(), Role::Standby { active: Some(ref l) } if l.holder == "a"));

    // a stops renewing (a paused VM): b takes over with a newer epoch.
    keeping.abort();
    let Role::Active { epoch: second, .. } = standby.await.unwrap() else {
        panic!("b takes the lease");
    };
    assert!(second > first);

    // a wakes up: its tenure has lapsed, its writes are refused, and it steps down.
    assert!(ta.check().is_err(), "a's tenure lapsed while it was away");
    let why = keep(a.clone(), "a".into(), timing(), ta.clone()).await;
    assert!(why.contains("b took over"), "{why}");
    assert!(matches!(ta.role(), Role::SteppedDown { .. }));
    let write = crate::store_writes::StoreWrites::new(a)
        .set_maintenance_notice(None)
        .await;
    assert!(matches!(write, Err(StoreError::Fenced { .. })), "{write:?}");
}
