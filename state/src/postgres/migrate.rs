//! The schema's versions: migrations in `state/migrations/`, built into the binary, applied in
//! order in one transaction under an advisory lock (two instances starting together migrate
//! once), each recorded in `opsbot_migrations`. A database migrated by a newer opsbot is
//! refused: this one would not know what the newer tables mean.

use super::Postgres;
use super::pool::{Fail, params};
use crate::error::StoreError;

/// Every migration, oldest first: version, name, SQL.
pub(crate) const MIGRATIONS: &[(u32, &str, &str)] = &[(
    1,
    "initial",
    include_str!("../../migrations/0001_initial.sql"),
)];

/// The newest schema version this opsbot knows.
pub(crate) fn latest() -> u32 {
    MIGRATIONS.last().map_or(0, |&(version, _, _)| version)
}

/// Brings schema `schema` to [`latest`]; returns its version.
pub(crate) fn migrate(store: &Postgres, schema: &str) -> Result<u32, StoreError> {
    // The schema is checked to be a plain name (see `PgConfig::connection`): safe to splice.
    let prepare = format!(
        "CREATE SCHEMA IF NOT EXISTS {schema}; \
         CREATE TABLE IF NOT EXISTS {schema}.opsbot_migrations ( \
             version integer PRIMARY KEY, name text NOT NULL, \
             applied_at timestamptz NOT NULL DEFAULT now())"
    );
    let mut conn = store.inner.pool.conn()?;
    let outcome = (|| {
        conn.begin_read_committed()?;
        conn.query(
            "SELECT pg_advisory_xact_lock(hashtext('opsbot migrations ' || $1))",
            params![schema.to_owned()],
        )?;
        conn.batch(prepare)?;
        let found = conn
            .query_opt("SELECT max(version) FROM opsbot_migrations", params![])?
            .and_then(|row| row.get::<_, Option<i32>>(0))
            .map_or(0, |version| u32::try_from(version).unwrap_or(0));
        if found > latest() {
            return Err(Fail::Store(StoreError::NewerRow {
                place: store.describe(),
                what: "its schema".to_owned(),
                found,
                supported: latest(),
            }));
        }
        for &(version, name, sql) in MIGRATIONS.iter().filter(|m| m.0 > found) {
            conn.batch(sql.to_owned())?;
            conn.execute(
                "INSERT INTO opsbot_migrations (version, name) VALUES ($1, $2)",
                params![i32::try_from(version).unwrap_or(i32::MAX), name.to_owned()],
            )?;
            tracing::info!(version, name, schema, "store schema migrated");
        }
        conn.commit()?;
        Ok(found.max(latest()))
    })();
    outcome.map_err(|fail| {
        conn.rollback();
        match fail {
            Fail::Store(error) => error,
            Fail::Retry => StoreError::Postgres {
                place: store.describe(),
                detail: "the migration conflicted with another; start again".to_owned(),
            },
        }
    })
}
