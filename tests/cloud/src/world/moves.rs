//! Nova's migrations (resize, cold and live migration) and what they do to allocations.
//!
//! As Nova does it (`nova/conductor/tasks/migrate.py` `replace_allocation_with_migration`,
//! `nova/scheduler/client/report.py` `move_allocations`): a move first gives everything the
//! instance holds to a new consumer, the migration's uuid, in one `POST /allocations`; the
//! scheduler then claims the destination for the instance. Confirming a resize (or the end of
//! a live migration) empties the migration consumer (`delete_allocation_for_instance`, a `PUT`
//! of empty allocations); reverting moves the source allocations back to the instance
//! (`ComputeManager._revert_allocation`), dropping its destination claim. A resize or cold
//! migration that fails part-way (status `error`) leaves both consumers where they are, which
//! is what `nova-manage placement audit` later reports; a live migration that fails is rolled
//! back (`_rollback_live_migration`).

use uuid::Uuid;

use super::migration::Record;
use super::{ConsumerType, Migration, MigrationError, MigrationType, World, Write};
use crate::config::{ServiceState, ServiceStatus};

impl World {
    /// Starts moving a server to `dest`: checks what Nova checks, creates the record (status
    /// `migrating`, or `running` for a live migration), moves the instance's allocations to
    /// the migration's uuid and claims the same resources on `dest` for the instance.
    pub(crate) fn start_migration(
        &mut self,
        server: Uuid,
        dest: &str,
        migration_type: MigrationType,
    ) -> Result<Migration, MigrationError> {
        let found = self
            .server(server)
            .ok_or(MigrationError::UnknownServer(server))?;
        let allowed: &[&str] = match migration_type {
            MigrationType::LiveMigration => &["ACTIVE", "PAUSED"],
            _ => &["ACTIVE", "SHUTOFF"],
        };
        let busy = self.migrations.iter().any(|record| {
            record.migration.instance_uuid == server && record.migration.in_progress()
        });
        if busy || !allowed.contains(&found.status.as_str()) {
            return Err(MigrationError::InvalidState(server, found.status.clone()));
        }
        let source = found.host.clone().ok_or(MigrationError::NoHost(server))?;
        let server_status = found.status.clone();
        if source == dest {
            return Err(MigrationError::SameHost(server, source));
        }
        let dest_index = self
            .providers
            .iter()
            .position(|provider| provider.name == dest)
            .ok_or_else(|| MigrationError::UnknownHost(dest.to_owned()))?;
        self.check_compute(&source, false)?;
        self.check_compute(dest, true)?;
        let held = self
            .provider_of_host(&source)
            .and_then(|provider| provider.allocations.get(&server).cloned())
            .ok_or_else(|| MigrationError::NoAllocations(server, source.clone()))?;

        let now = self.now_seconds();
        let id = self
            .migrations
            .iter()
            .map(|r| r.migration.id)
            .max()
            .unwrap_or(0)
            + 1;
        let resize = migration_type == MigrationType::Resize;
        let migration = Migration {
            id,
            uuid: Uuid::new_v4(),
            instance_uuid: server,
            migration_type,
            status: if migration_type == MigrationType::LiveMigration {
                "running"
            } else {
                "migrating"
            }
            .to_owned(),
            source_compute: source,
            dest_compute: dest.to_owned(),
            dest_host: format!("192.0.2.{}", 10 + dest_index % 240),
            old_instance_type_id: 2,
            new_instance_type_id: if resize { 3 } else { 2 },
            project_id: self.owner.project_id.clone(),
            user_id: self.owner.user_id.clone(),
            created_at: now,
            updated_at: now,
        };
        let migration_consumer = self.settings.nova_type(ConsumerType::Migration);
        self.move_allocations(server, migration.uuid, migration_consumer);
        let (project_id, user_id) = self
            .consumer(migration.uuid)
            .map(|record| (record.project_id.clone(), record.user_id.clone()))
            .unwrap_or_else(|| (self.owner.project_id.clone(), self.owner.user_id.clone()));
        let dest_uuid = self.providers.get(dest_index).map(|provider| provider.uuid);
        self.write_allocations(vec![Write {
            consumer: server,
            allocations: dest_uuid
                .into_iter()
                .map(|uuid| (uuid, held.clone()))
                .collect(),
            project_id,
            user_id,
            consumer_type: self.settings.nova_type(ConsumerType::Instance),
        }]);
        if let Some(moving) = self.servers.get_mut(&server) {
            moving.status = if migration_type == MigrationType::LiveMigration {
                "MIGRATING"
            } else {
                "RESIZE"
            }
            .to_owned();
        }
        self.migrations.push(Record {
            migration: migration.clone(),
            server_status,
        });
        Ok(migration)
    }

