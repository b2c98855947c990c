//! What chat and the console list: read through the time-ordered `index` tree, so that each
//! listing decodes only the records it returns, however long the history (a store with a
//! corrupt record a year old still lists today's runs).

use std::ops::Bound;

use opsbot_commands::audit::AuditEvent;
use opsbot_commands::name::RunId;
use opsbot_commands::page::Page;
use opsbot_commands::run::Run;
use sled::IVec;
use time::OffsetDateTime;

use crate::error::StoreError;
use crate::listing::{AuditQuery, Listing};
use crate::sled::Sled;
use crate::sled::keys::{self, AUDIT, AUDIT_BY_TIME, FINISHED, INDEX, UNFINISHED};

impl Sled {
    /// The bytes sled's files take on disk (what grows with the history until compaction),
    /// for the bot's metrics.
    pub fn size_on_disk(&self) -> Result<u64, StoreError> {
        Ok(self.db.size_on_disk()?)
    }

    /// The unfinished runs (to resume, or to show), oldest first: read from their index, so
    /// the finished runs that are the bulk of the store are not read at all.
    pub fn unfinished_runs(&self) -> Result<Vec<Run>, StoreError> {
        let mut runs = Vec::new();
        for (key, id) in self.unfinished_ids()? {
            runs.extend(self.unfinished_run(&key, id)?);
        }
        Ok(runs)
    }

    /// The unfinished run the index key `key` points at; `None` when it finished since the
    /// key was read (see [`Sled::moved`]).
    fn unfinished_run(&self, key: &[u8], id: RunId) -> Result<Option<Run>, StoreError> {
        match self.indexed_run(key, id)? {
            Some(run) if run.state.is_finished() => {
                self.moved(key, || format!("run {id} is finished"))
            }
            run => Ok(run),
        }
    }

    /// `/run list`: the unfinished runs and those finished at or after `since`, newest (by id)
    /// first, one page of `per_page`. Only the ids are read for the runs on other pages.
    pub fn recent_runs(
        &self,
        since: OffsetDateTime,
        page: Page,
        per_page: usize,
    ) -> Result<Listing<Run>, StoreError> {
        let mut ids = self.unfinished_ids()?;
        for key in self
            .index
            .range(keys::finished_from(since)..[FINISHED + 1].to_vec())
            .keys()
        {
            let key = key?;
            let id = self.index_number(&key)?;
            ids.push((key, RunId::new(id)));
        }
        ids.sort_unstable_by_key(|&(_, id)| std::cmp::Reverse(id));
        // A run that finished between the two index reads was read under both keys.
        ids.dedup_by_key(|(_, id)| *id);
        let skip = page.skip(per_page);
        let mut items = Vec::new();
        for (key, id) in ids.iter().skip(skip).take(per_page) {
            items.extend(self.indexed_run(key, *id)?);
        }
        Ok(Listing {
            items,
            more: ids.len() > skip.saturating_add(per_page),
        })
    }

