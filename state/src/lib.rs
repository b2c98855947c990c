//! opsbot's durable state: runs, the audit log, one lock per cluster, run logs, schedules'
//! fires, pauses and standing approvals, on one of two backends behind one [`Store`].
//!
//! - **sled** (`sled`), the embedded default: one process, one directory. Every write is one
//!   sled transaction followed by a flush, so that a write that returned survives a SIGKILL.
//!   Values are versioned JSON envelopes; listings read a time index, and [`Store::compact`]
//!   archives the history past the retention to JSONL files beside the store.
//! - **PostgreSQL** (`postgres`), for more than one machine: an engine operators already run
//!   and back up. Every write is one serializable transaction; a lease whose epoch fences every
//!   write lets one instance be active and the others stand by ([`Store::fence`],
//!   [`Store::acquire_lease`]).
//!
//! Both keep the same records the same way (`record`, `codec`) and decide what a write
//! changes with the same code (`transition`), so that a run means the same on either.
//! Opening either checks it: a store whose unfinished runs cannot be decoded and resumed stops
//! the bot at start-up with a clear message.

mod codec;
mod copy;
mod dump;
mod error;
pub mod export;
mod listing;
mod now;
mod postgres;
mod record;
mod sled;
mod store;
mod transition;

pub use copy::{Copied, copy};
pub use dump::{Counters, Entry};
pub use error::{StoreError, UpdateError};
pub use listing::{AuditQuery, Listing};
pub use now::Now;
pub use postgres::{LeaseStatus, PgConfig};
pub use sled::{
    ArchivePaths, Compacted, Restored, Summary, check, restore, store_in, wait_until_free,
};
pub use store::Store;
pub use transition::RUN_LOG_CAP;
