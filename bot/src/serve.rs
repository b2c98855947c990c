//! `opsbot run`: the bot as a service. One store, one engine, and the front ends the config
//! names: Discord, the console socket, or both, so that a person's request in one and a second
//! person's approval in the other meet in the same run.

use std::sync::Arc;

use anyhow::{Context, bail};
use tokio::signal::unix::{SignalKind, signal};

use crate::chat::Unusable;
use crate::chat::console::{self, Hub};
use crate::chat::discord::{Connector, Discord, Keeper, Reached};
use crate::chat::{matrix, slack};
use crate::clock::Clock;
use crate::config::{Config, DiscordConfig, MatrixConfig, SlackConfig, StoreBackend};
use crate::engine::Engine;
use crate::lease;
use crate::metrics;
use crate::progress::Publisher;
use crate::service::Service;
use crate::store_upkeep;

mod routed;
use routed::Routed;

/// Serves until SIGTERM or Ctrl-C, going by `clock`.
pub async fn run(config: Config, clock: Clock) -> anyhow::Result<()> {
    run_until(config, clock, stop_signals()?).await
}

/// Serves until `stopped` resolves, then closes the Discord gateway with a Close frame and
/// returns.
pub async fn run_until(
    config: Config,
    clock: Clock,
    stopped: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let chat = config.discord.is_some() || config.slack.is_some() || config.matrix.is_some();
    if !chat && config.console.socket.is_none() {
        bail!(
            "`opsbot run` serves [discord], [slack], [matrix] and/or the [console] socket, and \
             the config has none of them; deploy/opsbot.example.toml shows them"
        );
    }
    let people = config.people()?;
    let reached = Reached::default();
    let discord = match &config.discord {
        Some(discord) => Some(first_contact(discord, &reached).await?),
        None => None,
    };
    let slack = match &config.slack {
        Some(slack) => Some(slack_contact(slack).await?),
        None => None,
    };
    let matrix = match &config.matrix {
        Some(matrix) => Some(matrix_contact(matrix).await?),
        None => None,
    };
    let store = config.store.open()?;
    let hub = Hub::default();
    let transport = Routed::new(
        discord.is_some().then(|| reached.clone()),
        slack.as_ref().map(|(connector, _)| connector.transport()),
        matrix.as_ref().map(|(connector, _)| connector.transport()),
        hub.clone(),
    );
    let publisher = Arc::new(Publisher::with_clock(
        transport,
        store.clone(),
        config.progress,
        clock.clone(),
    ));
    let engine = Engine::with_clock(&config, store.clone(), publisher.clone(), clock)?;
    let service = Service::new(engine.clone(), publisher);
    // Listening before the console socket opens: once that exists, so do the metrics. A
    // standby serves them too, so that `/healthz` says who is active.
    let metrics = match config.metrics.listen {
        Some(address) => {
            let listener = tokio::net::TcpListener::bind(address)
                .await
                .with_context(|| format!("cannot listen on {address} ([metrics] listen)"))?;
            tracing::info!(%address, "serving /metrics and /healthz");
            Some(tokio::spawn(metrics::serve(
                listener,
                engine.metrics().clone(),
            )))
        }
        None => None,
    };
    let mut stopped = std::pin::pin!(stopped);
    let lease = match &config.store.backend {
        StoreBackend::Sled { .. } => None,
        StoreBackend::Postgres(pg) => {
            let (holder, timing) = (lease::holder(), crate::tenure::Timing::within(pg.takeover));
            tokio::select! {
                _ = lease::take(&store, &holder, timing, engine.tenure()) => {}
                () = &mut stopped => {
                    tracing::info!("stopped while standing by");
                    abort(metrics.as_ref());
                    return Ok(());
                }
            }
            Some((holder, timing))
        }
    };
    let console = match &config.console.socket {
        Some(path) => {
            let listener = console::bind(path)?;
            let serving =
                console::serve(listener, path.clone(), service.clone(), people.clone(), hub);
            Some((tokio::spawn(serving), path.clone()))
        }
        None => None,
    };
    let resumed = engine.resume_all().await?;
    tracing::info!(resumed, "unfinished runs resumed");
    let upkeep = store_upkeep::spawn(
        engine.writes().clone(),
        config.store.retention,
        engine.clock(),
    );
    let schedules = crate::scheduler::spawn(&engine).await?;
    // Serving ends when asked to, or when this instance loses the lease, which it keeps
    // renewing meanwhile.
    let mut stepped_down = None;
    let until = async {
        match &lease {
            Some((holder, timing)) => {
                let tenure = engine.tenure().clone();
                tokio::select! {
                    () = &mut stopped => {}
                    why = lease::keep(store.clone(), holder.clone(), *timing, tenure) => {
                        stepped_down = Some(why);
                    }
                }
            }
            None => stopped.await,
        }
    };
    // Discord, Slack and Matrix are served beside the rest, by the active instance only, and an
    // outage of either stops nothing else.
    let (stop_chat, chat_stopped) = tokio::sync::watch::channel(false);
    let slack = slack.map(|(connector, first)| {
        let keeper = crate::chat::Keeper {
            connector,
            service: service.clone(),
            people: people.clone(),
            metrics: engine.metrics().clone(),
            clock: engine.clock(),
        };
        tokio::spawn(keeper.keep(first, chat_stopped.clone()))
    });
    let matrix = matrix.map(|(connector, first)| {
        let keeper = crate::chat::Keeper {
            connector,
            service: service.clone(),
            people: people.clone(),
            metrics: engine.metrics().clone(),
            clock: engine.clock(),
        };
        tokio::spawn(keeper.keep(first, chat_stopped.clone()))
    });
    let discord = discord.map(|(connector, first)| {
        let keeper = Keeper {
            connector,
            reached,
            service,
            people,
            metrics: engine.metrics().clone(),
            clock: engine.clock(),
        };
        tokio::spawn(keeper.keep(first, chat_stopped))
    });
    until.await;
    let _ = stop_chat.send(true);
    // Closes Discord's gateway with a Close frame, and Slack's socket; ends Matrix's sync.
    for front in [discord, slack, matrix].into_iter().flatten() {
        let _ = front.await;
    }
    upkeep.abort();
    schedules.iter().for_each(tokio::task::JoinHandle::abort);
    abort(metrics.as_ref());
    if let Some((task, path)) = console {
        task.abort();
        let _ = std::fs::remove_file(path);
    }
    if let Some((holder, _)) = lease.as_ref().filter(|_| stepped_down.is_none()) {
        lease::release(&store, holder, engine.tenure()).await;
    }
    engine.writes().close().await;
    if let Some(why) = stepped_down {
        bail!("stepped down, another instance is active: {why}");
    }
    Ok(())
}

