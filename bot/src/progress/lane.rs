//! The tasks that deliver progress: one per channel for runs' messages, one for announcements.
//! Each acts on the failure's class: a deleted message is posted again once, a channel the bot
//! may not use stops its lane (logged once, never hammered), a refused request is dropped, and
//! only a failure that may pass is tried again, after a growing wait.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use opsbot_commands::audit::{AuditEvent, AuditKind};
use opsbot_commands::maintenance::Announcement;
use opsbot_commands::name::RunId;
use opsbot_commands::render::{self, ProgressView};
use opsbot_commands::run::{ChannelId, Run};

use crate::config::RetryPolicy;

use super::pace::Pace;
use super::{ChatError, ChatTransport, Forbidden, Lane, Shared, lock};

/// The wait after a transient failure: doubling from one second up to half a minute, so that
/// an outage costs a request every half minute, not a stream. Progress is tried until it is
/// delivered, whatever the number of tries.
const RETRY: RetryPolicy = RetryPolicy {
    attempts: u32::MAX,
    base_delay: Duration::from_secs(1),
    max_delay: Duration::from_secs(30),
};

/// An announcement waiting to be sent, and the channel it came from (the run's, or the one
/// the command was typed in), which is told if announcements cannot be sent.
pub(super) struct Queued {
    pub(super) announcement: Announcement,
    pub(super) origin: ChannelId,
}

/// What one channel's lane remembers between sends.
#[derive(Default)]
struct LaneState {
    /// What was last sent for a run, so that an unchanged message is not sent again.
    sent: HashMap<RunId, ProgressView>,
    /// Runs whose message was posted again after it was gone.
    reposted: HashSet<RunId>,
    /// Runs whose message or channel is gone for good (the message gone again after its
    /// re-post, or the channel deleted): their progress is not shown. These sets forget a run
    /// once it has finished.
    abandoned: HashSet<RunId>,
    /// Runs whose message an attempt may have posted without its answer arriving (a transient
    /// failure of the post): looked for before it is posted again.
    unsure: HashSet<RunId>,
    /// Set once the bot may not post or edit in the channel: nothing more is sent there.
    stopped: bool,
    /// Transient failures in a row, for the wait before the next attempt.
    tries: u32,
}

pub(super) async fn run_lane<T: ChatTransport>(shared: Arc<Shared<T>>, lane: Arc<Lane>) {
    let mut state = LaneState::default();
    loop {
        lane.notify.notified().await;
        loop {
            // Peek, wait for the limiter, then take: a change arriving meanwhile is folded into
            // this send instead of queueing a second one.
            if lock(&lane.queue).is_empty() {
                break;
            }
            if !state.stopped {
                lane.limiter.ready().await;
            }
            let Some(id) = lock(&lane.queue).pop_front() else {
                break;
            };
            if !state.stopped {
                match publish(&shared, &mut state, id).await {
                    Ok(()) => state.tries = 0,
                    Err(ChatError::Transient(error)) => {
                        state.tries = state.tries.saturating_add(1);
                        let wait = RETRY.delay(state.tries);
                        tracing::warn!(run = %id, %error, ?wait, "progress not sent; retrying");
                        shared.clock.sleep(wait).await;
                        let mut queue = lock(&lane.queue);
                        if !queue.contains(&id) {
                            queue.push_back(id);
                            continue;
                        }
                    }
                    Err(ChatError::Forbidden(forbidden)) => {
                        // Nobody in the run's channel can be told: the announcement channel is.
                        tracing::error!(run = %id, %forbidden, "progress stops in this channel");
                        state.stopped = true;
                        let text = forbidden.notice("progress of the runs in that channel");
                        let reported = shared.transport.report(&forbidden.channel, &text).await;
                        if let Err(error) = reported {
                            tracing::warn!(%error, "cannot report it in the announcement channel");
                        }
                    }
                    Err(error @ ChatError::TokenRefused(_)) => {
                        // The platform refused the bot itself: nobody there to tell.
                        tracing::error!(run = %id, %error, "progress stops in this channel");
                        state.stopped = true;
                    }
                    Err(error) => {
                        tracing::warn!(run = %id, %error, "progress refused; next change is sent");
                    }
                }
            }
            shared.pending.send_modify(|n| *n = n.saturating_sub(1));
        }
    }
}

/// Sends announcements one by one within the quota, each until it is delivered; the store
/// remembers each one sent, so a restarted bot does not repeat it.
pub(super) async fn run_announcements<T: ChatTransport>(shared: Arc<Shared<T>>, limiter: Pace) {
    let mut stopped = false;
    let mut tries: u32 = 0;
    loop {
        shared.announcer.notified().await;
        loop {
            let Some(queued) = lock(&shared.announcements).pop_front() else {
                break;
            };
            let key = format!("announcement:{}", queued.announcement.key);
            if !stopped && !shared.store.delivered(&key).unwrap_or(false) {
                limiter.ready().await;
                match shared.transport.announce(&queued.announcement).await {
                    Ok(()) => {
                        tries = 0;
                        let delivered = AuditEvent {
                            at: shared.clock.now(),
                            run: queued.announcement.run,
                            actor: None,
                            event: AuditKind::Announced {
                                text: queued.announcement.text.clone(),
                            },
                        };
                        if let Err(error) = shared.writes.announced(key, delivered).await {
                            tracing::error!(%error, "cannot record an announcement as sent");
                        }
                    }
                    Err(ChatError::Transient(error)) => {
                        tries = tries.saturating_add(1);
                        let wait = RETRY.delay(tries);
                        tracing::warn!(%error, ?wait, "announcement not delivered; trying again");
                        shared.clock.sleep(wait).await;
                        // First again: the announcements after it must not overtake it
                        // ("maintenance over" before "starting").
                        lock(&shared.announcements).push_front(queued);
                        continue;
                    }
                    Err(ChatError::Forbidden(forbidden)) => {
                        tracing::error!(%forbidden, "maintenance announcements stop");
                        tell(&*shared, &queued.origin, &forbidden).await;
                        stopped = true;
                    }
                    // A refused token is remembered by the transport, which sends nothing more
                    // to that platform; the consoles may still show the next announcement.
                    Err(
                        error @ (ChatError::Gone(_)
                        | ChatError::Refused(_)
                        | ChatError::TokenRefused(_)),
                    ) => {
                        tracing::warn!(%error, "announcement refused; not sent again");
                    }
                }
            }
            shared.pending.send_modify(|n| *n = n.saturating_sub(1));
        }
    }
}

