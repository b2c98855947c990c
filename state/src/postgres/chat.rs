//! What chat keeps on PostgreSQL besides runs: deliveries already handled, and the
//! maintenance notice (see sled's `deliveries` and `notice`).

use std::sync::atomic::Ordering;

use opsbot_commands::audit::AuditEvent;
use opsbot_commands::maintenance::MaintenanceNotice;

use super::Postgres;
use super::pool::params;
use crate::error::StoreError;
use crate::transition;

/// The notice's key in `meta`.
const MAINTENANCE: &str = "maintenance_notice";

impl Postgres {
    /// The first `INSERT` of an id wins; ids older than a day (by the database's clock) are
    /// deleted at most once an hour.
    pub(crate) fn first_delivery(&self, id: &str) -> Result<bool, StoreError> {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let swept = &self.inner.last_sweep;
        let last = swept.load(Ordering::Relaxed);
        let sweep = now - last >= 60 * 60
            && swept
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok();
        self.write(|conn| {
            if sweep {
                conn.execute(
                    "DELETE FROM deliveries WHERE at < now() - interval '1 day'",
                    params![],
                )?;
            }
            let inserted = conn.execute(
                "INSERT INTO deliveries (id, at) VALUES ($1, now()) ON CONFLICT (id) DO NOTHING",
                params![id.to_owned()],
            )?;
            Ok(inserted == 1)
        })
    }

    pub(crate) fn announced(&self, id: &str, event: &AuditEvent) -> Result<bool, StoreError> {
        let event = Self::encode_audit("an announcement", event)?;
        self.write(|conn| {
            let inserted = conn.execute(
                "INSERT INTO deliveries (id, at) VALUES ($1, now()) ON CONFLICT (id) DO NOTHING",
                params![id.to_owned()],
            )?;
            if inserted == 1 {
                self.put_audit(conn, &event)?;
            }
            Ok(inserted == 1)
        })
    }

    pub(crate) fn delivered(&self, id: &str) -> Result<bool, StoreError> {
        self.read(|conn| {
            let row = conn.query_opt(
                "SELECT 1 FROM deliveries WHERE id = $1",
                params![id.to_owned()],
            )?;
            Ok(row.is_some())
        })
    }

    pub(crate) fn maintenance_notice(&self) -> Result<Option<MaintenanceNotice>, StoreError> {
        let row = self.read(|conn| {
            conn.query_opt(
                "SELECT value::text FROM meta WHERE key = $1",
                params![MAINTENANCE],
            )
        })?;
        row.map(|row| self.decode("meta", MAINTENANCE, row.get(0)))
            .transpose()
    }

    pub(crate) fn set_maintenance_notice(
        &self,
        notice: Option<&MaintenanceNotice>,
    ) -> Result<Option<MaintenanceNotice>, StoreError> {
        let value = notice
            .map(|notice| transition::encode("the maintenance notice", notice).map(super::text))
            .transpose()?;
        let before = self.write(|conn| {
            let before = conn.query_opt(
                "SELECT value::text FROM meta WHERE key = $1 FOR UPDATE",
                params![MAINTENANCE],
            )?;
            match &value {
                Some(value) => conn.execute(
                    "INSERT INTO meta (key, value) VALUES ($1, $2::text::jsonb) \
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    params![MAINTENANCE, value.clone()],
                )?,
                None => conn.execute("DELETE FROM meta WHERE key = $1", params![MAINTENANCE])?,
            };
            Ok(before.map(|row| row.get::<_, String>(0)))
        })?;
        before
            .map(|text| self.decode("meta", MAINTENANCE, &text))
            .transpose()
    }
}
