//! The `_cat` endpoints: health, nodes, allocation, indices and recovery, with each flavor's
//! columns.

use super::table::{Cell, Column, Table, concat, number, text};
use crate::config::Flavor;
use crate::hash::in_range;
use crate::world::{CopyState, Index, Recovery, RecoveryKind, World};

const HEALTH_HEAD: [Column; 6] = [
    text("epoch", &["t", "time"]),
    text("timestamp", &["ts", "hms", "hhmmss"]),
    text("cluster", &["cl"]),
    text("status", &["st"]),
    number("node.total", &["nt", "nodeTotal"]),
    number("node.data", &["nd", "nodeData"]),
];
const HEALTH_TAIL: [Column; 8] = [
    number("shards", &["t", "sh", "shards.total", "shardsTotal"]),
    number("pri", &["p", "shards.primary", "shardsPrimary"]),
    number("relo", &["r", "shards.relocating", "shardsRelocating"]),
    number("init", &["i", "shards.initializing", "shardsInitializing"]),
    number("unassign", &["u", "shards.unassigned", "shardsUnassigned"]),
    number("pending_tasks", &["pt", "pendingTasks"]),
    number("max_task_wait_time", &["mtwt", "maxTaskWaitTime"]),
    number("active_shards_percent", &["asp", "activeShardsPercent"]),
];
const DISCOVERED: Column = number("discovered_cluster_manager", &["dcm"]);

const HEALTH_ES: [Column; 14] = concat(&[&HEALTH_HEAD, &HEALTH_TAIL]);
const HEALTH_OS: [Column; 15] = concat(&[&HEALTH_HEAD, &[DISCOVERED], &HEALTH_TAIL]);

const NODES_HEAD: [Column; 8] = [
    text("ip", &["i"]),
    number("heap.percent", &["hp", "heapPercent"]),
    number("ram.percent", &["rp", "ramPercent"]),
    number("cpu", &[]),
    number("load_1m", &["l"]),
    number("load_5m", &["l"]),
    number("load_15m", &["l"]),
    text("node.role", &["r", "role", "nodeRole"]),
];
const NODES_ES: [Column; 10] =
    concat(&[&NODES_HEAD, &[text("master", &["m"]), text("name", &["n"])]]);
const NODES_OS: [Column; 11] = concat(&[
    &NODES_HEAD,
    &[
        text("node.roles", &["rs"]),
        text("cluster_manager", &["cm"]),
        text("name", &["n"]),
    ],
]);

const ALLOCATION_SHARDS: Column = number("shards", &["s"]);
/// ES 8 reports the desired-balance allocator's view of each node after `shards`.
const ALLOCATION_FORECASTS: [Column; 3] = [
    number("shards.undesired", &[]),
    number("write_load.forecast", &["wlf", "writeLoadForecast"]),
    number("disk.indices.forecast", &["dif", "diskIndicesForecast"]),
];
const ALLOCATION_TAIL: [Column; 8] = [
    number("disk.indices", &["di", "diskIndices"]),
    number("disk.used", &["du", "diskUsed"]),
    number("disk.avail", &["da", "diskAvail"]),
    number("disk.total", &["dt", "diskTotal"]),
    number("disk.percent", &["dp", "diskPercent"]),
    text("host", &["h"]),
    text("ip", &[]),
    text("node", &["n"]),
];
const ALLOCATION: [Column; 9] = concat(&[&[ALLOCATION_SHARDS], &ALLOCATION_TAIL]);
const ALLOCATION_ES8: [Column; 13] = concat(&[
    &[ALLOCATION_SHARDS],
    &ALLOCATION_FORECASTS,
    &ALLOCATION_TAIL,
    &[text("node.role", &["r", "role", "nodeRole"])],
]);

/// Every node's data volume: a 1 TB disk, as ext4 reports its size (4 KiB blocks).
const DISK_TOTAL_BYTES: u64 = 240_325_458 * 4096;
/// Space used on every data volume besides the indices (logs, heap dumps, the OS), per node.
const DISK_BASE_BYTES: (u64, u64) = (3 << 30, 12 << 30);

