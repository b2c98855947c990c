//! Progress: one chat message per run, posted once and then edited in place. The engine only
//! marks a run as changed; each channel's lane renders the run's latest state when the channel's
//! rate limit allows, so bursts of events coalesce into few edits and no channel is hammered.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use governor::Quota;
use opsbot_commands::cluster::Observation;
use opsbot_commands::maintenance::{self, Announcement};
use opsbot_commands::name::RunId;
use opsbot_commands::render::ProgressView;
use opsbot_commands::run::{ChannelId, MessageId, Run};
use opsbot_state::Store;
use tokio::sync::{Notify, watch};

use crate::clock::Clock;
use crate::config::ProgressConfig;
use crate::metrics::Backlog;
use crate::store_writes::StoreWrites;

mod failure;
mod lane;
mod pace;
pub use failure::{ChatError, Forbidden};
use lane::{Queued, run_announcements, run_lane};
pub(crate) use pace::Pace;

/// A chat platform, as progress needs it: post a run's message once, then edit it.
pub trait ChatTransport: Send + Sync + 'static {
    fn post(
        &self,
        channel: &ChannelId,
        view: &ProgressView,
    ) -> impl Future<Output = Result<MessageId, ChatError>> + Send;
    fn edit(
        &self,
        channel: &ChannelId,
        message: &MessageId,
        view: &ProgressView,
    ) -> impl Future<Output = Result<(), ChatError>> + Send;
    /// The message an earlier attempt posted for `view` (its `message_key`) without living to
    /// record it, when the platform can find one. A platform whose `post` is idempotent by
    /// itself (Discord's nonce) has nothing to find.
    fn find_posted(
        &self,
        channel: &ChannelId,
        view: &ProgressView,
    ) -> impl Future<Output = Result<Option<MessageId>, ChatError>> + Send {
        let _ = (channel, view);
        async { Ok(None) }
    }
    /// Posts a maintenance announcement; a platform without an announcement channel has
    /// nothing to do.
    fn announce(
        &self,
        announcement: &Announcement,
    ) -> impl Future<Output = Result<(), ChatError>> + Send {
        let _ = announcement;
        async { Ok(()) }
    }
    /// Tells the platform's announcement channel (unless that is `channel` itself) that the
    /// bot may no longer post in `channel`: the people there cannot be told. A platform
    /// without an announcement channel has nobody else to tell.
    fn report(
        &self,
        channel: &ChannelId,
        text: &str,
    ) -> impl Future<Output = Result<(), ChatError>> + Send {
        let _ = (channel, text);
        async { Ok(()) }
    }
    /// Tells the people of a channel something about the bot itself (a lane that stopped);
    /// a platform with nobody to tell has nothing to do.
    fn notice(
        &self,
        channel: &ChannelId,
        text: &str,
    ) -> impl Future<Output = Result<(), ChatError>> + Send {
        let _ = (channel, text);
        async { Ok(()) }
    }
}

/// What the engine tells progress. Synchronous and cheap: it never waits for chat.
pub trait ProgressSink: Backlog {
    /// The run's record changed; publish its latest state.
    fn changed(&self, run: &Run);
    /// A wait observed something; shown with the run until the next observation or the next
    /// step.
    fn observe(&self, run: &Run, observation: Observation);
    /// The latest observation of the run's current step, for `/run status`.
    fn observed(&self, run: &Run) -> Option<Observation>;
    /// Sends an announcement, once: a key already sent (by this process or, as the store
    /// remembers, by an earlier one) is not sent again. `origin` is the channel it came from
    /// (the run's, or the one the command was typed in), told if announcements cannot be sent.
    fn announce(&self, announcement: Announcement, origin: ChannelId);
    /// The run was made by an earlier process (this one resumes it after a restart or a
    /// takeover), which may have posted its message without living to record it.
    fn resumed(&self, run: &Run) {
        let _ = run;
    }
}

/// Counts for the benchmark and the tests: progress events in, chat calls out.
#[derive(Debug, Default)]
pub struct Counters {
    pub events: AtomicU64,
    pub posts: AtomicU64,
    pub edits: AtomicU64,
}

/// The progress publisher over a chat transport.
pub struct Publisher<T> {
    shared: Arc<Shared<T>>,
}

impl<T> std::fmt::Debug for Publisher<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publisher").finish_non_exhaustive()
    }
}

struct Shared<T> {
    transport: T,
    /// Reads; writes go through `writes`, off the async threads.
    store: Store,
    writes: StoreWrites,
    /// The engine's: the time a view shows, and the waits before a send is tried again.
    clock: Clock,
    /// Runs resumed from an earlier process, whose message it may have posted unrecorded:
    /// looked for before their first post here.
    resumed: Mutex<std::collections::HashSet<RunId>>,
    quota: Quota,
    /// Each run's latest observation, with the step that made it: read for that step only
    /// (a host's "up, version 66" is not the next host's).
    observed: Mutex<HashMap<RunId, (Option<usize>, Observation)>>,
    lanes: Mutex<HashMap<ChannelId, Arc<Lane>>>,
    /// Announcements waiting to be sent, and the keys queued by this process.
    announcements: Mutex<VecDeque<Queued>>,
    announced: Mutex<std::collections::HashSet<String>>,
    announcer: Notify,
    /// Runs waiting to be published, over all lanes; `flushed` waits for zero.
    pending: watch::Sender<usize>,
    counters: Counters,
}

