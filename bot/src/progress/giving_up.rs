//! Progress against a transport that fails as a chat platform does for good: a deleted message,
//! a channel the bot may not use, a refused request. Each is acted on, and never hammered.

use std::sync::atomic::AtomicBool;

use super::script::Script;
use super::tests::{QUICK, finish, new_run, store};
use super::*;

fn forbidden(channel: &str) -> ChatError {
    ChatError::Forbidden(Forbidden {
        channel: ChannelId(channel.into()),
        missing: "Send Messages".into(),
    })
}

/// Sends `n` distinct observations of `run`, each waited for, so that each is a send.
async fn observe_many(publisher: &Publisher<Arc<Script>>, run: &Run, n: u64) {
    for i in 0..n {
        publisher.observe(
            run,
            Observation {
                unassigned_shards: Some(i),
                ..Observation::default()
            },
        );
        publisher.flushed().await;
    }
}

/// Publishes a new run through `script`: its first message, `observations` distinct
/// observations (each a send), then its end; the run, once everything reached the chat.
async fn to_the_end(script: &Arc<Script>, store: &Store, observations: u64) -> Run {
    let publisher = Publisher::new(Arc::clone(script), store.clone(), QUICK);
    let run = new_run(store, "logs");
    publisher.changed(&run);
    publisher.flushed().await;
    observe_many(&publisher, &run, observations).await;
    publisher.changed(&finish(store, run.id));
    publisher.flushed().await;
    run
}

#[tokio::test(start_paused = true)]
async fn a_deleted_message_is_posted_again_once_and_edited_there_to_the_final_state() {
    let (_dir, store) = store();
    let script = Script::new(|call| match (call.kind, call.target.as_str()) {
        ("edit", "m1") => Err(ChatError::Gone("404 Unknown Message".into())),
        _ => Ok(()),
    });
    let run = to_the_end(&script, &store, 5).await;

    let calls = script.messages();
    let on_m1: Vec<_> = calls.iter().filter(|c| c.target == "m1").collect();
    assert_eq!(
        on_m1.len(),
        2,
        "posted, then one edit found it gone: {calls:#?}"
    );
    let posts: Vec<_> = calls.iter().filter(|c| c.kind == "post").collect();
    assert_eq!(posts.len(), 2, "{calls:#?}");
    assert_eq!(
        posts[1].nonce,
        format!("{}-2", posts[0].nonce),
        "a nonce of its own"
    );
    let last = calls.last().unwrap();
    assert_eq!((last.kind, last.target.as_str()), ("edit", "m2"));
    assert!(last.text.starts_with("✅"), "{}", last.text);
    assert_eq!(
        store.run(run.id).unwrap().unwrap().progress_message,
        Some(MessageId("m2".into())),
        "a restarted bot edits the new message"
    );
}

#[tokio::test(start_paused = true)]
async fn a_repost_that_fails_for_a_while_is_tried_again_and_the_run_ends_on_it() {
    let (_dir, store) = store();
    let failed = AtomicBool::new(false);
    let script = Script::new(move |call| match (call.kind, call.target.as_str()) {
        ("edit", "m1") => Err(ChatError::Gone("404 Unknown Message".into())),
        ("post", "m2") if !failed.swap(true, Ordering::SeqCst) => {
            Err(ChatError::Transient("503".into()))
        }
        _ => Ok(()),
    });
    let run = to_the_end(&script, &store, 1).await;

    let calls = script.messages();
    let reposts: Vec<_> = calls.iter().filter(|c| c.nonce.ends_with("-2")).collect();
    assert_eq!(
        reposts.len(),
        2,
        "the failed re-post, then its retry: {calls:#?}"
    );
    assert!(reposts.iter().all(|c| c.target == "m2"), "{calls:#?}");
    let last = calls.last().unwrap();
    assert_eq!((last.kind, last.target.as_str()), ("edit", "m2"));
    assert!(last.text.starts_with("✅"), "{}", last.text);
    assert_eq!(
        store.run(run.id).unwrap().unwrap().progress_message,
        Some(MessageId("m2".into()))
    );
}

#[tokio::test(start_paused = true)]
async fn a_message_gone_again_after_its_repost_is_given_up() {
    let (_dir, store) = store();
    let script = Script::new(|call| match call.kind {
        "edit" => Err(ChatError::Gone("404 Unknown Message".into())),
        _ => Ok(()),
    });
    to_the_end(&script, &store, 30).await;
    let kinds: Vec<_> = script
        .messages()
        .iter()
        .map(|c| (c.kind, c.target.clone()))
        .collect();
    let want = [
        ("post", "m1"),
        ("edit", "m1"),
        ("post", "m2"),
        ("edit", "m2"),
    ];
    assert_eq!(
        kinds,
        want.map(|(k, t)| (k, t.to_owned())),
        "four calls for 32 changes"
    );
}

