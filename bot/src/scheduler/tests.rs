//! The scheduler's loop on tokio's paused clock, over days: a nightly schedule in a zone with
//! daylight saving time fires once a day, at the instants its cron expression names, also on the
//! night that skips its time and on the night that repeats it. No backend: the schedule's cluster
//! is not configured, so each fire is planned, fails, and is recorded and announced as failed,
//! which is all the loop needs.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use opsbot_commands::audit::AuditKind;
use opsbot_commands::cluster::Observation;
use opsbot_commands::index::IndexName;
use opsbot_commands::maintenance::Announcement;
use opsbot_commands::name::ClusterName;
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::retention::RetentionDays;
use opsbot_commands::run::{ChannelId, Run};
use opsbot_commands::schedule::{Bounds, CronSchedule, FireOutcome, Schedule, ScheduleName};
use time::OffsetDateTime;
use time::macros::datetime;

use crate::clock::Clock;
use crate::config::{Config, ScheduleConfig};
use crate::engine::Engine;
use crate::progress::ProgressSink;

/// The announcements made, each with the time the engine's clock read then.
struct Announced {
    clock: Clock,
    said: Mutex<Vec<(OffsetDateTime, String)>>,
}

impl crate::metrics::Backlog for Announced {}

impl ProgressSink for Announced {
    fn changed(&self, _: &Run) {}
    fn observe(&self, _: &Run, _: Observation) {}
    fn observed(&self, _: &Run) -> Option<Observation> {
        None
    }
    fn announce(&self, announcement: Announcement, _: ChannelId) {
        // Discord refuses a longer nonce, and the key is sent as one.
        assert!(
            announcement.key.len() <= Announcement::MAX_KEY,
            "{}",
            announcement.key
        );
        self.said
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((self.clock.now(), announcement.text));
    }
}

/// `30 2 * * *` in Berlin: a nightly prune of a cluster the config does not have.
fn nightly() -> ScheduleConfig {
    let prefix = || Some(IndexName::parse_prefix("flog-").unwrap());
    ScheduleConfig(Schedule {
        name: ScheduleName::parse("nightly-prune").unwrap(),
        cron: CronSchedule::parse("30 2 * * *", "Europe/Berlin").unwrap(),
        request: ProcedureRequest::IndicesPrune {
            cluster: ClusterName::parse("logs").unwrap(),
            older_than: RetentionDays::parse("30").unwrap(),
            prefix: prefix(),
        },
        channel: ChannelId("console".into()),
        bounds: Some(Bounds {
            max_indices: 20,
            min_age_days: RetentionDays::parse("30").unwrap(),
            prefix: prefix(),
            max_total_bytes: None,
        }),
    })
}

/// The fires the audit log recorded, oldest first: when each was due, and what came of it.
type Fired = Vec<(String, String)>;

/// What became of the fires while the scheduler ran from `start` for `days`: the fire times
/// the audit log recorded (oldest first), and the announcements with the time each was made.
async fn fires(start: OffsetDateTime, days: u64) -> (Vec<String>, Vec<(OffsetDateTime, String)>) {
    let run_for = Duration::from_secs(days * 24 * 60 * 60);
    let (fired, said) = fires_after(start, None, run_for, Vec::new()).await;
    (fired.into_iter().map(|(at, _)| at).collect(), said)
}

/// [`fires`], the scheduler running from `start` for `run_for`, on a store where a scheduler
/// last looked at `armed` (as a bot that ran then and was down since).
async fn fires_after(
    start: OffsetDateTime,
    armed: Option<OffsetDateTime>,
    run_for: Duration,
    clusters: Vec<crate::config::ClusterConfig>,
) -> (Fired, Vec<(OffsetDateTime, String)>) {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        clusters,
        ..crate::engine::tests::config(&dir, vec![nightly()])
    };
    let store = config.store.open().unwrap();
    let clock = Clock::starting_at(start);
    let sink = Arc::new(Announced {
        clock: clock.clone(),
        said: Mutex::default(),
    });
    let engine = Engine::with_clock(&config, store, sink.clone(), clock).unwrap();
    if let Some(at) = armed {
        let schedule = nightly().0;
        engine
            .record(&schedule, at, FireOutcome::Armed)
            .await
            .unwrap();
    }
    let tasks = super::spawn(&engine).await.unwrap();
    tokio::time::sleep(run_for).await;
    tasks.iter().for_each(tokio::task::JoinHandle::abort);
    let audit = engine
        .store()
        .audit_page(
            opsbot_state::AuditQuery::ALL,
            opsbot_commands::page::Page::FIRST,
            1000,
        )
        .unwrap();
    let fired = audit
        .items
        .into_iter()
        .rev()
        .filter_map(|event| match event.event {
            AuditKind::ScheduleFired {
                fire_at, outcome, ..
            } => Some((fire_at, outcome)),
            _ => None,
        })
        .collect();
    let said = std::mem::take(&mut *sink.said.lock().unwrap());
    (fired, said)
}