const INDICES_BASE: [Column; 10] = [
    text("health", &["h"]),
    text("status", &["s"]),
    text("index", &["i", "idx"]),
    text("uuid", &["id"]),
    number("pri", &["p", "shards.primary", "shardsPrimary"]),
    number("rep", &["r", "shards.replica", "shardsReplica"]),
    number("docs.count", &["dc", "docsCount"]),
    number("docs.deleted", &["dd", "docsDeleted"]),
    number("store.size", &["ss", "storeSize"]),
    number("pri.store.size", &[]),
];
/// ES 8 added `dataset.size` (differs from store size only for searchable snapshots).
const INDICES_ES8: [Column; 11] = concat(&[&INDICES_BASE, &[number("dataset.size", &[])]]);

/// `RestCatRecoveryAction` sets no alignment, so every column is left-aligned.
const RECOVERY: [Column; 22] = [
    text("index", &["i", "idx"]),
    text("shard", &["s", "sh"]),
    text("time", &["t", "ti"]),
    text("type", &["ty"]),
    text("stage", &["st"]),
    text("source_host", &["shost"]),
    text("source_node", &["snode"]),
    text("target_host", &["thost"]),
    text("target_node", &["tnode"]),
    text("repository", &["rep"]),
    text("snapshot", &["snap"]),
    text("files", &["f"]),
    text("files_recovered", &["fr"]),
    text("files_percent", &["fp"]),
    text("files_total", &["tf"]),
    text("bytes", &["b"]),
    text("bytes_recovered", &["br"]),
    text("bytes_percent", &["bp"]),
    text("bytes_total", &["tb"]),
    text("translog_ops", &["to"]),
    text("translog_ops_recovered", &["tor"]),
    text("translog_ops_percent", &["top"]),
];

fn string(value: impl Into<String>) -> Cell {
    Cell::Text(value.into())
}

fn count(value: usize) -> Cell {
    Cell::Number(value as u64)
}

fn percent(part: f64, whole: f64) -> String {
    format!("{:.1}%", part * 100.0 / whole)
}

/// `_cat/health`; the clock gives epoch and time of day.
pub(crate) fn health(world: &World, wall: time::OffsetDateTime) -> Table {
    let health = world.health();
    let mut row = vec![
        Cell::Number(u64::try_from(wall.unix_timestamp()).unwrap_or_default()),
        string(format!(
            "{:02}:{:02}:{:02}",
            wall.hour(),
            wall.minute(),
            wall.second()
        )),
        string(world.cluster_name()),
        string(health.status.as_str()),
        count(health.number_of_nodes),
        count(health.number_of_nodes),
    ];
    let opensearch = world.flavor().is_opensearch();
    if opensearch {
        row.push(string(world.master().is_some().to_string()));
    }
    row.extend([
        count(health.active_shards),
        count(health.active_primary_shards),
        count(health.relocating_shards),
        count(health.initializing_shards),
        count(health.unassigned_shards),
        count(health.number_of_pending_tasks),
        // `RestHealthAction`: "-" when nothing waits, else the `TimeValue`.
        string(match health.task_max_waiting_in_queue_millis {
            0 => "-".to_owned(),
            millis => crate::units::format_millis(millis),
        }),
        string(format!("{:.1}%", health.active_shards_percent)),
    ]);
    Table {
        columns: if opensearch { &HEALTH_OS } else { &HEALTH_ES },
        rows: vec![row],
    }
}

/// `_cat/nodes`: joined nodes only; load figures are stable per node.
pub(crate) fn nodes(world: &World) -> Table {
    let flavor = world.flavor();
    let role = world.product().node_role_letters();
    let rows = world
        .joined_nodes()
        .map(|(id, node)| {
            let ip = node.ip.to_string();
            let load =
                |salt: &str| string(format!("{:.2}", in_range(salt, &ip, 5, 150) as f64 / 100.0));
            let mut row = vec![
                string(ip.as_str()),
                Cell::Number(in_range("heap", &ip, 20, 75)),
                Cell::Number(in_range("ram", &ip, 85, 99)),
                Cell::Number(in_range("cpu", &ip, 1, 25)),
                load("load1"),
                load("load5"),
                load("load15"),
                string(role),
            ];
            if flavor.is_opensearch() {
                row.push(string("cluster_manager,data,ingest,remote_cluster_client"));
            }
            row.push(string(if world.master() == Some(id) { "*" } else { "-" }));
            row.push(string(node.name.as_str()));
            row
        })
        .collect();
    Table {
        columns: if flavor.is_opensearch() {
            &NODES_OS
        } else {
            &NODES_ES
        },
        rows,
    }
}