    /// The host's compute service is up (and enabled, for a destination the scheduler picks).
    fn check_compute(&self, host: &str, as_destination: bool) -> Result<(), MigrationError> {
        let now = self.now();
        let usable = self.services.iter().any(|service| {
            let view = service.at(now);
            service.is_compute_on(host)
                && view.state == ServiceState::Up
                && (!as_destination || view.status == ServiceStatus::Enabled)
        });
        if usable {
            Ok(())
        } else {
            Err(MigrationError::HostUnavailable(host.to_owned()))
        }
    }

    /// A resize or cold migration finished on the destination: status `finished`, the server
    /// on `dest` in `VERIFY_RESIZE`, the source allocations still held by the migration.
    pub(crate) fn finish_migration(&mut self, uuid: Uuid) -> Result<Migration, MigrationError> {
        let record = self.in_progress(uuid)?;
        if record.migration.migration_type == MigrationType::LiveMigration {
            return Err(MigrationError::Live(uuid, "finish"));
        }
        self.settle(
            uuid,
            "finished",
            Placement::Keep,
            Landing::Dest("VERIFY_RESIZE"),
        )
    }

    /// Confirms a resize or cold migration (`confirmed`), or completes a live migration
    /// (`completed`): the migration's source allocations are deleted, the server stays on
    /// the destination.
    pub(crate) fn confirm_migration(&mut self, uuid: Uuid) -> Result<Migration, MigrationError> {
        let record = self.in_progress(uuid)?;
        let status = match record.migration.migration_type {
            MigrationType::LiveMigration => "completed",
            _ => "confirmed",
        };
        self.settle(uuid, status, Placement::Drop, Landing::Dest(""))
    }

    /// Reverts a resize or cold migration (`reverted`), or aborts a live migration
    /// (`cancelled`): the source allocations move back to the instance, whose destination
    /// claim goes; the server is back on the source.
    pub(crate) fn revert_migration(&mut self, uuid: Uuid) -> Result<Migration, MigrationError> {
        let record = self.in_progress(uuid)?;
        let status = match record.migration.migration_type {
            MigrationType::LiveMigration => "cancelled",
            _ => "reverted",
        };
        self.settle(uuid, status, Placement::Revert, Landing::Source(""))
    }

    /// The move fails (`error`). A resize or cold migration leaves both consumers' allocations
    /// in place and the server in `ERROR`; a live migration is rolled back like a revert.
    pub(crate) fn fail_migration(&mut self, uuid: Uuid) -> Result<Migration, MigrationError> {
        let record = self.in_progress(uuid)?;
        if record.migration.migration_type == MigrationType::LiveMigration {
            return self.settle(uuid, "error", Placement::Revert, Landing::Source(""));
        }
        let landing = if record.migration.status == "finished" {
            Landing::Dest("ERROR")
        } else {
            Landing::Source("ERROR")
        };
        self.settle(uuid, "error", Placement::Keep, landing)
    }

