//! Where opsbot's logs go: standard error, never standard output (the console's transcript and
//! `opsbot plan`'s output are there), as text for a person or as JSON lines for journald, Loki
//! and the like. Colour only on a terminal: escape codes in a journal or a file are noise.

use std::io::IsTerminal;

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One line per event, for a person; coloured on a terminal.
    #[default]
    Text,
    /// One JSON object per event (time, level, target, fields, span), for a log system.
    Json,
}

/// Installs the global subscriber. `RUST_LOG` overrides `default_level` (`warn`, `info`, or
/// directives such as `opsbot=debug`).
pub fn init(format: LogFormat, default_level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => builder.json().with_current_span(true).init(),
    }
}
