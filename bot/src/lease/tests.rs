//! The lease as two bots on one PostgreSQL see it: one active, the other standing by, and a
//! takeover when the active one stops renewing. The lease's expiry is the database's clock,
//! which no test can pause: these take the lease's real length (1.3 s).

use std::time::Duration;

use opsbot_state::{PgConfig, Store, StoreError};

use super::*;

fn timing() -> Timing {
    Timing::within(Duration::from_secs(2))
}

/// A fresh schema on the test process's PostgreSQL; every handle opened on it shares it.
fn shared_store() -> impl Fn() -> Store {
    shared_schema().0
}

/// [`shared_store`], and a plain connection to the same database and schema, to lock rows as a
/// paused instance's open transaction would.
fn shared_schema() -> (impl Fn() -> Store, String, String) {
    let server = opsbot_tmp_postgres::shared().unwrap();
    let schema = format!("lease_{}", uuid::Uuid::new_v4().simple());
    let url = server.url("postgres");
    let open = {
        let (url, schema) = (url.clone(), schema.clone());
        move || {
            let mut config = PgConfig::new(url.clone());
            config.schema = schema.clone();
            Store::open_postgres(&config).unwrap()
        }
    };
    (open, url, schema)
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

/// The lease row locked by a paused instance's transaction (a VM stopped mid-write) holds the
/// standby's ask up for longer than a tenure: the lease it is then given is asked again at
/// once, not taken as already lapsed (which made the new active instance give up at start-up).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_given_after_a_long_wait_is_asked_again_and_held() {
    let (open, url, schema) = shared_schema();
    let (a, b) = (open(), open());
    let (ta, tb) = (Tenure::default(), Tenure::default());
    let Role::Active { epoch: first, .. } = take(&a, "a", timing(), &ta).await else {
        panic!("a takes a free lease");
    };
    let (mut client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let paused = client.transaction().await.unwrap();
    paused
        .batch_execute(&format!("SELECT * FROM \"{schema}\".lease FOR UPDATE"))
        .await
        .unwrap();
    let asking = tokio::spawn({
        let (b, tb) = (b.clone(), tb.clone());
        async move { ask(&b, "b", timing(), &tb).await }
    });
    // Held well past a's lease and past a whole tenure of b's ask.
    tokio::time::sleep(timing().ttl + timing().ttl).await;
    paused.rollback().await.unwrap();
    let role = asking
        .await
        .unwrap()
        .unwrap()
        .expect("b is given the lease");
    assert!(
        matches!(role, Role::Active { epoch, .. } if epoch > first),
        "{role:?}"
    );
    assert!(!role.lapsed(), "{role:?}");
    assert!(tb.check().is_ok(), "b may act under the lease it holds");
}
