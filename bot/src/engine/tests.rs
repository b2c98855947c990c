//! The engine's own transitions against the decisions people make: whichever lands first in
//! the store wins, whatever the engine read before.

use std::sync::Arc;

use opsbot_commands::cluster::Observation;
use opsbot_commands::maintenance::Announcement;
use opsbot_commands::name::PersonName;
use opsbot_commands::people::{Actor, PersonRef, Roles, Surface};
use opsbot_commands::run::{ChannelId, Outcome, Run, RunState};
use time::OffsetDateTime;

use super::*;
use crate::config::{ConsoleConfig, EngineConfig, ProgressConfig, RunbooksConfig, StoreConfig};

struct Silent;

impl ProgressSink for Silent {
    fn changed(&self, _: &Run) {}
    fn observe(&self, _: &Run, _: Observation) {}
    fn observed(&self, _: &Run) -> Option<Observation> {
        None
    }
    fn announce(&self, _: Announcement, _: ChannelId) {}
}

impl crate::metrics::Backlog for Silent {}

fn person(name: &str) -> PersonRef {
    PersonRef {
        name: PersonName::parse(name).unwrap(),
        via: Surface::Demo,
    }
}

/// A config with no targets (nothing here plans) and `schedules`, its store in `dir`: the
/// engine and scheduler tests' own.
pub(crate) fn config(
    dir: &tempfile::TempDir,
    schedules: Vec<crate::config::ScheduleConfig>,
) -> Config {
    Config {
        store: StoreConfig::sled(dir.path().join("store")),
        engine: EngineConfig::default(),
        progress: ProgressConfig::default(),
        clusters: Vec::new(),
        clouds: Vec::new(),
        runbooks: RunbooksConfig::default(),
        people: Vec::new(),
        console: ConsoleConfig::default(),
        discord: None,
        slack: None,
        matrix: None,
        metrics: Default::default(),
        schedules,
        scheduling: Default::default(),
        approval: Default::default(),
    }
}

