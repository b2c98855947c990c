use std::time::Duration;

use time::macros::datetime;

use super::*;
use crate::name::{ClusterName, RunId};
use crate::people::testing::person;
use crate::plan::ClusterStep;
use crate::plan::Plan;
use crate::request::ProcedureRequest;
use crate::run::{ChannelId, RunState};

const BOOKED_AT: OffsetDateTime = datetime!(2026-11-28 02:00:00 UTC);
const HOUR: Duration = Duration::from_secs(3600);
const LEADS: [Duration; 2] = [Duration::from_secs(24 * 3600), HOUR];

fn restart() -> Plan {
    Plan::new(
        ProcedureRequest::ClusterRestart {
            cluster: ClusterName::parse("logs").unwrap(),
        },
        Vec::<ClusterStep>::new(),
        vec![],
    )
    .unwrap()
}

/// alice's restart, booked at `now` for 2026-11-28 02:00 UTC.
fn booked(now: OffsetDateTime) -> Run {
    Run::booked(
        RunId::new(5),
        restart(),
        person("alice"),
        ChannelId("c".into()),
        now,
        time::Duration::minutes(30),
        BOOKED_AT,
    )
}

#[test]
fn a_time_needs_its_zone_and_may_leave_out_the_seconds() {
    assert_eq!(parse_at("2026-11-28T02:00Z").unwrap(), BOOKED_AT);
    assert_eq!(parse_at("2026-11-28T03:00+01:00").unwrap(), BOOKED_AT);
    assert_eq!(parse_at(" 2026-11-28T02:00:00Z ").unwrap(), BOOKED_AT);
    for bad in [
        "2026-11-28",
        "2026-11-28T02:00",
        "tomorrow",
        "2026-13-01T02:00Z",
        "",
    ] {
        let error = parse_at(bad).unwrap_err().to_string();
        assert!(error.contains("2026-11-28T02:00Z"), "{bad}: {error}");
    }
}

#[test]
fn a_booked_time_must_be_ahead_and_within_the_horizon() {
    let now = datetime!(2026-11-24 10:00:00 UTC);
    let horizon = Duration::from_secs(30 * 24 * 3600);
    assert_eq!(check(BOOKED_AT, now, horizon), Ok(()));
    let past = check(now - time::Duration::minutes(1), now, horizon).unwrap_err();
    assert!(past.to_string().contains("is not ahead"), "{past}");
    assert!(check(now, now, horizon).is_err(), "now is not ahead");
    let far = check(now + time::Duration::days(31), now, horizon).unwrap_err();
    assert_eq!(
        far.to_string(),
        "2026-12-25 10:00 UTC is more than 30 days ahead, the furthest a run may be booked; \
         book it closer to the time"
    );
}

#[test]
fn a_booked_run_holds_no_lock_and_waits_for_its_time() {
    let run = booked(datetime!(2026-11-24 10:00:00 UTC));
    assert_eq!(
        run.state,
        RunState::Booked,
        "a plan without a destructive step"
    );
    assert!(run.is_ahead());
    assert!(!run.holds_lock());
    assert_eq!(run.approved_state(), RunState::Booked);
    assert_eq!(run.inconsistency(), None);
    let mut reached = run.clone();
    reached.booking = reached.booking.map(|b| Booking {
        reached: Some(BOOKED_AT),
        ..b
    });
    assert_eq!(
        reached.inconsistency().as_deref(),
        Some("it is booked but has no booked time ahead")
    );
    reached.state = RunState::Running;
    assert!(reached.holds_lock());
    assert_eq!(run.started_at(), run.created_at);
    assert_eq!(
        reached.started_at(),
        BOOKED_AT,
        "a booked run counts from its time"
    );
    assert_eq!(reached.inconsistency(), None);
}

#[test]
fn reminders_come_at_their_leads_each_under_its_own_key() {
    let run = booked(datetime!(2026-11-24 10:00:00 UTC));
    let key = |now| reminder_due(&run, &LEADS, now).map(|a| a.key);
    assert_eq!(key(datetime!(2026-11-27 01:59:59 UTC)), None);
    assert_eq!(
        next_wake(&run, &LEADS, datetime!(2026-11-25 00:00:00 UTC)),
        Some(datetime!(2026-11-27 02:00:00 UTC))
    );
    let day = key(datetime!(2026-11-27 02:00:00 UTC)).unwrap();
    assert_eq!(key(datetime!(2026-11-28 00:59:00 UTC)), Some(day.clone()));
    let hour = key(datetime!(2026-11-28 01:00:00 UTC)).unwrap();
    assert_ne!(day, hour);
    assert!(hour.len() <= 25, "a Discord nonce: {hour}");
    assert_eq!(
        next_wake(&run, &LEADS, datetime!(2026-11-28 01:00:00 UTC)),
        Some(BOOKED_AT)
    );
    assert_eq!(key(BOOKED_AT), None, "the time itself is no reminder");
    let text = reminder_due(&run, &LEADS, datetime!(2026-11-28 01:30:00 UTC))
        .unwrap()
        .text;
    assert_eq!(
        text,
        "⏰ in 30m00s: /cluster restart cluster:logs (r-5), booked by alice for 2026-11-28 02:00 UTC"
    );
}

#[test]
fn a_reminder_whose_moment_passed_before_the_booking_is_never_sent() {
    // Booked ten hours ahead: the 24-hour reminder would come before the booking.
    let run = booked(datetime!(2026-11-27 16:00:00 UTC));
    assert_eq!(
        reminder_due(&run, &LEADS, datetime!(2026-11-27 16:00:01 UTC)),
        None
    );
    assert_eq!(
        next_wake(&run, &LEADS, datetime!(2026-11-27 16:00:01 UTC)),
        Some(datetime!(2026-11-28 01:00:00 UTC))
    );
}

#[test]
fn an_end_date_is_a_date_at_midnight_or_a_time_read_as_a_booked_time_is() {
    use crate::schedule::parse_date;
    assert_eq!(
        parse_date("2027-02-01").unwrap(),
        datetime!(2027-02-01 00:00 UTC)
    );
    assert_eq!(
        parse_date("2027-02-01T01:00+01:00").unwrap(),
        datetime!(2027-02-01 00:00 UTC)
    );
    assert_eq!(
        parse_date("2027-02-01T00:00:00Z").unwrap(),
        datetime!(2027-02-01 00:00 UTC)
    );
    assert!(
        parse_date("2027-02-01T00:00").is_err(),
        "a time needs its zone"
    );
}
