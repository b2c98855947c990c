//! The bridge from the store's synchronous API to tokio-postgres. The store is called from the
//! bot's async code (even its current-thread runtime, where blocking on a future of the same
//! runtime would never end), so the connections live on a runtime of their own, on a thread of
//! their own: each statement is spawned there and its answer awaited on a channel. A caller's
//! closures never go there; only SQL does. Every wait is bounded, so an outage is an error
//! ([`StoreError::Unavailable`]), never a hang.

use std::future::Future;
use std::sync::mpsc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, RecyclingMethod};
use tokio::runtime::Handle;
use tokio_postgres::Row;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

use crate::error::StoreError;
use crate::postgres::PgConfig;

/// One statement parameter, owned: it travels to the pool's runtime with its statement.
pub(crate) type Param = Box<dyn ToSql + Send + Sync>;

/// Owned statement parameters.
macro_rules! params {
    ($($value:expr),* $(,)?) => {
        vec![$(Box::new($value) as $crate::postgres::pool::Param),*]
    };
}
pub(crate) use params;

/// Why a statement failed: a conflict to retry the transaction for, or the store's error.
#[derive(Debug)]
pub(crate) enum Fail {
    /// A serialization failure or deadlock (SQLSTATE 40001, 40P01): the transaction did
    /// nothing and is run again from its start.
    Retry,
    Store(StoreError),
}

impl From<StoreError> for Fail {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

/// The connections and the runtime they run on. The runtime's thread ends when this is
/// dropped (its `stop` sender goes): a runtime dropped inside async code panics, so only that
/// thread ever drops it.
pub(crate) struct Pool {
    pool: deadpool_postgres::Pool,
    handle: Handle,
    /// Where the store is, for errors (no secret).
    pub(crate) place: String,
    timeout: Duration,
    _stop: mpsc::Sender<()>,
}

impl Pool {
    pub(crate) fn new(config: &PgConfig) -> Result<Self, StoreError> {
        let (pg, tls) = config.connection()?;
        let place = super::config::describe(&pg, &config.schema);
        let (handle, stop) = runtime(&place)?;
        let manager = Manager::from_config(
            pg,
            tls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        // Waiting for a connection and making one are bounded like a statement.
        let timeout = config.statement_timeout.max(config.connect_timeout);
        let pool = deadpool_postgres::Pool::builder(manager)
            .max_size(config.pool_size.max(1))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(timeout))
            .create_timeout(Some(config.connect_timeout))
            .recycle_timeout(Some(config.connect_timeout))
            .build()
            .map_err(|error| StoreError::PgConfig {
                detail: error.to_string(),
            })?;
        Ok(Self {
            pool,
            handle,
            place,
            // A statement's own timeout is the server's; this one also covers a server that
            // stopped answering.
            timeout: timeout + Duration::from_secs(1),
            _stop: stop,
        })
    }

    /// Runs `future` on the pool's runtime and waits for it: at most the timeout and a grace
    /// second (a connection's own work is bounded by the timeout within, see
    /// [`Conn::exchange`], so that it never goes back to the pool half done).
    fn block<T: Send + 'static>(
        &self,
        future: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = mpsc::sync_channel(1);
        let timeout = self.timeout + Duration::from_secs(1);
        self.handle.spawn(async move {
            let _ = tx.send(tokio::time::timeout(timeout, future).await);
        });
        match rx.recv() {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(_elapsed)) => {
                Err(self.unavailable(format!("no answer within {} s", timeout.as_secs())))
            }
            Err(_) => Err(StoreError::ShuttingDown),
        }
    }

    /// A connection from the pool.
    /// Ends the idle connections now and takes no new ones: each says goodbye to the server
    /// instead of finding it gone later.
    pub(crate) fn close(&self) {
        self.pool.close();
    }

    pub(crate) fn conn(&self) -> Result<Conn<'_>, StoreError> {
        let pool = self.pool.clone();
        let client = self
            .block(async move { pool.get().await })?
            .map_err(|error| match error {
                deadpool_postgres::PoolError::Backend(error) => self.classify(&error),
                other => self.unavailable(other.to_string()),
            })?;
        Ok(Conn {
            pool: self,
            client: Some(client),
            in_transaction: false,
        })
    }

    pub(crate) fn unavailable(&self, detail: String) -> StoreError {
        StoreError::Unavailable {
            place: self.place.clone(),
            detail,
        }
    }

    /// What a failed statement means for the store.
    fn classify(&self, error: &tokio_postgres::Error) -> StoreError {
        let Some(db) = error.as_db_error() else {
            // No answer from the server: the connection broke or never was. Its causes say
            // why (a refused connection, a certificate not signed by the CA...).
            let mut detail = error.to_string();
            let mut cause = std::error::Error::source(error);
            while let Some(inner) = cause {
                detail = format!("{detail}: {inner}");
                cause = inner.source();
            }
            return self.unavailable(detail);
        };
        let code = db.code();
        let outage = code == &SqlState::QUERY_CANCELED
            || code == &SqlState::ADMIN_SHUTDOWN
            || code == &SqlState::CRASH_SHUTDOWN
            || code == &SqlState::CANNOT_CONNECT_NOW
            || code == &SqlState::TOO_MANY_CONNECTIONS
            || code.code().starts_with("08")
            || code.code().starts_with("53");
        let detail = format!("{} ({})", db.message(), code.code());
        if outage {
            self.unavailable(detail)
        } else if code.code().starts_with("28") {
            StoreError::Login {
                place: self.place.clone(),
                detail,
            }
        } else {
            StoreError::Postgres {
                place: self.place.clone(),
                detail,
            }
        }
    }
}

