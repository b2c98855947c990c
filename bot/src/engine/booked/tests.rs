//! Reminders of a booked run across restarts of the bot, on a clock the test moves: each
//! reminder reaches the chat once, whichever life of the bot is up at its moment.

use std::sync::Arc;

use opsbot_commands::audit::AuditKind;
use opsbot_commands::name::{ClusterName, PersonName, RunId};
use opsbot_commands::people::{PersonRef, Surface};
use opsbot_commands::plan::{ClusterSafe, ClusterStep, Plan};
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::run::{ChannelId, Run, RunState};
use time::OffsetDateTime;
use time::macros::datetime;

use crate::clock::Clock;
use crate::engine::Engine;
use crate::progress::Publisher;
use crate::progress::script::Script;

const BOOKED_AT: OffsetDateTime = datetime!(2026-11-28 02:00 UTC);

/// alice's report on `logs`, booked at `now` (nothing destructive: booked at once).
fn booked(now: OffsetDateTime) -> impl FnOnce(opsbot_commands::name::RunId) -> Run {
    move |id| {
        let plan = Plan::new(
            ProcedureRequest::ClusterRestart {
                cluster: ClusterName::parse("logs").unwrap(),
            },
            vec![ClusterStep::Safe(ClusterSafe::Report)],
            Vec::new(),
        )
        .unwrap();
        let alice = PersonRef {
            name: PersonName::parse("alice").unwrap(),
            via: Surface::Demo,
        };
        let channel = ChannelId("console".into());
        Run::booked(
            id,
            plan,
            alice,
            channel,
            now,
            time::Duration::minutes(30),
            BOOKED_AT,
        )
    }
}

/// The store, once the previous life has let it go: its last writes may still be finishing on
/// their thread for a moment after its runtime is gone (sled admits one holder at a time).
fn open_when_free(config: &crate::config::StoreConfig) -> opsbot_state::Store {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        match config.open() {
            Err(error)
                if std::time::Instant::now() < deadline
                    && matches!(
                        error.downcast_ref(),
                        Some(opsbot_state::StoreError::InUse { .. })
                    ) =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return other.unwrap(),
        }
    }
}

/// One life of the bot, from `start` to `end` on its clock: it opens the store, books the run
/// if `book`, resumes every run, and ends with its runtime (every task dropped, as a killed bot
/// loses them). Returns the announcements its chat got, as (key, text).
fn life(
    dir: &tempfile::TempDir,
    start: OffsetDateTime,
    end: OffsetDateTime,
    book: bool,
) -> Vec<(String, String)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let config = crate::engine::tests::config(dir, Vec::new());
        let store = open_when_free(&config.store);
        let chat = Script::recording();
        let clock = Clock::starting_at(start);
        let publisher = Arc::new(Publisher::with_clock(
            Arc::clone(&chat),
            store.clone(),
            config.progress,
            clock.clone(),
        ));
        let engine = Engine::with_clock(&config, store, publisher, clock.clone()).unwrap();
        if book {
            let run = engine
                .writes()
                .create_run(booked(start), None)
                .await
                .unwrap();
            assert_eq!(run.state, RunState::Booked);
        }
        engine.resume_all().await.unwrap();
        clock.sleep_until(end).await;
        chat.calls()
            .into_iter()
            .filter(|call| call.kind == "announce" && call.delivered)
            .map(|call| (call.target, call.text))
            .collect()
    })
}

#[test]
fn each_reminder_reaches_the_chat_once_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    // Booked on Thursday noon; up until 03:00 on Friday, past the 24-hour reminder.
    let first = life(
        &dir,
        datetime!(2026-11-26 12:00 UTC),
        datetime!(2026-11-27 03:00 UTC),
        true,
    );
    let texts: Vec<&str> = first.iter().map(|(_, text)| text.as_str()).collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(
        texts[0].starts_with("📅 maintenance booked by alice for 2026-11-28 02:00 UTC"),
        "{texts:?}"
    );
    assert!(
        texts[1].starts_with("⏰ in 24h00m: /cluster restart cluster:logs (r-1)"),
        "{texts:?}"
    );

    // Restarted an hour later: the 24-hour reminder is still the latest one due, and it was sent.
    let second = life(
        &dir,
        datetime!(2026-11-27 04:00 UTC),
        datetime!(2026-11-27 06:00 UTC),
        false,
    );
    assert_eq!(second, Vec::new(), "nothing is sent twice");

    // Down at the 1-hour mark, up again at 01:30: the 1-hour reminder comes late, once, saying
    // how long is really left.
    let third = life(
        &dir,
        datetime!(2026-11-28 01:30 UTC),
        datetime!(2026-11-28 01:50 UTC),
        false,
    );
    let texts: Vec<&str> = third.iter().map(|(_, text)| text.as_str()).collect();
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert!(
        texts[0].starts_with("⏰ in 30m00s: /cluster restart cluster:logs (r-1)"),
        "{texts:?}"
    );

    let keys: std::collections::BTreeSet<&str> = first
        .iter()
        .chain(&third)
        .map(|(key, _)| key.as_str())
        .collect();
    assert_eq!(keys.len(), 3, "three announcements, three keys: {keys:?}");

    // Each one delivered is in the audit log, under the run, at its time on the bot's clock.
    let config = crate::engine::tests::config(&dir, Vec::new());
    let audited: Vec<(Option<RunId>, OffsetDateTime, String)> = open_when_free(&config.store)
        .audit()
        .unwrap()
        .into_iter()
        .filter_map(|entry| match entry.event {
            AuditKind::Announced { text } => Some((entry.run, entry.at, text)),
            _ => None,
        })
        .collect();
    let delivered: Vec<&str> = first
        .iter()
        .chain(&third)
        .map(|(_, t)| t.as_str())
        .collect();
    let texts: Vec<&str> = audited.iter().map(|(_, _, text)| text.as_str()).collect();
    assert_eq!(texts, delivered);
    assert!(
        audited
            .iter()
            .all(|(run, _, _)| *run == Some(RunId::new(1)))
    );
    let reminded = audited[1].1;
    assert!(
        (datetime!(2026-11-27 02:00 UTC)..datetime!(2026-11-27 03:00 UTC)).contains(&reminded),
        "{reminded}"
    );
}
