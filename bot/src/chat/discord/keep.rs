//! Discord kept in reach: an outage, at start or later, stops nothing else. The bot serves the
//! console and resumes its runs meanwhile; what it has to show in Discord channels waits (a
//! transient failure its progress lanes retry) and is posted once Discord answers again.

use std::sync::{Arc, OnceLock};

use opsbot_commands::people::People;
use tokio::sync::watch;

use super::{Connector, Discord, DiscordTransport, Unusable};
use crate::chat::reconnect::Reconnect;
use crate::clock::Clock;
use crate::metrics::Metrics;
use crate::service::Service;

/// The part `/healthz` names.
const PART: &str = "discord";

/// Discord's transport, from the first time Discord answered: until then, what is to be
/// posted there waits.
#[derive(Debug, Clone, Default)]
pub struct Reached(Arc<OnceLock<DiscordTransport>>);

impl Reached {
    pub fn get(&self) -> Option<&DiscordTransport> {
        self.0.get()
    }

    pub fn reach(&self, discord: &Discord) {
        if self.0.set(discord.transport()).is_ok() {
            tracing::info!("Discord answers: what waited for it is posted now");
        }
    }
}

/// Whatever Discord does, the same bot goes on: what it needs to serve Discord, and where it
/// says how Discord is.
#[derive(Debug)]
pub struct Keeper {
    pub connector: Connector,
    pub reached: Reached,
    pub service: Service,
    pub people: People,
    pub metrics: Metrics,
    pub clock: Clock,
}

impl Keeper {
    /// Serves Discord until `stop` turns true, starting from `first` (the check made at start):
    /// after each failure (no answer, the gateway lost) it says why in the log and `/healthz`
    /// and connects again after a backoff.
    pub async fn keep(self, first: Result<Discord, Unusable>, mut stop: watch::Receiver<bool>) {
        let mut attempt = Some(first);
        let mut reconnect = Reconnect::new(
            PART,
            "the console and the runs",
            self.metrics.clone(),
            self.clock.clone(),
        );
        loop {
            let connected = match attempt.take() {
                Some(attempt) => attempt,
                None => tokio::select! {
                    connected = self.connector.connect() => connected,
                    _ = stop.wait_for(|stopped| *stopped) => return,
                },
            };
            let failure = match connected {
                Ok(discord) => {
                    self.reached.reach(&discord);
                    reconnect.connected();
                    let mut stopping = stop.clone();
                    let stopped = async move {
                        let _ = stopping.wait_for(|stopped| *stopped).await;
                    };
                    let served = discord
                        .serve(self.service.clone(), self.people.clone(), stopped)
                        .await;
                    match served {
                        Ok(()) if *stop.borrow() => return,
                        Ok(()) => "the gateway closed".to_owned(),
                        Err(error) => format!("{error:#}"),
                    }
                }
                Err(error) => error.to_string(),
            };
            if !reconnect.after(failure, &mut stop).await {
                return;
            }
        }
    }
}