#[tokio::test(start_paused = true)]
async fn a_channel_the_bot_may_not_post_in_stops_its_lane_after_one_call() {
    let (_dir, store) = store();
    let script = Script::new(|_| Err(forbidden("ops")));
    let publisher = Publisher::new(Arc::clone(&script), store.clone(), QUICK);
    let first = new_run(&store, "logs");
    let second = new_run(&store, "other");
    publisher.changed(&first);
    publisher.changed(&second);
    observe_many(&publisher, &first, 20).await;
    observe_many(&publisher, &second, 20).await;
    publisher.changed(&finish(&store, first.id));
    publisher.flushed().await;
    assert_eq!(script.messages().len(), 1, "{:#?}", script.calls());
    // Nobody in that channel can be told; the announcement channel is, once.
    let reports: Vec<_> = script
        .calls()
        .into_iter()
        .filter(|c| c.kind == "report")
        .collect();
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(
        reports[0].text,
        "⚠️ progress of the runs in that channel stopped: the bot lacks Send Messages in \
         channel ops; grant it and restart opsbot"
    );
}

#[tokio::test(start_paused = true)]
async fn a_refused_token_stops_the_lane_after_one_call() {
    let (_dir, store) = store();
    let script = Script::new(|_| Err(ChatError::TokenRefused("401 Unauthorized".into())));
    to_the_end(&script, &store, 20).await;
    assert_eq!(script.messages().len(), 1, "{:#?}", script.calls());
}

#[tokio::test(start_paused = true)]
async fn a_refused_edit_is_not_sent_again_and_the_next_change_is() {
    let (_dir, store) = store();
    let script = Script::new(|call| match (call.kind, call.text.starts_with("✅")) {
        ("edit", false) => Err(ChatError::Refused("400 Invalid Form Body".into())),
        _ => Ok(()),
    });
    to_the_end(&script, &store, 1).await;
    let calls = script.messages();
    assert_eq!(
        calls.len(),
        3,
        "post, the refused edit once, the final edit: {calls:#?}"
    );
    assert!(calls[2].text.starts_with("✅"), "{}", calls[2].text);
}

#[tokio::test(start_paused = true)]
async fn forbidden_announcements_stop_and_the_run_channel_is_told_what_to_grant() {
    let (_dir, store) = store();
    let script = Script::new(|call| match call.kind {
        "announce" => Err(forbidden("announce")),
        _ => Ok(()),
    });
    let publisher = Publisher::new(Arc::clone(&script), store.clone(), QUICK);
    for key in ["start-1", "end-1", "start-2"] {
        let announcement = Announcement {
            key: key.into(),
            run: None,
            text: format!("maintenance {key}"),
        };
        publisher.announce(announcement, ChannelId("ops".into()));
    }
    publisher.flushed().await;
    let calls = script.calls();
    let kinds: Vec<_> = calls.iter().map(|c| (c.kind, c.target.as_str())).collect();
    assert_eq!(kinds, [("announce", "start-1"), ("notice", "ops")]);
    assert_eq!(
        calls[1].text,
        "⚠️ maintenance announcements stopped: the bot lacks Send Messages in channel announce; \
         grant it and restart opsbot"
    );
}

#[tokio::test(start_paused = true)]
async fn an_announcement_tried_again_keeps_its_place_before_the_next() {
    let (_dir, store) = store();
    let failed = AtomicBool::new(false);
    let script = Script::new(move |call| match call.target.as_str() {
        "start" if !failed.swap(true, Ordering::SeqCst) => Err(ChatError::Transient("503".into())),
        _ => Ok(()),
    });
    let publisher = Publisher::new(Arc::clone(&script), store.clone(), QUICK);
    for key in ["start", "end"] {
        let announcement = Announcement {
            key: key.into(),
            run: None,
            text: format!("maintenance {key}"),
        };
        publisher.announce(announcement, ChannelId("ops".into()));
    }
    publisher.flushed().await;
    let sent: Vec<_> = script.calls().into_iter().map(|c| c.target).collect();
    assert_eq!(sent, ["start", "start", "end"]);
}

#[tokio::test(start_paused = true)]
async fn a_transient_failure_is_retried_after_a_growing_wait() {
    let (_dir, store) = store();
    let script = Script::new(|_| Err(ChatError::Transient("503".into())));
    let publisher = Publisher::new(Arc::clone(&script), store.clone(), QUICK);
    let run = new_run(&store, "logs");
    publisher.changed(&run);
    tokio::time::sleep(Duration::from_secs(60)).await;
    // 1 + 2 + 4 + 8 + 16 + 30 s of waits fit in a minute: at most seven attempts, not sixty.
    let attempts = script.calls().len();
    assert!(
        (6..=7).contains(&attempts),
        "{attempts} attempts in a minute"
    );
}