/// The runtime the connections live on, on its own thread, and what stops it.
fn runtime(place: &str) -> Result<(Handle, mpsc::Sender<()>), StoreError> {
    let (ready_tx, ready_rx) = mpsc::channel();
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let spawned = std::thread::Builder::new()
        .name("opsbot-postgres".to_owned())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("opsbot-postgres-io")
                .enable_all()
                .build();
            match runtime {
                Ok(runtime) => {
                    let _ = ready_tx.send(Ok(runtime.handle().clone()));
                    // Returns when the last sender is dropped: the store is gone.
                    let _ = stop_rx.recv();
                    runtime.shutdown_timeout(Duration::from_secs(1));
                }
                Err(error) => {
                    let _ = ready_tx.send(Err(error));
                }
            }
        });
    let failed = |detail: String| StoreError::Unavailable {
        place: place.to_owned(),
        detail: format!("its connection thread did not start ({detail})"),
    };
    spawned.map_err(|error| failed(error.to_string()))?;
    match ready_rx.recv() {
        Ok(Ok(handle)) => Ok((handle, stop_tx)),
        Ok(Err(error)) => Err(failed(error.to_string())),
        Err(error) => Err(failed(error.to_string())),
    }
}

/// One connection, used from the caller's thread a statement at a time; a transaction is
/// `BEGIN` ... `COMMIT` on it. A connection dropped inside a transaction that did not end is
/// closed rather than put back (closing it rolls the transaction back), so that no later
/// caller finds a transaction half done.
pub(crate) struct Conn<'p> {
    pool: &'p Pool,
    client: Option<Object>,
    in_transaction: bool,
}

impl Conn<'_> {
    /// The rows of one statement.
    pub(crate) fn query(
        &mut self,
        sql: &'static str,
        params: Vec<Param>,
    ) -> Result<Vec<Row>, Fail> {
        self.exchange(move |client| {
            Box::pin(async move {
                let statement = client.prepare_cached(sql).await?;
                client.query(&statement, &refs(&params)).await
            })
        })
    }

    /// The one row of a statement that returns at most one.
    pub(crate) fn query_opt(
        &mut self,
        sql: &'static str,
        params: Vec<Param>,
    ) -> Result<Option<Row>, Fail> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// How many rows a statement changed.
    pub(crate) fn execute(&mut self, sql: &'static str, params: Vec<Param>) -> Result<u64, Fail> {
        self.exchange(move |client| {
            Box::pin(async move {
                let statement = client.prepare_cached(sql).await?;
                client.execute(&statement, &refs(&params)).await
            })
        })
    }

    /// Statements without parameters, sent as one (migrations, `BEGIN`, `COMMIT`).
    pub(crate) fn batch(&mut self, sql: String) -> Result<(), Fail> {
        self.exchange(move |client| Box::pin(async move { client.batch_execute(&sql).await }))
    }

    /// Starts a serializable transaction: every write of the store is one.
    pub(crate) fn begin(&mut self) -> Result<(), Fail> {
        self.begin_as("BEGIN ISOLATION LEVEL SERIALIZABLE")
    }

    /// Starts a transaction whose statements each see what committed before them: a
    /// migration's, which waits for another's under a lock and must then see its tables.
    pub(crate) fn begin_read_committed(&mut self) -> Result<(), Fail> {
        self.begin_as("BEGIN ISOLATION LEVEL READ COMMITTED")
    }

    fn begin_as(&mut self, begin: &str) -> Result<(), Fail> {
        self.batch(begin.to_owned())?;
        self.in_transaction = true;
        Ok(())
    }

    pub(crate) fn commit(&mut self) -> Result<(), Fail> {
        self.batch("COMMIT".to_owned())?;
        self.in_transaction = false;
        Ok(())
    }

    /// Ends a transaction that failed; a connection that cannot is closed when dropped.
    pub(crate) fn rollback(&mut self) {
        if self.batch("ROLLBACK".to_owned()).is_ok() {
            self.in_transaction = false;
        }
    }

    /// Sends the client to the runtime with its work and takes it back with the answer. A
    /// client whose work did not end in time is closed there and then: its connection may be
    /// in the middle of a statement or a transaction, and must never go back to the pool.
    fn exchange<T: Send + 'static>(
        &mut self,
        work: impl for<'c> FnOnce(&'c Object) -> Work<'c, T> + Send + 'static,
    ) -> Result<T, Fail> {
        let Some(client) = self.client.take() else {
            return Err(Fail::Store(
                self.pool.unavailable("its connection was lost".to_owned()),
            ));
        };
        let timeout = self.pool.timeout;
        let answered = self.pool.block(async move {
            match tokio::time::timeout(timeout, work(&client)).await {
                Ok(result) => Some((client, result)),
                Err(_elapsed) => {
                    drop(Object::take(client));
                    None
                }
            }
        })?;
        let Some((client, result)) = answered else {
            return Err(Fail::Store(
                self.pool
                    .unavailable(format!("no answer within {} s", timeout.as_secs())),
            ));
        };
        self.client = Some(client);
        result.map_err(|error| match error.code() {
            Some(code)
                if code == &SqlState::T_R_SERIALIZATION_FAILURE
                    || code == &SqlState::T_R_DEADLOCK_DETECTED =>
            {
                Fail::Retry
            }
            _ => Fail::Store(self.pool.classify(&error)),
        })
    }
}

/// A statement's work on a client, sent to the pool's runtime.
type Work<'c, T> =
    std::pin::Pin<Box<dyn Future<Output = Result<T, tokio_postgres::Error>> + Send + 'c>>;

/// Parameters as tokio-postgres takes them.
fn refs(params: &[Param]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect()
}

impl Drop for Conn<'_> {
    fn drop(&mut self) {
        if self.in_transaction {
            if let Some(client) = self.client.take() {
                drop(Object::take(client));
            }
        }
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("place", &self.place).finish()
    }
}
