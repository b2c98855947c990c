//! `opsbot store migrate`: copies a whole store between sled (a directory given by `--path`)
//! and PostgreSQL (the config's `[store]`), in either direction, then verifies the copy by
//! reading both back and comparing them record by record (see `opsbot_state::copy`).
//!
//! Both stores must be left alone meanwhile: sled's file lock keeps a bot out of the sled
//! directory (and refuses the migration while a bot holds it), and a PostgreSQL store whose
//! lease a bot holds is refused, because that bot would write on beside the copy.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use opsbot_state::{Store, StoreError};

use crate::config::Config;

/// A backend of the store, as `--from` and `--to` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    Sled,
    Postgres,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Sled => "sled",
            Backend::Postgres => "postgres",
        })
    }
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The TOML config; its [store] is the PostgreSQL one (kind = "postgres").
    #[arg(long, value_name = "FILE", default_value = crate::config::DEFAULT_PATH)]
    config: PathBuf,
    /// The backend to copy from.
    #[arg(long, value_enum)]
    from: Backend,
    /// The backend to copy to (the other one); it must hold nothing yet.
    #[arg(long, value_enum)]
    to: Backend,
    /// The sled store's directory: a stopped bot's store (--from sled), or a directory that
    /// does not exist yet (--to sled).
    #[arg(long)]
    path: PathBuf,
}

/// Runs `opsbot store migrate`.
pub fn run(args: &MigrateArgs) -> anyhow::Result<()> {
    if args.from == args.to {
        bail!(
            "--from and --to are both {}: a migration copies a store from one backend to the \
             other (sled to postgres, or postgres to sled)",
            args.from
        );
    }
    let config = Config::load(&args.config)?;
    if config.store.sled_path().is_some() {
        bail!(
            "the [store] of {} is a sled store; `opsbot store migrate` copies between the sled \
             directory given by --path and the PostgreSQL store the config's [store] names \
             (kind = \"postgres\")",
            args.config.display()
        );
    }
    check_sled_path(&args.path, args.from)?;
    let postgres = config.store.open()?;
    refuse_active(&postgres)?;
    let sled = Store::open(&args.path).map_err(|error| match error {
        StoreError::InUse { .. } => {
            anyhow::anyhow!("{error}\nstop the bot (systemctl stop opsbot), then migrate")
        }
        other => other.into(),
    })?;
    let (from, to) = match args.from {
        Backend::Sled => (&sled, &postgres),
        Backend::Postgres => (&postgres, &sled),
    };
    let copied = opsbot_state::copy(from, to)
        .with_context(|| format!("cannot copy {} to {}", from.describe(), to.describe()))?;
    println!("copied {} to {}", from.describe(), to.describe());
    println!("{copied}");
    println!("verified: every record read back equal");
    Ok(())
}

/// The sled directory must be a store to copy from, and a new directory to copy to: a
/// mistyped path would otherwise become a new, empty store (copied from, nothing; copied to,
/// a store inside whatever directory it named).
fn check_sled_path(path: &Path, from: Backend) -> anyhow::Result<()> {
    let exists = path
        .try_exists()
        .with_context(|| format!("cannot read {}", path.display()))?;
    match from {
        Backend::Sled if !exists => bail!(
            "{} does not exist; give the sled store's directory (the [store] path of the bot \
             that used it)",
            path.display()
        ),
        Backend::Postgres if exists => bail!(
            "{} already exists; give a directory that does not exist yet for the new sled store",
            path.display()
        ),
        _ => Ok(()),
    }
}

/// Refuses a PostgreSQL store whose lease a bot holds: it would go on writing beside the copy.
fn refuse_active(store: &Store) -> anyhow::Result<()> {
    match store.lease()? {
        Some(lease) if !lease.remaining.is_zero() => bail!(
            "a bot is active on {} ({} holds its lease, epoch {}, for another {} s); stop every \
             bot on this store (a bot stopped cleanly gives the lease up), then migrate",
            store.describe(),
            lease.holder,
            lease.epoch,
            lease.remaining.as_secs().max(1)
        ),
        _ => Ok(()),
    }
}
