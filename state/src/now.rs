//! The time the store stamps its audit entries with: the system's, or the bot's own clock when
//! it runs at another time (`--now`), so that a run's audit agrees with its own times.

use std::fmt;
use std::sync::Arc;

use time::OffsetDateTime;

#[derive(Clone)]
pub struct Now(Arc<dyn Fn() -> OffsetDateTime + Send + Sync>);

impl Now {
    /// The system's time.
    pub fn system() -> Self {
        Self(Arc::new(OffsetDateTime::now_utc))
    }

    /// The time `now` tells.
    pub fn from_fn(now: impl Fn() -> OffsetDateTime + Send + Sync + 'static) -> Self {
        Self(Arc::new(now))
    }

    pub(crate) fn get(&self) -> OffsetDateTime {
        (self.0)()
    }
}

impl Default for Now {
    fn default() -> Self {
        Self::system()
    }
}

impl fmt::Debug for Now {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Now")
    }
}
