//! Every text an operator reads about plans and runs, decided in one place. Pure functions of
//! their inputs (time included), so that each is snapshot-tested.

use std::fmt::Write as _;

use time::OffsetDateTime;

use crate::catalogue::{self, CATALOGUE, Surface};
use crate::cluster::{CatIndexRow, CatReport, ClusterStatus, FlushMode, Membership, Observation};
use crate::index::IndexName;
use crate::name::NodeAddr;
use crate::plan::{Action, DestructiveAction, Plan, SafeAction, Wait};
use crate::request::ProcedureRequest;
use crate::run::{Run, RunState, StepState};

/// Discord's limit for one message; every text here is cut to fit it.
pub const MESSAGE_LIMIT: usize = 2000;

/// What a step does, in a few words.
pub fn step_label(action: &Action) -> String {
    match action {
        Action::Safe(safe) => match safe {
            SafeAction::DisableAllocation => {
                "disable shard allocation (persistent cluster.routing.allocation.enable: none)"
                    .to_owned()
            }
            SafeAction::EnableAllocation => {
                "re-enable shard allocation (persistent cluster.routing.allocation.enable: null)"
                    .to_owned()
            }
            SafeAction::Flush {
                mode: FlushMode::Synced,
            } => "synced flush (POST /_flush/synced)".to_owned(),
            SafeAction::Flush {
                mode: FlushMode::Plain,
            } => "flush (POST /_flush)".to_owned(),
            SafeAction::StopNode { node } => format!("stop the search container on {node}"),
            SafeAction::StartNode { node } => format!("start the search container on {node}"),
            SafeAction::Report => "report _cat/health, _cat/recovery and _cat/nodes".to_owned(),
            SafeAction::VerifyDeleted => {
                "list the indices and verify that none of the deleted ones remains".to_owned()
            }
        },
        Action::Wait(wait) => match wait {
            Wait::NodeLeft { node } => format!("wait until {node} has left the cluster"),
            Wait::NodeJoined { node } => format!("wait until {node} has joined"),
            Wait::ClusterFormed { nodes, status } => {
                format!("wait until all {nodes} nodes have joined and status is {status} or better")
            }
        },
        Action::Destructive(DestructiveAction::DeleteIndices { indices }) => {
            let noun = if indices.len() == 1 {
                "index"
            } else {
                "indices"
            };
            format!("delete {} {noun}: {}", indices.len(), compact(indices))
        }
    }
}

fn destructive_marker(action: &Action) -> &'static str {
    match action {
        Action::Destructive(_) => " (needs approval)",
        Action::Safe(_) | Action::Wait(_) => "",
    }
}

/// The plan as shown before a run starts and by `opsbot plan`.
pub fn plan(plan: &Plan) -> String {
    let mut text = format!("Plan for {} (digest {})\n", plan.request, plan.digest());
    for (i, action) in plan.steps.iter().enumerate() {
        let _ = writeln!(
            text,
            "{:>3}. {}{}",
            i + 1,
            step_label(action),
            destructive_marker(action)
        );
    }
    for note in &plan.notes {
        let _ = writeln!(text, "note: {note}");
    }
    fit(text.trim_end())
}

/// The answer to a procedure request: the run and its plan, and who must act next.
pub fn started(run: &Run) -> String {
    let first = match &run.state {
        RunState::AwaitingApproval { expires_at } => format!(
            "{} waits for approval by an approver (expires {}): /approve id:{} or /reject id:{} reason:\"...\"",
            run.id,
            hhmm(*expires_at),
            run.id,
            run.id
        ),
        _ => format!("{} started", run.id),
    };
    fit(&format!("{first}\n{}", plan(&run.plan)))
}

/// `4m12s`, `1h02m`, `42s`.
pub fn duration(d: time::Duration) -> String {
    let secs = d.whole_seconds().max(0);
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, _) => format!("{m}m{s:02}s"),
        _ => format!("{h}h{m:02}m"),
    }
}

fn icon(state: &RunState) -> &'static str {
    match state {
        RunState::AwaitingApproval { .. } => "⏸",
        RunState::Running => "⏳",
        RunState::Succeeded => "✅",
        RunState::Failed { .. } => "❌",
        RunState::Cancelled { .. } => "⏹",
        RunState::Rejected { .. } => "🚫",
        RunState::Expired => "⌛",
    }
}

