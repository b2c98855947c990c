//! How a run is kept: its plan once, in the `plans` tree (a plan never changes: it is what was
//! approved), and the rest in the `runs` tree, rewritten by every transition. A prune's plan
//! names thousands of indices; a transition rewrites a few hundred bytes. The plans of
//! unfinished runs are shared from a small cache, so a run's task does not decode its plan at
//! every step; a finished run's plan is decoded when it is read (a listing reads each once).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use opsbot_commands::name::RunId;
use opsbot_commands::plan::{Plan, PlanDigest};
use opsbot_commands::run::{Inconsistent, Record, Run};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// A run without its plan: what a transition writes (see [`Record`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct RunRecord(Record);

impl RunRecord {
    pub(crate) fn of(run: &Run) -> Self {
        Self(run.record())
    }

    /// The run, with its plan, if the two make one (see [`Run::joined`]).
    pub(crate) fn with(self, plan: Arc<Plan>) -> Result<Run, Inconsistent> {
        Run::joined(self.0, plan)
    }

    pub(crate) fn id(&self) -> RunId {
        self.0.id
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.0.state.is_finished()
    }

    /// [`Run::holds_lock`], read from the record alone.
    pub(crate) fn holds_lock(&self) -> bool {
        !self.is_finished() && !self.is_ahead()
    }

    /// A booked run before its time: the one kind of run whose plan may still be replaced.
    pub(crate) fn is_ahead(&self) -> bool {
        self.0.booking.is_some_and(|booking| booking.is_ahead())
    }

    pub(crate) fn digest(&self) -> &PlanDigest {
        &self.0.digest
    }

    /// Where this record's run is filed among the finished: at when it finished, so that
    /// "finished since" is one range (sled's `index` tree, PostgreSQL's `runs.finished_at`);
    /// `None` while it is unfinished (those are listed by id).
    pub(crate) fn filed_at(&self) -> Option<OffsetDateTime> {
        self.0.state.finished_at()
    }
}

/// The plans of unfinished runs, by run: they are read at every step. Only those are put here
/// (see `Store::plan`) and a run's plan is forgotten when it finishes, so that reading history,
/// however long, never pushes a live run's plan out. Each is kept with the digest of the record
/// it was the plan of: a booked run's plan is replaced once, at its time, and a record with
/// the new digest never finds the old plan here.
#[derive(Debug, Default)]
pub(crate) struct PlanCache {
    inner: Mutex<Cached>,
}

#[derive(Debug, Default)]
struct Cached {
    plans: HashMap<RunId, (PlanDigest, Arc<Plan>)>,
    /// Oldest first, for eviction.
    order: VecDeque<RunId>,
}

impl PlanCache {
    /// Plans kept at most: far more than runs go on at once (the oldest is dropped past it).
    const CAPACITY: usize = 256;

    pub(crate) fn get(&self, id: RunId, digest: &PlanDigest) -> Option<Arc<Plan>> {
        let cached = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let (kept, plan) = cached.plans.get(&id)?;
        (kept == digest).then(|| Arc::clone(plan))
    }

    pub(crate) fn put(&self, id: RunId, digest: &PlanDigest, plan: Arc<Plan>) {
        let mut cached = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if cached.plans.insert(id, (digest.clone(), plan)).is_none() {
            cached.order.push_back(id);
        }
        while cached.order.len() > Self::CAPACITY {
            if let Some(oldest) = cached.order.pop_front() {
                cached.plans.remove(&oldest);
            }
        }
    }

    /// Drops the plan of a run that finished: nothing reads it at every step any more.
    pub(crate) fn forget(&self, id: RunId) {
        let mut cached = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if cached.plans.remove(&id).is_some() {
            cached.order.retain(|&kept| kept != id);
        }
    }
}

#[cfg(test)]
mod tests {
    use opsbot_commands::plan::{ClusterStep, Plan};
    use opsbot_commands::request::ProcedureRequest;

    use super::*;

    static D: std::sync::LazyLock<PlanDigest> = std::sync::LazyLock::new(|| plan().digest());

    fn plan() -> Arc<Plan> {
        Arc::new(
            Plan::new(
                ProcedureRequest::ClusterRestart {
                    cluster: opsbot_commands::name::ClusterName::parse("logs")
                        .expect("a valid name"),
                },
                Vec::<ClusterStep>::new(),
                vec![],
            )
            .unwrap(),
        )
    }

    #[test]
    fn a_cached_plan_is_the_one_put_until_it_is_forgotten() {
        let cache = PlanCache::default();
        let (one, two) = (RunId::new(1), RunId::new(2));
        let plan_one = plan();
        cache.put(one, &D, Arc::clone(&plan_one));
        cache.put(two, &D, plan());
        assert!(
            cache
                .get(one, &D)
                .is_some_and(|got| Arc::ptr_eq(&got, &plan_one))
        );
        cache.forget(one);
        assert!(cache.get(one, &D).is_none());
        assert!(cache.get(two, &D).is_some());
        // Forgetting what is not there changes nothing.
        cache.forget(one);
        assert!(cache.get(two, &D).is_some());
    }

    #[test]
    fn past_capacity_the_oldest_plan_is_dropped_and_forgotten_ones_take_no_room() {
        let cache = PlanCache::default();
        let oldest = RunId::new(1);
        cache.put(oldest, &D, plan());
        // Plans put and forgotten (runs that finished) leave the oldest where it was.
        for n in 2..=(2 * PlanCache::CAPACITY as u64) {
            cache.put(RunId::new(n), &D, plan());
            cache.forget(RunId::new(n));
        }
        assert!(cache.get(oldest, &D).is_some());
        // Putting the same run again takes no second place.
        for _ in 0..PlanCache::CAPACITY {
            cache.put(oldest, &D, plan());
        }
        for n in 2..=(PlanCache::CAPACITY as u64) {
            cache.put(RunId::new(n), &D, plan());
        }
        assert!(cache.get(oldest, &D).is_some());
        cache.put(RunId::new(1000), &D, plan());
        assert!(
            cache.get(oldest, &D).is_none(),
            "the oldest goes past capacity"
        );
        assert!(cache.get(RunId::new(2), &D).is_some());
    }
}
