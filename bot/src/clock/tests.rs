//! The clock: a simulated one moves with tokio's time and jumps when skipped, waking whatever
//! sleeps on it; the system's sleeps as tokio does and reads the system's time.

use std::time::Duration;

use time::macros::datetime;

use super::*;

/// Longer than any of these tests may take: a sleep the skip did not wake fails the test.
const HOUR: Duration = Duration::from_secs(3600);
/// The real time a woken sleeper gets to finish in.
const PROMPTLY: Duration = Duration::from_secs(5);

#[tokio::test(start_paused = true)]
async fn a_simulated_clock_moves_with_tokio_time_and_sleeps_to_the_instant() {
    let clock = Clock::starting_at(datetime!(2026-11-24 01:59 UTC));
    clock.sleep_until(datetime!(2026-11-24 05:00 UTC)).await;
    assert_eq!(clock.now(), datetime!(2026-11-24 05:00 UTC));
    // A time already past returns at once.
    clock.sleep_until(datetime!(2026-11-24 04:00 UTC)).await;
    assert_eq!(clock.now(), datetime!(2026-11-24 05:00 UTC));
}

/// In real time (as the end-to-end harness runs): sleeps, a sleep to a time and both timeouts
/// started before a skip all end at the skip, and the clock's readings jump by it.
#[tokio::test]
async fn a_skip_wakes_every_sleep_and_timeout_on_the_clock() {
    let start = datetime!(2026-11-24 01:59 UTC);
    let simulated = SimulatedClock::starting_at(start);
    let clock = simulated.clock();
    let (now, instant) = (clock.now(), clock.instant());
    let sleeper = tokio::spawn({
        let clock = clock.clone();
        async move { clock.sleep(HOUR).await }
    });
    let until = tokio::spawn({
        let clock = clock.clone();
        async move { clock.sleep_until(start + time::Duration::days(2)).await }
    });
    let timeout = tokio::spawn({
        let clock = clock.clone();
        async move { clock.timeout(HOUR, std::future::pending::<()>()).await }
    });
    let timeout_at = tokio::spawn({
        let clock = clock.clone();
        async move {
            let at = start + time::Duration::days(2);
            clock.timeout_at(at, std::future::pending::<()>()).await
        }
    });
    // Not before the skip: the tasks park on the clock.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!sleeper.is_finished() && !until.is_finished());
    simulated.skip(2 * 24 * HOUR);
    let woken = async {
        sleeper.await.unwrap();
        until.await.unwrap();
        (timeout.await.unwrap(), timeout_at.await.unwrap())
    };
    let timed_out = tokio::time::timeout(PROMPTLY, woken).await;
    assert_eq!(timed_out, Ok((None, None)), "the skip woke every waiter");
    assert!(clock.now() - now >= time::Duration::days(2));
    assert!(clock.instant() - instant >= 2 * 24 * HOUR);
}

/// A skip shorter than a sleep leaves it asleep, and what a timeout waits for still wins.
#[tokio::test]
async fn a_short_skip_leaves_a_longer_sleep_and_work_that_ends_first_wins() {
    let simulated = SimulatedClock::starting_at(datetime!(2026-11-24 01:59 UTC));
    let clock = simulated.clock();
    let sleeper = tokio::spawn({
        let clock = clock.clone();
        async move { clock.sleep(HOUR).await }
    });
    // The sleeper reads its deadline first.
    tokio::time::sleep(Duration::from_millis(50)).await;
    simulated.skip(HOUR / 2);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!sleeper.is_finished(), "half an hour is not an hour");
    simulated.skip(HOUR / 2);
    tokio::time::timeout(PROMPTLY, sleeper)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(clock.timeout(HOUR, async { 7 }).await, Some(7));
}

/// The system's clock: tokio's sleeps (here on the paused clock, to the nanosecond) and the
/// system's wall time.
#[tokio::test(start_paused = true)]
async fn the_system_clock_sleeps_as_tokio_does_and_reads_the_system_time() {
    let clock = Clock::system();
    let wall = OffsetDateTime::now_utc();
    assert!((clock.now() - wall).abs() < time::Duration::seconds(1));
    let before = tokio::time::Instant::now();
    assert_eq!(clock.instant(), before);
    clock.sleep(HOUR).await;
    assert_eq!(before.elapsed(), HOUR);
    assert_eq!(
        clock.timeout(HOUR, std::future::pending::<()>()).await,
        None
    );
    assert_eq!(before.elapsed(), 2 * HOUR);
    assert_eq!(clock.timeout(HOUR, async { 7 }).await, Some(7));
    assert_eq!(before.elapsed(), 2 * HOUR);
}
