//! What listings return, whichever backend read them: pages newest first, audit queries, the
//! tail of a run's log.

use opsbot_commands::name::RunId;
use time::OffsetDateTime;

/// One page of a listing, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing<T> {
    pub items: Vec<T>,
    /// Whether older entries follow on the next page.
    pub more: bool,
}

/// Which audit entries: those at or after `since` (all when `None`), of one run or of all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditQuery {
    pub since: Option<OffsetDateTime>,
    pub run: Option<RunId>,
}

impl AuditQuery {
    /// The whole audit log.
    pub const ALL: AuditQuery = AuditQuery {
        since: None,
        run: None,
    };
}
