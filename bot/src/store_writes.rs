//! The one way the bot's async code writes to the store.
//!
//! Every store write is a sled transaction and a flush, i.e. an fsync: under a millisecond on
//! an idle disk, seconds on a busy or failing one. Run on a tokio worker, it would stall every
//! task sharing that worker (the Discord gateway's heartbeat, other runs' progress), and on the
//! current-thread runtime the whole bot; `block_in_place` is no way out, since it panics on that
//! runtime. So [`StoreWrites`] runs each write whole (transaction and flush) on tokio's blocking
//! pool, and its caller awaits it: a write that returned is on disk and survives a SIGKILL,
//! exactly as with the store's own methods, and the engine still finishes its write-ahead
//! record before the side effect it announces.
//!
//! Why not sled's `Tree::flush_async` after the transaction: the transaction itself can block
//! (it may read cold pages, or wait for sled's log buffers to drain), and sled runs the flush
//! on its own threads, which tokio's paused test clock cannot see, so a test's timers would
//! fire while a flush is under way; a blocking task holds the paused clock back.
//!
//! The store's synchronous writes are `disallowed-methods` for clippy in this crate
//! (bot/clippy.toml), so no async caller can reach them another way by mistake.

#![allow(
    clippy::disallowed_methods,
    reason = "the one module that may call the store's synchronous writes"
)]

use std::sync::Arc;

use opsbot_commands::audit::{AuditEvent, AuditKind};
use opsbot_commands::maintenance::MaintenanceNotice;
use opsbot_commands::name::RunId;
use opsbot_commands::people::Speaker;
use opsbot_commands::run::Run;
use opsbot_commands::schedule::{FireRecord, Pause, ScheduleName, StandingApproval, StandingId};
use opsbot_state::{Compacted, Store, StoreError, UpdateError};
use time::OffsetDateTime;
use tokio::sync::watch;

use crate::metrics::RunMetrics;
use crate::tenure::Tenure;

/// The store's writes, as async functions that run off the async worker threads. Each has the
/// meaning of the `Store` method of the same name; what it is given is owned, because it is
/// moved to the thread that writes. Cheap to clone (it holds a `Store`, itself a handle).
#[derive(Clone, Debug)]
pub struct StoreWrites {
    store: Store,
    /// Counts what the runs' records say happened, once it is on disk.
    counted: Option<RunMetrics>,
    /// Checked before and after each write: the engine writes its write-ahead record right
    /// before a side effect, which must not start once this instance may have lost the lease.
    tenure: Tenure,
    /// Counts the runs that finished through these writes: each released its target's lock.
    released: Arc<watch::Sender<u64>>,
}

impl StoreWrites {
    pub fn new(store: Store) -> Self {
        Self {
            store,
            counted: None,
            tenure: Tenure::default(),
            released: Arc::new(watch::channel(0).0),
        }
    }

    /// The writes of the engine, which count every run created, decided and finished, and
    /// which only an instance that may act makes.
    pub fn counting(store: Store, metrics: RunMetrics, tenure: Tenure) -> Self {
        Self {
            store,
            counted: Some(metrics),
            tenure,
            released: Arc::new(watch::channel(0).0),
        }
    }

    /// Changes each time a run finishes through these writes, releasing its target's lock: what
    /// a fire waiting for a busy target wakes on.
    pub fn released(&self) -> watch::Receiver<u64> {
        self.released.subscribe()
    }

    /// See [`Store::create_run`].
    pub async fn create_run(
        &self,
        build: impl FnOnce(RunId) -> Run + Send + 'static,
        actor: Option<Speaker>,
    ) -> Result<Run, StoreError> {
        let run = self
            .off_thread(move |store| store.create_run(build, actor.as_ref()))
            .await?;
        if let Some(metrics) = &self.counted {
            metrics.created(&run);
        }
        Ok(run)
    }

