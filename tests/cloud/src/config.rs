//! What a simulated cloud starts with: its users, catalog switches, token lifetime and world.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::http::microversion::{PLACEMENT_MAX, Version};
use crate::world::MigrationType;

/// Keystone's default `[token] expiration`.
const DEFAULT_TOKEN_LIFETIME: Duration = Duration::from_secs(3600);

/// How long a restarted `nova_compute` container, once up, takes to report: its start-up plus
/// Nova's `INITIAL_REPORTING_DELAY` (5 s) before the first heartbeat.
const DEFAULT_RESTART_DOWNTIME: Duration = Duration::from_secs(20);

/// How long `docker restart nova_compute` takes: the container's stop (nova-compute exits
/// within a second or two on SIGTERM) and start.
const DEFAULT_RESTART_CALL: Duration = Duration::from_secs(1);

/// How a simulated cloud starts.
#[derive(Debug, Clone, PartialEq)]
pub struct CloudSimConfig {
    /// Who may ask Keystone for a token.
    pub users: Vec<UserConfig>,
    /// The region every catalog endpoint is in.
    pub region: String,
    /// The interfaces placement is published on, to test catalogs that lack one.
    pub placement_interfaces: Vec<Interface>,
    /// How long an issued token stays valid; zero issues tokens that are already expired.
    pub token_lifetime: Duration,
    /// Let placement, nova and Glance accept any non-empty `X-Auth-Token`, for a simulated
    /// service registered in a real Keystone's catalog, whose tokens this simulator cannot
    /// validate. Expiry and revocation then go unchecked.
    pub accept_foreign_tokens: bool,
    /// Providers, servers, services, images and migrations present from the start.
    pub world: WorldSeed,
    /// How long, by the simulator's clock, a restarted compute service stays quiet after its
    /// restart call answered (the container is up) before it reports again (unless a restart
    /// asks for another time); never before, as Nova cannot. Below Nova's 60 s
    /// `service_down_time` its `state` never shows `down`: only `updated_at` tells.
    pub compute_restart_downtime: Duration,
    /// How long the simulated `docker restart nova_compute` takes to answer: like docker, it
    /// returns once the container has stopped and started again, so a bot killed meanwhile
    /// cannot know whether the restart happened.
    pub compute_restart_call: Duration,
    /// Let the simulated Nova send consumer types (`INSTANCE`, `MIGRATION`) with the
    /// allocations it writes. No Nova release does (its report client writes allocations at
    /// placement 1.28, so every Nova consumer shows `unknown` at 1.38), hence off by default;
    /// on, it stands for a future Nova, to test code that reads the types.
    pub nova_writes_consumer_types: bool,
    /// Placement's newest microversion: 1.39 (Placement 16's), or an older placement's, e.g.
    /// 1.36 for Wallaby's. It is what `latest` gets, what the root document and a 406 body
    /// show as `max_version`, and a request for any later version is a 406. From 1.0 to 1.39,
    /// the versions the simulator implements; anything else refuses to start.
    pub placement_max_version: Version,
}

impl Default for CloudSimConfig {
    /// One `admin`/`adminpass` user in project `admin`, domain `Default`; region `RegionOne`;
    /// every interface; tokens valid for an hour, only this simulator's; an empty world; a
    /// restarted compute service back after 20 s, its restart answered after 1 s; no consumer
    /// types from Nova; placement up to microversion 1.39.
    fn default() -> Self {
        CloudSimConfig {
            users: vec![UserConfig::new("admin", "Default", "adminpass", "admin")],
            region: "RegionOne".to_owned(),
            placement_interfaces: Interface::ALL.to_vec(),
            token_lifetime: DEFAULT_TOKEN_LIFETIME,
            accept_foreign_tokens: false,
            world: WorldSeed::default(),
            compute_restart_downtime: DEFAULT_RESTART_DOWNTIME,
            compute_restart_call: DEFAULT_RESTART_CALL,
            nova_writes_consumer_types: false,
            placement_max_version: PLACEMENT_MAX,
        }
    }
}

/// A Keystone user with a password and the one project it is a member of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserConfig {
    /// User name.
    pub name: String,
    /// Name of the domain holding the user and its project (`Default` has the id `default`).
    pub domain: String,
    /// Password.
    pub password: String,
    /// Project name.
    pub project: String,
    /// Role names on the project, as a token lists them.
    pub roles: Vec<String>,
}

