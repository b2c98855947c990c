//! `/audit`.

use std::fmt::Write as _;

use super::{first_that_fits, utc};
use crate::audit::AuditEvent;
use crate::page::Page;

/// `/audit`: one page of events (`events` newest first, as the store pages them), shown one
/// line per event, oldest first; the page's oldest are cut when it would not fit. When older
/// events follow, says which page holds them.
pub fn audit(events: &[AuditEvent], page: Page, more: bool) -> String {
    if events.is_empty() {
        return match page {
            Page::FIRST => "no audit events in that range".to_owned(),
            page => format!("no audit events on page {page}; page:1 shows the newest"),
        };
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
            format!("{}{run} {who} · {}", utc(e.at), e.event.describe())
        })
        .collect();
    // Too long: the newest events stay, the oldest are counted.
    let newest = |hidden: usize| {
        let mut text = String::new();
        if more {
            let _ = writeln!(text, "… earlier events: page:{}", page.next());
        }
        if hidden > 0 {
            let _ = writeln!(text, "… {hidden} earlier; narrow with since: or run:");
        }
        text.push_str(&lines[hidden..].join("\n"));
        text
    };
    first_that_fits((0..lines.len()).map(newest))
}
