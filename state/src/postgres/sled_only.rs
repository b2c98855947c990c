//! What a store on sled does that a store on PostgreSQL leaves to the database: backups, and
//! archiving the history. Each says so with a typed error, or (compaction, run by the bot on a
//! timer) does nothing; the bytes the store takes are the schema's tables and indexes.

use std::path::Path;

use time::OffsetDateTime;

use super::Postgres;
use super::pool::params;
use crate::error::StoreError;
use crate::sled::{ArchivePaths, Compacted, Summary};

impl Postgres {
    pub(crate) fn backup(&self, _dest: &Path) -> Result<Summary, StoreError> {
        Err(StoreError::NotOnPostgres {
            what: "`opsbot store backup`",
            hint: "back the database up with pg_dump (of the store's schema, or the whole \
                   database), which sees it at one point in time",
        })
    }

    pub(crate) fn archive_paths(&self) -> Result<ArchivePaths, StoreError> {
        Err(StoreError::NotOnPostgres {
            what: "an archive of compacted history",
            hint: "the history stays in the database; bound it with your own retention if \
                   you must",
        })
    }

    /// Nothing: the history stays in the database (see [`crate::Store::compact`] for why).
    pub(crate) fn compact(
        &self,
        _cutoff: OffsetDateTime,
        _batch: usize,
    ) -> Result<Compacted, StoreError> {
        Ok(Compacted::default())
    }

    pub(crate) fn size_on_disk(&self) -> Result<u64, StoreError> {
        self.read(|conn| {
            let row = conn.query_opt(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint \
                 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = current_schema() AND c.relkind = 'r'",
                params![],
            )?;
            Ok(row.map_or(0, |row| super::number(row.get(0))))
        })
    }
}
