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
//!   /resource_providers/{uuid}/allocations`, `GET|DELETE /allocations/{consumer}`.
//!   Microversions 1.0–1.39, chosen only by `OpenStack-API-Version: placement X.Y`.
//! * **Nova**, `/compute/v2.1`: `GET /` (version, no token), `GET /servers/{id}`, `GET
//!   /os-services[?binary=&host=]`, `DELETE /os-services/{id}` (integer id below 2.53, uuid
//!   from 2.53; deleting removes only the service, not its compute node or provider).
//!   Microversions 2.1–2.96, from `OpenStack-API-Version: compute X.Y` or
//!   `X-OpenStack-Nova-API-Version`.
//! * **Glance v2**, `/image`: `GET /v2/images[?filters]`, `GET /v2/images/{id}`, `PATCH
//!   /v2/images/{id}` (`application/openstack-images-v2.1-json-patch`, or v2.0's form).
//!
//! Every placement, nova and Glance request other than a version document needs an
//! `X-Auth-Token` that Keystone issued, that is not expired ([`CloudSimConfig::token_lifetime`])
//! and not revoked; otherwise keystonemiddleware's 401 answers. Unknown paths and methods get
//! each service's own 404 and 405 bodies.
//!
//! Admin API (not OpenStack; never logged, faulted or token-checked): `GET /_sim/state`,
//! `GET|DELETE /_sim/calls`, `GET|PUT|DELETE /_sim/faults` (opsbot-sim's [`FaultRule`] JSON,
//! matched against the full path, e.g. `/placement/allocations`), `POST /_sim/revoke-tokens`.
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
    CloudSimConfig, ComputeServiceSeed, ImageSeed, Interface, ProviderSeed, ServerSeed,
    ServiceState, ServiceStatus, UserConfig, WorldSeed,
};
pub use opsbot_sim::{FaultKind, FaultRule};
pub use server::{CloudSimHandle, spawn};
pub use world::{ComputeService, Image};
