//! The command line: `opsbot run | console | plan | check | audit | run-log | store`, and in demo builds
//! `opsbot demo | sim`. Errors end here, printed with their whole cause chain and a non-zero exit code.

use std::process::ExitCode;

use anyhow::bail;
use clap::{Args, Parser, Subcommand};
use opsbot_commands::audit::Since;
use opsbot_commands::name::RunId;
use opsbot_commands::parse::{self, Origin};
use opsbot_commands::render;
use opsbot_commands::request::{ProcedureRequest, Request};
use serde::Serialize;
use time::OffsetDateTime;

use crate::clock::Clock;
use crate::config::{Config, ConfigFile};
use crate::logging::{Destination, LogFormat};
use crate::targets::{Part, Targets};

/// What `opsbot --version` says: the version, and whether this build carries the simulators
/// (`opsbot demo`, `opsbot sim`) or is the production build that leaves them out.
#[cfg(feature = "demo")]
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (demo build: with `opsbot demo`, `opsbot sim` and their simulators; \
     for production build with --no-default-features)"
);
#[cfg(not(feature = "demo"))]
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (production build: no simulator, no demo)"
);

#[derive(Debug, Parser)]
#[command(
    name = "opsbot",
    version = VERSION,
    about = "Chat-ops for OpenStack clouds and their log clusters"
)]
struct Cli {
    /// How log lines (on standard error) are written: text for a person, json for
    /// journald/Loki.
    #[arg(long, global = true, value_enum, default_value_t)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Try opsbot: a simulated 5-node log cluster and a local console. No token, no cluster.
    #[cfg(feature = "demo")]
    Demo(crate::demo::DemoArgs),
    /// Serve the simulated search cluster (for tests and trials).
    #[cfg(feature = "demo")]
    Sim(crate::demo::sim::SimArgs),
    /// `opsbot demo` or `opsbot sim` typed at a production build: says which build has them,
    /// rather than clap's bare "unrecognized subcommand".
    #[cfg(not(feature = "demo"))]
    #[command(name = "demo", alias = "sim", hide = true)]
    NoDemo {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        _args: Vec<String>,
    },
    /// The bot as a service: Discord (slash commands, approval buttons, progress in the
    /// configured guild; the token from OPSBOT_DISCORD_TOKEN or [discord] token_file) and/or
    /// the console socket of [console] socket, on one store.
    Run {
        #[command(flatten)]
        config: ConfigFile,
        #[command(flatten)]
        clock: ClockArgs,
    },
    /// The local console on this terminal, speaking as your OS account's person.
    Console {
        #[command(flatten)]
        config: ConfigFile,
        #[command(flatten)]
        clock: ClockArgs,
    },
    /// The audit log.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// A run's command output.
    RunLog {
        #[command(subcommand)]
        command: RunLogCommand,
    },
    /// The store: backups, checks, restores.
    Store {
        #[command(subcommand)]
        command: crate::store_cli::StoreCommand,
    },
    /// Print an example config with every key documented, to start /etc/opsbot/opsbot.toml
    /// from: `opsbot example-config > opsbot.toml`.
    ExampleConfig,
    /// Slack: the app manifest to create opsbot's Slack app from.
    Slack {
        #[command(subcommand)]
        command: SlackCommand,
    },
    /// Reach every configured cluster, cloud and Discord as the bot would, and say per target
    /// what works and what does not (TLS, credentials, permissions, timeouts); exits non-zero
    /// if anything failed. Changes nothing.
    Check {
        #[command(flatten)]
        config: ConfigFile,
    },
    /// Print the plan a command would run, without running it.
    Plan {
        #[command(flatten)]
        config: ConfigFile,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// The time the plan is computed at (RFC 3339), for reproducible output.
        #[arg(long, value_parser = parse_time)]
        now: Option<OffsetDateTime>,
        /// The command, e.g. '/cluster restart cluster:logs'.
        command: String,
    },
}

