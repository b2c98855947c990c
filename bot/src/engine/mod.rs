//! The engine: turns requests into durable runs and drives each run in its own task. Every
//! transition goes through the store (compare-and-swap, flushed) before and after each side
//! effect, so that a bot killed at any instant resumes where it was.

mod booked;
mod cloud_step;
mod compute;
mod decide;
mod delete;
mod drive;
mod failure;
mod runbook_step;
mod schedule;
mod status;
mod step;
mod wait;

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};

use opsbot_commands::audit::AuditKind;
use opsbot_commands::booking;
use opsbot_commands::consent::ConsentPolicy;
use opsbot_commands::name::RunId;
use opsbot_commands::people::Actor;
use opsbot_commands::plan::Plan;
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::run::{ChannelId, Run};
use opsbot_commands::schedule::Schedule;
use opsbot_commands::target::Target;
use opsbot_state::{Store, StoreError, UpdateError};
use time::OffsetDateTime;
use tokio::sync::{Notify, watch};

use crate::backend::{Gate, Retry};
use crate::clock::{Clock, span};
use crate::clouds::Clouds;
use crate::clusters::Clusters;
use crate::config::{Config, EngineConfig, SchedulingConfig};
use crate::metrics::Metrics;
use crate::progress::ProgressSink;
use crate::refusal::{EngineError, Refusal};
use crate::runbooks::Library;
use crate::store_writes::StoreWrites;
use crate::targets::Targets;
use crate::tenure::Tenure;

/// How often `idle` looks at the store for a run that was woken but not yet picked up, and for
/// how many looks at most (5 s).
const IDLE_LOOK: std::time::Duration = std::time::Duration::from_millis(20);
const IDLE_GRACE_LOOKS: u32 = 250;

/// What asking for a procedure led to.
#[derive(Debug)]
pub enum Start {
    /// A run was created (running, or waiting for approval).
    Started(Box<Run>),
    /// The plan has no steps (e.g. no index is old enough); its notes say why.
    NothingToDo(Plan),
}

