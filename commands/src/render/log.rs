//! A run's command output in chat: `/run log` pages through all of it that the store keeps,
//! counted from the end as the other listings are (page 1 holds the latest lines that fit one
//! message, page 2 the lines before them), optionally only the lines that contain a text.

use std::ops::Range;

use super::{MESSAGE_LIMIT, fit};
use crate::echo::visible;
use crate::name::RunId;
use crate::page::Page;

/// Room a page leaves for its head, its fences and the lines that say where the others are.
const FRAME: usize = 320;
/// Longest line shown whole; a longer one is cut, and `opsbot run-log export` has it all.
const LONGEST_LINE: usize = 600;

/// The lines `/run log` shows: those containing `grep` (ASCII case-insensitive), each with its
/// line number, or all of them.
struct Selection<'a> {
    lines: Vec<(usize, &'a str)>,
    numbered: bool,
}

impl<'a> Selection<'a> {
    fn of(lines: &'a [String], grep: Option<&str>) -> Self {
        let needle = grep.map(str::to_ascii_lowercase);
        let lines = lines
            .iter()
            .enumerate()
            .filter(|(_, line)| {
                needle
                    .as_deref()
                    .is_none_or(|needle| line.to_ascii_lowercase().contains(needle))
            })
            .map(|(i, line)| (i + 1, line.as_str()))
            .collect();
        Self {
            lines,
            numbered: grep.is_some(),
        }
    }

    /// A line as shown: numbered when filtered, cut when it alone would crowd a message.
    fn shown(&self, (number, line): (usize, &str)) -> String {
        let line = if line.chars().count() > LONGEST_LINE {
            let cut: String = line.chars().take(LONGEST_LINE).collect();
            format!("{cut}… (line cut; the export has it whole)")
        } else {
            line.to_owned()
        };
        if self.numbered {
            format!("{number}: {line}")
        } else {
            line
        }
    }

    /// The pages, from the end: each the range of selected lines one message holds.
    fn pages(&self) -> Vec<Range<usize>> {
        let budget = MESSAGE_LIMIT - FRAME;
        let mut pages = Vec::new();
        let mut end = self.lines.len();
        while end > 0 {
            let mut start = end;
            let mut used = 0;
            while start > 0 {
                let cost = self.shown(self.lines[start - 1]).chars().count() + 1;
                if used + cost > budget && start < end {
                    break;
                }
                used += cost;
                start -= 1;
            }
            pages.push(start..end);
            end = start;
        }
        pages
    }
}

/// `/run log id:<run> [page:<n>] [grep:<text>]`: one page of what the run's commands printed,
/// where the other pages are, and how to have it all.
pub fn run_log(id: RunId, lines: &[String], page: Page, grep: Option<&str>) -> String {
    if lines.is_empty() {
        return format!("{id} has no command output");
    }
    let total = lines.len();
    let selection = Selection::of(lines, grep);
    let grep_option = grep.map_or_else(String::new, |g| format!(" grep:{}", visible(g, 100)));
    let matching = grep.map_or_else(String::new, |g| {
        format!(
            ", {} containing `{}`",
            selection.lines.len(),
            visible(g, 100)
        )
    });
    if let (Some(grep), true) = (grep, selection.lines.is_empty()) {
        return format!(
            "{id}: none of its {total} lines of command output contains `{}`",
            visible(grep, 100)
        );
    }
    let pages = selection.pages();
    let Some(range) = pages.get(page.skip(1)) else {
        let n = pages.len();
        return format!(
            "{id}: its command output{matching} has {n} page(s); page {page} is past the \
             earliest (/run log id:{id} page:{n}{grep_option})"
        );
    };
    let shown: Vec<String> = selection.lines[range.clone()]
        .iter()
        .map(|line| selection.shown(*line))
        .collect();
    let (first, last) = (
        selection.lines[range.start].0,
        selection.lines[range.end - 1].0,
    );
    let mut text = format!(
        "{id}: command output, {total} lines{matching}; lines {first}–{last}, page {page} of {}\n\
         ```\n{}\n```",
        pages.len(),
        shown.join("\n")
    );
    if page.number() < u32::try_from(pages.len()).unwrap_or(u32::MAX) {
        let earlier = page.next();
        text.push_str(&format!(
            "\nearlier: /run log id:{id} page:{earlier}{grep_option}"
        ));
    }
    text.push_str(&format!(
        "\nall of it in a file: opsbot run-log export --run {id}"
    ));
    fit(&text)
}

/// Largest file of a run's log attached to a chat reply: within Discord's 10 MiB per upload
/// for a guild without boosts, with room to spare.
pub const LOG_FILE_BYTES: usize = 8 << 20;