/// Tells the channel an announcement came from that announcements stopped, unless that is
/// the refused channel itself: then the log says it alone.
async fn tell<T: ChatTransport>(shared: &Shared<T>, origin: &ChannelId, forbidden: &Forbidden) {
    if *origin == forbidden.channel {
        return;
    }
    let text = forbidden.notice("maintenance announcements");
    if let Err(error) = shared.transport.notice(origin, &text).await {
        tracing::warn!(%error, channel = %origin.0, "cannot tell the announcement's channel");
    }
}

/// Shows the run's latest state. A message or channel gone for good gives the run's progress
/// up here (so this never returns [`ChatError::Gone`]); once a finished run's last state is
/// dealt with, the lane forgets it. A transient failure keeps what the retry needs.
async fn publish<T: ChatTransport>(
    shared: &Shared<T>,
    state: &mut LaneState,
    id: RunId,
) -> Result<(), ChatError> {
    let run = match shared.store.run(id) {
        Ok(Some(run)) => run,
        Ok(None) => return Ok(()),
        Err(error) => return Err(ChatError::Transient(format!("store: {error}"))),
    };
    let shown = if state.abandoned.contains(&id) {
        Ok(())
    } else {
        show(shared, state, &run).await
    };
    let shown = match shown {
        Err(ChatError::Gone(error)) => {
            tracing::warn!(run = %id, %error, "the progress message or its channel is gone; \
                           this run's progress is no longer shown here");
            state.abandoned.insert(id);
            Ok(())
        }
        other => other,
    };
    if run.state.is_finished() && !matches!(shown, Err(ChatError::Transient(_))) {
        state.sent.remove(&id);
        state.reposted.remove(&id);
        state.abandoned.remove(&id);
        state.unsure.remove(&id);
    }
    shown
}

/// Posts or edits the run's message, unless it shows this state already; a message gone once
/// is posted again.
async fn show<T: ChatTransport>(
    shared: &Shared<T>,
    state: &mut LaneState,
    run: &Run,
) -> Result<(), ChatError> {
    let id = run.id;
    let observed = shared.observation(run);
    let view = render::progress_view(run, observed.as_ref(), shared.clock.now());
    if state.sent.get(&id) == Some(&view) {
        return Ok(());
    }
    match &run.progress_message {
        Some(message) => match shared.transport.edit(&run.channel, message, &view).await {
            Ok(()) => {
                shared.counters.edits.fetch_add(1, Ordering::Relaxed);
            }
            Err(ChatError::Gone(error)) if !state.reposted.contains(&id) => {
                tracing::warn!(run = %id, %error, "the progress message is gone; posting it again");
                // A new message needs a nonce of its own: the deleted one's would be answered
                // with the deleted message (Discord: 404 Unknown Message). A retry after a
                // failed re-post uses the same one, so a post Discord did make is returned,
                // not made twice; only a re-post that succeeded counts as the one re-post.
                let mut again = view.clone();
                again.message_key.push_str("-2");
                post(shared, state, run, &again).await?;
                state.reposted.insert(id);
            }
            Err(error) => return Err(error),
        },
        None => post(shared, state, run, &view).await?,
    }
    if !run.state.is_finished() {
        state.sent.insert(id, view);
    }
    Ok(())
}

/// Posts the run's message and stores its id, which every later edit (after a restart too)
/// goes to. When an earlier post may have been made unrecorded (by a process that died, or
/// an attempt whose answer was lost), the one it made is looked for first and edited instead.
async fn post<T: ChatTransport>(
    shared: &Shared<T>,
    state: &mut LaneState,
    run: &Run,
    view: &ProgressView,
) -> Result<(), ChatError> {
    // Unsure until the message is recorded: a failure on the way (looking, editing what was
    // found, posting) leaves the next attempt looking again.
    if lock(&shared.resumed).remove(&run.id) {
        state.unsure.insert(run.id);
    }
    let found = match state.unsure.contains(&run.id) {
        true => shared.transport.find_posted(&run.channel, view).await?,
        false => None,
    };
    let message = match found {
        Some(message) => {
            shared.transport.edit(&run.channel, &message, view).await?;
            shared.counters.edits.fetch_add(1, Ordering::Relaxed);
            message
        }
        None => {
            let posted = shared.transport.post(&run.channel, view).await;
            if matches!(posted, Err(ChatError::Transient(_))) {
                state.unsure.insert(run.id);
            }
            let posted = posted?;
            shared.counters.posts.fetch_add(1, Ordering::Relaxed);
            posted
        }
    };
    state.unsure.remove(&run.id);
    let kept = message.clone();
    let stored = shared
        .writes
        .update_run(run.id, None, move |run| {
            run.progress_message = Some(kept.clone());
            Ok::<_, std::convert::Infallible>(vec![])
        })
        .await;
    if let Err(opsbot_state::UpdateError::Store(error)) = stored {
        tracing::error!(run = %run.id, %error, "cannot keep the progress message id");
    }
    Ok(())
}
