//! Schedules end to end against the simulated cluster: a scheduled prune whose plan goes beyond
//! the bounds of the schedule's standing approval does not run under it. Its run waits for an
//! ordinary approval, its first note names the bound it exceeds, and nothing is deleted until an
//! approver approves; then exactly the planned indices are deleted.

use std::collections::BTreeSet;
use std::time::Duration;

use opsbot::config::ScheduleConfig;
use opsbot_commands::index::IndexName;
use opsbot_commands::name::{ClusterName, PersonName, RunId};
use opsbot_commands::people::{Actor, PersonRef, Roles, Surface};
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::retention::RetentionDays;
use opsbot_commands::run::{ChannelId, Outcome, RunState};
use opsbot_commands::schedule::{
    Bounds, CronSchedule, FireOutcome, FireRecord, Schedule, ScheduleName,
};
use opsbot_tests::{Harness, PATIENCE, Setup};
use time::OffsetDateTime;
use time::macros::datetime;

/// The fire: 03:00 UTC on the day of the simulated cluster's newest daily index.
const FIRE: OffsetDateTime = datetime!(2027-02-10 03:00 UTC);
/// How long before the fire the bot's clock starts: the test moves it on to the fire.
const LEAD: Duration = Duration::from_secs(60);

fn name() -> ScheduleName {
    ScheduleName::parse("nightly-prune").unwrap()
}

/// Prunes the `flog-` indices older than 30 days every night at 03:00 UTC; a standing approval
/// covers at most `max_indices` of them per run.
fn nightly(max_indices: u32) -> ScheduleConfig {
    let prefix = || Some(IndexName::parse_prefix("flog-").unwrap());
    ScheduleConfig(Schedule {
        name: name(),
        cron: CronSchedule::parse("0 3 * * *", "UTC").unwrap(),
        request: ProcedureRequest::IndicesPrune {
            cluster: ClusterName::parse("logs").unwrap(),
            older_than: RetentionDays::parse("30").unwrap(),
            prefix: prefix(),
        },
        channel: ChannelId("console".into()),
        bounds: Some(Bounds {
            max_indices,
            min_age_days: RetentionDays::parse("30").unwrap(),
            prefix: prefix(),
            max_total_bytes: None,
        }),
    })
}

#[tokio::test]
async fn a_scheduled_prune_beyond_its_bounds_waits_for_an_approval_and_then_deletes_its_plan() {
    // 60 daily indices are older than 30 days; the bounds admit 20.
    let h = Harness::start(Setup {
        days_of_indices: 90,
        sim: |config| opsbot_search_sim::SimConfig {
            today: FIRE.date(),
            ..config
        },
        schedules: vec![nightly(20)],
        // A minute to ask for and approve the standing approval before the fire.
        now: Some(FIRE - LEAD),
        ..Setup::default()
    })
    .await;

    // alice asks for a standing approval, bob approves it, at the console.
    let asked = h
        .slash("alice", "/schedule approve name:nightly-prune")
        .await;
    assert!(asked.text.starts_with("sa-1 asked"), "{}", asked.text);
    let digest = h.engine.schedule(&name()).unwrap().digest();
    // dave approves and does not operate: he may approve a standing approval, not ask for one.
    let dave = Actor {
        person: PersonRef {
            name: PersonName::parse("dave").unwrap(),
            via: Surface::Console {
                account: "dave".to_owned(),
            },
        },
        roles: Roles {
            operator: false,
            approver: true,
        },
    };
    let ask = h.say(&dave, "/schedule approve name:nightly-prune").await;
    assert_eq!(ask.text, "only operators may do that; ask an operator");
    assert!(ask.private);
    let approved = h
        .say(
            &dave,
            &format!(
                "/schedule approve name:nightly-prune digest:{} until:2027-03-01",
                digest.short()
            ),
        )
        .await;
    assert!(
        approved.text.starts_with("sa-1 approved by dave"),
        "{}",
        approved.text
    );

    let schedules = opsbot::scheduler::spawn(&h.engine).await.unwrap();
    // Only fires after the scheduler's first look count: armed, then moved on to the fire.
    last_fire(&h, "armed", |_| true).await;
    h.clock.skip(LEAD);
    let fired = last_fire(&h, "fired", |last| last.at == FIRE).await;
    let r1 = RunId::new(1);
    // The fire's record (and its audit entry) says why its run waits.
    assert_eq!(
        fired.outcome,
        FireOutcome::Started {
            run: r1,
            waits: Some(
                "waits for an approval: standing approval sa-1 does not cover this plan: it \
                 deletes 60 indices, more than the bound of 20 per run"
                    .to_owned()
            ),
        }
    );
    // Let the run's task do whatever it would before an approval.
    h.engine.idle().await;
    let run = h.run(r1);
    assert!(
        matches!(run.state, RunState::AwaitingApproval { .. }),
        "{:?}",
        run.state
    );
    assert!(run.approval.is_none());
    // The bound it exceeds is named where the run is shown, not only in its plan.
    let status = h.slash("alice", "/run status id:r-1").await;
    assert!(
        status.text.contains(
            "⏰ waits for an approval: standing approval sa-1 does not cover this plan: it \
             deletes 60 indices, more than the bound of 20 per run"
        ),
        "{}",
        status.text
    );
    let planned: BTreeSet<String> = run
        .plan()
        .deleted()
        .map(|index| index.name.to_string())
        .collect();
    assert_eq!(planned.len(), 60, "{planned:?}");
    assert_eq!(
        run.plan().notes()[0],
        "waits for an approval: standing approval sa-1 does not cover this plan: it deletes 60 \
         indices, more than the bound of 20 per run"
    );
    // It carries the standing approval it is not covered by, for the record.
    let grant = run.scheduled.as_ref().unwrap().standing.as_ref().unwrap();
    assert_eq!(grant.id.to_string(), "sa-1");
    assert!(h.deleted_names().is_empty(), "deleted before any approval");

    // The approver sees why in the plan, and approves it; an operator cannot.
    let preview = h.slash("bob", "/approve id:r-1").await;
    assert!(
        preview
            .text
            .contains("it deletes 60 indices, more than the bound of 20 per run"),
        "{}",
        preview.text
    );
    let refused = h.approve("alice", "r-1").await;
    assert!(refused.private, "{}", refused.text);
    h.engine.idle().await;
    assert!(h.deleted_names().is_empty(), "deleted on alice's word");
    let reply = h.approve("bob", "r-1").await;
    assert!(!reply.private, "{}", reply.text);
    let run = h.finished(r1).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{:#?}",
        run.steps()
    );

    let sent = h.deleted_names();
    let once: BTreeSet<String> = sent.iter().cloned().collect();
    assert_eq!(once.len(), sent.len(), "a name sent twice: {sent:?}");
    assert_eq!(once, planned);
    let gone: BTreeSet<String> = h.sim.state().deleted.into_iter().collect();
    assert_eq!(gone, planned);
    schedules.iter().for_each(tokio::task::JoinHandle::abort);
}