    /// A compute service on `host` started again while live migrations from it were running:
    /// Nova's `_init_instance` finds each instance still `MIGRATING` and calls
    /// `_reset_live_migration`, which sets the `running` migration to `error` and clears the
    /// task state (the server shows its status from before the move, on the source). Unlike
    /// [`World::fail_migration`] nothing is rolled back: the migration consumer keeps the
    /// source allocations and the instance its destination claim.
    pub(crate) fn reset_live_migrations(&mut self, host: &str) {
        let running: Vec<Uuid> = self
            .migrations()
            .filter(|migration| {
                migration.migration_type == MigrationType::LiveMigration
                    && migration.status == "running"
                    && migration.source_compute == host
            })
            .map(|migration| migration.uuid)
            .collect();
        for uuid in running {
            // Found just above: cannot be unknown.
            let _ = self.settle(uuid, "error", Placement::Keep, Landing::Source(""));
        }
    }

    /// Sets the status string alone, without touching allocations or the server: for the
    /// intermediate statuses, and for records Nova got wrong.
    pub(crate) fn set_migration_status(
        &mut self,
        uuid: Uuid,
        status: &str,
    ) -> Result<Migration, MigrationError> {
        let now = self.now_seconds();
        let record = self
            .migrations
            .iter_mut()
            .find(|record| record.migration.uuid == uuid)
            .ok_or(MigrationError::UnknownMigration(uuid))?;
        record.migration.status = status.to_owned();
        record.migration.updated_at = now;
        Ok(record.migration.clone())
    }

    /// Every migration record, in creation order.
    pub(crate) fn migrations(&self) -> impl Iterator<Item = &Migration> {
        self.migrations.iter().map(|record| &record.migration)
    }

    /// Nova deletes an instance's migrations with the instance.
    pub(crate) fn forget_migrations_of(&mut self, server: Uuid) {
        self.migrations
            .retain(|record| record.migration.instance_uuid != server);
    }

    fn in_progress(&self, uuid: Uuid) -> Result<&Record, MigrationError> {
        let record = self
            .migrations
            .iter()
            .find(|record| record.migration.uuid == uuid)
            .ok_or(MigrationError::UnknownMigration(uuid))?;
        if record.migration.in_progress() {
            Ok(record)
        } else {
            Err(MigrationError::NotInProgress(
                uuid,
                record.migration.status.clone(),
            ))
        }
    }

    /// Applies a step: the new status, the allocations, and where the server ends up with
    /// what status (an empty status: the one it had before the move).
    fn settle(
        &mut self,
        uuid: Uuid,
        status: &str,
        placement: Placement,
        landing: Landing,
    ) -> Result<Migration, MigrationError> {
        let migration = self.set_migration_status(uuid, status)?;
        let server = migration.instance_uuid;
        match placement {
            Placement::Keep => {}
            Placement::Drop => {
                let (project_id, user_id) = self
                    .consumer(uuid)
                    .map(|record| (record.project_id.clone(), record.user_id.clone()))
                    .unwrap_or_default();
                self.write_allocations(vec![Write {
                    consumer: uuid,
                    allocations: Default::default(),
                    project_id,
                    user_id,
                    consumer_type: None,
                }]);
            }
            Placement::Revert => {
                let instance_type = self.settings.nova_type(ConsumerType::Instance);
                self.move_allocations(uuid, server, instance_type);
            }
        }
        let before = self
            .migrations
            .iter()
            .find(|record| record.migration.uuid == uuid)
            .map(|record| record.server_status.clone())
            .unwrap_or_default();
        let (host, status) = match landing {
            Landing::Dest(status) => (&migration.dest_compute, status),
            Landing::Source(status) => (&migration.source_compute, status),
        };
        if let Some(moved) = self.servers.get_mut(&server) {
            moved.host = Some(host.clone());
            moved.status = if status.is_empty() {
                before
            } else {
                status.to_owned()
            };
        }
        Ok(migration)
    }
}

/// What a step does to the migration consumer's allocations.
enum Placement {
    Keep,
    /// Emptied (confirm, end of a live migration).
    Drop,
    /// Moved back to the instance.
    Revert,
}

/// Which host the server is on after a step, and its status there.
enum Landing {
    Dest(&'static str),
    Source(&'static str),
}
