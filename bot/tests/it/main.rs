//! The real `opsbot` binary as operators and systemd run it (the command line, the console
//! socket, crashes under SIGKILL, failover between two bots, Discord), and opsbot end to end
//! in-process (`e2e`).
//! One binary for the crate's integration tests (a module a file): it links once, and its
//! tests run side by side.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod support;

mod builds;
mod check;
mod check_matrix;
mod check_slack;
mod cli;
mod console_ctrl_c;
mod console_editing;
mod console_socket;
mod crash;
mod crash_discord;
mod crash_fire;
mod crash_prune;
mod crash_removal;
mod crash_rpc_cap;
mod crash_runbook;
mod crash_stale;
mod demo;
mod deploy;
mod docs;
mod e2e;
mod failover;
mod failover_discord;
mod layers;
mod matrix_binary;
mod metrics;
mod output;
mod pg_restart;
mod sigterm_discord;
mod slack_binary;
mod store_migrate;
mod store_safety;
