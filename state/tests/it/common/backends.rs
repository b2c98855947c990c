//! One behaviour suite, two backends: a test written once as `fn name(place: Place)` runs as
//! `sled::name` (a temporary directory) and `postgres::name` (a schema of its own on the test
//! process's one PostgreSQL, see `opsbot_tmp_postgres::shared`), through [`crate::backends!`].

#![allow(clippy::unwrap_used)] // Test code: a failed unwrap is a failed test.

use std::collections::BTreeMap;

use opsbot_state::{PgConfig, Store, StoreError};

/// Where a test's store lives; opened as often as the test likes (a reopen is a restart).
pub enum Place {
    Sled(tempfile::TempDir),
    Postgres(PgConfig),
}

impl Place {
    pub fn sled() -> Place {
        match tempfile::tempdir() {
            Ok(dir) => Place::Sled(dir),
            Err(error) => panic!("no temporary directory for a sled store: {error}"),
        }
    }

    /// A fresh schema on the shared server. A server that cannot start fails the test, with
    /// why: a suite that skipped PostgreSQL would pass without testing it.
    pub fn postgres() -> Place {
        Place::Postgres(pg_config())
    }

    pub fn open(&self) -> Result<Store, StoreError> {
        match self {
            Place::Sled(dir) => super::open(dir.path()),
            Place::Postgres(config) => Store::open_postgres(config),
        }
    }

    /// The cluster locks as stored, read past the store (sled's tree, PostgreSQL's table).
    pub fn raw_locks(&self) -> BTreeMap<String, u64> {
        match self {
            Place::Sled(dir) => {
                let db = super::raw_open(dir.path()).unwrap();
                db.open_tree("locks")
                    .unwrap()
                    .iter()
                    .map(|entry| {
                        let (key, value) = entry.unwrap();
                        let value: serde_json::Value = serde_json::from_slice(&value).unwrap();
                        (
                            String::from_utf8(key.to_vec()).unwrap(),
                            value["data"].as_u64().unwrap(),
                        )
                    })
                    .collect()
            }
            Place::Postgres(config) => sql(config, "SELECT key, run FROM locks")
                .iter()
                .map(|row| (row.get(0), u64::try_from(row.get::<_, i64>(1)).unwrap()))
                .collect(),
        }
    }
}

/// A fresh schema on the test process's one PostgreSQL. A server that cannot start fails the
/// test, with why: a suite that skipped PostgreSQL would pass without testing it.
pub fn pg_config() -> PgConfig {
    let server = match opsbot_tmp_postgres::shared() {
        Ok(server) => server,
        Err(error) => panic!("the test PostgreSQL did not start: {error}"),
    };
    let mut config = PgConfig::new(server.url("postgres"));
    config.schema = format!("t_{}", uuid::Uuid::new_v4().simple());
    config
}

/// Runs `statements` on the store's schema past the store, for tests that look at or change
/// what it keeps; returns the rows of the last.
pub fn sql(config: &PgConfig, statements: &str) -> Vec<tokio_postgres::Row> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut pg: tokio_postgres::Config = config.url.parse().unwrap();
        pg.options(format!("-c search_path={}", config.schema));
        let (client, connection) = pg.connect(tokio_postgres::NoTls).await.unwrap();
        let connection = tokio::spawn(connection);
        let mut rows = Vec::new();
        for statement in statements.split(';').filter(|s| !s.trim().is_empty()) {
            rows = client.query(statement, &[]).await.unwrap();
        }
        drop(client);
        let _ = connection.await;
        rows
    })
}

/// Expands each test `fn name(place: Place)` of the file into `sled::name` and
/// `postgres::name`.
#[macro_export]
macro_rules! backends {
    ($($test:ident),* $(,)?) => {
        mod sled {
            $(
                #[test]
                fn $test() {
                    super::$test($crate::common::Place::sled());
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $test() {
                    super::$test($crate::common::Place::postgres());
                }
            )*
        }
    };
}
