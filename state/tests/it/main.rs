//! The store's behaviour on both backends: runs, locks, audit, schedules, crashes, corruption, migration.
//! One binary for the crate's integration tests (a module a file): it links once, and its
//! tests run side by side.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod common;

mod audit;
mod backup;
mod booking;
mod chat;
mod corruption;
mod crash;
mod listing;
mod locks;
mod marker;
mod migrate;
mod postgres;
mod runs;
mod schedules;
mod schema;