/// `⏳ r-3 · /cluster restart cluster:logs · by alice · running 1m12s`.
fn headline(run: &Run, now: OffsetDateTime) -> String {
    let end = run.finished_at.unwrap_or(now);
    let took = duration(end - run.created_at);
    let when = match &run.state {
        RunState::AwaitingApproval { expires_at } => {
            format!(
                "waiting for approval by an approver (expires {})",
                hhmm(*expires_at)
            )
        }
        RunState::Running if run.awaiting_operator().is_some() => {
            format!("waiting for an operator · {took}")
        }
        RunState::Running => format!("running {took}"),
        RunState::Succeeded => format!("succeeded in {took}"),
        RunState::Failed { .. } => format!("failed after {took}"),
        RunState::Cancelled { by, .. } => format!("cancelled by {} after {took}", by.name),
        RunState::Rejected { by, .. } => format!("rejected by {}", by.name),
        RunState::Expired => "expired: nobody approved in time".to_owned(),
    };
    format!(
        "{} {} · {} · by {} · {when}",
        icon(&run.state),
        run.id,
        run.plan.request,
        run.requester.name
    )
}

fn hhmm(at: OffsetDateTime) -> String {
    format!("{:02}:{:02} UTC", at.hour(), at.minute())
}

/// The one progress message of a run, edited in place while it runs.
pub fn progress(run: &Run, observed: Option<&Observation>, now: OffsetDateTime) -> String {
    let mut text = headline(run, now);
    let total = run.plan.steps.len();
    match &run.state {
        RunState::Running => {
            if let Some(i) = run.cursor() {
                let _ = write!(
                    text,
                    "\nstep {}/{total}: {}",
                    i + 1,
                    step_label(&run.plan.steps[i])
                );
                if let Some(StepState::AwaitingOperator { prompt, .. }) = run.steps.get(i) {
                    let _ = write!(text, "\n👉 {prompt}");
                }
            }
            if let Some(observed) = observed.filter(|o| **o != Observation::default()) {
                let _ = write!(text, "\n{observed}");
            }
        }
        RunState::AwaitingApproval { .. } => {
            let _ = write!(
                text,
                "\napprove with /approve id:{} or reject with /reject id:{} reason:\"...\"",
                run.id, run.id
            );
        }
        RunState::Succeeded => {
            // Each deletion's result, then the final word (a report or the verification).
            for (action, state) in run.plan.steps.iter().zip(&run.steps) {
                if let (Action::Destructive(_), StepState::Done { note, .. }) = (action, state) {
                    let _ = write!(text, "\n{note}");
                }
            }
            if let Some(note) = last_note(run) {
                let _ = write!(text, "\n{note}");
            }
        }
        RunState::Failed { error } => {
            if let Some(i) = run.cursor() {
                let _ = write!(
                    text,
                    "\nat step {}/{total}: {}",
                    i + 1,
                    step_label(&run.plan.steps[i])
                );
            }
            let _ = write!(text, "\n{error}");
        }
        RunState::Cancelled { note, .. } => {
            let _ = write!(text, "\n{note}");
        }
        RunState::Rejected { reason, .. } => {
            let _ = write!(text, "\nreason: {reason}");
        }
        RunState::Expired => {}
    }
    fit(&text)
}

/// The note of the last step done; for maintenance runs, the final report.
fn last_note(run: &Run) -> Option<&str> {
    run.steps.iter().rev().find_map(|s| match s {
        StepState::Done { note, .. } if !note.is_empty() => Some(note.as_str()),
        _ => None,
    })
}

