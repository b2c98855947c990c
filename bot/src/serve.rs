//! `opsbot run`: the bot as a service. One store, one engine, and the front ends the config
//! names: Discord, the console socket, or both, so that a person's request in one and a second
//! person's approval in the other meet in the same run.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, bail};
use opsbot_commands::maintenance::Announcement;
use opsbot_commands::render::ProgressView;
use opsbot_commands::run::{ChannelId, MessageId};
use tokio::signal::unix::{SignalKind, signal};

use crate::chat::console::{self, Hub};
use crate::chat::discord::{Connector, Discord, DiscordTransport, Keeper, Reached, Unusable};
use crate::clock::Clock;
use crate::config::{Config, DiscordConfig, StoreBackend};
use crate::engine::Engine;
use crate::lease;
use crate::metrics;
use crate::progress::{ChatError, ChatTransport, Publisher};
use crate::service::Service;
use crate::store_upkeep;

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
    if config.discord.is_none() && config.console.socket.is_none() {
        bail!(
            "`opsbot run` serves [discord] and/or the [console] socket, and the config has \
             neither; deploy/opsbot.example.toml shows both"
        );
    }
    let people = config.people()?;
    let reached = Reached::default();
    let discord = match &config.discord {
        Some(discord) => Some(first_contact(discord, &reached).await?),
        None => None,
    };
    let store = config.store.open()?;
    let hub = Hub::default();
    let transport = Routed::new(discord.is_some().then(|| reached.clone()), hub.clone());
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
    // Discord is served beside the rest, and an outage of it stops nothing else.
    let (stop_discord, discord_stopped) = tokio::sync::watch::channel(false);
    let discord = discord.map(|(connector, first)| {
        let keeper = Keeper {
            connector,
            reached,
            service,
            people,
            metrics: engine.metrics().clone(),
            clock: engine.clock(),
        };
        tokio::spawn(keeper.keep(first, discord_stopped))
    });
    until.await;
    let _ = stop_discord.send(true);
    if let Some(discord) = discord {
        // Closes the gateway with a Close frame.
        let _ = discord.await;
    }
    upkeep.abort();
    schedules.iter().for_each(tokio::task::JoinHandle::abort);
    abort(metrics.as_ref());
    if let Some((task, path)) = console {
        task.abort();
        let _ = std::fs::remove_file(path);
    }
    if let Some(why) = stepped_down {
        bail!("stepped down, another instance is active: {why}");
    }
    if let Some((holder, _)) = &lease {
        lease::release(&store, holder, engine.tenure()).await;
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

fn abort<T>(task: Option<&tokio::task::JoinHandle<T>>) {
    if let Some(task) = task {
        task.abort();
    }
}

/// Each run's messages go where it was asked for: the console channel, or Discord.
struct Routed {
    /// Discord's transport once Discord has answered, when `[discord]` is configured.
    discord: Option<Reached>,
    console: Hub,
    /// Announcements the consoles have shown, by key: an announcement Discord has not taken
    /// yet is tried again, and the consoles must not see it at every attempt.
    shown: Mutex<HashSet<String>>,
}

impl Routed {
    fn new(discord: Option<Reached>, console: Hub) -> Self {
        Self {
            discord,
            console,
            shown: Mutex::default(),
        }
    }

    fn discord(&self, channel: &ChannelId) -> Result<&DiscordTransport, ChatError> {
        let Some(reached) = &self.discord else {
            return Err(ChatError::Refused(format!(
                "a run reports to Discord channel {} but [discord] is not configured",
                channel.0
            )));
        };
        reached.get().ok_or_else(unreached)
    }
}

/// Discord has not answered since the start: tried again, like any outage.
fn unreached() -> ChatError {
    ChatError::Transient("Discord has not answered since opsbot started".to_owned())
}

fn is_console(channel: &ChannelId) -> bool {
    channel.is_console()
}

impl ChatTransport for Routed {
    async fn post(&self, channel: &ChannelId, view: &ProgressView) -> Result<MessageId, ChatError> {
        if is_console(channel) {
            return self.console.post(channel, view).await;
        }
        self.discord(channel)?.post(channel, view).await
    }

    async fn edit(
        &self,
        channel: &ChannelId,
        message: &MessageId,
        view: &ProgressView,
    ) -> Result<(), ChatError> {
        if is_console(channel) {
            return self.console.edit(channel, message, view).await;
        }
        self.discord(channel)?.edit(channel, message, view).await
    }

    async fn notice(&self, channel: &ChannelId, text: &str) -> Result<(), ChatError> {
        if is_console(channel) {
            return self.console.notice(channel, text).await;
        }
        self.discord(channel)?.notice(channel, text).await
    }

    /// Announced to the announcement channel, and shown on the consoles once.
    async fn announce(&self, announcement: &Announcement) -> Result<(), ChatError> {
        let first = self
            .shown
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(announcement.key.clone());
        if first {
            self.console.announce(announcement).await?;
        }
        match &self.discord {
            Some(reached) => {
                reached
                    .get()
                    .ok_or_else(unreached)?
                    .announce(announcement)
                    .await
            }
            None => Ok(()),
        }
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
