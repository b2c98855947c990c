//! State shared by all request handlers: the world, the clock, the call log and the fault rules.

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::calls::CallLog;
use crate::clock::SimClock;
use crate::config::{ConfigError, Flavor, Security, SimConfig};
use crate::fault::FaultRule;
use crate::flavor::Product;
use crate::world::World;

/// Everything behind the HTTP server. Each mutex is held only for short, synchronous sections.
#[derive(Debug)]
pub(crate) struct App {
    pub flavor: Flavor,
    pub product: Product,
    pub clock: SimClock,
    pub security: Option<Security>,
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
        let clock = SimClock::new(config.speed);
        let origin = clock.wall_time(0);
        let origin_ms = i64::try_from(origin.unix_timestamp_nanos() / 1_000_000).unwrap_or(0);
        let world = crate::scenario::build_world(&config, origin_ms)?;
        Ok(App {
            flavor: config.flavor,
            product: world.product(),
            clock,
            security: config.security,
            world: Mutex::new(world),
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
