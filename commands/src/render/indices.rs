//! Indices: the `/indices list` table, sizes and counts, and compact lists of daily names.

use super::first_that_fits;
use crate::cluster::CatIndexRow;
use crate::index::IndexPattern;
use crate::name::ClusterName;

/// `1.5k`, `7.6M`: counts as operators read them at a glance.
fn count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1}M", n as f64 / 1e6),
        _ => format!("{:.1}G", n as f64 / 1e9),
    }
}

/// `3.8gb`: sizes in the units the servers use.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["kb", "mb", "gb", "tb", "pb"];
    if n < 1024 {
        return format!("{n}b");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1}{}", UNITS[unit])
}

/// `/indices list`: a table sorted by name, with totals; the middle is summarised when the
/// whole would not fit in one chat message.
pub fn index_list(
    rows: &[CatIndexRow],
    cluster: &ClusterName,
    pattern: Option<&IndexPattern>,
) -> String {
    let mut rows: Vec<&CatIndexRow> = rows.iter().collect();
    rows.sort_by(|a, b| a.index.cmp(&b.index));
    let number = |v: &Option<String>| v.as_deref().and_then(|s| s.parse::<u64>().ok());
    let docs: u64 = rows.iter().filter_map(|r| number(&r.docs_count)).sum();
    let size: u64 = rows.iter().filter_map(|r| number(&r.store_size)).sum();
    let scope = match pattern {
        Some(p) => format!("indices of {cluster} matching {p}"),
        None => format!("indices of {cluster}"),
    };
    if rows.is_empty() {
        return match pattern {
            // `pattern:.kibana` is the whole name `.kibana`; operators often mean its prefix.
            Some(p) if !p.as_str().contains('*') => format!(
                "{scope}: none (a pattern without * is a whole name; pattern:{p}* matches the \
                 names that start with it)"
            ),
            _ => format!("{scope}: none"),
        };
    }
    let head = format!(
        "{scope} · {} indices · {} · {} docs",
        rows.len(),
        bytes(size),
        count(docs)
    );
    let width = rows
        .iter()
        .map(|r| r.index.chars().count())
        .max()
        .unwrap_or(0);
    let line = |r: &CatIndexRow| {
        let dash = || "-".to_owned();
        format!(
            "{:<width$}  {:<6}  {:<5}  {:>6}  {:>7}",
            r.index,
            r.health.clone().unwrap_or_else(dash),
            r.status.clone().unwrap_or_else(dash),
            number(&r.docs_count).map_or_else(dash, count),
            number(&r.store_size).map_or_else(dash, bytes),
        )
    };
    let title = format!(
        "{:<width$}  {:<6}  {:<5}  {:>6}  {:>7}",
        "index", "health", "status", "docs", "size"
    );
    let all: Vec<String> = rows.iter().map(|r| line(r)).collect();
    let assemble = |body: &[String]| format!("{head}\n{title}\n{}", body.join("\n"));
    // Too long: keep the oldest and the newest, which are what retention decisions look at.
    let ends = |keep: usize| {
        let hidden = all.len() - 2 * keep;
        let mut body: Vec<String> = all[..keep].to_vec();
        body.push(format!(
            "… {hidden} more; narrow it with pattern:, e.g. pattern:flog-2026.10.*"
        ));
        body.extend_from_slice(&all[all.len() - keep..]);
        assemble(&body)
    };
    first_that_fits(std::iter::once(assemble(&all)).chain((0..=all.len() / 2).rev().map(ends)))
}

/// `flog-2026.08.{24..31}, flog-2026.09.{01..30}`: many daily index names, readable.
pub fn compact<N: AsRef<str>>(names: &[N]) -> String {
    let mut sorted: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    sorted.sort_unstable();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let name = sorted[i];
        let Some((stem, day)) = daily(name) else {
            parts.push(name.to_owned());
            i += 1;
            continue;
        };
        let mut last = day;
        let mut j = i + 1;
        while j < sorted.len() && daily(sorted[j]) == Some((stem, last + 1)) {
            last += 1;
            j += 1;
        }
        parts.push(if j - i >= 3 {
            format!("{stem}{{{day:02}..{last:02}}}")
        } else {
            sorted[i..j].join(", ")
        });
        i = j;
    }
    parts.join(", ")
}

/// `flog-2026.08.24` -> (`flog-2026.08.`, 24).
fn daily(name: &str) -> Option<(&str, u32)> {
    let (stem, day) = name.split_at(name.len().checked_sub(2)?);
    if !stem.ends_with('.') || !day.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((stem, day.parse().ok()?))
}