/// `_cat/allocation`: one row per joined node, then an `UNASSIGNED` row if any copy is
/// unassigned. Like ES, which counts the routing table's shards by current node, a relocating
/// copy counts on its source only and an initializing one on its target, so the node rows add
/// up to every assigned copy. `disk.indices` is the size of the copies counted; the rest of the
/// disk figures are a fixed volume with a stable per-node amount of other data on it.
pub(crate) fn allocation(world: &World) -> Table {
    let flavor = world.flavor();
    let es8 = flavor == Flavor::Es8;
    let mut held = vec![(0_usize, 0_u64); world.nodes().len()];
    let mut unassigned = 0;
    for index in world.indices() {
        for copy in &index.copies {
            match copy.node().and_then(|node| held.get_mut(node)) {
                Some((shards, bytes)) => {
                    *shards += 1;
                    *bytes += index.primary_bytes;
                }
                None => unassigned += 1,
            }
        }
    }
    let mut rows: Vec<Vec<Cell>> = world
        .joined_nodes()
        .map(|(id, node)| {
            let (shards, indices_bytes) = held.get(id).copied().unwrap_or_default();
            let ip = node.ip.to_string();
            let base = in_range("disk-base", &ip, DISK_BASE_BYTES.0, DISK_BASE_BYTES.1);
            let used = indices_bytes.saturating_add(base).min(DISK_TOTAL_BYTES);
            let mut row = vec![count(shards)];
            if es8 {
                row.extend([count(0), string("0.0"), Cell::Bytes(indices_bytes)]);
            }
            row.extend([
                Cell::Bytes(indices_bytes),
                Cell::Bytes(used),
                Cell::Bytes(DISK_TOTAL_BYTES - used),
                Cell::Bytes(DISK_TOTAL_BYTES),
                Cell::Number(used * 100 / DISK_TOTAL_BYTES),
                string(ip.as_str()),
                string(ip),
                string(node.name.as_str()),
            ]);
            if es8 {
                row.push(string(world.product().node_role_letters()));
            }
            row
        })
        .collect();
    let columns: &'static [Column] = if es8 { &ALLOCATION_ES8 } else { &ALLOCATION };
    if unassigned > 0 {
        let mut row = vec![Cell::Null; columns.len()];
        row[0] = count(unassigned);
        if let Some(node) = columns.iter().position(|column| column.name == "node") {
            row[node] = string("UNASSIGNED");
        }
        rows.push(row);
    }
    Table { columns, rows }
}

/// `_cat/indices` for the given positions. Stats come from active copies only, so a red
/// index shows empty document and size cells, as in ES.
pub(crate) fn indices(world: &World, positions: &[usize]) -> Table {
    let es8 = world.flavor() == Flavor::Es8;
    let rows = positions
        .iter()
        .map(|&position| {
            let index = &world.indices()[position];
            let primary_active = index.primary().is_active();
            let stat = |value: u64| {
                if primary_active {
                    Cell::Number(value)
                } else {
                    Cell::Null
                }
            };
            let bytes = |value: u64| {
                if primary_active {
                    Cell::Bytes(value)
                } else {
                    Cell::Null
                }
            };
            let active = index.copies.iter().filter(|copy| copy.is_active()).count() as u64;
            let mut row = vec![
                string(World::index_health(index).as_str()),
                string("open"),
                string(index.name.as_str()),
                string(index.uuid.as_str()),
                Cell::Number(1),
                Cell::Number(1),
                stat(index.docs),
                stat(0),
                bytes(index.primary_bytes * active),
                bytes(index.primary_bytes),
            ];
            if es8 {
                row.push(bytes(index.primary_bytes));
            }
            row
        })
        .collect();
    Table {
        columns: if es8 { &INDICES_ES8 } else { &INDICES_BASE },
        rows,
    }
}

