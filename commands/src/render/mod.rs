//! Every text an operator reads about plans and runs, decided in one place. Pure functions of
//! their inputs (time included), so that each is snapshot-tested. One module per subject; the
//! functions are used as `render::progress`, `render::plan`, ...

mod aftermath;
mod audit;
mod cloud;
mod cluster;
mod indices;
mod log;
mod plan;
mod run;
mod runbook;
mod schedule;

pub use aftermath::aftermath;
pub use audit::audit;
pub use cloud::{allocations, services};
pub use cluster::{cluster_status, report};
pub use indices::{bytes, compact, index_list};
pub use log::{LOG_FILE_BYTES, run_log, run_log_file, tail};
pub use plan::{Label, approval_preview, plan, plan_file, started, step_label, step_label_at};
pub(crate) use run::decided_how;
pub use run::{ApprovalButtons, ProgressView, Tone, progress, progress_view, run_list, run_status};
pub use runbook::{runbook_list, runbook_show};
pub use schedule::{ScheduleState, schedule_list, schedule_show, standing_asked};

use crate::consent::{ConsentPolicy, ConsentRule};
use time::OffsetDateTime;

use crate::catalogue::{self, Reach};
use crate::page::PER_PAGE;

/// Discord's limit for one message; every text here is cut to fit it.
pub const MESSAGE_LIMIT: usize = 2000;

/// `4m12s`, `1h02m`, `42s`.
pub fn duration(d: time::Duration) -> String {
    let secs = d.whole_seconds().max(0);
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, _) => format!("{m}m{s:02}s"),
        // A service that stopped reporting weeks ago: days read better than 984h.
        (48.., _) => format!("{}d{:02}h", h / 24, h % 24),
        _ => format!("{h}h{m:02}m"),
    }
}

pub(crate) fn hhmm(at: OffsetDateTime) -> String {
    format!("{:02}:{:02} UTC", at.hour(), at.minute())
}

/// `2026-10-22 00:00 UTC`.
pub fn utc(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{}-{:02}-{:02} {:02}:{:02} UTC",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute()
    )
}

/// `2026-10-22 00:00:07 UTC`: to the second, where the order of events within a minute
/// matters (the audit trail: who approved before whom).
pub fn utc_seconds(at: OffsetDateTime) -> String {
    const SECONDS: &[time::format_description::BorrowedFormatItem<'_>] =
        time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second] UTC");
    // Formatting a UTC time with numeric components cannot fail.
    let at = at.to_offset(time::UtcOffset::UTC);
    at.format(SECONDS).unwrap_or_else(|_| utc(at))
}

/// `/help` and `/help topic:cluster`.
pub fn help(topic: Option<&str>, demo: bool, policy: &ConsentPolicy) -> String {
    let shown = |c: &&catalogue::CommandSpec| demo || c.reach == Reach::Everywhere;
    let commands: Vec<_> = match topic {
        Some(topic) => catalogue::group(topic).filter(shown).collect(),
        None => catalogue::commands().filter(shown).collect(),
    };
    if commands.is_empty() {
        let mut groups: Vec<&str> = catalogue::commands()
            .filter(shown)
            .map(|c| c.group)
            .collect();
        groups.dedup();
        return format!(
            "no commands about `{}`; groups: {}",
            crate::echo::visible(topic.unwrap_or_default(), 32),
            groups.join(", ")
        );
    }
    let full = || {
        let lines: Vec<String> = commands
            .iter()
            .map(|c| {
                let consent = match (c.consent, policy.of_command(c)) {
                    (_, Some(consent)) => format!(" · approval: {consent}"),
                    (Some(ConsentRule::Gates), None) => {
                        " · approval: at the runbook's gates".into()
                    }
                    (None | Some(_), None) => String::new(),
                };
                format!("{}\n    {}{consent}", c.usage(), c.summary)
            })
            .collect();
        lines.join("\n")
    };
    // The whole catalogue outgrew one message: usage lines alone, and where to read the rest.
    let usages = || {
        let lines: Vec<String> = commands.iter().map(|c| c.usage()).collect();
        format!(
            "{}\n/help topic:<group> says what each command of a group does",
            lines.join("\n")
        )
    };
    first_that_fits(std::iter::once_with(full).chain(std::iter::once_with(usages)))
}

/// The first of `candidates`, from the fullest to the shortest, that fits in one message; the
/// last one, cut, when none does. Callers build the candidates lazily.
fn first_that_fits(candidates: impl IntoIterator<Item = String>) -> String {
    let mut last = String::new();
    for text in candidates {
        if text.chars().count() <= MESSAGE_LIMIT {
            return text;
        }
        last = text;
    }
    fit(&last)
}

/// A listing's page (`/audit`, `/run list`) fitted into one message with the `pointer` to the
/// next page, so that no entry is cut away between one page and the next: when the lines do not
/// fit whole, the longest are cut to one common length, as long as the rest leave room for, and
/// no more. A page of [`PER_PAGE`] lines always fits; more lines than a page are left whole
/// (the caller shows the newest that fit).
fn on_page(lines: Vec<String>, pointer: &str) -> Vec<String> {
    // Each line takes its newline with it, the pointer too.
    let room = MESSAGE_LIMIT.saturating_sub(pointer.chars().count() + 1);
    let lengths: Vec<usize> = lines.iter().map(|line| line.chars().count() + 1).collect();
    if lines.len() > PER_PAGE || lengths.iter().sum::<usize>() <= room {
        return lines;
    }
    // The longest common length the lines fit at: the shortest lines first keep their whole
    // length, and what they leave is shared by the others.
    let mut sorted = lengths.clone();
    sorted.sort_unstable();
    let (mut left, mut cap) = (room, room / lines.len().max(1));
    for (shorter, length) in sorted.iter().enumerate() {
        let longer = sorted.len() - shorter;
        if length * longer > left {
            cap = left / longer;
            break;
        }
        left -= length;
    }
    lines
        .into_iter()
        .map(|line| {
            let share = cap.saturating_sub(1);
            if line.chars().count() <= share {
                return line;
            }
            let mut cut: String = line.chars().take(share.saturating_sub(1)).collect();
            cut.push('…');
            cut
        })
        .collect()
}

/// Cuts a text to the chat limit, saying so, on a character boundary.
pub fn fit(text: &str) -> String {
    const MORE: &str = "\n… (cut to fit; /run status shows the rest)";
    if text.chars().count() <= MESSAGE_LIMIT {
        return text.to_owned();
    }
    let keep = MESSAGE_LIMIT - MORE.chars().count();
    let mut cut: String = text.chars().take(keep).collect();
    cut.push_str(MORE);
    cut
}

#[cfg(test)]
mod tests;
