//! A simulated Elasticsearch/OpenSearch log cluster, as Kolla deploys it, served over real HTTP.
//!
//! opsbot drives maintenance procedures (stop/start/restart the cluster, delete old daily
//! indices, remove a node) against this simulator in its tests and its demo, so it speaks the
//! real wire formats of ES 6.8, ES 7.10, ES 8.11 and OpenSearch 2.11 (see [`Flavor`]) and its
//! cluster behaves like a real one: nodes leave and rejoin, shard copies become unassigned,
//! recover and relocate in simulated time, and the health numbers follow.
//!
//! # What clients see
//!
//! The simulator stands for Kolla's haproxy VIP in front of the cluster:
//!
//! * With at least a quorum (majority) of nodes joined, the cluster API answers as ES does.
//! * With some nodes up but no quorum, there is no elected master. `GET /` still answers; every
//!   other request waits up to `master_timeout` (default 30 simulated seconds) for a master, as
//!   ES's master-level actions do, then fails with 503 `master_not_discovered_exception`
//!   (`cluster_manager_not_discovered_exception` on OpenSearch).
//! * With no node up, haproxy itself answers every request, `GET /` included, with 503,
//!   `content-type: text/html` and its built-in page:
//!   `<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n`.
//!
//! # Endpoints
//!
//! Cluster API: `GET /`, `GET /_cat/{health,nodes,allocation}`,
//! `GET /_cat/{indices,recovery}[/{pattern}]`, `GET /_cluster/health`,
//! `GET|PUT /_cluster/settings`, `POST /_flush`, `POST /_flush/synced`, `PUT /{index}`,
//! `DELETE /{names}`. Unknown paths, wrong methods, bodies without a JSON content type and
//! unknown query parameters get ES's errors. `_cat/allocation` counts a relocating copy on its
//! source node only, as ES does, and reports every node's disk as a 1 TB volume.
//!
//! Admin API (not ES; never logged, never faulted): `POST /_sim/nodes/{ip}/{stop,start}`,
//! `GET /_sim/state`, `GET|DELETE /_sim/calls`, `GET|PUT|DELETE /_sim/faults`.
//!
//! # Time
//!
//! Simulated time is real elapsed time × [`SimConfig::speed`]. A node boots in 5 simulated
//! seconds, a primary reopens its local data in 2, a replica copies from its primary in 10
//! (2 if its files are still on the target's disk), a relocation takes 10; replicas of a node
//! that left wait 60 for it before being rebuilt elsewhere. Fault delays are real time.
//!
//! # Shards
//!
//! Every index has one primary and one replica. A stopped node's data stays on its disk: a
//! returning node reopens the primaries it holds even with `cluster.routing.allocation.enable:
//! none` (as ES does), while replicas wait for allocation to be enabled. Only today's daily
//! index receives writes, so only its copies go stale when lost while the other copy stays
//! active; a stale copy is never made primary.

mod admin;
mod app;
mod calls;
mod clock;
mod config;
mod fault;
mod hash;
mod http;
mod server;
mod serving;
mod units;
mod world;

pub use admin::{NodeChange, UnknownNode};
pub use calls::Call;
pub use config::{ConfigError, Flavor, ParseFlavorError, SimConfig};
pub use fault::{Dropped, FaultEffect, FaultKind, FaultParseError, FaultRule, take_matching};
pub use server::{SimHandle, spawn};
pub use serving::Server;
pub use units::TimeParseError;
pub use world::{
    CopySnapshot, CopyStatus, HealthSnapshot, HealthStatus, IndexSnapshot, NodeSnapshot,
    NodeStatus, SettingsSnapshot, WorldSnapshot,
};
