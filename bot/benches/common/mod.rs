//! What the benchmarks read of the bot process they measure.

use std::path::Path;

use anyhow::Context;

/// A `kB` field of /proc/<pid>/status (`VmRSS:`, `VmHWM:`, `RssAnon:`).
pub fn proc_status_kib(pid: u32, field: &str) -> anyhow::Result<u64> {
    let path = Path::new("/proc").join(pid.to_string()).join("status");
    let status = std::fs::read_to_string(&path)?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no {field} in {}", path.display()))
}

pub fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}
