//! The cluster locks of the sled store: taken with a run's creation and released by the
//! transition that finishes it, in the same transaction; a lock whose run no longer holds it
//! (possible only after a repair by hand) counts as free.

use opsbot_commands::name::RunId;
use opsbot_commands::run::Run;
use opsbot_commands::target::Target;
use sled::IVec;
use sled::transaction::{
    ConflictableTransactionError, ConflictableTransactionResult, TransactionalTree,
    UnabortableTransactionError,
};

use super::keys::{self, LOCKS};
use super::{PlanRead, Sled, abort};
use crate::error::StoreError;
use crate::transition;

impl Sled {
    /// Makes the locks agree with `run` as it is about to be written: an unfinished run holds
    /// its target's locks, a finished one holds none. A run's target never changes (its plan
    /// does not), so its locks are the same keys all its life.
    pub(crate) fn sync_lock<E: From<StoreError>>(
        &self,
        runs: &TransactionalTree,
        plans: &TransactionalTree,
        locks: &TransactionalTree,
        run: &Run,
    ) -> ConflictableTransactionResult<(), E> {
        let target = run.plan().request().target();
        if !run.holds_lock() {
            return self.release(locks, &target, run.id);
        }
        for key in target.lock_keys() {
            let key = key.as_str();
            if let Some(bytes) = locks.get(key)? {
                let holder: RunId = self.decode(LOCKS, key.as_bytes(), &bytes).map_err(abort)?;
                if holder == run.id {
                    continue;
                }
                let held = runs.get(keys::run_key(holder))?;
                let live = self.is_live(holder, held, key, |key: &[u8]| {
                    Ok::<_, InTransaction<E>>(plans.get(key)?)
                });
                if live.map_err(|InTransaction(error)| error)? {
                    return Err(abort(StoreError::Locked { target, holder }));
                }
                tracing::warn!(%key, %holder, run = %run.id, "taking over a stale lock");
            }
            let value = transition::encode("a lock", &run.id).map_err(abort)?;
            locks.insert(key, value)?;
        }
        Ok(())
    }

    /// Removes `target`'s locks that `run` holds (a lock held by another run is theirs).
    fn release<E: From<StoreError>>(
        &self,
        locks: &TransactionalTree,
        target: &Target,
        run: RunId,
    ) -> ConflictableTransactionResult<(), E> {
        for key in target.lock_keys() {
            let key = key.as_bytes();
            if let Some(bytes) = locks.get(key)? {
                let holder: RunId = self.decode(LOCKS, key, &bytes).map_err(abort)?;
                if holder == run {
                    locks.remove(key)?;
                }
            }
        }
        Ok(())
    }

    /// Whether the lock `key` held by `holder` (whose stored record is `record`) still counts;
    /// `read_plan` reads the holder's plan if it is not cached (see [`PlanRead`]). A lock whose
    /// run is missing, finished or on another target cannot happen through this store's
    /// methods, only after a repair by hand; it is treated as free so that the target is not
    /// blocked forever by a run that will never release it.
    pub(crate) fn is_live<E: From<StoreError>>(
        &self,
        holder: RunId,
        record: Option<IVec>,
        key: &str,
        read_plan: impl PlanRead<E>,
    ) -> Result<bool, E> {
        let Some(bytes) = record else {
            return Ok(false);
        };
        let run_key = keys::run_key(holder);
        let record = self.decode_record(&run_key, &bytes)?;
        if !record.holds_lock() {
            return Ok(false);
        }
        let run = self.with_plan_read_by(&run_key, record, read_plan)?;
        Ok(run
            .plan()
            .request()
            .target()
            .lock_keys()
            .iter()
            .any(|k| k == key))
    }
}

/// An error inside a transaction, as [`PlanRead`] gives it: store errors abort the
/// transaction, sled's are sled's.
struct InTransaction<E>(ConflictableTransactionError<E>);

impl<E: From<StoreError>> From<StoreError> for InTransaction<E> {
    fn from(error: StoreError) -> Self {
        Self(abort(error))
    }
}

impl<E> From<UnabortableTransactionError> for InTransaction<E> {
    fn from(error: UnabortableTransactionError) -> Self {
        Self(error.into())
    }
}