/// `/run status`: the progress message, then every step. A long run that would not fit in one
/// chat message shows its leading completed steps as one line.
pub fn run_status(run: &Run, observed: Option<&Observation>, now: OffsetDateTime) -> String {
    let head = progress(run, observed, now);
    let lines: Vec<String> = run
        .plan
        .steps
        .iter()
        .zip(&run.steps)
        .enumerate()
        .map(|(i, (action, state))| {
            let (mark, detail) = match state {
                StepState::Pending => ("·", String::new()),
                StepState::Started { .. } => ("▶", String::new()),
                StepState::AwaitingOperator { .. } => ("👉", " (waiting for /run done)".to_owned()),
                StepState::Done { note, .. } if note.is_empty() || note.contains('\n') => {
                    ("✔", String::new())
                }
                StepState::Done { note, .. } => ("✔", format!(" ({note})")),
                StepState::Failed { .. } => ("✖", String::new()),
            };
            format!("{mark} {:>2}. {}{detail}", i + 1, step_label(action))
        })
        .collect();
    let footer = format!("plan digest {}", run.digest);
    let assemble = |steps: &[String]| format!("{head}\n\n{}\n{footer}", steps.join("\n"));
    let full = assemble(&lines);
    if full.chars().count() <= MESSAGE_LIMIT {
        return full;
    }
    // Collapse done steps from the start, keeping the last three done ones in view.
    let done = run
        .steps
        .iter()
        .take_while(|s| matches!(s, StepState::Done { .. }))
        .count();
    let mut collapsed = done.saturating_sub(3);
    loop {
        let mut steps = Vec::with_capacity(lines.len());
        if collapsed > 0 {
            steps.push(format!("✔  1–{collapsed}. done"));
        }
        steps.extend(lines[collapsed..].iter().cloned());
        let text = assemble(&steps);
        if text.chars().count() <= MESSAGE_LIMIT || collapsed >= done {
            return fit(&text);
        }
        collapsed += 1;
    }
}

/// `/run list`: one line per run, newest first.
pub fn run_list(runs: &[Run], now: OffsetDateTime) -> String {
    if runs.is_empty() {
        return "no runs in the last 24 hours".to_owned();
    }
    let lines: Vec<String> = runs.iter().map(|run| headline(run, now)).collect();
    fit(&lines.join("\n"))
}

/// What a run that stopped early leaves behind, and the command that undoes or finishes it.
/// Shown when a run fails or is cancelled, so nobody has to work the state out at 3 a.m.
pub fn aftermath(run: &Run) -> String {
    match &run.plan.request {
        ProcedureRequest::ClusterStop { cluster }
        | ProcedureRequest::ClusterStart { cluster }
        | ProcedureRequest::ClusterRestart { cluster } => cluster_aftermath(run, cluster),
        ProcedureRequest::IndicesPrune { cluster, .. }
        | ProcedureRequest::IndicesDelete { cluster, .. } => deletion_aftermath(run, cluster),
    }
}

fn cluster_aftermath(run: &Run, cluster: &crate::name::ClusterName) -> String {
    let mut allocation_disabled = false;
    let mut stopped: Vec<NodeAddr> = Vec::new();
    let mut uncertain: Vec<String> = Vec::new();
    for (action, state) in run.plan.steps.iter().zip(&run.steps) {
        let done = matches!(state, StepState::Done { .. });
        let touched = !matches!(state, StepState::Pending);
        let Action::Safe(safe) = action else { continue };
        match safe {
            SafeAction::DisableAllocation if done => allocation_disabled = true,
            SafeAction::EnableAllocation if done => allocation_disabled = false,
            SafeAction::StopNode { node } if done => stopped.push(*node),
            SafeAction::StartNode { node } if done => stopped.retain(|n| n != node),
            SafeAction::StopNode { node } | SafeAction::StartNode { node } if touched => {
                uncertain.push(format!("{node} may be half-way ({})", step_label(action)));
            }
            _ => {}
        }
    }
    let mut left = Vec::new();
    if allocation_disabled {
        left.push(
            "shard allocation is disabled (persistent cluster.routing.allocation.enable: none)"
                .to_owned(),
        );
    }
    if !stopped.is_empty() {
        let nodes: Vec<String> = stopped.iter().map(ToString::to_string).collect();
        left.push(format!("stopped: {}", nodes.join(", ")));
    }
    left.extend(uncertain);
    if left.is_empty() {
        return "nothing was left changed".to_owned();
    }
    format!(
        "left in place: {}\nto bring the cluster back: /cluster start cluster:{cluster}",
        left.join("; ")
    )
}