/// One `_cat/recovery` row. A peer recovery copies files until 90 % of its time, then replays
/// the translog; reused or local files show as nothing to recover (100 %), and an empty store
/// as 0 of 0 files (0.0 %), the way ES prints them.
fn recovery_row(world: &World, index: &Index, recovery: &Recovery, finished: bool) -> Vec<Cell> {
    let duration = recovery.done_ms.saturating_sub(recovery.start_ms).max(1);
    let elapsed = if finished {
        duration
    } else {
        world
            .now_ms()
            .saturating_sub(recovery.start_ms)
            .min(duration)
    };
    let copying = recovery.kind == RecoveryKind::Peer && !recovery.reused;
    let progress = (elapsed as f64 / duration as f64 / 0.9).min(1.0);
    let stage = match (finished, copying && progress < 1.0) {
        (true, _) => "done",
        (false, true) => "index",
        (false, false) => "translog",
    };
    let ip = |node: usize| world.node_ip(node).to_string();
    let source = recovery.source.map_or_else(|| "n/a".to_owned(), ip);
    let (files_total, bytes_total) = match recovery.kind {
        RecoveryKind::EmptyStore => (0, 0),
        RecoveryKind::ExistingStore | RecoveryKind::Peer => (index.files, index.primary_bytes),
    };
    let (files, bytes) = if copying {
        (files_total, bytes_total)
    } else {
        (0, 0)
    };
    let done_part = |total: u64| (total as f64 * progress) as u64;
    let share = |recovered: u64, wanted: u64, total: u64| match (wanted, total) {
        (0, 0) => "0.0%".to_owned(),
        (0, _) => "100.0%".to_owned(),
        _ => percent(recovered as f64, wanted as f64),
    };
    vec![
        string(index.name.as_str()),
        string("0"),
        string(crate::units::format_millis(elapsed)),
        string(recovery.kind.as_str()),
        string(stage),
        string(source.as_str()),
        string(source),
        string(ip(recovery.target)),
        string(ip(recovery.target)),
        string("n/a"),
        string("n/a"),
        Cell::Number(files),
        Cell::Number(done_part(files)),
        string(share(done_part(files), files, files_total)),
        Cell::Number(files_total),
        Cell::Bytes(bytes),
        Cell::Bytes(done_part(bytes)),
        string(share(done_part(bytes), bytes, bytes_total)),
        Cell::Bytes(bytes_total),
        Cell::Number(0),
        Cell::Number(0),
        string("100.0%"),
    ]
}

