//! Discord's accounting of invalid requests: every 401, 403 and 429 answer counts, and an IP
//! with 10,000 of them in 10 minutes is banned for a while (`topics/rate-limits.mdx`, "Invalid
//! Request Limit aka Cloudflare bans"; a 429 with `X-RateLimit-Scope: shared` would not count,
//! but the fake answers none). 404s do not count.

use std::time::Duration;

use axum::http::StatusCode;

use crate::state::Shared;

/// The span over which Discord counts invalid requests toward a ban.
const SPAN: Duration = Duration::from_secs(10 * 60);

/// Counts an answer if Discord would count it as invalid.
pub(crate) fn count(s: &Shared, status: StatusCode) {
    if !matches!(status.as_u16(), 401 | 403 | 429) {
        return;
    }
    let now = s.now();
    let mut inner = s.lock();
    inner.invalid += 1;
    inner.invalid_recent.push_back(now);
    while inner
        .invalid_recent
        .front()
        .is_some_and(|at| now.saturating_duration_since(*at) >= SPAN)
    {
        inner.invalid_recent.pop_front();
    }
    let recent = inner.invalid_recent.len();
    if recent >= s.cfg.invalid_request_limit && !inner.banned {
        inner.banned = true;
        inner.violation(format!(
            "{recent} invalid requests (401, 403, 429) within 10 minutes: Discord would ban the IP"
        ));
    }
}
