//! `opsbot store backup | check | restore`, `opsbot audit export` and `opsbot run-log export`:
//! the commands that read or replace the store. The store admits one process, so backups and
//! exports ask the running bot over its console socket when it holds the store.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};
use opsbot_state::{Store, StoreError};

use opsbot_commands::name::RunId;

use crate::audit_export::Filter;
use crate::chat::console::control::{self, Request};
use crate::config::{Config, ConfigFile};

/// `opsbot store migrate`, copying the store between sled and PostgreSQL.
mod migrate;

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Copy the store into a new directory at one point in time, while the bot runs or not (a
    /// running bot writes it, through its [console] socket). Keep backups on another disk.
    Backup {
        #[command(flatten)]
        config: ConfigFile,
        /// A directory that does not exist yet (or is empty).
        dest: PathBuf,
    },
    /// Verify a store or a backup: its files against its marker, then every record decoded.
    /// The bot must be stopped to check its own store: check a backup of it instead.
    Check(CheckArgs),
    /// Who is active on the store and what it is doing: the lease (PostgreSQL) and the
    /// unfinished runs. Reads only, so it works on a standby's host while another bot acts.
    Status {
        #[command(flatten)]
        config: ConfigFile,
    },
    /// Put a backup in place of the store (the bot must be stopped). The store that was there
    /// is moved aside, never deleted.
    Restore {
        #[command(flatten)]
        config: ConfigFile,
        /// The backup directory `opsbot store backup` wrote.
        src: PathBuf,
    },
    /// Copy the whole store between sled (--path) and PostgreSQL (the config's [store]), then
    /// read both back and compare them record by record. The bots must be stopped; the
    /// destination must hold nothing yet.
    Migrate(migrate::MigrateArgs),
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Check the store the config names (without --path).
    #[command(flatten)]
    config: ConfigFile,
    /// Check the store or backup directory at this path instead.
    #[arg(long, value_name = "DIR", conflicts_with = "config")]
    path: Option<PathBuf>,
}

/// Runs a `opsbot store` command.
pub async fn run(command: StoreCommand) -> anyhow::Result<()> {
    match command {
        StoreCommand::Migrate(args) => migrate::run(&args),
        StoreCommand::Backup { config, dest } => backup(&config.load()?, &dest).await,
        StoreCommand::Check(CheckArgs { config, path }) => {
            let path = match path {
                Some(path) => path,
                None => {
                    let config = config.load()?;
                    match config.store.sled_path() {
                        Some(path) => path.to_owned(),
                        None => return check_postgres(&config),
                    }
                }
            };
            check(&path)
        }
        StoreCommand::Restore { config, src } => restore(&config.load()?, &src),
        StoreCommand::Status { config } => status(&config.load()?),
    }
}

/// Does `request` (an export or a backup) and writes its answer to stdout: on the store when
/// no bot holds it, else asked of the running bot through its console socket.
async fn exchange(config: &Config, request: Request) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match open(config)? {
        Some(store) => control::perform(&store, request, |line| Ok(writeln!(out, "{line}")?))?,
        None => {
            let socket = socket(config)?;
            control::ask(socket, &request, |line| Ok(writeln!(out, "{line}")?)).await?;
        }
    }
    out.flush()?;
    Ok(())
}

/// `opsbot audit export`: JSON lines on stdout.
pub async fn export_audit(config: &Config, filter: Filter) -> anyhow::Result<()> {
    exchange(config, Request::AuditExport(filter)).await
}

/// `opsbot run-log export`: every line of a run's command output the store keeps, on stdout.
pub async fn export_run_log(config: &Config, run: RunId) -> anyhow::Result<()> {
    exchange(config, Request::RunLogExport(run)).await
}

async fn backup(config: &Config, dest: &Path) -> anyhow::Result<()> {
    let dest = std::path::absolute(dest)
        .with_context(|| format!("{} cannot be made absolute", dest.display()))?;
    exchange(config, Request::Backup(dest)).await
}

