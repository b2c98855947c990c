//! State shared by all request handlers: the world, the clock, the call log and the fault rules.

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::calls::CallLog;
use crate::clock::SimClock;
use crate::config::{ConfigError, Flavor, SimConfig};
use crate::fault::FaultRule;
use crate::world::World;

/// Everything behind the HTTP server. Each mutex is held only for short, synchronous sections.
#[derive(Debug)]
pub(crate) struct App {
    pub flavor: Flavor,
    pub clock: SimClock,
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
    pub(crate) fn new(config: SimConfig) -> Result<Self, ConfigError> {
        let ips = config.node_ips()?;
        let names = config.initial_index_names()?;
        Ok(App {
            flavor: config.flavor,
            clock: SimClock::new(config.speed),
            world: Mutex::new(World::new(
                config.flavor,
                &config.cluster_name,
                &ips,
                &names,
                &config.written_index(),
            )),
            calls: Mutex::new(CallLog::default()),
            faults: Mutex::new(config.faults),
        })
    }

    /// Runs `action` on the world brought up to the current simulated time.
    pub(crate) fn with_world<T>(&self, action: impl FnOnce(&mut World) -> T) -> T {
        let mut world = lock(&self.world);
        world.advance(self.clock.now_ms());
        action(&mut world)
    }

    pub(crate) fn calls(&self) -> MutexGuard<'_, CallLog> {
        lock(&self.calls)
    }

    pub(crate) fn faults(&self) -> MutexGuard<'_, Vec<FaultRule>> {
        lock(&self.faults)
    }
}
