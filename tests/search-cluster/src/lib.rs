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
//! `GET|PUT /_cluster/settings`, `GET /_cluster/pending_tasks`, `GET /_tasks`, `POST /_flush`,
//! `POST /_flush/synced`, `PUT /{index}` (with an optional `{"settings": {...}}` body),
//! `DELETE /{names}`, `GET|HEAD /{names}` (the get-index API: settings; aliases and mappings
//! are not modelled), `GET [/{index}]/_settings[/{name}]`, and where the server has them
//! `GET|PUT|POST|DELETE /_index_template[/{name}]` (ES 7.8+, OpenSearch),
//! `GET|PUT|DELETE /_data_stream[/{name}]` (ES 7.9+ default distribution, ES 8, OpenSearch),
//! `POST /{data stream}/_rollover`, and OpenSearch ISM's `PUT /_plugins/_ism/policies/{id}`,
//! `POST /_plugins/_ism/add/{index}`, `GET /_plugins/_ism/explain[/{index}]` (also under the
//! deprecated `_opendistro` prefix, with ES's deprecation `Warning`). Unknown paths (the ISM
//! ones on Elasticsearch, the data stream API on the OSS builds), wrong methods, bodies
//! without a JSON content type and unknown query parameters get ES's errors. `_cat/allocation`
//! counts a relocating copy on its source node only, as ES does, and reports every node's disk
//! as a 1 TB volume. Every response echoes the request's `X-Opaque-Id`.
//!
//! Admin API (not ES; never logged, never faulted): `POST /_sim/nodes/{ip}/{stop,start}`,
//! `GET /_sim/state`, `GET|DELETE /_sim/calls`, `GET|PUT|DELETE /_sim/faults`.
//!
//! # Indices and their settings
//!
//! Each incarnation of an index has its own uuid (`_cat/indices` `uuid`, `index.uuid`, the
//! `index_uuid` of errors): one deleted and created again gets a new one. The settings API
//! shows `index.uuid`, `index.creation_date`, `index.provided_name`, `index.version.created`
//! and whatever was set at creation: `index.hidden` (ES 7.7+, OpenSearch), `index.lifecycle.*`
//! (ILM: ES default distribution), `index.plugins.index_state_management.*` (OpenSearch);
//! other keys are refused like the flavor refuses them. Index expressions follow ES's resolver:
//! a missing concrete name fails the request unless `ignore_unavailable`, wildcards skip hidden
//! indices unless `expand_wildcards` asks for them (`_cat/indices` from ES 7 and the settings API
//! take the indices options; ES 6.8's `_cat/indices` takes none), a data stream's name stands
//! for its backing indices where reads allow it. ES 8's Kibana index `.kibana_8.11.3_001` is
//! hidden; the others' `.kibana_1` is not. OpenSearch's ISM reports managed indices through its
//! explain API only: the add API does not set the (still registered) policy id setting.
//!
//! # Deletion
//!
//! `DELETE /{names}` binds the names to their uuids on receipt and queues a cluster-state task
//! on the master (`GET /_cluster/pending_tasks`: `delete-index [[name/uuid], ...]`), which
//! takes [`SimConfig::delete_apply`] of simulated time to apply. Until then the indices are
//! listed everywhere and `GET /_tasks` shows the request's `indices:admin/delete` task with its
//! `X-Opaque-Id`; the request answers once applied, or `acknowledged: false` after its
//! `timeout`; a task still queued after `master_timeout` fails with
//! `process_cluster_event_timeout_exception`. A client that hangs up changes nothing (the call
//! log marks it [`Call::hung_up`]). A second DELETE of the same names meanwhile still finds them,
//! queues behind the first, and then fails with a 404 naming the uuid it had bound.
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
mod flavor;
mod hash;
mod http;
mod scenario;
mod server;
mod serving;
mod tls;
mod units;
mod world;

pub use admin::{NodeChange, UnknownNode};
pub use calls::Call;
pub use config::{ConfigError, DEFAULT_DELETE_APPLY, Role, Security, SimConfig, SimTls};
pub use fault::{Dropped, FaultEffect, FaultKind, FaultParseError, FaultRule, take_matching};
pub use flavor::{Distribution, Flavor, ParseFlavorError};
pub use scenario::{DataStreamSpec, IndexSpec};
pub use server::{SimHandle, spawn};
pub use serving::Server;
pub use tls::TlsListener;
pub use units::TimeParseError;
pub use world::{
    CopySnapshot, CopyStatus, DataStreamSnapshot, HealthSnapshot, HealthStatus, IndexSnapshot,
    NodeSnapshot, NodeStatus, PendingDeletionSnapshot, SettingsSnapshot, WorldSnapshot,
};