impl UserConfig {
    /// A user with the roles an admin has after a Kolla deployment.
    pub fn new(name: &str, domain: &str, password: &str, project: &str) -> Self {
        UserConfig {
            name: name.to_owned(),
            domain: domain.to_owned(),
            password: password.to_owned(),
            project: project.to_owned(),
            roles: ["reader", "member", "admin", "manager"]
                .map(str::to_owned)
                .to_vec(),
        }
    }
}

/// A catalog endpoint interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Interface {
    /// Reachable by users.
    Public,
    /// Reachable inside the deployment.
    Internal,
    /// Reachable by operators.
    Admin,
}

impl Interface {
    /// Every interface, in Keystone's usual order.
    pub const ALL: [Interface; 3] = [Interface::Public, Interface::Internal, Interface::Admin];
}

/// The world a cloud starts with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorldSeed {
    /// Placement resource providers with their allocations.
    pub providers: Vec<ProviderSeed>,
    /// Nova servers.
    pub servers: Vec<ServerSeed>,
    /// Nova services.
    pub services: Vec<ComputeServiceSeed>,
    /// Glance images.
    pub images: Vec<ImageSeed>,
    /// Migrations in progress, started after everything else is in place.
    pub migrations: Vec<MigrationSeed>,
}

/// A migration in progress, started as [`crate::CloudSimHandle::start_migration`] does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationSeed {
    /// The server that moves; it must have a host and its allocations there.
    pub server: Uuid,
    /// The destination host (a provider and an up, enabled `nova-compute` of that name).
    pub dest: String,
    /// Resize, cold or live migration.
    pub migration_type: MigrationType,
    /// Already `finished` on the destination, awaiting confirmation (`VERIFY_RESIZE`);
    /// otherwise `migrating` (`running` for a live migration).
    pub finished: bool,
}

/// A resource provider (a hypervisor, for nova) and what is allocated on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderSeed {
    /// Provider uuid.
    pub uuid: Uuid,
    /// Provider name (the hypervisor host name).
    pub name: String,
    /// Consumer uuid and its resources (class → amount) on this provider.
    pub allocations: Vec<(Uuid, BTreeMap<String, u64>)>,
}

/// A Nova server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSeed {
    /// Server uuid (the placement consumer uuid of its allocations).
    pub id: Uuid,
    /// Server name.
    pub name: String,
    /// Nova status, e.g. `ACTIVE`, `SHUTOFF`, `ERROR`.
    pub status: String,
    /// The compute host it runs on (`OS-EXT-SRV-ATTR:host`); none for e.g. a failed build.
    pub host: Option<String>,
}

/// Whether the scheduler may place instances on a service's host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServiceStatus {
    /// Schedulable.
    Enabled,
    /// Disabled by an operator.
    Disabled,
}

/// Whether a service reports in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServiceState {
    /// Heartbeats arrive.
    Up,
    /// Heartbeats stopped.
    Down,
}

/// A Nova service (`nova-compute` on a hypervisor, `nova-scheduler` on a controller, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComputeServiceSeed {
    /// Binary name, e.g. `nova-compute`.
    pub binary: String,
    /// Host name.
    pub host: String,
    /// Availability zone: `nova` for computes, `internal` for control services.
    pub zone: String,
    /// Enabled or disabled.
    pub status: ServiceStatus,
    /// `Up`: it has reported every 10 s since `updated_at` and keeps doing so. `Down`: it
    /// stopped running after reporting at `updated_at`; as in Nova, `state` then shows `down`
    /// only once that is more than 60 s old.
    pub state: ServiceState,
    /// Its (first or last) heartbeat, see `state`.
    pub updated_at: OffsetDateTime,
    /// Why an operator disabled it.
    pub disabled_reason: Option<String>,
}

impl ComputeServiceSeed {
    /// An enabled `nova-compute` on `host`, up and reporting since `updated_at`: the service a
    /// working hypervisor has. Other kinds of service differ in a field or two (`..`).
    pub fn nova_compute(host: &str, updated_at: OffsetDateTime) -> Self {
        ComputeServiceSeed {
            binary: "nova-compute".to_owned(),
            host: host.to_owned(),
            zone: "nova".to_owned(),
            status: ServiceStatus::Enabled,
            state: ServiceState::Up,
            updated_at,
            disabled_reason: None,
        }
    }
}

/// A Glance image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSeed {
    /// Image uuid.
    pub id: Uuid,
    /// Image name.
    pub name: String,
    /// Custom properties (e.g. `hw_disk_bus`), shown as top-level string keys.
    pub properties: BTreeMap<String, String>,
}
