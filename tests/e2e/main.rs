//! opsbot end to end, in-process: the real engine, service and progress against the simulated cluster, cloud and hosts, the fake Discord, and a real Keystone and Placement.
//! One binary for the crate's integration tests (a module a file): it links once, and its
//! tests run side by side.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod approval;
mod bad_input;
mod booking;
mod cloud;
mod cloud_moves;
mod discord;
mod discord_delivery;
mod discord_people;
mod faults;
mod indices;
mod maintenance;
mod node_control;
mod openstack_real;
mod openstack_support;
mod procedures;
mod prune_safety;
mod removal;
mod rpc_cap_migrations;
mod runbooks;
mod schedules;
mod tls;
mod two_person;