#[derive(Debug, Subcommand)]
enum SlackCommand {
    /// Print the Slack app manifest (JSON), made from the command catalogue: paste it into
    /// api.slack.com/apps → Create New App → From a manifest, then install the app and create
    /// its app-level token (scope connections:write) for Socket Mode.
    Manifest {
        /// One `/opsbot` command (`/opsbot cluster status …`) instead of one per group, for a
        /// workspace whose other apps already use names like `/run`.
        #[arg(long)]
        single: bool,
    },
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    /// Write the audit log as JSON lines (one event per line, oldest first) to stdout, for the
    /// team's log system; runs, steps and digests as chat shows them. While the bot runs, it
    /// is asked through its [console] socket.
    Export {
        #[command(flatten)]
        config: ConfigFile,
        /// Only events since then: 30m, 2h, 3d or an RFC 3339 time.
        #[arg(long, value_parser = |s: &str| Since::parse(s).map_err(|e| e.to_string()))]
        since: Option<Since>,
        /// Only the events of this run, e.g. r-42.
        #[arg(long, value_parser = |s: &str| RunId::parse(s).map_err(|e| e.to_string()))]
        run: Option<RunId>,
    },
}

#[derive(Debug, Subcommand)]
enum RunLogCommand {
    /// Write every line of a run's command output that the store keeps to stdout (what
    /// `/run log` pages through). While the bot runs, it is asked through its [console] socket.
    Export {
        #[command(flatten)]
        config: ConfigFile,
        /// The run, e.g. r-42.
        #[arg(long, value_parser = |s: &str| RunId::parse(s).map_err(|e| e.to_string()))]
        run: RunId,
    },
}

/// The example config, as shipped in `deploy/`: carried by the binary, which is often installed
/// without its source tree.
const EXAMPLE_CONFIG: &str = include_str!("../../deploy/opsbot.example.toml");

/// The time the bot goes by.
#[derive(Debug, Args)]
struct ClockArgs {
    /// Go by a clock that starts at this time (RFC 3339) and runs at the normal pace, instead
    /// of the system's: to rehearse a schedule's fire (start a minute before it) and for tests
    /// of the real binary. Fires, approvals' expiry and standing approvals all follow it. Use
    /// a copy of the store: the fires it records count, and a schedule fires only after them.
    #[arg(long, value_parser = parse_time)]
    now: Option<OffsetDateTime>,
}

impl ClockArgs {
    /// Read inside the runtime: a simulated clock moves with tokio's.
    fn clock(&self) -> Clock {
        self.now.map_or_else(Clock::system, Clock::starting_at)
    }
}

