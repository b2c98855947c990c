//! Where opsbot's logs go: standard error, never standard output (the console's transcript and
//! `opsbot plan`'s output are there), as text for a person or as JSON lines for journald, Loki
//! and the like. Colour only on a terminal: escape codes in a journal or a file are noise.
//!
//! A console on a terminal shares that screen with its logs: a warning written while the
//! operator types would break into the transcript and the line being typed. So an interactive
//! console logs to a file instead, and says which at start.

use std::fs::{File, OpenOptions};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing_subscriber::fmt::writer::BoxMakeWriter;

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One line per event, for a person; coloured on a terminal.
    #[default]
    Text,
    /// One JSON object per event (time, level, target, fields, span), for a log system.
    Json,
}

/// Where the log lines of a command go.
#[derive(Debug)]
pub enum Destination {
    Stderr,
    /// The file of an interactive console (see [`console_file`]), opened for appending.
    File {
        path: PathBuf,
        file: File,
    },
}

impl Destination {
    /// Standard error, or for a console whose standard streams are all a terminal, the file
    /// of [`console_file`] (standard error when there is no home to put it in, or it cannot
    /// be opened: losing the logs would be worse than a garbled line).
    pub fn for_console() -> Self {
        let interactive = std::io::stdin().is_terminal()
            && std::io::stdout().is_terminal()
            && std::io::stderr().is_terminal();
        if !interactive {
            return Self::Stderr;
        }
        let opened = console_file().and_then(|path| {
            let dir = path.parent()?;
            std::fs::create_dir_all(dir).ok()?;
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .ok()?;
            Some(Self::File { path, file })
        });
        opened.unwrap_or(Self::Stderr)
    }

    /// The file, when the logs go to one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Self::Stderr => None,
            Self::File { path, .. } => Some(path),
        }
    }
}

/// `$XDG_STATE_HOME/opsbot`, else `~/.local/state/opsbot` (the XDG base directory for logs
/// and history): the console's log and its line history.
pub fn state_dir() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| Some(PathBuf::from(std::env::var_os("HOME")?).join(".local/state")))?;
    Some(state.join("opsbot"))
}

fn console_file() -> Option<PathBuf> {
    Some(state_dir()?.join("console.log"))
}

/// Installs the global subscriber. `RUST_LOG` overrides `default_level` (`warn`, `info`, or
/// directives such as `opsbot=debug`).
pub fn init(format: LogFormat, default_level: &str, destination: Destination) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level));
    let (writer, ansi) = match destination {
        Destination::Stderr => (
            BoxMakeWriter::new(std::io::stderr),
            std::io::stderr().is_terminal(),
        ),
        Destination::File { file, .. } => (BoxMakeWriter::new(Mutex::new(file)), false),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    match format {
        LogFormat::Text => builder.with_ansi(ansi).init(),
        LogFormat::Json => builder.json().with_current_span(true).init(),
    }
}