    /// Run ids to suggest as an option is typed: the unfinished runs first (newest first), then
    /// the newest others, `limit` in all; from keys only, no record is decoded.
    pub fn suggested_run_ids(&self, limit: usize) -> Result<Vec<RunId>, StoreError> {
        let mut ids: Vec<RunId> = self
            .unfinished_ids()?
            .into_iter()
            .map(|(_, id)| id)
            .collect();
        ids.reverse();
        for key in self.runs.iter().keys().rev() {
            if ids.len() >= limit {
                break;
            }
            let key = key?;
            let id = keys::key_number(&key)
                .map(RunId::new)
                .ok_or_else(|| self.corrupt(keys::RUNS, &key, "its key is not a run id"))?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        ids.truncate(limit);
        Ok(ids)
    }

    /// Every run, newest first, each decoded: the whole history, for tests and tools; chat and
    /// the console read [`Sled::recent_runs`].
    pub fn runs(&self) -> Result<Vec<Run>, StoreError> {
        self.runs
            .iter()
            .rev()
            .map(|entry| {
                let (key, bytes) = entry?;
                self.decode_run(&key, &bytes)
            })
            .collect()
    }

    /// The whole audit log in the order it was appended, in memory: for tests and tools; chat
    /// reads [`Sled::audit_page`] and an export streams [`Sled::audit_events`].
    pub fn audit(&self) -> Result<Vec<AuditEvent>, StoreError> {
        self.audit
            .iter()
            .map(|entry| {
                let (key, bytes) = entry?;
                self.decode(AUDIT, &key, &bytes)
            })
            .collect()
    }

    /// `/audit`: one page of `per_page` entries matching `query`, newest first.
    pub fn audit_page(
        &self,
        query: AuditQuery,
        page: Page,
        per_page: usize,
    ) -> Result<Listing<AuditEvent>, StoreError> {
        let skip = page.skip(per_page);
        let mut keys = self.audit_keys(query).rev().skip(skip);
        let mut items = Vec::new();
        for key in keys.by_ref().take(per_page) {
            items.extend(self.indexed_audit(&key?)?);
        }
        Ok(Listing {
            items,
            more: keys.next().is_some(),
        })
    }

    /// Every audit entry matching `query`, oldest first, read one at a time as the iterator is
    /// (for an export, however long).
    pub fn audit_events(
        &self,
        query: AuditQuery,
    ) -> impl Iterator<Item = Result<AuditEvent, StoreError>> + '_ {
        self.audit_keys(query).filter_map(|key| {
            key.map_err(StoreError::from)
                .and_then(|key| self.indexed_audit(&key))
                .transpose()
        })
    }

    /// The index keys of the unfinished runs and the runs they name, oldest first.
    fn unfinished_ids(&self) -> Result<Vec<(IVec, RunId)>, StoreError> {
        self.index
            .scan_prefix([UNFINISHED])
            .keys()
            .map(|key| {
                let key = key?;
                let id = self.index_number(&key)?;
                Ok((key, RunId::new(id)))
            })
            .collect()
    }

    /// The index keys of the audit entries `query` matches, oldest first.
    fn audit_keys(
        &self,
        query: AuditQuery,
    ) -> impl DoubleEndedIterator<Item = Result<IVec, sled::Error>> {
        let (start, end) = match query.run {
            Some(run) => (
                keys::audit_run_from(run, query.since),
                keys::audit_run_end(run),
            ),
            None => (keys::audit_time_from(query.since), vec![AUDIT_BY_TIME + 1]),
        };
        self.index
            .range::<Vec<u8>, _>((Bound::Included(start), Bound::Excluded(end)))
            .keys()
    }

    /// The run an index key points at; `None` when it is gone since the key was read (see
    /// [`Sled::moved`]).
    fn indexed_run(&self, key: &[u8], id: RunId) -> Result<Option<Run>, StoreError> {
        match self.run(id)? {
            Some(run) => Ok(Some(run)),
            None => self.moved(key, || format!("there is no run {id}")),
        }
    }

    /// The audit entry an index key points at; `None` when it is gone since the key was read
    /// (see [`Sled::moved`]).
    fn indexed_audit(&self, key: &[u8]) -> Result<Option<AuditEvent>, StoreError> {
        let seq = self.index_number(key)?;
        let entry = keys::number_key(seq);
        match self.audit.get(entry)? {
            Some(bytes) => self.decode(AUDIT, &entry, &bytes).map(Some),
            None => self.moved(key, || format!("there is no audit entry #{seq}")),
        }
    }

    /// What a listing makes of an index key whose record is not as the key says (`wrong`): a
    /// listing reads the key, then the record, and a write may come in between (a run
    /// finishing moves its key; compaction removes both). A key gone since is skipped; a key
    /// still there points at nothing, and the index is damaged.
    fn moved<T>(
        &self,
        key: &[u8],
        wrong: impl FnOnce() -> String,
    ) -> Result<Option<T>, StoreError> {
        if self.index.contains_key(key)? {
            return Err(self.corrupt(INDEX, key, &wrong()));
        }
        Ok(None)
    }

    fn index_number(&self, key: &[u8]) -> Result<u64, StoreError> {
        keys::indexed_number(key).ok_or_else(|| self.corrupt(INDEX, key, "it is too short"))
    }
}

#[cfg(test)]
mod tests;
