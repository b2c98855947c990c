//! Slack kept in reach: the Socket Mode connection is opened again whenever it ends (Slack
//! recycles it every few hours, the network drops it), after a backoff when it failed; an
//! outage of Slack stops nothing else, and progress meanwhile waits in its lanes.

use std::sync::Arc;

use tokio::sync::watch;

use super::access::Access;
use super::handler::Handler;
use super::socket::{self, Ended};
use super::{Connector, Reached};
use crate::chat::Keeper;
use crate::chat::Unusable;
use crate::progress::Pace;

/// The part `/healthz` names.
const PART: &str = "slack";

impl Keeper<Connector> {
    /// Serves Slack until `stop` turns true, starting from `first` (the check made at start).
    pub async fn keep(self, first: Result<Reached, Unusable>, stop: watch::Receiver<bool>) {
        let reconnect = self.reconnect(PART);
        let opens = Pace::new(crate::chat::paced(self.connector.config.minute));
        let (this, opens) = (&self, &opens);
        let serve = |reached: Reached| {
            async move {
                // `apps.connections.open` is tier 1: one a minute, whatever ended the
                // connection before.
                opens.ready().await;
                for problem in &reached.problems {
                    tracing::warn!(%problem, "Slack: the bot lacks something it needs");
                }
                let handler = Arc::new(this.handler(reached));
                let app = &this.connector.app;
                let tls = this.connector.tls.clone();
                match socket::serve(app, tls, |envelope, acker| handler.take(envelope, acker)).await
                {
                    Ended::Refresh => {
                        tracing::info!("Slack recycles the connection; opening a new one");
                        None
                    }
                    ended => Some(ended.to_string()),
                }
            }
        };
        reconnect
            .keep(first, stop, || self.connector.check(), serve)
            .await;
    }

    fn handler(&self, reached: Reached) -> Handler {
        self.connector.blocked.checked(&reached);
        Handler {
            bot_user: reached.bot_user,
            blocked: self.connector.blocked.clone(),
            service: self.service.clone(),
            access: Access::new(
                self.connector.config.team.clone(),
                reached.channels,
                self.people.clone(),
            ),
            web: self.connector.bot.clone(),
        }
    }
}
