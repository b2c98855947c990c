//! A sled store is one process on one machine: it has no lease to fence by, and says so.

use std::time::Duration;

use crate::error::StoreError;
use crate::postgres::LeaseStatus;
use crate::sled::Sled;

/// What every lease operation on sled is told.
fn no_lease(what: &'static str) -> StoreError {
    StoreError::NotOnSled {
        what,
        hint: "high availability keeps the store on PostgreSQL; a sled store admits one \
               opsbot process, which needs no lease",
    }
}

impl Sled {
    pub(crate) fn fence(&self, _epoch: u64) -> Result<(), StoreError> {
        Err(no_lease("fencing writes by a lease epoch"))
    }

    pub(crate) fn acquire_lease(
        &self,
        _holder: &str,
        _ttl: Duration,
    ) -> Result<Option<u64>, StoreError> {
        Err(no_lease("the lease"))
    }

    pub(crate) fn renew_lease(
        &self,
        _holder: &str,
        _epoch: u64,
        _ttl: Duration,
    ) -> Result<bool, StoreError> {
        Err(no_lease("the lease"))
    }

    pub(crate) fn release_lease(&self, _holder: &str, _epoch: u64) -> Result<bool, StoreError> {
        Err(no_lease("the lease"))
    }

    pub(crate) fn lease(&self) -> Result<Option<LeaseStatus>, StoreError> {
        Err(no_lease("the lease"))
    }
}
