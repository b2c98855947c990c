//! `/audit`.

use std::fmt::Write as _;

use super::{first_that_fits, utc};
use crate::audit::AuditEvent;

/// `/audit`: one line per event, oldest first; the oldest are cut when it would not fit.
pub fn audit(events: &[AuditEvent]) -> String {
    if events.is_empty() {
        return "no audit events in that range".to_owned();
    }
    let lines: Vec<String> = events
        .iter()
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
        if hidden > 0 {
            let _ = writeln!(text, "… {hidden} earlier; narrow with since: or run:");
        }
        text.push_str(&lines[hidden..].join("\n"));
        text
    };
    first_that_fits((0..lines.len()).map(newest))
}
