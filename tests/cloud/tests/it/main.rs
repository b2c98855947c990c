//! The simulated cloud against the public OpenStack APIs' shapes and behaviour.
//! One binary for the crate's integration tests (a module a file): it links once, and its
//! tests run side by side.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod common;

mod compute;
mod identity;
mod image;
mod migrations;
mod os_migrations;
mod placement;
mod placement_paths;
mod restarts;
mod tokens_faults_calls;
