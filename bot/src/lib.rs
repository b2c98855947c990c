//! opsbot: the imperative shell around the pure domain of `opsbot-commands`. Backends, node
//! control, the engine that drives durable runs, progress publishing, and the front ends.

pub mod audit_export;
pub mod backend;
pub mod chat;
pub mod check;
pub mod cli;
pub mod clock;
pub mod clouds;
pub mod clusters;
pub mod config;
#[cfg(feature = "demo")]
pub mod demo;
pub mod engine;
pub mod host_access;
pub mod host_control;
pub mod lease;
pub mod logging;
pub mod metrics;
pub mod node_control;
pub mod process;
pub mod progress;
pub mod runbooks;
pub mod scheduler;
pub mod serve;
pub mod service;
pub mod store_cli;
pub mod store_upkeep;
pub mod store_writes;
pub mod targets;