/// For deletions: what was deleted, what was not, and what may be half-way.
fn deletion_aftermath(run: &Run, cluster: &crate::name::ClusterName) -> String {
    let total = run.plan.deleted_indices().count();
    let (mut deleted, mut kept, mut partial) = (0, Vec::new(), Vec::new());
    for (action, state) in run.plan.steps.iter().zip(&run.steps) {
        let Action::Destructive(DestructiveAction::DeleteIndices { indices }) = action else {
            continue;
        };
        match state {
            StepState::Done { .. } => deleted += indices.len(),
            StepState::Pending => kept.extend(indices.iter().cloned()),
            _ => partial.extend(indices.iter().cloned()),
        }
    }
    let mut text = format!("deleted {deleted} of {total} selected indices");
    if !kept.is_empty() {
        let _ = write!(text, "; not deleted: {}", compact(&kept));
    }
    if !partial.is_empty() {
        let _ = write!(
            text,
            "; may be partly deleted: {} (/indices list cluster:{cluster} shows what remains)",
            compact(&partial)
        );
    }
    text
}

/// `flog-2026.08.{24..31}, flog-2026.09.{01..30}`: many daily index names, readable.
pub fn compact(names: &[IndexName]) -> String {
    let mut sorted: Vec<&str> = names.iter().map(IndexName::as_str).collect();
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

/// The summary the start procedure ends with: `_cat/health`, `_cat/recovery`, `_cat/nodes`.
pub fn report(report: &CatReport, cluster: &crate::name::ClusterName) -> String {
    let mut lines = Vec::new();
    for h in &report.health {
        lines.push(format!(
            "_cat/health: status {} · {} nodes · {} shards · {} unassigned · {} initializing · {} relocating · {} active",
            h.status, h.node_total, h.shards, h.unassign, h.init, h.relo, h.active_shards_percent
        ));
    }
    const SHOWN: usize = 3;
    let recoveries: Vec<String> = report
        .recovery
        .iter()
        .take(SHOWN)
        .map(|r| {
            format!(
                "{}#{} {} {} → {} ({}, {})",
                r.index, r.shard, r.kind, r.source_node, r.target_node, r.stage, r.bytes_percent
            )
        })
        .collect();
    lines.push(match report.recovery.len() {
        0 => "_cat/recovery: no recovery running".to_owned(),
        n if n > SHOWN => format!("_cat/recovery: {n} running, e.g. {}", recoveries.join("; ")),
        n => format!("_cat/recovery: {n} running: {}", recoveries.join("; ")),
    });
    let nodes: Vec<String> = report
        .nodes
        .iter()
        .map(|n| {
            let mut tags = Vec::new();
            if n.master == "*" {
                tags.push("master".to_owned());
            }
            if let Some(heap) = &n.heap_percent {
                tags.push(format!("heap {heap}%"));
            }
            if tags.is_empty() {
                n.name.clone()
            } else {
                format!("{} ({})", n.name, tags.join(", "))
            }
        })
        .collect();
    lines.push(format!("_cat/nodes: {}", nodes.join(", ")));
    let recovering = report
        .health
        .iter()
        .any(|h| h.status != "green" || h.unassign != "0" || h.init != "0");
    if recovering {
        lines.push(format!(
            "shards are still recovering; /cluster status cluster:{cluster} shows how far"
        ));
    }
    fit(&lines.join("\n"))
}

/// `/cluster status`.
pub fn cluster_status(status: &ClusterStatus) -> String {
    let mut head = format!("cluster {}", status.cluster);
    if let Some(version) = status.version {
        let _ = write!(head, " · {version}");
    }
    if let Some(health) = &status.health {
        let _ = write!(head, " · status {}", health.status);
    }
    let mut lines = vec![head];
    let expected = status.inventory.len();
    match &status.membership {
        Membership::Formed { nodes, master } => {
            let listed: Vec<String> = nodes
                .iter()
                .map(|n| {
                    if Some(*n) == *master {
                        format!("{n} (master)")
                    } else {
                        n.to_string()
                    }
                })
                .collect();
            lines.push(format!(
                "nodes {}/{expected} joined: {}",
                nodes.len(),
                listed.join(", ")
            ));
            let missing: Vec<String> = status
                .inventory
                .iter()
                .filter(|n| !nodes.contains(n))
                .map(ToString::to_string)
                .collect();
            if !missing.is_empty() {
                lines.push(format!("not joined: {}", missing.join(", ")));
            }
        }
        Membership::NoMaster => lines.push(format!(
            "nodes: no elected master; fewer than {} of {expected} nodes are up",
            expected / 2 + 1
        )),
        Membership::Unreachable => lines.push("nodes: the cluster does not answer".to_owned()),
    }
    if let Some(h) = &status.health {
        lines.push(format!(
            "shards: {} active · {} relocating · {} initializing · {} unassigned",
            h.active_shards, h.relocating_shards, h.initializing_shards, h.unassigned_shards
        ));
    }
    if let Membership::Formed { .. } = status.membership {
        lines.push(format!(
            "allocation: enable {} · exclude._ip {}",
            status
                .allocation_enable
                .as_deref()
                .unwrap_or("all (default)"),
            status
                .exclude_ip
                .as_deref()
                .filter(|ip| !ip.is_empty())
                .unwrap_or("none"),
        ));
    }
    if let Some(problem) = &status.problem {
        lines.push(problem.clone());
    }
    if status.runs.is_empty() {
        lines.push("runs: none active".to_owned());
    } else {
        lines.push(format!("runs: {}", status.runs.join("; ")));
    }
    fit(&lines.join("\n"))
}

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
    cluster: &crate::name::ClusterName,
    pattern: Option<&crate::index::IndexPattern>,
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
        return format!("{scope}: none");
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
    let full = assemble(&all);
    if full.chars().count() <= MESSAGE_LIMIT {
        return full;
    }
    // Keep the oldest and the newest, which are what retention decisions look at.
    let mut keep = all.len() / 2;
    loop {
        let hidden = all.len() - 2 * keep;
        let mut body: Vec<String> = all[..keep].to_vec();
        body.push(format!(
            "… {hidden} more; narrow it with pattern:, e.g. pattern:flog-2026.10.*"
        ));
        body.extend_from_slice(&all[all.len() - keep..]);
        let text = assemble(&body);
        if text.chars().count() <= MESSAGE_LIMIT || keep == 0 {
            return fit(&text);
        }
        keep -= 1;
    }
}