/// The engine; cheap to clone, shared by every front end.
#[derive(Clone)]
pub struct Engine(Arc<Inner>);

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field(
                "clusters",
                &self.0.targets.clusters.names().collect::<Vec<_>>(),
            )
            .field("clouds", &self.0.targets.clouds.names().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

struct Inner {
    /// Reads; writes go through `writes`, off the async threads.
    store: Store,
    writes: StoreWrites,
    metrics: Metrics,
    targets: Targets,
    config: EngineConfig,
    clock: Clock,
    schedules: Vec<Schedule>,
    scheduling: SchedulingConfig,
    progress: Arc<dyn ProgressSink>,
    /// Whether this instance may act (see `lease`); checked before every side effect.
    tenure: Tenure,
    /// Wakes a run's task when an operator acts on it (cancel, approve, done).
    wakers: Mutex<HashMap<RunId, Arc<Notify>>>,
    /// How many run tasks are executing (not parked waiting for a person).
    busy: watch::Sender<usize>,
}

/// Counts a run task as busy while it lives; parked tasks drop theirs.
struct Busy(watch::Sender<usize>);

impl Busy {
    fn new(counter: &watch::Sender<usize>) -> Self {
        counter.send_modify(|n| *n += 1);
        Self(counter.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Engine {
    /// Builds the engine for every configured cluster.
    pub fn new(
        config: &Config,
        store: Store,
        progress: Arc<dyn ProgressSink>,
    ) -> anyhow::Result<Self> {
        Self::with_clock(config, store, progress, Clock::system())
    }

    /// The engine going by `clock` (a simulated one in tests and rehearsals).
    pub fn with_clock(
        config: &Config,
        store: Store,
        progress: Arc<dyn ProgressSink>,
        clock: Clock,
    ) -> anyhow::Result<Self> {
        // The audit entries of its runs are stamped by the same clock as the runs themselves.
        let stamps = clock.clone();
        let store = store.with_now(opsbot_state::Now::from_fn(move || stamps.now()));
        let tenure = Tenure::default();
        let backlog: Arc<dyn crate::metrics::Backlog> = progress.clone();
        let metrics = Metrics::new(store.clone(), backlog, tenure.clone());
        let acting = tenure.clone();
        let gate = Gate::new(move || acting.role().acting());
        let targets = Targets::new(config, metrics.backend_errors(), &clock, gate)?;
        Ok(Self(Arc::new(Inner {
            writes: StoreWrites::counting(store.clone(), metrics.runs().clone(), tenure.clone()),
            tenure,
            metrics,
            store,
            targets,
            config: config.engine,
            clock,
            schedules: config.schedules.iter().map(|s| s.0.clone()).collect(),
            scheduling: config.scheduling.clone(),
            progress,
            wakers: Mutex::new(HashMap::new()),
            busy: watch::channel(0).0,
        })))
    }

    /// The time the engine goes by.
    pub fn clock(&self) -> Clock {
        self.0.clock.clone()
    }

    /// The configured schedules.
    pub fn schedules(&self) -> &[Schedule] {
        &self.0.schedules
    }

    /// The limits of scheduling.
    pub fn scheduling(&self) -> &SchedulingConfig {
        &self.0.scheduling
    }

    /// Where progress and announcements go.
    pub fn progress(&self) -> &Arc<dyn ProgressSink> {
        &self.0.progress
    }

    /// The store, to read.
    pub fn store(&self) -> &Store {
        &self.0.store
    }

    /// The store's writes, run off the async threads.
    pub fn writes(&self) -> &StoreWrites {
        &self.0.writes
    }

    /// Whether this instance may act: alone on its store (sled), or active under the lease of
    /// a shared one (see `lease`).
    pub fn tenure(&self) -> &Tenure {
        &self.0.tenure
    }

    /// What the bot counts, for `/metrics`.
    pub fn metrics(&self) -> &Metrics {
        &self.0.metrics
    }

    /// The configured clusters, for planning, help and autocomplete.
    pub fn clusters(&self) -> &Clusters {
        &self.0.targets.clusters
    }

    /// The configured clouds, for planning, help and autocomplete.
    pub fn clouds(&self) -> &Clouds {
        &self.0.targets.clouds
    }

    /// The runbooks, their inventory and host access, for `/runbook` and autocomplete.
    pub fn library(&self) -> &Library {
        &self.0.targets.library
    }

    /// The operators' approval policy, for `/help`.
    pub fn consent(&self) -> &ConsentPolicy {
        &self.0.targets.consent
    }

    /// Picks up every unfinished run after a restart. Each run's task reconciles a started step
    /// with the world before it does anything.
    pub async fn resume_all(&self) -> Result<usize, StoreError> {
        let runs = self.0.store.unfinished_runs()?;
        for run in &runs {
            let step = run.cursor();
            self.0
                .writes
                .update_run(run.id, None, move |_| Ok(vec![AuditKind::Resumed { step }]))
                .await
                .map_err(store_only)?;
            tracing::info!(run = %run.id, ?step, "resuming");
            self.0.progress.resumed(run);
            self.spawn(run.id);
        }
        Ok(runs.len())
    }

    /// Plans and starts a run, or books it for `at`; it reports in `channel`. A plan with
    /// nothing to do creates no run.
    pub async fn start(
        &self,
        actor: &Actor,
        channel: ChannelId,
        request: ProcedureRequest,
        at: Option<OffsetDateTime>,
    ) -> Result<Start, EngineError> {
        require_operator(actor)?;
        let target = request.target();
        match &target {
            Target::Cluster(name) => {
                self.clusters().get(name)?;
            }
            Target::Cloud(name) => {
                self.clouds().get(name)?;
            }
            // The plan checks the runbook and its values.
            Target::Hosts(_) => {}
        }
        let now = self.0.clock.now();
        match at {
            // A booked run takes its target's lock at its time, not now.
            Some(at) => {
                booking::check(at, now, self.0.scheduling.booking_horizon).map_err(Refusal::from)?
            }
            // Refuse a busy target before sending it anything; `create_run` checks again
            // atomically.
            None => {
                if let Some(holder) = self.0.store.lock_holder(&target)? {
                    return Err(Refusal::Busy { target, holder }.into());
                }
            }
        }
        // A booked run is planned for its time (a prune's cut-off is then's), and planned
        // for it again when it comes: the two plans differ only if the target changed.
        let plan = self.0.targets.plan(&request, at.unwrap_or(now)).await?;
        if plan.is_empty() {
            return Ok(Start::NothingToDo(plan));
        }
        let ttl = span(self.0.config.approval_ttl);
        let requester = actor.person.clone();
        let run = self
            .0
            .writes
            .create_run(
                move |id| match at {
                    Some(at) => Run::booked(id, plan, requester, channel, now, ttl, at),
                    None => Run::new(id, plan, requester, channel, now, ttl),
                },
                Some(actor.speaker()),
            )
            .await
            .map_err(|e| match e {
                StoreError::Locked { target, holder } => Refusal::Busy { target, holder }.into(),
                other => EngineError::from(other),
            })?;
        tracing::info!(run = %run.id, request = %run.plan().request(), requester = %actor.name(), "run created");
        // Published from the record as created: a booking is announced even if it is
        // cancelled before its task first looks at it.
        self.0.progress.changed(&run);
        self.spawn(run.id);
        Ok(Start::Started(Box::new(run)))
    }

    pub fn run(&self, id: RunId) -> Result<Run, EngineError> {
        self.0
            .store
            .run(id)?
            .ok_or_else(|| Refusal::NoSuchRun { run: id }.into())
    }

    /// Resolves once no run is executing; runs parked on an approval or a manual step do not
    /// count (the console waits for this at the end of its input).
    pub async fn idle(&self) {
        let mut busy = self.0.busy.subscribe();
        // A run woken by the last command (an approval, `/run done`) counts as busy only once
        // its task has looked at it again; until then the store says it can go on. A task that
        // does not pick its run up within the grace period has stopped (on a store error, which
        // it logged), and the run resumes at the next start.
        for _ in 0..IDLE_GRACE_LOOKS {
            // The sender lives in `self`, so the channel cannot close while we wait.
            let _ = busy.wait_for(|n| *n == 0).await;
            match self.0.store.unfinished_runs() {
                Ok(runs) if runs.iter().any(drive::can_go_on) => {
                    self.0.clock.sleep(IDLE_LOOK).await;
                }
                _ => return,
            }
        }
    }

    /// The runs that go on without anyone (not those waiting for an approval or a person):
    /// what [`Engine::idle`] waits for.
    pub fn executing(&self) -> Result<Vec<RunId>, StoreError> {
        let runs = self.0.store.unfinished_runs()?;
        Ok(runs
            .iter()
            .filter(|run| drive::can_go_on(run))
            .map(|run| run.id)
            .collect())
    }

    fn spawn(&self, id: RunId) {
        let inner = Arc::clone(&self.0);
        let busy = Busy::new(&inner.busy);
        tokio::spawn(drive::drive(inner, id, busy));
    }
}

fn require_operator(actor: &Actor) -> Result<(), Refusal> {
    if actor.roles.operator {
        Ok(())
    } else {
        Err(Refusal::NotOperator)
    }
}

impl Inner {
    /// A transition made by a person: compare-and-swap in the store, then published.
    async fn update(
        &self,
        id: RunId,
        actor: &Actor,
        change: impl FnMut(&mut Run) -> Result<Vec<AuditKind>, Refusal> + Send + 'static,
    ) -> Result<Run, EngineError> {
        let run = self
            .writes
            .update_run(id, Some(actor.speaker()), change)
            .await
            .map_err(|e| match e {
                UpdateError::Refused(refusal) => EngineError::Refused(refusal),
                UpdateError::Store(StoreError::NotFound { run }) => {
                    Refusal::NoSuchRun { run }.into()
                }
                UpdateError::Store(other) => other.into(),
            })?;
        self.progress.changed(&run);
        Ok(run)
    }

    /// The configured retry policy, its delays slept on the engine's clock.
    fn retry(&self) -> Retry {
        Retry::new(self.config.retry, self.clock.clone())
    }

    fn waker(&self, id: RunId) -> Arc<Notify> {
        let mut wakers = self.wakers.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(wakers.entry(id).or_default())
    }

    fn wake(&self, id: RunId) {
        self.waker(id).notify_one();
    }

    fn forget(&self, id: RunId) {
        let mut wakers = self.wakers.lock().unwrap_or_else(PoisonError::into_inner);
        wakers.remove(&id);
    }
}

#[cfg(test)]
pub(crate) mod tests;

/// The store error of a transition that cannot be refused.
fn store_only(error: UpdateError<Infallible>) -> StoreError {
    match error {
        UpdateError::Store(error) => error,
        UpdateError::Refused(never) => match never {},
    }
}