/// An engine on a fresh store, and alice's run of one deletion waiting for approval.
async fn awaiting() -> (tempfile::TempDir, Engine, Run) {
    let dir = tempfile::tempdir().unwrap();
    let config = config(&dir, Vec::new());
    let store = config.store.open().unwrap();
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
    assert_eq!(
        engine.run(run.id).unwrap().outcome(),
        Some(&Outcome::Expired)
    );
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

mod standing {
    use opsbot_commands::index::IndexName;
    use opsbot_commands::name::ClusterName;
    use opsbot_commands::request::ProcedureRequest;
    use opsbot_commands::retention::RetentionDays;
    use opsbot_commands::schedule::{Bounds, CronSchedule, Schedule, ScheduleName, StandingState};

    use super::*;
    use crate::config::ScheduleConfig;

    fn nightly(max_indices: u32) -> ScheduleConfig {
        ScheduleConfig(Schedule {
            name: ScheduleName::parse("nightly-prune").unwrap(),
            cron: CronSchedule::parse("0 2 * * *", "Europe/Berlin").unwrap(),
            request: ProcedureRequest::IndicesPrune {
                cluster: ClusterName::parse("logs").unwrap(),
                older_than: RetentionDays::parse("30").unwrap(),
                prefix: Some(IndexName::parse_prefix("flog-").unwrap()),
            },
            channel: ChannelId("console".into()),
            bounds: Some(Bounds {
                max_indices,
                min_age_days: RetentionDays::parse("30").unwrap(),
                prefix: Some(IndexName::parse_prefix("flog-").unwrap()),
                max_total_bytes: None,
            }),
        })
    }

    fn alice() -> Actor {
        Actor {
            person: person("alice"),
            roles: Roles {
                operator: true,
                approver: true,
            },
        }
    }

    fn engine(dir: &tempfile::TempDir, max_indices: u32) -> Engine {
        let config = config(dir, vec![nightly(max_indices)]);
        let store = config.store.open().unwrap();
        Engine::new(&config, store, Arc::new(Silent)).unwrap()
    }

    fn name() -> ScheduleName {
        ScheduleName::parse("nightly-prune").unwrap()
    }

    #[tokio::test]
    async fn the_asker_cannot_approve_and_a_second_approver_can() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(&dir, 20);
        let (asked, created) = engine.ask_standing(&alice(), &name()).await.unwrap();
        assert!(created);
        let until = Some(engine.clock().now() + time::Duration::days(30));
        let own = engine
            .approve_standing(&alice(), &name(), asked.digest.as_str(), until)
            .await
            .unwrap_err();
        assert_eq!(
            own.to_string(),
            "you asked for sa-1; another approver must approve it"
        );
        let no_until = engine
            .approve_standing(&bob(), &name(), asked.digest.as_str(), None)
            .await
            .unwrap_err();
        assert!(no_until.to_string().contains("needs until:"), "{no_until}");
        let approved = engine
            .approve_standing(&bob(), &name(), asked.digest.as_str(), until)
            .await
            .unwrap();
        assert!(matches!(approved.state, StandingState::Approved { .. }));
        // Asking again shows the approval in force rather than a second request.
        let (again, created) = engine.ask_standing(&alice(), &name()).await.unwrap();
        assert!(!created);
        assert_eq!(again.id, approved.id);
        // The refusal was audited.
        let audit = engine
            .store()
            .audit_page(
                opsbot_state::AuditQuery {
                    since: None,
                    run: None,
                },
                opsbot_commands::page::Page::FIRST,
                50,
            )
            .unwrap();
        assert!(
            audit.items.iter().any(|e| e
                .event
                .describe()
                .contains("approved standing approval sa-1")),
            "{:?}",
            audit.items
        );
    }

    #[tokio::test]
    async fn a_change_of_the_bounds_in_the_config_voids_the_standing_approval() {
        let dir = tempfile::tempdir().unwrap();
        {
            let engine = engine(&dir, 20);
            let (asked, _) = engine.ask_standing(&alice(), &name()).await.unwrap();
            let until = Some(engine.clock().now() + time::Duration::days(30));
            engine
                .approve_standing(&bob(), &name(), asked.digest.as_str(), until)
                .await
                .unwrap();
            // The same config again voids nothing.
            assert!(engine.void_changed_standing().await.unwrap().is_empty());
        }
        opsbot_state::wait_until_free(&dir.path().join("store")).unwrap();
        let engine = engine(&dir, 50);
        let voided = engine.void_changed_standing().await.unwrap();
        assert_eq!(voided.len(), 1);
        assert!(matches!(voided[0].state, StandingState::Voided { .. }));
        let now = engine.clock().now();
        assert_eq!(engine.live_standing(&name(), now).unwrap(), None);
    }
}

/// A run task parked on an approval's expiry wakes when the clock is moved past it: the test
/// skips half an hour instead of waiting for it.
#[tokio::test]
async fn a_parked_approval_expires_when_the_clock_is_skipped_past_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(&dir, Vec::new());
    let store = config.store.open().unwrap();
    let clock = crate::clock::SimulatedClock::starting_at(OffsetDateTime::now_utc());
    let engine = Engine::with_clock(&config, store, Arc::new(Silent), clock.clock()).unwrap();
    let run = engine
        .writes()
        .create_run(crate::store_writes::tests::deletion, None)
        .await
        .unwrap();
    engine.resume_all().await.unwrap();
    // Parked: the task looked at the run and waits for an approver.
    tokio::time::timeout(std::time::Duration::from_secs(5), engine.idle())
        .await
        .unwrap();
    assert!(matches!(
        engine.run(run.id).unwrap().state,
        RunState::AwaitingApproval { .. }
    ));
    clock.skip(std::time::Duration::from_secs(31 * 60));
    let expired = async {
        while engine.run(run.id).unwrap().outcome() != Some(&Outcome::Expired) {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(5), expired)
        .await
        .expect("the skip woke the parked run, which expired");
}
