//! The lease of high availability: one row, `active`, naming the instance that may write and
//! the epoch it writes under. Times are the database's clock (`clock_timestamp()`), the one
//! clock every instance shares, so that no instance's drift can make two of them active. The
//! epoch goes up each time the lease changes hands; a fenced store (see [`Postgres::fence`])
//! checks it at the start of every write transaction, holding the row shared until the
//! commit, so that a takeover and a write of the old holder cannot interleave.

use std::time::Duration;

use time::OffsetDateTime;

use super::pool::{Conn, Fail, params};
use super::{Postgres, number, sql_number};
use crate::error::StoreError;

/// The lease as it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseStatus {
    pub holder: String,
    pub epoch: u64,
    /// By the database's clock.
    pub expires_at: OffsetDateTime,
    /// How long until it expires, by the database's clock (zero once it has).
    pub remaining: Duration,
}

impl Postgres {
    /// Refuses the write of a fenced store whose epoch is no longer the lease's.
    pub(super) fn check_fence(&self, conn: &mut Conn<'_>) -> Result<(), Fail> {
        let mine = self.inner.fence.load(std::sync::atomic::Ordering::SeqCst);
        if mine == 0 {
            return Ok(());
        }
        let row = conn.query_opt(
            "SELECT holder, epoch FROM lease WHERE name = 'active' FOR SHARE",
            params![],
        )?;
        let (holder, current) = match row {
            Some(row) => (Some(row.get::<_, String>(0)), Some(number(row.get(1)))),
            None => (None, None),
        };
        if current == Some(mine) {
            return Ok(());
        }
        Err(Fail::Store(StoreError::Fenced {
            mine,
            current,
            holder,
        }))
    }

    pub(crate) fn acquire_lease(
        &self,
        holder: &str,
        ttl: Duration,
    ) -> Result<Option<u64>, StoreError> {
        self.read(|conn| {
            let row = conn.query_opt(
                "INSERT INTO lease AS l (name, holder, epoch, expires_at) \
                 VALUES ('active', $1, 1, clock_timestamp() + $2 * interval '1 second') \
                 ON CONFLICT (name) DO UPDATE SET \
                     holder = excluded.holder, \
                     epoch = CASE WHEN l.holder = excluded.holder THEN l.epoch \
                                  ELSE l.epoch + 1 END, \
                     expires_at = excluded.expires_at \
                 WHERE l.expires_at < clock_timestamp() OR l.holder = excluded.holder \
                 RETURNING epoch",
                params![holder.to_owned(), ttl.as_secs_f64()],
            )?;
            Ok(row.map(|row| number(row.get(0))))
        })
    }

    pub(crate) fn renew_lease(
        &self,
        holder: &str,
        epoch: u64,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        self.read(|conn| {
            let renewed = conn.execute(
                "UPDATE lease SET expires_at = clock_timestamp() + $3 * interval '1 second' \
                 WHERE name = 'active' AND holder = $1 AND epoch = $2",
                params![holder.to_owned(), sql_number(epoch), ttl.as_secs_f64()],
            )?;
            Ok(renewed == 1)
        })
    }

    pub(crate) fn release_lease(&self, holder: &str, epoch: u64) -> Result<bool, StoreError> {
        self.read(|conn| {
            // Expired as of now, kept with its epoch: the next holder's is one more.
            let released = conn.execute(
                "UPDATE lease SET expires_at = clock_timestamp() - interval '1 microsecond' \
                 WHERE name = 'active' AND holder = $1 AND epoch = $2",
                params![holder.to_owned(), sql_number(epoch)],
            )?;
            Ok(released == 1)
        })
    }

    pub(crate) fn lease(&self) -> Result<Option<LeaseStatus>, StoreError> {
        self.read(|conn| {
            let row = conn.query_opt(
                "SELECT holder, epoch, expires_at, \
                     greatest(extract(epoch FROM expires_at - clock_timestamp()), 0)::float8 \
                 FROM lease WHERE name = 'active'",
                params![],
            )?;
            Ok(row.map(|row| LeaseStatus {
                holder: row.get(0),
                epoch: number(row.get(1)),
                expires_at: row.get(2),
                remaining: Duration::try_from_secs_f64(row.get(3)).unwrap_or_default(),
            }))
        })
    }
}