/// A run's whole log as a file for chat, when `/run log` shows it in more than one page:
/// its lines, the latest within [`LOG_FILE_BYTES`], saying so when the earliest are left out.
pub fn run_log_file(id: RunId, lines: &[String]) -> Option<String> {
    if Selection::of(lines, None).pages().len() < 2 {
        return None;
    }
    let mut kept = 0;
    let mut size = 0;
    for line in lines.iter().rev() {
        if size + line.len() + 1 > LOG_FILE_BYTES {
            break;
        }
        size += line.len() + 1;
        kept += 1;
    }
    let mut text = String::with_capacity(size + 200);
    if kept < lines.len() {
        text.push_str(&format!(
            "… the first {} lines are left out of this file; opsbot run-log export --run {id} \
             writes them all\n",
            lines.len() - kept
        ));
    }
    for line in &lines[lines.len() - kept..] {
        text.push_str(line);
        text.push('\n');
    }
    Some(text)
}

/// The last lines of `lines` that fit in `max_chars`, newlines counted: output shown in chat.
pub fn tail(lines: &[String], max_chars: usize) -> Vec<&str> {
    let mut shown = Vec::new();
    let mut used = 0;
    for line in lines.iter().rev() {
        used += line.chars().count() + 1;
        if used > max_chars {
            break;
        }
        shown.push(line.as_str());
    }
    shown.reverse();
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize, width: usize) -> Vec<String> {
        (1..=n).map(|i| format!("{i:0width$}")).collect()
    }

    #[test]
    fn every_line_is_on_exactly_one_page_counted_from_the_end() {
        let all = lines(1000, 40);
        let id = RunId::new(5);
        let first = run_log(id, &all, Page::FIRST, None);
        assert!(first.contains("1000 lines; lines "), "{first}");
        let pages: usize = first
            .split(" of ")
            .nth(1)
            .and_then(|rest| rest.split('\n').next())
            .and_then(|n| n.parse().ok())
            .unwrap();
        let mut seen = Vec::new();
        for number in 1..=pages {
            let page = Page::parse(&number.to_string()).unwrap();
            let text = run_log(id, &all, page, None);
            assert!(text.chars().count() <= MESSAGE_LIMIT, "{text}");
            let body = text
                .split("```\n")
                .nth(1)
                .unwrap()
                .split("\n```")
                .next()
                .unwrap();
            let mut on_page: Vec<String> = body.lines().map(str::to_owned).collect();
            on_page.extend(seen);
            seen = on_page;
            assert_eq!(
                text.contains(&format!("earlier: /run log id:r-5 page:{}", number + 1)),
                number < pages
            );
        }
        assert_eq!(
            seen, all,
            "the pages, read back to front, are the whole log"
        );
        let past = Page::parse(&(pages + 1).to_string()).unwrap();
        assert_eq!(
            run_log(id, &all, past, None),
            format!(
                "r-5: its command output has {pages} page(s); page {} is past the earliest \
                 (/run log id:r-5 page:{pages})",
                pages + 1
            )
        );
    }

    #[test]
    fn grep_keeps_the_lines_containing_it_numbered_whatever_the_case() {
        let log: Vec<String> = ["start", "ERROR: disk", "ok", "error again"]
            .map(str::to_owned)
            .to_vec();
        let text = run_log(RunId::new(2), &log, Page::FIRST, Some("error"));
        assert_eq!(
            text,
            "r-2: command output, 4 lines, 2 containing `error`; lines 2–4, page 1 of 1\n```\n\
             2: ERROR: disk\n4: error again\n```\nall of it in a file: opsbot run-log export \
             --run r-2"
        );
        assert_eq!(
            run_log(RunId::new(2), &log, Page::FIRST, Some("panic")),
            "r-2: none of its 4 lines of command output contains `panic`"
        );
    }

    #[test]
    fn a_line_longer_than_a_message_is_cut_and_says_where_it_is_whole() {
        let log = vec!["x".repeat(5000), "after".to_owned()];
        let text = run_log(RunId::new(3), &log, Page::FIRST, None);
        assert!(
            text.contains("… (line cut; the export has it whole)\nafter"),
            "{text}"
        );
        assert!(text.chars().count() <= MESSAGE_LIMIT);
    }

    #[test]
    fn a_log_of_one_page_has_no_file_and_a_huge_one_keeps_its_latest_lines() {
        assert_eq!(run_log_file(RunId::new(1), &lines(3, 10)), None);
        let huge = lines(9000, 1023);
        let file = run_log_file(RunId::new(1), &huge).unwrap();
        assert!(file.len() <= LOG_FILE_BYTES + 200, "{}", file.len());
        assert!(
            file.starts_with("… the first ") && file.ends_with(&format!("{}\n", huge[8999])),
            "{}",
            &file[..200]
        );
    }
}
