//! The simulated search cluster against the real servers' wire formats and behaviour.
//! One binary for the crate's integration tests (a module a file): it links once, and its
//! tests run side by side.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod common;

mod api_semantics;
mod cluster_behaviour;
mod deletion_tasks;
mod faults_and_admin;
mod index_settings;
mod keepers;
mod wire_bodies;
mod wire_shapes;
