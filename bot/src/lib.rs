//! opsbot: the imperative shell around the pure domain of `opsbot-commands`. Backends, node
//! control, the engine that drives durable runs, progress publishing, and the front ends.
//!
//! The modules form layers, each importing only from those below it (the domain crates,
//! `opsbot-commands` and `opsbot-state`, are below them all):
//!
//! 1. `clock`, `logging`, `tenure`: the one clock, the log's set-up, where this bot stands
//!    among the bots on one store;
//! 2. `process`: running a program, and the argv templates the config holds;
//! 3. `config`;
//! 4. `metrics` (labels, never engine or backend types);
//! 5. `backend` (search cluster, identity, placement, compute, image), `store_writes`,
//!    `audit_export`; then `lease`, `store_upkeep`, `node_control`; then `host_access`,
//!    `host_control`;
//! 6. `refusal`: what a request is refused with, in the operator's words;
//! 7. `clouds`, `runbooks`, then `clusters`, then `targets`: what the engine acts on;
//! 8. `progress`: one message per run, edited in place;
//! 9. `engine`: one task per run, resumed and reconciled at start-up;
//! 10. `service`, `scheduler`: a typed request in, a reply out, the same for every surface;
//! 11. `chat`: the console and Discord;
//! 12. `serve`, `check`, `store_cli`, `demo`, then `cli`: the shell.
//!
//! Public are the modules the binary, the benches and the end-to-end tests use.

mod audit_export;
mod backend;
pub mod chat;
pub mod check;
pub mod cli;
pub mod clock;
mod clouds;
pub mod clusters;
pub mod config;
#[cfg(feature = "demo")]
pub mod demo;
pub mod engine;
mod host_access;
mod host_control;
mod lease;
mod logging;
pub mod metrics;
pub mod node_control;
pub mod process;
pub mod progress;
pub mod refusal;
pub mod runbooks;
pub mod scheduler;
pub mod serve;
pub mod service;
mod store_cli;
mod store_upkeep;
mod store_writes;
mod targets;
mod tenure;