/// Each announcement's time and the fire's local time it names.
fn when(said: &[(OffsetDateTime, String)]) -> Vec<(OffsetDateTime, &str)> {
    said.iter()
        .map(|(at, text)| {
            let local = text
                .strip_prefix("⏰ schedule nightly-prune (")
                .and_then(|rest| rest.split(')').next())
                .unwrap_or_else(|| panic!("{text}"));
            (*at, local)
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_nightly_schedule_fires_once_right_after_the_spring_forward_gap() {
    // 2027-03-28: Berlin's clocks go from 02:00 CET to 03:00 CEST; 02:30 does not exist.
    let (fired, said) = fires(datetime!(2027-03-26 12:00 UTC), 5).await;
    assert_eq!(
        fired,
        [
            "2027-03-27 01:30 UTC",
            "2027-03-28 01:00 UTC",
            "2027-03-29 00:30 UTC",
            "2027-03-30 00:30 UTC",
            "2027-03-31 00:30 UTC"
        ]
    );
    // Each fire was made at its instant, on the clock, not a nap later.
    assert_eq!(
        when(&said),
        [
            (datetime!(2027-03-27 01:30 UTC), "2027-03-27 02:30 CET"),
            (datetime!(2027-03-28 01:00 UTC), "2027-03-28 03:00 CEST"),
            (datetime!(2027-03-29 00:30 UTC), "2027-03-29 02:30 CEST"),
            (datetime!(2027-03-30 00:30 UTC), "2027-03-30 02:30 CEST"),
            (datetime!(2027-03-31 00:30 UTC), "2027-03-31 02:30 CEST"),
        ]
    );
    assert!(
        said.iter()
            .all(|(_, text)| text.contains("failed: ") && text.contains("logs")),
        "{said:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_nightly_schedule_fires_once_on_the_night_its_time_happens_twice() {
    // 2027-10-31: Berlin's clocks go back from 03:00 CEST to 02:00 CET; 02:30 comes twice, at
    // 00:30 and 01:30 UTC. It fires at the first only.
    let (fired, said) = fires(datetime!(2027-10-29 12:00 UTC), 4).await;
    assert_eq!(
        fired,
        [
            "2027-10-30 00:30 UTC",
            "2027-10-31 00:30 UTC",
            "2027-11-01 01:30 UTC",
            "2027-11-02 01:30 UTC"
        ]
    );
    assert_eq!(
        when(&said),
        [
            (datetime!(2027-10-30 00:30 UTC), "2027-10-30 02:30 CEST"),
            (datetime!(2027-10-31 00:30 UTC), "2027-10-31 02:30 CEST"),
            (datetime!(2027-11-01 01:30 UTC), "2027-11-01 02:30 CET"),
            (datetime!(2027-11-02 01:30 UTC), "2027-11-02 02:30 CET"),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn after_an_outage_the_fire_within_the_lateness_runs_and_only_older_ones_are_missed() {
    // The bot last looked on 1 February and comes back on the 3rd at 02:00 UTC: the fire of
    // the 2nd (01:30 UTC) is a day late, the one of the 3rd half an hour late, within the
    // default lateness of an hour.
    let (fired, _) = fires_after(
        datetime!(2027-02-03 02:00 UTC),
        Some(datetime!(2027-02-01 12:00 UTC)),
        Duration::from_secs(60 * 60),
        Vec::new(),
    )
    .await;
    let fired: Vec<(&str, &str)> = fired
        .iter()
        .map(|(at, outcome)| (at.as_str(), outcome.split(':').next().unwrap_or_default()))
        .collect();
    assert_eq!(
        fired,
        [
            ("2027-02-02 01:30 UTC", "missed"),
            ("2027-02-03 01:30 UTC", "failed")
        ]
    );
}

/// `logs` at a loopback port nobody listens on: every request is refused at once.
async fn silent_cluster() -> crate::config::ClusterConfig {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    crate::config::ClusterConfig {
        name: ClusterName::parse("logs").unwrap(),
        url,
        nodes: Vec::new(),
        node_control: crate::config::NodeControlConfig::Sim { url: None },
        tls: Default::default(),
        auth: None,
    }
}

#[tokio::test(start_paused = true)]
async fn a_fire_whose_cluster_does_not_answer_is_tried_again_until_the_lateness_then_reported_once()
{
    // Armed at 01:00 UTC; due at 01:30 UTC (02:30 in Berlin); the lateness is an hour.
    let start = datetime!(2027-02-10 01:00 UTC);
    let (fired, said) = fires_after(
        start,
        Some(start),
        Duration::from_secs(60 * 60),
        vec![silent_cluster().await],
    )
    .await;
    assert_eq!(fired, Vec::new(), "still trying at 02:00, nothing recorded");
    assert_eq!(said, Vec::new());

    let (fired, said) = fires_after(
        start,
        Some(start),
        Duration::from_secs(3 * 60 * 60),
        vec![silent_cluster().await],
    )
    .await;
    assert_eq!(fired.len(), 1, "{fired:?}");
    let (at, outcome) = &fired[0];
    assert_eq!(at, "2027-02-10 01:30 UTC");
    assert!(outcome.starts_with("failed: "), "{outcome}");
    assert!(
        outcome.contains("[scheduling] lateness after the fire"),
        "{outcome}"
    );
    assert_eq!(said.len(), 1, "told once: {said:?}");
    assert!(
        said[0].0 >= datetime!(2027-02-10 02:30 UTC),
        "not before the lateness: {said:?}"
    );
}
