//! A simulated OpenStack cloud: identity, placement, compute and image, over real HTTP.
//!
//! opsbot's OpenStack procedures (finding and deleting stale placement allocations, removing
//! a decommissioned compute service, setting image properties) run against this simulator in
//! its tests and its offline demo. It keeps a small stateful world and answers in the shapes
//! recorded from real Keystone 30 and Placement 16 (and Nova's and Glance's documented ones).
//!
//! # Endpoints
//!
//! One server, one base URL, a path prefix per service (the catalog lists them):
//!
//! * **Keystone v3**, `/identity/v3`: `GET /` (version document), `POST /auth/tokens`
//!   (v3 password method with a project scope; 201 with `X-Subject-Token`; 401 with
//!   Keystone's body for a wrong password, unknown user or foreign project), `GET
//!   /auth/catalog`. The catalog has `keystone`, `placement` (`{base}/placement`, with the
//!   configured interfaces), `nova` (`{base}/compute/v2.1`) and `glance` (`{base}/image`).
//! * **Placement**, `/placement`: `GET /` (versions, no token), `GET|POST
//!   /resource_providers[?name=&uuid=]`, `GET /resource_providers/{uuid}`, `GET
//!   /resource_providers/{uuid}/allocations` (from 1.28 each consumer with its
//!   `consumer_generation`; never a type), `GET|DELETE /allocations/{consumer}` (from 1.12
//!   `project_id`, `user_id`, from 1.28 `consumer_generation`, from 1.38 `consumer_type`:
//!   `INSTANCE`, `MIGRATION` or `unknown`; none of them for a consumer without allocations).
//!   Microversions 1.0–1.39 (or to [`CloudSimConfig::placement_max_version`], as an older
//!   placement), chosen only by `OpenStack-API-Version: placement X.Y`.
//! * **Nova**, `/compute/v2.1`: `GET /` (version, no token), `GET /servers/{id}`, `GET
//!   /os-services[?binary=&host=]`, `DELETE /os-services/{id}` (integer id below 2.53, uuid
//!   from 2.53; deleting removes only the service, not its compute node or provider), `GET
//!   /os-migrations` (filters `instance_uuid`, `status`, `migration_type`, `source_compute`,
//!   `host`; 2.23 adds `migration_type` and links on live migrations in progress; 2.59 the
//!   `uuid`, newest-first paging by `limit`/`marker` with `migrations_links`, `changes-since`,
//!   and a 400 for any parameter the version's schema does not name (before 2.59 those are
//!   ignored); 2.66 `changes-before`; 2.80 the `user_id` and `project_id` filters and
//!   fields), `GET /servers/{id}/migrations[/{migration id}]` (from 2.23: live
//!   migrations in progress only). Microversions 2.1–2.96, from `OpenStack-API-Version:
//!   compute X.Y` or `X-OpenStack-Nova-API-Version`.
//! * **Glance v2**, `/image`: `GET /v2/images[?filters]`, `GET /v2/images/{id}`, `PATCH
//!   /v2/images/{id}` (`application/openstack-images-v2.1-json-patch`, or v2.0's form).
//!
//! Every placement, nova and Glance request other than a version document needs an
//! `X-Auth-Token` that Keystone issued, that is not expired ([`CloudSimConfig::token_lifetime`])
//! and not revoked; otherwise keystonemiddleware's 401 answers. Unknown paths and methods get
//! each service's own 404 and 405 bodies.
//!
//! Admin API (not OpenStack; never logged, faulted or token-checked): `GET /_sim/state`,
//! `GET|DELETE /_sim/calls`, `GET|PUT|DELETE /_sim/faults` (opsbot-search-sim's [`FaultRule`] JSON,
//! matched against the full path, e.g. `/placement/allocations`), `POST /_sim/revoke-tokens`;
//! `GET /_sim/clock`, `POST /_sim/clock/advance {"seconds": N}`; `POST
//! /_sim/compute/{host}/restart [{"down_for_seconds": N}]` (200 with the restart, 404 without a
//! `nova-compute` on the host, 500 when its restart fails), `PUT|DELETE
//! /_sim/compute/{host}/restart-fault {"fault": "stays_down"|"fails"}`, `GET
//! /_sim/compute/restarts`; `GET|POST /_sim/migrations {"server", "dest", "migration_type"}`,
//! `POST /_sim/migrations/{uuid}/{finish|confirm|revert|fail}`, `PUT
//! /_sim/migrations/{uuid}/status {"status"}` (404 for what does not exist, 409 for what Nova
//! refuses). Each has a [`CloudSimHandle`] method.
//!
//! # Time and compute services
//!
//! Nova's timestamps follow the simulator's clock: wall time plus every
//! [`CloudSimHandle::advance_clock`], so tests skip time instead of sleeping (Keystone's token
//! expiry stays on wall time). A running service reports every 10 s; `state` is Nova's rule,
//! `up` while the last heartbeat is at most `service_down_time` (60 s) old. A restarted
//! compute service stops reporting (its `updated_at` freezes); the restart call answers after
//! [`CloudSimConfig::compute_restart_call`] (docker's stop and start) and the service reports
//! again [`CloudSimConfig::compute_restart_downtime`] after that: a restart shorter than 60 s never shows
//! `down`, only a fresh `updated_at` afterwards. [`RestartFault`] makes a host's service never
//! come back, or its restart fail.
//!
//! # Migrations
//!
//! [`CloudSimHandle::start_migration`] moves a server as Nova does: the instance's allocations
//! go to a new consumer, the migration's uuid (`GET /servers/{that uuid}` is 404), and the
//! instance claims the same resources on the destination; confirming (or completing a live
//! migration) deletes the migration's allocations, reverting moves them back. Nova counts a
//! migration in progress unless its status is one of Nova's done statuses (see
//! [`Migration::in_progress`]; `finished`, a resize awaiting confirmation, is in progress); its
//! API shows a live migration in progress only while `queued`, `preparing`, `running` or
//! `post-migrating`. No Nova release writes consumer types, so Nova's
//! consumers show `unknown` from 1.38 unless [`CloudSimConfig::nova_writes_consumer_types`]
//! (or [`CloudSimHandle::set_consumer_type`]) says otherwise.
//!
//! # Faults
//!
//! A status fault answers with the error body the service itself sends for that status; a
//! malformed-JSON fault with a cut-short 200 body; a drop cuts the connection (call status 0).
//!
//! # Call log
//!
//! Every OpenStack request is logged ([`Call`]) with the microversion it was served at and
//! whether a token was present, never the token itself; bodies of POST, PUT and PATCH are kept
//! except under `/identity`, where they carry passwords.

mod admin;
mod app;
mod calls;
mod clock;
mod config;
mod demo;
mod directory;
mod http;
mod server;
mod timestamps;
mod tokens;
mod world;

pub use calls::Call;
pub use config::{
    CloudSimConfig, ComputeServiceSeed, ImageSeed, Interface, MigrationSeed, ProviderSeed,
    ServerSeed, ServiceState, ServiceStatus, UserConfig, WorldSeed,
};
pub use http::microversion::Version as Microversion;
pub use opsbot_search_sim::{FaultKind, FaultRule};
pub use server::{CloudSimHandle, spawn};
pub use world::{
    ComputeRestart, ComputeService, ConsumerType, Image, Migration, MigrationError, MigrationType,
    RestartError, RestartFault,
};