fn check(path: &Path) -> anyhow::Result<()> {
    let summary = opsbot_state::check(path).map_err(|error| match error {
        StoreError::InUse { .. } => anyhow::anyhow!(
            "{error}\n`opsbot store backup` copies it while the bot runs; check the copy"
        ),
        other => other.into(),
    })?;
    println!(
        "{} is sound: {summary}",
        opsbot_state::store_in(path).display()
    );
    Ok(())
}

/// A PostgreSQL store, checked while the bot runs or not (it takes no lease and writes
/// nothing): opening it checks its schema version and every unfinished run, then every run
/// and audit entry is read and decoded.
fn check_postgres(config: &Config) -> anyhow::Result<()> {
    let store = config.store.open()?;
    let runs = store.runs()?;
    let unfinished = runs.iter().filter(|run| !run.state.is_finished()).count();
    let audit = store.audit()?;
    println!(
        "{} is sound: runs: {} ({unfinished} unfinished), audit entries: {}",
        config.store.describe(),
        runs.len(),
        audit.len()
    );
    Ok(())
}

fn status(config: &Config) -> anyhow::Result<()> {
    let Some(store) = open(config)? else {
        println!(
            "{}: held by the running bot (a sled store admits one process); /run list in chat \
             or at its console socket shows its runs",
            config.store.describe()
        );
        return Ok(());
    };
    println!("{}", config.store.describe());
    if config.store.sled_path().is_none() {
        match store.lease()? {
            Some(lease) if !lease.remaining.is_zero() => println!(
                "active: {} at epoch {} (its lease runs {:.1} s more)",
                lease.holder,
                lease.epoch,
                lease.remaining.as_secs_f64()
            ),
            Some(lease) => println!(
                "active: no one (the lease of {} at epoch {} has expired; a standby takes it \
                 at its next ask)",
                lease.holder, lease.epoch
            ),
            None => println!("active: no one has held the lease yet"),
        }
    }
    let runs = store.unfinished_runs()?;
    println!("unfinished runs: {}", runs.len());
    for run in runs {
        println!("  {} {}: {}", run.id, run.label(), run.plan().request());
    }
    Ok(())
}

fn restore(config: &Config, src: &Path) -> anyhow::Result<()> {
    let store = sled_path(config, "`opsbot store restore`")?;
    let restored = opsbot_state::restore(store, src).map_err(|error| match error {
        StoreError::InUse { .. } => {
            anyhow::anyhow!("{error}\nstop the bot (systemctl stop opsbot), then restore")
        }
        other => other.into(),
    })?;
    println!(
        "restored {} from {}: {}",
        store.display(),
        src.display(),
        restored.summary
    );
    if let Some(aside) = restored.kept_aside {
        println!(
            "the store that was there is kept at {} (`opsbot store check --path {0}`)",
            aside.display()
        );
    }
    Ok(())
}

/// The store, or `None` when the running bot holds it (a sled store admits one process; a
/// PostgreSQL one is opened alongside the bots).
fn open(config: &Config) -> anyhow::Result<Option<Store>> {
    match config.store.open() {
        Ok(store) => Ok(Some(store)),
        Err(error)
            if error
                .downcast_ref::<StoreError>()
                .is_some_and(|e| matches!(e, StoreError::InUse { .. })) =>
        {
            Ok(None)
        }
        Err(error) => Err(error),
    }
}

/// The sled directory of `config`, for what only a sled store has.
fn sled_path<'a>(config: &'a Config, what: &str) -> anyhow::Result<&'a Path> {
    config.store.sled_path().with_context(|| {
        format!(
            "{what} is for a sled store; back a PostgreSQL store up with pg_dump and restore it \
             with pg_restore"
        )
    })
}

/// The running bot's console socket, through which it serves what needs its store.
fn socket(config: &Config) -> anyhow::Result<&Path> {
    config.console.socket.as_deref().with_context(|| {
        let in_use = StoreError::InUse {
            path: config.store.sled_path().unwrap_or(Path::new("")).to_owned(),
        };
        format!("{in_use}\nthe config has no [console] socket to ask a running bot through")
    })
}
