//! The operators' maintenance notice: at most one, kept until `/maintenance end`.

use opsbot_commands::maintenance::MaintenanceNotice;

use crate::error::StoreError;
use crate::sled::Sled;
use crate::sled::keys::{MAINTENANCE, META};
use crate::transition;

impl Sled {
    /// The notice in force, if any.
    pub fn maintenance_notice(&self) -> Result<Option<MaintenanceNotice>, StoreError> {
        self.meta
            .get(MAINTENANCE)?
            .map(|bytes| self.decode(META, MAINTENANCE, &bytes))
            .transpose()
    }

    /// Replaces the notice (`None` ends it); flushed before it returns. Returns the one it
    /// replaced.
    pub fn set_maintenance_notice(
        &self,
        notice: Option<&MaintenanceNotice>,
    ) -> Result<Option<MaintenanceNotice>, StoreError> {
        let _writing = self.writing()?;
        let before = self.maintenance_notice()?;
        match notice {
            Some(notice) => {
                let bytes = transition::encode("the maintenance notice", notice)?;
                self.meta.insert(MAINTENANCE, bytes)?;
            }
            None => {
                self.meta.remove(MAINTENANCE)?;
            }
        }
        self.flush()?;
        Ok(before)
    }
}
