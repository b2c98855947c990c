//! opsbot's pure domain: validated names, the command catalogue and its parser, plans and their
//! digests, the planners, the run record and its approval rules, and all chat text.
//! No I/O lives here: the bot crate observes the world and executes plans.

#[macro_use]
mod macros;

pub mod approval;
pub mod audit;
pub mod booking;
pub mod button;
pub mod catalogue;
pub mod cluster;
pub mod consent;
pub mod echo;
pub mod index;
pub mod maintenance;
pub mod name;
pub mod openstack;
pub mod page;
pub mod parse;
pub mod people;
pub mod plan;
pub mod planner;
pub mod render;
pub mod request;
pub mod retention;
pub mod run;
pub mod runbook;
pub mod schedule;
pub mod shell;
pub mod target;
