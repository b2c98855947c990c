//! The environment `deploy/opsbot.service` starts the bot with. The container image must set
//! the same (`deploy.rs`), and the benchmarks measure the bot as it runs there: the malloc
//! settings in it take a sixth off its resident memory (docs/PERFORMANCE.md).

use std::path::{Path, PathBuf};

/// A file of the repository's `deploy/` directory.
pub fn deploy_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy")
        .join(name)
}

/// The unit file's `Environment=NAME=VALUE` settings, in their order.
pub fn unit_environment() -> std::io::Result<Vec<(String, String)>> {
    Ok(settings(
        &std::fs::read_to_string(deploy_file("opsbot.service"))?,
        "Environment=",
    ))
}

/// The `NAME=VALUE` settings of the lines that start with `prefix` (`Environment=` in a unit
/// file, `ENV ` in a Containerfile), in their order.
pub fn settings(text: &str, prefix: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| line.strip_prefix(prefix)?.split_once('='))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect()
}
