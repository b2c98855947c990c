//! State shared by all request handlers: Keystone's records and tokens, the world, the call log
//! and the fault rules.

use std::sync::{Mutex, MutexGuard, PoisonError};

use opsbot_search_sim::FaultRule;

use crate::calls::CallLog;
use crate::config::CloudSimConfig;
use crate::directory::Directory;
use crate::http::microversion::Version;
use crate::tokens::Tokens;
use crate::world::{MigrationError, Owner, Settings, World};

/// Everything behind the HTTP server. Each mutex is held only for short, synchronous sections.
#[derive(Debug)]
pub(crate) struct App {
    /// `http://IP:PORT`, for catalog URLs and `Location` headers.
    pub base_url: String,
    pub directory: Directory,
    /// See [`CloudSimConfig::accept_foreign_tokens`].
    pub accept_foreign_tokens: bool,
    /// See [`CloudSimConfig::placement_max_version`].
    pub placement_max: Version,
    tokens: Mutex<Tokens>,
    world: Mutex<World>,
    calls: Mutex<CallLog>,
    faults: Mutex<Vec<FaultRule>>,
}

/// A panic while holding a lock cannot leave these structures half-updated in a way that
/// matters more than answering, so a poisoned lock is simply taken over.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl App {
    /// The app for a config; a seeded migration Nova would refuse is an error.
    pub(crate) fn new(config: &CloudSimConfig, base_url: String) -> Result<Self, MigrationError> {
        let directory = Directory::new(config, &base_url);
        // Seeded things belong to the first user, as if the operator had created them.
        let owner = directory.account(0).map_or_else(
            || Owner {
                project_id: "service".to_owned(),
                user_id: "nova".to_owned(),
            },
            |account| Owner {
                project_id: account.project.id.clone(),
                user_id: account.user.id.clone(),
            },
        );
        let settings = Settings {
            restart_downtime: config.compute_restart_downtime,
            restart_call: config.compute_restart_call,
            typed_consumers: config.nova_writes_consumer_types,
        };
        Ok(App {
            base_url,
            directory,
            accept_foreign_tokens: config.accept_foreign_tokens,
            placement_max: config.placement_max_version,
            tokens: Mutex::new(Tokens::new(config.token_lifetime)),
            world: Mutex::new(World::new(&config.world, owner, settings)?),
            calls: Mutex::new(CallLog::default()),
            faults: Mutex::new(Vec::new()),
        })
    }

    pub(crate) fn world(&self) -> MutexGuard<'_, World> {
        lock(&self.world)
    }

    pub(crate) fn tokens(&self) -> MutexGuard<'_, Tokens> {
        lock(&self.tokens)
    }

    pub(crate) fn calls(&self) -> MutexGuard<'_, CallLog> {
        lock(&self.calls)
    }

    pub(crate) fn faults(&self) -> MutexGuard<'_, Vec<FaultRule>> {
        lock(&self.faults)
    }
}
