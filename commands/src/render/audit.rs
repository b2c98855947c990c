//! `/audit`.

use std::fmt::Write as _;

use super::{first_that_fits, on_page, utc_seconds};
use crate::audit::{AuditEvent, Since};
use crate::name::RunId;
use crate::page::Page;

/// `/audit`: one page of events (`events` newest first, as the store pages them, at most
/// [`PER_PAGE`](crate::page::PER_PAGE)), shown one line per event, oldest first, each cut to its
/// share of the message. When older events follow, says which command shows them, with the
/// filters this page was asked with (`run`, `since`).
pub fn audit(
    events: &[AuditEvent],
    run: Option<RunId>,
    since: Option<Since>,
    page: Page,
    more: bool,
) -> String {
    if events.is_empty() {
        return match page {
            Page::FIRST => "no audit events in that range".to_owned(),
            page => format!("no audit events on page {page}; page:1 shows the newest"),
        };
    }
    let mut pointer = String::new();
    if more {
        pointer.push_str("… earlier events: /audit");
        if let Some(run) = run {
            let _ = write!(pointer, " run:{run}");
        }
        if let Some(since) = since {
            let _ = write!(pointer, " since:{since}");
        }
        let _ = write!(pointer, " page:{}", page.next());
    }
    let lines: Vec<String> = events
        .iter()
        .rev()
        .map(|e| {
            let run = e.run.map(|r| format!(" {r}")).unwrap_or_default();
            let who = e
                .actor
                .as_ref()
                .map_or_else(|| "opsbot".to_owned(), ToString::to_string);
            format!("{}{run} {who} · {}", utc_seconds(e.at), e.event.describe())
        })
        .collect();
    let lines = on_page(lines, &pointer);
    // More events than a page: the newest stay, the oldest are counted.
    let newest = |hidden: usize| {
        let mut text = String::new();
        if more {
            let _ = writeln!(text, "{pointer}");
        }
        if hidden > 0 {
            let _ = writeln!(text, "… {hidden} earlier; narrow with since: or run:");
        }
        text.push_str(&lines[hidden..].join("\n"));
        text
    };
    first_that_fits((0..lines.len()).map(newest))
}
