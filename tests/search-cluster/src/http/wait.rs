//! Waiting in simulated time: `wait_for_*` health parameters, `master_timeout`, and index creation
//! waiting for its primary.

use std::time::Duration;

use super::errors::ApiError;
use super::params::Params;
use crate::app::App;
use crate::world::World;

/// Upper bound on one real sleep, so changes made by other requests (a node started, a setting
/// changed) are noticed promptly even at low speed.
const MAX_REAL_PAUSE: Duration = Duration::from_millis(25);

/// `master_timeout` default.
const MASTER_TIMEOUT_MS: u64 = 30_000;

/// Evaluates `check` on the world until it reports done or `timeout_ms` of simulated time
/// passed; returns whether it was done and its last value.
pub(crate) async fn wait_for<T>(
    app: &App,
    timeout_ms: u64,
    mut check: impl FnMut(&World) -> (bool, T),
) -> (bool, T) {
    let deadline = app.clock.now_ms().saturating_add(timeout_ms);
    loop {
        let (done, value, now, next) = app.with_world(|world| {
            let (done, value) = check(world);
            (done, value, world.now_ms(), world.next_event_ms())
        });
        if done || now >= deadline {
            return (done, value);
        }
        let until = next.map_or(deadline, |next| next.min(deadline));
        let pause = app
            .clock
            .real_duration(until.saturating_sub(now))
            .clamp(Duration::from_millis(1), MAX_REAL_PAUSE);
        tokio::time::sleep(pause).await;
    }
}

/// Waits (like `wait_for_active_shards=1`) until the primary of `index` has started; whether
/// it did within `timeout_ms`.
pub(crate) async fn primary_started(app: &App, index: &str, timeout_ms: u64) -> bool {
    let (started, ()) = wait_for(app, timeout_ms, |world| {
        let started = world
            .index(index)
            .is_some_and(|index| index.primary().is_active());
        (started, ())
    })
    .await;
    started
}

/// Master-level requests wait up to `master_timeout` for an elected master, as ES's
/// `TransportMasterNodeAction` does, then fail with "not discovered".
pub(crate) async fn require_master(app: &App, params: &Params) -> Result<(), ApiError> {
    let timeout = params.millis("master_timeout", MASTER_TIMEOUT_MS)?;
    let (found, ()) = wait_for(app, timeout, |world| (world.master().is_some(), ())).await;
    if found {
        Ok(())
    } else {
        Err(ApiError::not_discovered(app.flavor))
    }
}
