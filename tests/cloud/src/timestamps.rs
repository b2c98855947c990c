//! The timestamp spellings of the simulated services, which all differ slightly.

use time::OffsetDateTime;
use time::format_description::FormatItem;
use time::macros::format_description;

/// Keystone: `2026-11-21T06:29:50.000000Z` (fernet tokens keep whole seconds).
const KEYSTONE: &[FormatItem<'_>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].000000Z");

/// Nova: `2026-11-21T06:29:50.000000`, no zone designator.
const NOVA: &[FormatItem<'_>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]");

/// Glance: `2026-11-21T06:29:50Z`.
const GLANCE: &[FormatItem<'_>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");

/// HTTP dates, for placement's `last-modified`.
const HTTP_DATE: &[FormatItem<'_>] = format_description!(
    "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
);

fn render(at: OffsetDateTime, format: &[FormatItem<'_>]) -> String {
    // Formatting a UTC date with these descriptions cannot fail; an empty string beats a panic.
    at.to_offset(time::UtcOffset::UTC)
        .format(format)
        .unwrap_or_default()
}

pub(crate) fn keystone(at: OffsetDateTime) -> String {
    render(at, KEYSTONE)
}

pub(crate) fn nova(at: OffsetDateTime) -> String {
    render(at, NOVA)
}

pub(crate) fn glance(at: OffsetDateTime) -> String {
    render(at, GLANCE)
}

pub(crate) fn http_date(at: OffsetDateTime) -> String {
    render(at, HTTP_DATE)
}

/// The current time cut to whole seconds, as Keystone issues tokens.
pub(crate) fn now_seconds() -> OffsetDateTime {
    let now = OffsetDateTime::now_utc();
    now.replace_nanosecond(0).unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn spellings_match_the_services() {
        let at = datetime!(2026-11-21 05:29:50.25 UTC);
        assert_eq!(keystone(at), "2026-11-21T05:29:50.000000Z");
        assert_eq!(nova(at), "2026-11-21T05:29:50.250000");
        assert_eq!(glance(at), "2026-11-21T05:29:50Z");
        assert_eq!(http_date(at), "Sat, 21 Nov 2026 05:29:50 GMT");
    }
}