/// One channel: its queue of changed runs (first changed, first sent) and its rate limiter.
struct Lane {
    queue: Mutex<VecDeque<RunId>>,
    notify: Notify,
    limiter: Pace,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<T> Shared<T> {
    /// The run's latest observation, if its current step made it: one of the step before
    /// (a host's "up, version 66") is not shown with the next (the next host's restart).
    fn observation(&self, run: &Run) -> Option<Observation> {
        lock(&self.observed)
            .get(&run.id)
            .filter(|(step, _)| *step == run.cursor())
            .map(|(_, observation)| observation.clone())
    }
}

impl<T: ChatTransport> Publisher<T> {
    /// Must be called within a tokio runtime: the announcement lane is a task of its own.
    pub fn new(transport: T, store: Store, config: ProgressConfig) -> Self {
        Self::with_clock(transport, store, config, Clock::system())
    }

    /// The publisher going by `clock`: the engine's, so that the times a message shows and
    /// the waits between tries follow the time the engine goes by.
    pub fn with_clock(transport: T, store: Store, config: ProgressConfig, clock: Clock) -> Self {
        // One call per window/N and no burst: at most N calls in any window, as Discord counts
        // them. (A burst of N on top of that rate would allow up to 2N in the first window.)
        let calls = config.edits_per_window.max(1);
        let period = (config.window / calls).max(Duration::from_millis(1));
        let quota = Quota::with_period(period)
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
            .allow_burst(NonZeroU32::MIN);
        let publisher = Self {
            shared: Arc::new(Shared {
                transport,
                writes: StoreWrites::new(store.clone()),
                store,
                resumed: Mutex::default(),
                clock,
                quota,
                observed: Mutex::new(HashMap::new()),
                lanes: Mutex::new(HashMap::new()),
                announcements: Mutex::new(VecDeque::new()),
                announced: Mutex::new(std::collections::HashSet::new()),
                announcer: Notify::new(),
                pending: watch::channel(0).0,
                counters: Counters::default(),
            }),
        };
        tokio::spawn(run_announcements(
            Arc::clone(&publisher.shared),
            Pace::new(quota),
        ));
        publisher
    }

    /// Resolves once every change so far has reached the chat.
    pub async fn flushed(&self) {
        let mut pending = self.shared.pending.subscribe();
        let _ = pending.wait_for(|n| *n == 0).await;
    }

    pub fn counters(&self) -> &Counters {
        &self.shared.counters
    }

    pub fn transport(&self) -> &T {
        &self.shared.transport
    }

    fn lane(&self, channel: &ChannelId) -> Arc<Lane> {
        let mut lanes = lock(&self.shared.lanes);
        if let Some(lane) = lanes.get(channel) {
            return Arc::clone(lane);
        }
        let lane = Arc::new(Lane {
            queue: Mutex::new(VecDeque::new()),
            notify: Notify::new(),
            limiter: Pace::new(self.shared.quota),
        });
        lanes.insert(channel.clone(), Arc::clone(&lane));
        tokio::spawn(run_lane(Arc::clone(&self.shared), Arc::clone(&lane)));
        lane
    }

    fn enqueue(&self, run: &Run) {
        self.shared.counters.events.fetch_add(1, Ordering::Relaxed);
        let lane = self.lane(&run.channel);
        let mut queue = lock(&lane.queue);
        if !queue.contains(&run.id) {
            queue.push_back(run.id);
            self.shared.pending.send_modify(|n| *n += 1);
        }
        drop(queue);
        lane.notify.notify_one();
    }
}

impl<T: ChatTransport> ProgressSink for Publisher<T> {
    fn resumed(&self, run: &Run) {
        if run.progress_message.is_none() {
            lock(&self.shared.resumed).insert(run.id);
        }
    }

    fn changed(&self, run: &Run) {
        if run.state.is_finished() {
            lock(&self.shared.observed).remove(&run.id);
        }
        if let Some(announcement) = maintenance::announcement(run) {
            self.announce(announcement, run.channel.clone());
        }
        self.enqueue(run);
    }

    fn announce(&self, announcement: Announcement, origin: ChannelId) {
        if !lock(&self.shared.announced).insert(announcement.key.clone()) {
            return;
        }
        lock(&self.shared.announcements).push_back(Queued {
            announcement,
            origin,
        });
        self.shared.pending.send_modify(|n| *n += 1);
        self.shared.announcer.notify_one();
    }

    fn observe(&self, run: &Run, observation: Observation) {
        let mut observed = lock(&self.shared.observed);
        let seen = (run.cursor(), observation);
        if observed.get(&run.id) == Some(&seen) {
            return;
        }
        observed.insert(run.id, seen);
        drop(observed);
        self.enqueue(run);
    }

    fn observed(&self, run: &Run) -> Option<Observation> {
        self.shared.observation(run)
    }
}

impl<T: ChatTransport> Backlog for Publisher<T> {
    fn backlog(&self) -> Vec<(String, usize)> {
        let mut backlog: Vec<(String, usize)> = lock(&self.shared.lanes)
            .iter()
            .map(|(channel, lane)| (channel.0.clone(), lock(&lane.queue).len()))
            .collect();
        backlog.sort();
        backlog.push((
            "announcements".to_owned(),
            lock(&self.shared.announcements).len(),
        ));
        backlog
    }
}

#[cfg(test)]
mod giving_up;
#[cfg(test)]
pub(crate) mod script;
#[cfg(test)]
mod tests;
