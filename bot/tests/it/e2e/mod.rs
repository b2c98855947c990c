//! opsbot end to end, in-process: the real engine, service and progress (the harness of
//! `opsbot-tests`) against the simulated cluster, cloud and hosts, the fake Discord, and a real
//! Keystone and Placement. In the bot's one test binary, so that they run beside the tests of
//! the real binary instead of after them.

mod approval;
mod bad_input;
mod booking;
mod cloud;
mod cloud_moves;
mod consent;
mod discord;
mod discord_delivery;
mod discord_outage;
mod discord_people;
mod faults;
mod indices;
mod maintenance;
mod matrix;
mod matrix_delivery;
mod node_control;
mod openstack_real;
mod openstack_support;
mod procedures;
mod prune_safety;
mod removal;
mod rpc_cap_migrations;
mod runbooks;
mod schedules;
mod slack;
mod slack_delivery;
mod synapse;
mod tls;
mod two_person;
