//! The engine's own transitions against the decisions people make: whichever lands first in
//! the store wins, whatever the engine read before.

use std::sync::Arc;

use opsbot_commands::cluster::Observation;
use opsbot_commands::maintenance::Announcement;
use opsbot_commands::name::{PersonName, RunId};
use opsbot_commands::people::{Actor, PersonRef, Roles, Surface};
use opsbot_commands::run::{ChannelId, Run, RunState};
use time::OffsetDateTime;

use super::*;
use crate::config::{ConsoleConfig, EngineConfig, ProgressConfig, RunbooksConfig, StoreConfig};

struct Silent;

impl ProgressSink for Silent {
    fn changed(&self, _: &Run) {}
    fn observe(&self, _: &Run, _: Observation) {}
    fn observed(&self, _: RunId) -> Option<Observation> {
        None
    }
    fn announce(&self, _: Announcement, _: ChannelId) {}
}

fn person(name: &str) -> PersonRef {
    PersonRef {
        name: PersonName::parse(name).unwrap(),
        via: Surface::Demo,
    }
}

/// An engine on a fresh store, and alice's run of one deletion waiting for approval.
async fn awaiting() -> (tempfile::TempDir, Engine, Run) {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        store: StoreConfig {
            path: dir.path().join("store"),
            retention: Default::default(),
        },
        engine: EngineConfig::default(),
        progress: ProgressConfig::default(),
        clusters: Vec::new(),
        clouds: Vec::new(),
        runbooks: RunbooksConfig::default(),
        people: Vec::new(),
        console: ConsoleConfig::default(),
        discord: None,
        metrics: Default::default(),
    };
    let store = Store::open(&config.store.path).unwrap();
    let engine = Engine::new(&config, store, Arc::new(Silent)).unwrap();
    let run = engine
        .writes()
        .create_run(crate::store_writes::tests::deletion, None)
        .await
        .unwrap();
    (dir, engine, run)
}

fn bob() -> Actor {
    Actor {
        person: person("bob"),
        roles: Roles {
            operator: true,
            approver: true,
        },
    }
}

#[tokio::test]
async fn an_expiry_that_lands_after_an_approval_leaves_it_approved() {
    let (_dir, engine, run) = awaiting().await;
    engine
        .approve(&bob(), run.id, run.digest.as_str())
        .await
        .unwrap();
    // The run task read the run before the approval and decided that it had expired.
    let late = OffsetDateTime::now_utc() + time::Duration::hours(1);
    drive::expire(&engine.0, run.id, late).await.unwrap();
    let stored = engine.run(run.id).unwrap();
    assert_eq!(stored.state, RunState::Running);
    assert!(stored.approval.is_some());
}

#[tokio::test]
async fn an_expiry_ends_a_request_nobody_decided() {
    let (_dir, engine, run) = awaiting().await;
    let now = OffsetDateTime::now_utc();
    drive::expire(&engine.0, run.id, now).await.unwrap();
    assert!(matches!(
        engine.run(run.id).unwrap().state,
        RunState::AwaitingApproval { .. }
    ));
    drive::expire(&engine.0, run.id, now + time::Duration::hours(1))
        .await
        .unwrap();
    assert_eq!(engine.run(run.id).unwrap().state, RunState::Expired);
    let refused = engine
        .approve(&bob(), run.id, run.digest.as_str())
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("already expired at"),
        "{refused}"
    );
}

#[tokio::test]
async fn an_expiry_after_a_cancel_or_rejection_changes_nothing() {
    for reject in [false, true] {
        let (_dir, engine, run) = awaiting().await;
        let reason = opsbot_commands::name::Reason::parse("no").unwrap();
        let decided = if reject {
            engine.reject(&bob(), run.id, &reason).await
        } else {
            engine.cancel(&bob(), run.id).await
        };
        decided.unwrap();
        let decided = engine.run(run.id).unwrap();
        drive::expire(
            &engine.0,
            run.id,
            OffsetDateTime::now_utc() + time::Duration::hours(1),
        )
        .await
        .unwrap();
        assert_eq!(engine.run(run.id).unwrap(), decided);
    }
}
