//! opsbot's durable state on sled: runs, the audit log, one lock per cluster, and run logs.
//!
//! The bot may be killed at any instant, so every write is one sled transaction (a run, the
//! audit events of its transition, its cluster lock and its place in the time index change
//! together) followed by a flush before the method returns. Values are versioned JSON
//! envelopes. [`Store::open`] decodes the unfinished runs, so that a store that cannot resume
//! them stops the bot at start-up; listings read the time index, and decode only what they
//! show, so that neither grows with the history, which [`Store::compact`] archives past the
//! retention.

mod archive;
mod audit;
mod backup;
mod check;
mod codec;
mod compact;
mod deliveries;
mod error;
pub mod export;
mod files;
mod keys;
mod listing;
mod marker;
mod notice;
mod record;
mod runs;
mod safekeeping;
mod schedules;
mod store;

pub use archive::ArchivePaths;
pub use audit::RUN_LOG_CAP;
pub use backup::{Restored, check, restore, store_in};
pub use check::Summary;
pub use compact::Compacted;
pub use error::{StoreError, UpdateError};
pub use files::wait_until_free;
pub use listing::{AuditQuery, Listing, RunLogTail};
pub use store::Store;