/// How long the start waits for Discord's first answer before it goes on without it.
const FIRST_CONTACT: std::time::Duration = std::time::Duration::from_secs(5);

/// The first contact with Discord, at start: a token or a guild Discord refuses stops the
/// start with what to fix; no answer (DNS, refused, a timeout, TLS, a 5xx) does not, and
/// Discord is tried again while the bot serves.
async fn first_contact(
    config: &DiscordConfig,
    reached: &Reached,
) -> anyhow::Result<(Connector, Result<Discord, Unusable>)> {
    let connector = Connector::new(config)?;
    let answered = tokio::time::timeout(FIRST_CONTACT, connector.connect()).await;
    let first = match answered.unwrap_or_else(|_| {
        Err(Unusable::Unavailable(anyhow::anyhow!(
            "checking the bot token: Discord did not answer within {FIRST_CONTACT:?}"
        )))
    }) {
        Err(Unusable::Refused(error)) => return Err(error),
        Err(error) => {
            tracing::warn!(%error, "Discord does not answer; starting without it");
            Err(error)
        }
        Ok(discord) => {
            reached.reach(&discord);
            Ok(discord)
        }
    };
    Ok((connector, first))
}

/// The first check of Slack, at start: a token, a workspace or a channel Slack refuses stops
/// the start with what to fix; no answer does not, and Slack is tried again while the bot
/// serves.
async fn slack_contact(
    config: &SlackConfig,
) -> anyhow::Result<(slack::Connector, Result<slack::Reached, Unusable>)> {
    let connector = slack::Connector::new(config)?;
    let first = first_check("Slack", connector.check()).await?;
    Ok((connector, first))
}

/// The first check of Matrix, at start: a credential, a user or an encrypted served room the
/// homeserver shows stops the start with what to fix; no answer does not, and the homeserver
/// is tried again while the bot serves.
async fn matrix_contact(
    config: &MatrixConfig,
) -> anyhow::Result<(matrix::Connector, Result<matrix::Reached, Unusable>)> {
    let connector = matrix::Connector::new(config)?;
    let first = first_check("Matrix", connector.check()).await?;
    Ok((connector, first))
}

/// A platform's first check, given [`FIRST_CONTACT`] to answer: a refusal is the start's
/// error; no answer is the keeper's to retry.
async fn first_check<R>(
    platform: &'static str,
    check: impl Future<Output = Result<R, Unusable>>,
) -> anyhow::Result<Result<R, Unusable>> {
    let answered = tokio::time::timeout(FIRST_CONTACT, check).await;
    let first = answered.unwrap_or_else(|_| {
        Err(Unusable::Unavailable(anyhow::anyhow!(
            "{platform} did not answer within {FIRST_CONTACT:?}"
        )))
    });
    match first {
        Err(Unusable::Refused(error)) => Err(error.context(platform)),
        Err(error) => {
            tracing::warn!(%error, "{platform} does not answer; starting without it");
            Ok(Err(error))
        }
        Ok(reached) => Ok(Ok(reached)),
    }
}

fn abort<T>(task: Option<&tokio::task::JoinHandle<T>>) {
    if let Some(task) = task {
        task.abort();
    }
}

/// Listens for SIGTERM (systemd stop) and SIGINT (Ctrl-C) from now on, so that one that comes
/// while the bot starts is not fatal; the future resolves on the first.
fn stop_signals() -> anyhow::Result<impl Future<Output = ()>> {
    let mut term = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot listen for SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = interrupt.recv() => {}
        }
    })
}
