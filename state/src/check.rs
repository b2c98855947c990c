//! Checking a store before the bot trusts it: the schema version (and moving an older layout
//! to this one), then one decoding pass over counters, locks and runs (records and plans).

use opsbot_commands::maintenance::MaintenanceNotice;
use opsbot_commands::name::RunId;
use opsbot_commands::plan::Plan;
use serde::Deserialize;
use sled::{Transactional, Tree};

use crate::error::StoreError;
use crate::keys::{
    self, AUDIT, LOCKS, MAINTENANCE, META, NEXT_AUDIT, NEXT_RUN, PLANS, RUNS, SCHEMA,
};
use crate::record::RunRecord;
use crate::store::{SCHEMA_VERSION, Store, settle};

/// A run record as schema 1 kept it: the whole run, its plan inside; read in one pass. A record
/// already moved (by a move a crash interrupted) has no plan.
#[derive(Deserialize)]
struct Schema1Record {
    plan: Option<Plan>,
    #[serde(flatten)]
    record: RunRecord,
}

impl Store {
    /// Writes the schema version into a new store; moves an older layout to this one; refuses
    /// one from a newer opsbot, and one that has records but no version (not a store this code
    /// wrote).
    pub(crate) fn check_schema(&self) -> Result<(), StoreError> {
        if let Some(bytes) = self.meta.get(SCHEMA)? {
            let found: u32 = self.decode(META, SCHEMA, &bytes)?;
            if found > SCHEMA_VERSION {
                return Err(StoreError::NewerVersion {
                    path: self.path().to_owned(),
                    tree: META,
                    key: keys::render(META, SCHEMA),
                    found,
                    supported: SCHEMA_VERSION,
                });
            }
            if found < SCHEMA_VERSION {
                self.separate_plans()?;
                self.meta
                    .insert(SCHEMA, self.encode("the schema version", &SCHEMA_VERSION)?)?;
                self.flush()?;
            }
            return Ok(());
        }
        let trees = [
            &self.meta,
            &self.runs,
            &self.plans,
            &self.locks,
            &self.audit,
            &self.run_logs,
            &self.deliveries,
        ];
        if trees.iter().any(|tree| !tree.is_empty()) {
            return Err(self.corrupt(META, SCHEMA, "missing, although the store holds records"));
        }
        self.meta
            .insert(SCHEMA, self.encode("the schema version", &SCHEMA_VERSION)?)?;
        self.flush()
    }

    /// Schema 1 kept each run's plan in its record: moves every plan to the `plans` tree, one
    /// run at a time. Done again after a crash, it finds the plans already moved.
    fn separate_plans(&self) -> Result<(), StoreError> {
        for entry in self.runs.iter() {
            let (key, bytes) = entry?;
            let old: Schema1Record = self.decode(RUNS, &key, &bytes)?;
            let Some(plan) = old.plan else {
                continue;
            };
            let plan = self.encode("a run's plan", &plan)?;
            let record = self.encode("a run record", &old.record)?;
            settle((&self.runs, &self.plans).transaction(|(runs, plans)| {
                plans.insert(&*key, plan.as_slice())?;
                runs.insert(&*key, record.as_slice())?;
                Ok(())
            }))?;
        }
        tracing::info!(path = %self.path().display(), "run plans kept apart from run states");
        Ok(())
    }

    /// Decodes every counter, lock and run once (each run whole: its record, its plan, and
    /// checked consistent in itself), and checks that the counters are ahead of what they
    /// number (a counter behind would make the next write collide with a record). Returns how
    /// many runs there are and how many are unfinished.
    pub(crate) fn validate(&self) -> Result<(usize, usize), StoreError> {
        for entry in self.meta.iter() {
            let (key, bytes) = entry?;
            if key == MAINTENANCE {
                self.decode::<MaintenanceNotice>(META, &key, &bytes)?;
                continue;
            }
            // The schema version is a small number too; every other meta value decodes as one.
            self.decode::<u64>(META, &key, &bytes)?;
        }
        for entry in self.locks.iter() {
            let (key, bytes) = entry?;
            self.decode::<RunId>(LOCKS, &key, &bytes)?;
        }
        let (mut runs, mut unfinished) = (0, 0);
        for entry in self.runs.iter() {
            let (key, bytes) = entry?;
            // Whole, as a listing reads it; only an unfinished run's plan stays in the cache.
            let run = self.decode_run(&key, &bytes)?;
            runs += 1;
            if !run.state.is_finished() {
                unfinished += 1;
            }
        }
        self.check_counter(NEXT_RUN, &self.runs, RUNS)?;
        // A plan is written with its record, under the same id: one at or past the counter
        // (left by a repair by hand) would make the next `create_run` refuse its id.
        self.check_counter(NEXT_RUN, &self.plans, PLANS)?;
        self.check_counter(NEXT_AUDIT, &self.audit, AUDIT)?;
        Ok((runs, unfinished))
    }

    /// Checks that `counter` is past the last key of `tree` (whose records it numbers).
    pub(crate) fn check_counter(
        &self,
        counter: &[u8],
        tree: &Tree,
        name: &str,
    ) -> Result<(), StoreError> {
        let Some((last, _)) = tree.last()? else {
            return Ok(());
        };
        let next = self.counter(counter)?;
        match keys::key_number(&last) {
            Some(last) if last < next => Ok(()),
            _ => Err(self.corrupt(
                META,
                counter,
                &format!(
                    "it is {next}, not past the last {} {}",
                    keys::noun(name),
                    keys::render(name, &last)
                ),
            )),
        }
    }
}