/// `_cat/recovery`: the latest recovery of every assigned copy, finished or not
/// (`active_only` keeps the ongoing ones).
pub(crate) fn recovery(world: &World, positions: &[usize], active_only: bool) -> Table {
    let mut rows = Vec::new();
    for &position in positions {
        let index = &world.indices()[position];
        for copy in &index.copies {
            let finished = match &copy.state {
                CopyState::Started { .. } | CopyState::Relocating { .. } => {
                    copy.last_recovery.as_ref()
                }
                CopyState::Unassigned { .. } | CopyState::Initializing(_) => None,
            };
            if let Some(recovery) = finished.filter(|_| !active_only) {
                rows.push(recovery_row(world, index, recovery, true));
            }
            if let Some(recovery) = copy.ongoing_recovery() {
                rows.push(recovery_row(world, index, recovery, false));
            }
        }
    }
    Table {
        columns: &RECOVERY,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::params::Params;
    use crate::http::table::render;

    /// Renders the fixture's own values through our column definitions: text layout and
    /// alignment must reproduce the recorded `.txt` and `.v.txt` files byte for byte.
    fn assert_layout(columns: &'static [Column], json: &str, plain: &str, verbose: &str) {
        let objects: Vec<serde_json::Map<String, serde_json::Value>> =
            serde_json::from_str(json).unwrap();
        let names: Vec<&str> = columns.iter().map(|column| column.name).collect();
        let rows = objects
            .iter()
            .map(|object| {
                assert_eq!(object.keys().collect::<Vec<_>>().len(), names.len());
                names
                    .iter()
                    .map(|name| object[*name].as_str().map_or(Cell::Null, string))
                    .collect()
            })
            .collect::<Vec<_>>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for (query, expected) in [("", plain), ("v", verbose)] {
            let table = Table {
                columns,
                rows: rows.clone(),
            };
            let response = render(table, &Params::parse(query)).unwrap();
            let body = runtime
                .block_on(axum::body::to_bytes(response.into_body(), 1 << 20))
                .unwrap();
            assert_eq!(std::str::from_utf8(&body).unwrap(), expected);
        }
    }

    macro_rules! fixture {
        ($name:literal, $suffix:literal) => {
            include_str!(concat!("../../../fixtures/search/", $name, $suffix))
        };
    }

    macro_rules! assert_fixture_layout {
        ($columns:expr, $name:literal) => {
            assert_layout(
                $columns,
                fixture!($name, ".format-json.json"),
                fixture!($name, ".txt"),
                fixture!($name, ".v.txt"),
            )
        };
    }

    fn rendered(table: Table, query: &str) -> String {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let response = render(table, &Params::parse(query)).unwrap();
        let body = runtime
            .block_on(axum::body::to_bytes(response.into_body(), 1 << 20))
            .unwrap();
        String::from_utf8(body.to_vec()).unwrap()
    }

    fn three_nodes(flavor: Flavor) -> World {
        let ips: Vec<std::net::Ipv4Addr> = (11..14)
            .map(|last| std::net::Ipv4Addr::new(10, 0, 0, last))
            .collect();
        let names: Vec<String> = (1..=4)
            .map(|day| format!("flog-2026.01.{day:02}"))
            .collect();
        World::plain(flavor, &ips, &names, "flog-2026.01.04")
    }

    #[test]
    fn allocation_counts_copies_per_node_and_the_unassigned_ones() {
        let mut world = three_nodes(Flavor::Es7);
        let table = allocation(&world);
        assert_eq!(table.columns.len(), 9);
        assert_eq!(table.rows.len(), 3);
        let shards: Vec<&Cell> = table.rows.iter().map(|row| &row[0]).collect();
        assert_eq!(
            shards,
            [&Cell::Number(3), &Cell::Number(3), &Cell::Number(2)]
        );
        for row in &table.rows {
            let [
                Cell::Bytes(indices),
                Cell::Bytes(used),
                Cell::Bytes(avail),
                Cell::Bytes(total),
            ] = &row[1..5]
            else {
                panic!("{row:?}")
            };
            assert!(used > indices && used + avail == *total, "{row:?}");
            assert_eq!(row[5], Cell::Number(used * 100 / total));
            assert_eq!((&row[6], &row[7]), (&row[8], &row[8]));
        }

        world.stop_node(std::net::Ipv4Addr::new(10, 0, 0, 13));
        let table = allocation(&world);
        assert_eq!(table.rows.len(), 3, "two nodes and the unassigned copies");
        let mut expected = vec![Cell::Null; 9];
        expected[0] = Cell::Number(2);
        expected[8] = Cell::Text("UNASSIGNED".into());
        assert_eq!(table.rows[2], expected);

        // RestTable: numbers padded on the left, empty cells padded, the last column not.
        let text = rendered(table, "v&h=s,dp,host,n");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "s dp host      n");
        assert_eq!(lines[3], "2              UNASSIGNED");
    }

    #[test]
    fn allocation_on_es8_adds_forecasts_and_roles() {
        let mut world = three_nodes(Flavor::Es8);
        world.stop_node(std::net::Ipv4Addr::new(10, 0, 0, 12));
        let table = allocation(&world);
        let names: Vec<&str> = table.columns.iter().map(|column| column.name).collect();
        assert_eq!(
            names,
            [
                "shards",
                "shards.undesired",
                "write_load.forecast",
                "disk.indices.forecast",
                "disk.indices",
                "disk.used",
                "disk.avail",
                "disk.total",
                "disk.percent",
                "host",
                "ip",
                "node",
                "node.role"
            ]
        );
        let first = &table.rows[0];
        assert_eq!((&first[1], &first[2]), (&Cell::Number(0), &string("0.0")));
        assert_eq!(first[3], first[4]);
        assert_eq!(first[12], string("cdfhilmrstw"));
        let last = table.rows.last().unwrap();
        assert_eq!((&last[11], &last[12]), (&string("UNASSIGNED"), &Cell::Null));
        let json: serde_json::Value =
            serde_json::from_str(&rendered(table, "format=json&h=node,node.role,wlf")).unwrap();
        assert_eq!(
            json[2],
            serde_json::json!({"node": "UNASSIGNED", "node.role": null, "wlf": null})
        );
    }

    #[test]
    fn columns_and_alignment_reproduce_the_fixtures() {
        assert_fixture_layout!(&HEALTH_ES, "cat_health.es7.node-down-allocation-none");
        assert_fixture_layout!(&HEALTH_OS, "cat_health.os2.relocating");
        assert_fixture_layout!(&NODES_ES, "cat_nodes.es7");
        assert_fixture_layout!(&NODES_OS, "cat_nodes.os2");
        assert_fixture_layout!(&INDICES_BASE, "cat_indices.es7");
        assert_fixture_layout!(&INDICES_BASE, "cat_indices.os2");
        assert_fixture_layout!(&INDICES_ES8, "cat_indices.es8");
        assert_fixture_layout!(&RECOVERY, "cat_recovery.es7-os2.rolling-restart");
    }
}