    /// See [`Store::update_run`]; `change` may be called more than once.
    pub async fn update_run<E: Send + 'static>(
        &self,
        id: RunId,
        actor: Option<Speaker>,
        mut change: impl FnMut(&mut Run) -> Result<Vec<AuditKind>, E> + Send + 'static,
    ) -> Result<Run, UpdateError<E>> {
        // What the call that committed recorded: a retried transaction calls `change` again,
        // and only its last answer is in the store.
        let (run, recorded) = self
            .off_thread(move |store| {
                let mut recorded = Vec::new();
                let run = store.update_run(id, actor.as_ref(), |run| {
                    let events = change(run)?;
                    recorded.clone_from(&events);
                    Ok(events)
                })?;
                Ok::<_, UpdateError<E>>((run, recorded))
            })
            .await?;
        if let Some(metrics) = &self.counted {
            metrics.recorded(&run, &recorded);
        }
        if recorded
            .iter()
            .any(|event| matches!(event, AuditKind::RunFinished { .. }))
        {
            self.released.send_modify(|finished| *finished += 1);
        }
        Ok(run)
    }

    /// See [`Store::close`]: the writes under way reach the disk, later ones are refused. The
    /// last thing a stopping bot does with its store: the runs' tasks are not awaited (they
    /// resume at the next start), but a write of theirs under way is: `/run status` may have
    /// shown it already. Made whatever the tenure.
    pub async fn close(&self) {
        let closed = off_thread(&self.store, |store| {
            store.close();
            Ok::<_, StoreError>(())
        });
        let _ = closed.await;
    }

    /// See [`Store::append_audit`].
    pub async fn append_audit(&self, event: AuditEvent) -> Result<(), StoreError> {
        self.off_thread(move |store| store.append_audit(&event))
            .await
    }

    /// See [`Store::append_run_log`].
    pub async fn append_run_log(&self, run: RunId, lines: Vec<String>) -> Result<(), StoreError> {
        self.off_thread(move |store| store.append_run_log(run, &lines))
            .await
    }

    /// See [`Store::first_delivery`].
    pub async fn first_delivery(&self, id: String) -> Result<bool, StoreError> {
        self.off_thread(move |store| store.first_delivery(&id))
            .await
    }

    /// See [`Store::announced`].
    pub async fn announced(&self, id: String, event: AuditEvent) -> Result<bool, StoreError> {
        self.off_thread(move |store| store.announced(&id, &event))
            .await
    }

    /// See [`Store::set_maintenance_notice`].
    pub async fn set_maintenance_notice(
        &self,
        notice: Option<MaintenanceNotice>,
    ) -> Result<Option<MaintenanceNotice>, StoreError> {
        self.off_thread(move |store| store.set_maintenance_notice(notice.as_ref()))
            .await
    }

    /// See [`Store::create_fired_run`].
    pub async fn create_fired_run(
        &self,
        build: impl FnOnce(RunId) -> Run + Send + 'static,
        schedule: ScheduleName,
        fire_at: OffsetDateTime,
    ) -> Result<Run, StoreError> {
        let run = self
            .off_thread(move |store| store.create_fired_run(build, &schedule, fire_at))
            .await?;
        if let Some(metrics) = &self.counted {
            metrics.created(&run);
        }
        Ok(run)
    }

    /// See [`Store::record_fire`].
    pub async fn record_fire(
        &self,
        schedule: ScheduleName,
        record: FireRecord,
    ) -> Result<(), StoreError> {
        self.off_thread(move |store| store.record_fire(&schedule, &record))
            .await
    }

    /// See [`Store::set_pause`].
    pub async fn set_pause(
        &self,
        schedule: ScheduleName,
        pause: Option<Pause>,
        actor: Speaker,
    ) -> Result<Option<Pause>, StoreError> {
        self.off_thread(move |store| store.set_pause(&schedule, pause.as_ref(), &actor))
            .await
    }

    /// See [`Store::create_standing`].
    pub async fn create_standing<E: Send + 'static>(
        &self,
        actor: Speaker,
        build: impl FnOnce(StandingId) -> Result<StandingApproval, E> + Send + 'static,
    ) -> Result<StandingApproval, UpdateError<E>> {
        self.off_thread(move |store| store.create_standing(&actor, build))
            .await
    }

    /// See [`Store::update_standing`]; `change` may be called more than once.
    pub async fn update_standing<E: Send + 'static>(
        &self,
        id: StandingId,
        actor: Speaker,
        change: impl FnMut(&mut StandingApproval) -> Result<Option<String>, E> + Send + 'static,
    ) -> Result<StandingApproval, UpdateError<E>> {
        self.off_thread(move |store| store.update_standing(id, &actor, change))
            .await
    }

    /// See [`Store::compact`].
    pub async fn compact(
        &self,
        cutoff: OffsetDateTime,
        batch: usize,
    ) -> Result<Compacted, StoreError> {
        self.off_thread(move |store| store.compact(cutoff, batch))
            .await
    }

    /// [`off_thread`], only while this instance may act (checked before and after: the
    /// engine's write-ahead record is followed by a side effect).
    async fn off_thread<T, E>(
        &self,
        write: impl FnOnce(&Store) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        self.tenure.check()?;
        let written = off_thread(&self.store, write).await?;
        self.tenure.check()?;
        Ok(written)
    }
}

/// Runs `call` on the store on tokio's blocking pool and waits for it. A panic in it is the
/// caller's panic, as if it had run inline; a call the shutting-down runtime never started is
/// [`StoreError::ShuttingDown`].
pub(crate) async fn off_thread<T, E>(
    store: &Store,
    call: impl FnOnce(&Store) -> Result<T, E> + Send + 'static,
) -> Result<T, E>
where
    T: Send + 'static,
    E: From<StoreError> + Send + 'static,
{
    let store = store.clone();
    match tokio::task::spawn_blocking(move || call(&store)).await {
        Ok(done) => done,
        Err(error) => match error.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(_) => Err(StoreError::ShuttingDown.into()),
        },
    }
}

#[cfg(test)]
pub(crate) mod tests;
