//! `/runbook list` and `/runbook show`.

use std::fmt::Write as _;

use super::fit;
use crate::runbook::{Runbook, Runbooks};

/// One line per runbook: its name and what it does.
pub fn runbook_list(runbooks: &Runbooks) -> String {
    if runbooks.is_empty() {
        return "no runbooks are loaded; set [runbooks] dir in the config and restart".to_owned();
    }
    let lines: Vec<String> = runbooks
        .iter()
        .map(|r| {
            let approval = if r.needs_approval() {
                " (needs approval)"
            } else {
                ""
            };
            format!("`{}`: {}{approval}", r.name, r.description)
        })
        .collect();
    fit(&format!(
        "{}\n/runbook show name:<runbook> for its parameters and steps",
        lines.join("\n")
    ))
}

/// A runbook's usage, parameters and steps.
pub fn runbook_show(runbook: &Runbook) -> String {
    let mut text = format!(
        "`{}`: {}\nusage: {}\n",
        runbook.name,
        runbook.description,
        runbook.usage()
    );
    if !runbook.params.is_empty() {
        text.push_str("parameters:\n");
        for param in &runbook.params {
            let _ = write!(text, "  {}: {}", param.name, param.kind.hint());
            if let Some(default) = &param.default {
                let _ = write!(text, " (default {default})");
            }
            if !param.help.is_empty() {
                let _ = write!(text, ". {}", param.help);
            }
            text.push('\n');
        }
    }
    text.push_str("steps:\n");
    for (i, step) in runbook.outline().iter().enumerate() {
        let _ = writeln!(text, "{:>3}. {step}", i + 1);
    }
    let _ = write!(text, "from {}", runbook.source);
    fit(&text)
}