/// `--now`: read as a booked time is, so every time opsbot takes is typed the same way.
fn parse_time(value: &str) -> Result<OffsetDateTime, String> {
    opsbot_commands::booking::parse_at(value).map_err(|error| error.to_string())
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let default_level = match cli.command {
        #[cfg(feature = "demo")]
        Command::Sim(_) => "info",
        Command::Run { .. } => "info",
        _ => "warn",
    };
    let destination = match cli.command {
        #[cfg(feature = "demo")]
        Command::Demo(_) => Destination::for_console(),
        Command::Console { .. } => Destination::for_console(),
        _ => Destination::Stderr,
    };
    if let Some(file) = destination.file() {
        eprintln!("opsbot: log lines go to {}", file.display());
    }
    crate::logging::init(cli.log_format, default_level, destination);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run(cli.command));
    // Without waiting for a read of the terminal that will never end (a console stopped by
    // Ctrl-C): everything that matters was awaited.
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command) -> anyhow::Result<()> {
    match command {
        #[cfg(feature = "demo")]
        Command::Demo(args) => crate::demo::run(args).await,
        #[cfg(feature = "demo")]
        Command::Sim(args) => crate::demo::sim::serve(args).await,
        #[cfg(not(feature = "demo"))]
        Command::NoDemo { .. } => bail!(
            "this is opsbot's production build: it links no simulator, so it has no `demo` or \
             `sim`; the default build has them (cargo run --release -- demo)"
        ),
        Command::Run { config, clock } => crate::serve::run(config.load()?, clock.clock()).await,
        Command::Console { config, clock } => {
            crate::chat::console::run(config.load()?, clock.clock()).await
        }
        Command::Audit {
            command: AuditCommand::Export { config, since, run },
        } => {
            let since = since.map(|s| s.start(OffsetDateTime::now_utc()));
            let filter = crate::audit_export::Filter { since, run };
            crate::store_cli::export_audit(&config.load()?, filter).await
        }
        Command::RunLog {
            command: RunLogCommand::Export { config, run },
        } => crate::store_cli::export_run_log(&config.load()?, run).await,
        Command::Store { command } => crate::store_cli::run(command).await,
        Command::Plan {
            config,
            json,
            now,
            command,
        } => plan(&config.load()?, json, now, &command).await,
        Command::Slack {
            command: SlackCommand::Manifest { single },
        } => {
            let manifest = crate::chat::slack::manifest(single);
            println!("{}", serde_json::to_string_pretty(&manifest)?);
            Ok(())
        }
        Command::ExampleConfig => {
            print!("{EXAMPLE_CONFIG}");
            Ok(())
        }
        Command::Check { config } => {
            if crate::check::run(&config.load()?).await? {
                Ok(())
            } else {
                bail!("some targets cannot be used; see the FAIL lines above")
            }
        }
    }
}

/// `opsbot plan --json` output: everything a script needs to show or compare a plan.
#[derive(Debug, Serialize)]
struct PlanOutput<'a> {
    command: String,
    digest: String,
    #[serde(with = "time::serde::rfc3339")]
    computed_at: OffsetDateTime,
    needs_approval: bool,
    steps: Vec<PlanStep<'a>>,
    notes: &'a [String],
}

#[derive(Debug, Serialize)]
struct PlanStep<'a> {
    number: usize,
    label: String,
    action: opsbot_commands::plan::StepRef<'a>,
}

async fn plan(
    config: &Config,
    json: bool,
    now: Option<OffsetDateTime>,
    line: &str,
) -> anyhow::Result<()> {
    // The line first (a typo is a typo), then only the part of the config it plans against:
    // planning a cluster restart needs no cloud's password.
    let (part, asked) = match parse::parse_line(line, Origin::Chat)? {
        // A plan is for now: what a booked run does is planned again at its time.
        Request::Procedure(procedure) | Request::Book { procedure, .. } => {
            (Part::of(&procedure), Ok(procedure))
        }
        Request::RunbookRun { name, params, .. } => (Part::Runbooks, Err((name, params))),
        _ => bail!(
            "`{line}` runs no steps, so it has no plan; plans are for procedures such as \
             /cluster restart and for /runbook run"
        ),
    };
    let targets = Targets::only(config, part)?;
    // A runbook's values are checked against the runbook, which only the library knows.
    let procedure = match asked {
        Ok(procedure) => procedure,
        Err((name, params)) => ProcedureRequest::Runbook(targets.library.request(&name, &params)?),
    };
    // Planning needs the targets only, not the store: it works while the bot runs. Every
    // time-dependent choice is made for `now`, so a plan can be reproduced.
    let now = now.unwrap_or_else(OffsetDateTime::now_utc);
    let plan = targets.plan(&procedure, now).await?;
    if json {
        let output = PlanOutput {
            command: plan.request().to_string(),
            digest: plan.digest().short().to_owned(),
            computed_at: now,
            needs_approval: plan.needs_approval(),
            steps: plan
                .steps()
                .enumerate()
                .map(|(i, action)| PlanStep {
                    number: i + 1,
                    label: render::step_label(action),
                    action,
                })
                .collect(),
            notes: plan.notes(),
        };
        println!("{}", serde_json::to_string_pretty(&output)?);
    } else {
        println!("{}", render::plan(&plan, &plan.digest()));
    }
    Ok(())
}