/// The schedule's last fire once it is `what`, as `done` tells; fails the test after
/// [`PATIENCE`].
async fn last_fire(h: &Harness, what: &str, done: impl Fn(&FireRecord) -> bool) -> FireRecord {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let last = h.engine.store().last_fire(&name()).unwrap();
        if let Some(last) = last.filter(|last| done(last)) {
            return last;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the schedule was never {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The replies of `/schedule pause` and of an approval with nothing asked for, word for word.
#[tokio::test]
async fn pausing_and_approving_nothing_are_answered_in_one_line_of_words() {
    let h = Harness::start(Setup {
        schedules: vec![nightly(20)],
        ..Setup::default()
    })
    .await;
    let paused = h.slash("alice", "/schedule pause name:nightly-prune").await;
    assert_eq!(
        paused.text,
        "schedule nightly-prune paused by alice: it does not fire until /schedule resume \
         name:nightly-prune"
    );
    let digest = h.engine.schedule(&name()).unwrap().digest();
    let nothing = h
        .slash(
            "bob",
            &format!(
                "/schedule approve name:nightly-prune digest:{} until:2099-01-01",
                digest.short()
            ),
        )
        .await;
    assert_eq!(
        nothing.text,
        "schedule nightly-prune has no standing approval waiting for a second person; ask for \
         one with /schedule approve name:nightly-prune"
    );
}

/// A fire whose target is busy starts as soon as the run holding it finishes, not at its next
/// look 30 s later.
#[tokio::test]
async fn a_fire_waiting_for_a_busy_target_starts_when_the_run_holding_it_ends() {
    let h = Harness::start(Setup {
        days_of_indices: 90,
        sim: |config| opsbot_search_sim::SimConfig {
            today: FIRE.date(),
            ..config
        },
        schedules: vec![nightly(100)],
        now: Some(FIRE - LEAD),
        ..Setup::default()
    })
    .await;
    // alice's own prune waits for an approval, and holds the cluster meanwhile.
    let held = h
        .start_run("alice", "/indices prune cluster:logs older_than_days:60")
        .await;
    let schedules = opsbot::scheduler::spawn(&h.engine).await.unwrap();
    last_fire(&h, "armed", |_| true).await;
    h.clock.skip(LEAD);
    // The fire is due and waits: nothing is recorded for it while the cluster is held.
    h.engine.idle().await;
    let waiting = h.engine.store().last_fire(&name()).unwrap().unwrap();
    assert_ne!(waiting.at, FIRE, "{waiting:?}");

    h.slash("alice", &format!("/reject id:{held} reason:\"not now\""))
        .await;
    let released_at = h.clock.now();
    let fired = last_fire(&h, "fired once the cluster was free", |last| {
        last.at == FIRE
    })
    .await;
    let FireOutcome::Started { run, .. } = fired.outcome else {
        panic!("{:?}", fired.outcome)
    };
    let waited = h.run(run).created_at - released_at;
    assert!(
        waited < time::Duration::seconds(10),
        "the fire started {waited} after the cluster was free"
    );
    // The audit goes by the bot's clock (here `--now`, in 2027), as the runs do.
    for event in h.engine.store().audit().unwrap() {
        assert!(
            event.at >= FIRE - LEAD && event.at < FIRE + LEAD,
            "{event:?}"
        );
    }
    schedules.iter().for_each(tokio::task::JoinHandle::abort);
}
