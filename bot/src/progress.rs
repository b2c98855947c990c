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
use opsbot_commands::render::{self, ProgressView};
use opsbot_commands::run::{ChannelId, MessageId, Run};
use opsbot_state::Store;
use time::OffsetDateTime;
use tokio::sync::{Notify, watch};

use crate::config::ProgressConfig;
use crate::store_writes::StoreWrites;

mod pace;
use pace::Pace;

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
    /// Posts a maintenance announcement; a platform without an announcement channel has
    /// nothing to do.
    fn announce(
        &self,
        announcement: &Announcement,
    ) -> impl Future<Output = Result<(), ChatError>> + Send {
        let _ = announcement;
        async { Ok(()) }
    }
}

/// A chat call that failed; progress tries again later.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct ChatError(pub String);

/// What the engine tells progress. Synchronous and cheap: it never waits for chat.
pub trait ProgressSink: Send + Sync {
    /// The run's record changed; publish its latest state.
    fn changed(&self, run: &Run);
    /// A wait observed something; shown with the run until the next observation.
    fn observe(&self, run: &Run, observation: Observation);
    /// The latest observation, for `/run status`.
    fn observed(&self, id: RunId) -> Option<Observation>;
    /// Sends an announcement, once: a key already sent (by this process or, as the store
    /// remembers, by an earlier one) is not sent again.
    fn announce(&self, announcement: Announcement);
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
    quota: Quota,
    observed: Mutex<HashMap<RunId, Observation>>,
    lanes: Mutex<HashMap<ChannelId, Arc<Lane>>>,
    /// Announcements waiting to be sent, and the keys queued by this process.
    announcements: Mutex<VecDeque<Announcement>>,
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

/// What was last sent for a run, so that an unchanged message is not sent again.
type Sent = HashMap<RunId, ProgressView>;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<T: ChatTransport> Publisher<T> {
    /// Must be called within a tokio runtime: the announcement lane is a task of its own.
    pub fn new(transport: T, store: Store, config: ProgressConfig) -> Self {
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
    fn changed(&self, run: &Run) {
        if run.state.is_finished() {
            lock(&self.shared.observed).remove(&run.id);
        }
        if let Some(announcement) = maintenance::announcement(run) {
            self.announce(announcement);
        }
        self.enqueue(run);
    }

    fn announce(&self, announcement: Announcement) {
        if !lock(&self.shared.announced).insert(announcement.key.clone()) {
            return;
        }
        lock(&self.shared.announcements).push_back(announcement);
        self.shared.pending.send_modify(|n| *n += 1);
        self.shared.announcer.notify_one();
    }

    fn observe(&self, run: &Run, observation: Observation) {
        let mut observed = lock(&self.shared.observed);
        if observed.get(&run.id) == Some(&observation) {
            return;
        }
        observed.insert(run.id, observation);
        drop(observed);
        self.enqueue(run);
    }

    fn observed(&self, id: RunId) -> Option<Observation> {
        lock(&self.shared.observed).get(&id).cloned()
    }
}

async fn run_lane<T: ChatTransport>(shared: Arc<Shared<T>>, lane: Arc<Lane>) {
    let mut sent = Sent::new();
    loop {
        lane.notify.notified().await;
        loop {
            // Peek, wait for the limiter, then take: a change arriving meanwhile is folded into
            // this send instead of queueing a second one.
            if lock(&lane.queue).is_empty() {
                break;
            }
            lane.limiter.ready().await;
            let Some(id) = lock(&lane.queue).pop_front() else {
                break;
            };
            if let Err(error) = publish(&shared, &mut sent, id).await {
                tracing::warn!(run = %id, %error, "progress not delivered; trying again shortly");
                tokio::time::sleep(Duration::from_secs(1)).await;
                let mut queue = lock(&lane.queue);
                if !queue.contains(&id) {
                    queue.push_back(id);
                    continue;
                }
            }
            shared.pending.send_modify(|n| *n = n.saturating_sub(1));
        }
    }
}

/// Sends announcements one by one within the quota, each until it is delivered; the store
/// remembers each one sent, so a restarted bot does not repeat it.
async fn run_announcements<T: ChatTransport>(shared: Arc<Shared<T>>, limiter: Pace) {
    loop {
        shared.announcer.notified().await;
        loop {
            let Some(announcement) = lock(&shared.announcements).pop_front() else {
                break;
            };
            let key = format!("announcement:{}", announcement.key);
            if !shared.store.delivered(&key).unwrap_or(false) {
                limiter.ready().await;
                if let Err(error) = shared.transport.announce(&announcement).await {
                    tracing::warn!(%error, "announcement not delivered; trying again shortly");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    lock(&shared.announcements).push_back(announcement);
                    continue;
                }
                if let Err(error) = shared.writes.first_delivery(key).await {
                    tracing::error!(%error, "cannot remember an announcement as sent");
                }
            }
            shared.pending.send_modify(|n| *n = n.saturating_sub(1));
        }
    }
}

async fn publish<T: ChatTransport>(
    shared: &Shared<T>,
    sent: &mut Sent,
    id: RunId,
) -> Result<(), ChatError> {
    let run = match shared.store.run(id) {
        Ok(Some(run)) => run,
        Ok(None) => return Ok(()),
        Err(error) => return Err(ChatError(format!("store: {error}"))),
    };
    let observed = lock(&shared.observed).get(&id).cloned();
    let view = render::progress_view(&run, observed.as_ref(), OffsetDateTime::now_utc());
    if sent.get(&id) == Some(&view) {
        return Ok(());
    }
    match &run.progress_message {
        Some(message) => {
            shared.transport.edit(&run.channel, message, &view).await?;
            shared.counters.edits.fetch_add(1, Ordering::Relaxed);
        }
        None => {
            let message = shared.transport.post(&run.channel, &view).await?;
            shared.counters.posts.fetch_add(1, Ordering::Relaxed);
            // Kept so that a restarted bot edits this message instead of posting another.
            let stored = shared
                .writes
                .update_run(id, None, move |run| {
                    run.progress_message = Some(message.clone());
                    Ok::<_, std::convert::Infallible>(vec![])
                })
                .await;
            if let Err(opsbot_state::UpdateError::Store(error)) = stored {
                tracing::error!(run = %id, %error, "cannot keep the progress message id");
            }
        }
    }
    if run.state.is_finished() {
        sent.remove(&id);
    } else {
        sent.insert(id, view);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