/// `/audit`: one line per event, oldest first; the oldest are cut when it would not fit.
pub fn audit(events: &[crate::audit::AuditEvent]) -> String {
    if events.is_empty() {
        return "no audit events in that range".to_owned();
    }
    let lines: Vec<String> = events
        .iter()
        .map(|e| {
            let run = e.run.map(|r| format!(" {r}")).unwrap_or_default();
            let who = e.actor.as_ref().map_or("opsbot", |a| a.name.as_str());
            format!("{}{run} {who} · {}", utc(e.at), e.event.describe())
        })
        .collect();
    let mut shown = lines.len();
    loop {
        let hidden = lines.len() - shown;
        let mut text = String::new();
        if hidden > 0 {
            let _ = writeln!(text, "… {hidden} earlier; narrow with since: or run:");
        }
        text.push_str(&lines[hidden..].join("\n"));
        if text.chars().count() <= MESSAGE_LIMIT || shown <= 1 {
            return fit(&text);
        }
        shown -= 1;
    }
}

/// `/help` and `/help topic:cluster`.
pub fn help(topic: Option<&str>, console: bool) -> String {
    let shown = |c: &&catalogue::CommandSpec| console || c.surface == Surface::Everywhere;
    let commands: Vec<_> = match topic {
        Some(topic) => catalogue::group(topic).filter(shown).collect(),
        None => CATALOGUE.iter().filter(shown).collect(),
    };
    if commands.is_empty() {
        let groups: Vec<&str> = CATALOGUE.iter().map(|c| c.group).collect();
        let mut groups = groups;
        groups.dedup();
        return format!(
            "no commands about `{}`; groups: {}",
            topic.unwrap_or_default(),
            groups.join(", ")
        );
    }
    let lines: Vec<String> = commands
        .iter()
        .map(|c| format!("{}\n    {}", c.usage(), c.summary))
        .collect();
    fit(&lines.join("\n"))
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
