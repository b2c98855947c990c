//! The handle's controls of the simulated Nova: the clock, placed servers, consumer types,
//! migrations and compute service restarts; each mirrors an admin endpoint under `/_sim/`.

use std::time::Duration;

use time::OffsetDateTime;
use uuid::Uuid;

use super::CloudSimHandle;
use crate::config::ServerSeed;
use crate::world::{
    ComputeRestart, ConsumerType, Migration, MigrationError, MigrationType, RestartError,
    RestartFault,
};

impl CloudSimHandle {
    /// Now, by the simulator's clock (wall time plus every [`Self::advance_clock`]).
    pub fn now(&self) -> OffsetDateTime {
        self.app.world().now()
    }

    /// Moves the simulator's clock on, e.g. past a restarted service's downtime, instead of
    /// sleeping. Keystone's token expiry keeps to wall time.
    pub fn advance_clock(&self, by: Duration) {
        self.app.world().advance_clock(by);
    }

    /// Adds (or replaces) a server running on `host`, which it can be migrated away from.
    pub fn add_server_on(&self, id: Uuid, name: &str, status: &str, host: &str) {
        self.app.world().add_server(&ServerSeed {
            id,
            name: name.to_owned(),
            status: status.to_owned(),
            host: Some(host.to_owned()),
        });
    }

    /// Sets the type placement reports for a consumer from microversion 1.38 (as a client
    /// that sends one would have written it); false if the consumer has no allocations.
    /// Consumers start `unknown`, as every Nova release leaves them.
    pub fn set_consumer_type(&self, consumer: Uuid, consumer_type: ConsumerType) -> bool {
        self.app.world().set_consumer_type(consumer, consumer_type)
    }

    /// The type placement reports for a consumer; `None` if it has no allocations.
    pub fn consumer_type(&self, consumer: Uuid) -> Option<ConsumerType> {
        self.app
            .world()
            .consumer(consumer)
            .map(|record| record.consumer_type)
    }

    /// Starts moving a server from its host to `dest`, as Nova does: the migration record
    /// (status `migrating`, `running` for a live migration, with a new uuid), the server's
    /// allocations moved to the migration's uuid, the same resources claimed on `dest` for
    /// the server. Refused as Nova refuses it (see [`MigrationError`]).
    pub fn start_migration(
        &self,
        server: Uuid,
        dest: &str,
        migration_type: MigrationType,
    ) -> Result<Migration, MigrationError> {
        self.app
            .world()
            .start_migration(server, dest, migration_type)
    }

    /// A resize or cold migration reaches `finished`: the server is on the destination in
    /// `VERIFY_RESIZE`, the migration still holds the source allocations.
    pub fn finish_migration(&self, migration: Uuid) -> Result<Migration, MigrationError> {
        self.app.world().finish_migration(migration)
    }

    /// Confirms a resize or cold migration (`confirmed`), or completes a live migration
    /// (`completed`): the migration's allocations are deleted.
    pub fn confirm_migration(&self, migration: Uuid) -> Result<Migration, MigrationError> {
        self.app.world().confirm_migration(migration)
    }

    /// Reverts a resize or cold migration (`reverted`), or aborts a live migration
    /// (`cancelled`): the source allocations move back to the server.
    pub fn revert_migration(&self, migration: Uuid) -> Result<Migration, MigrationError> {
        self.app.world().revert_migration(migration)
    }

    /// The move fails (`error`): a resize or cold migration leaves both consumers'
    /// allocations behind (the server in `ERROR`), a live migration is rolled back.
    pub fn fail_migration(&self, migration: Uuid) -> Result<Migration, MigrationError> {
        self.app.world().fail_migration(migration)
    }

    /// Sets a migration's status string without touching allocations or the server, e.g.
    /// `post-migrating`, or `confirmed` to model a record whose allocations leaked.
    pub fn set_migration_status(
        &self,
        migration: Uuid,
        status: &str,
    ) -> Result<Migration, MigrationError> {
        self.app.world().set_migration_status(migration, status)
    }

    /// Every migration record, in creation order.
    pub fn migrations(&self) -> Vec<Migration> {
        self.app.world().migrations().cloned().collect()
    }

    /// Restarts the host's `nova-compute` as `docker restart nova_compute` would: it stops
    /// reporting now and reports again after [`crate::CloudSimConfig::compute_restart_downtime`]
    /// (by the simulator's clock), unless the host's [`RestartFault`] says otherwise.
    pub fn restart_compute(&self, host: &str) -> Result<ComputeRestart, RestartError> {
        self.app.world().restart_compute(host, None)
    }

    /// [`Self::restart_compute`] with its own downtime.
    pub fn restart_compute_for(
        &self,
        host: &str,
        down_for: Duration,
    ) -> Result<ComputeRestart, RestartError> {
        self.app.world().restart_compute(host, Some(down_for))
    }

    /// Switches how the host's compute restarts go wrong; `None` makes them work again.
    pub fn set_restart_fault(&self, host: &str, fault: Option<RestartFault>) {
        self.app.world().set_restart_fault(host, fault);
    }

    /// Every compute restart request so far, failed ones included, oldest first.
    pub fn compute_restarts(&self) -> Vec<ComputeRestart> {
        self.app.world().compute_restarts().to_vec()
    }

    /// How many restarts of the host's compute service went through (failed ones excluded).
    pub fn restart_count(&self, host: &str) -> usize {
        self.app
            .world()
            .compute_restarts()
            .iter()
            .filter(|restart| restart.host == host && !restart.failed)
            .count()
    }
}
