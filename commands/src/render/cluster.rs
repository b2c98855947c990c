//! Cluster views: the report that ends a start, and `/cluster status`.

use std::fmt::Write as _;

use super::fit;
use crate::cluster::{CatReport, ClusterStatus, Membership};
use crate::name::ClusterName;

/// The summary the start procedure ends with: `_cat/health`, `_cat/recovery`, `_cat/nodes`.
pub fn report(report: &CatReport, cluster: &ClusterName) -> String {
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
    if let Some(allocation) = &status.allocation {
        lines.push(format!(
            "allocation: enable {} · exclude._ip {}",
            allocation.enable.as_deref().unwrap_or("all (default)"),
            allocation.exclusion.as_ref().map_or_else(
                || "none".to_owned(),
                |e| format!("{} ({})", e.value, e.scope.as_str())
            ),
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
