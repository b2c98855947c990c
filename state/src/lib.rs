//! opsbot's durable state on sled: runs, the audit log, one lock per cluster, and run logs.
//!
//! The bot may be killed at any instant, so every write is one sled transaction (a run, the
//! audit events of its transition and its cluster lock change together) followed by a flush
//! before the method returns. Values are versioned JSON envelopes, and [`Store::open`] decodes
//! every run once so that a store it cannot fully read stops the bot at start-up.

mod audit;
mod check;
mod codec;
mod deliveries;
mod error;
mod keys;
mod notice;
mod record;
mod runs;
mod store;

pub use audit::RUN_LOG_CAP;
pub use error::{StoreError, UpdateError};
pub use store::Store;
