//! Answers a parsed request: the one exhaustive dispatch shared by every front end, and the one
//! place that decides what an error looks like in chat.

use std::sync::Arc;

use opsbot_commands::parse::Origin;
use opsbot_commands::render;
use opsbot_commands::request::Request;
use opsbot_commands::run::{Actor, ChannelId, Run};
use time::OffsetDateTime;

use crate::engine::{Engine, EngineError, Start};
use crate::progress::ProgressSink;

/// What to answer the person who typed the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub text: String,
    /// Only for the person who typed it (Discord: ephemeral). Refusals and errors are private.
    pub private: bool,
}

impl Reply {
    fn public(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            private: false,
        }
    }

    fn private(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            private: true,
        }
    }
}

/// The request handler.
#[derive(Clone)]
pub struct Service {
    engine: Engine,
    progress: Arc<dyn ProgressSink>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("engine", &self.engine)
            .finish_non_exhaustive()
    }
}

impl Service {
    pub fn new(engine: Engine, progress: Arc<dyn ProgressSink>) -> Self {
        Self { engine, progress }
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Answers one request from `actor` in `channel`.
    pub async fn handle(
        &self,
        actor: &Actor,
        channel: &ChannelId,
        origin: Origin,
        request: Request,
    ) -> Reply {
        match self.dispatch(actor, channel, origin, request).await {
            Ok(reply) => reply,
            Err(EngineError::Refused(refusal)) => Reply::private(refusal.to_string()),
            Err(error) => {
                let error = anyhow::Error::from(error);
                tracing::error!(error = format!("{error:#}"), user = %actor.user.name, "internal error");
                Reply::private(
                    "internal error: nothing was changed by this command; the bot's log has the details",
                )
            }
        }
    }

    async fn dispatch(
        &self,
        actor: &Actor,
        channel: &ChannelId,
        origin: Origin,
        request: Request,
    ) -> Result<Reply, EngineError> {
        let now = OffsetDateTime::now_utc();
        let allowed = match request {
            Request::Help { .. } => true,
            // The approval rules check the approver role themselves, with a precise refusal.
            Request::Approve { .. } | Request::Reject { .. } => {
                actor.roles.operator || actor.roles.approver
            }
            _ => actor.roles.operator,
        };
        if !allowed {
            return Err(crate::engine::Refusal::NotOperator.into());
        }
        Ok(match request {
            Request::Procedure(procedure) => {
                match self.engine.start(actor, channel.clone(), procedure).await? {
                    Start::Started(run) => Reply::public(render::started(&run)),
                    Start::NothingToDo(plan) => Reply::public(plan.notes.join("\n")),
                }
            }
            Request::ClusterStatus { cluster } => {
                let status = self.engine.cluster_status(&cluster).await?;
                Reply::public(render::cluster_status(&status))
            }
            Request::IndicesList { cluster, pattern } => {
                let mut rows = self.engine.indices(&cluster).await?;
                if let Some(pattern) = &pattern {
                    rows.retain(|row| pattern.matches(&row.index));
                }
                Reply::public(render::index_list(&rows, &cluster, pattern.as_ref()))
            }
            Request::RunStatus { id } => {
                let run = self.engine.run(id)?;
                Reply::public(render::run_status(
                    &run,
                    self.progress.observed(id).as_ref(),
                    now,
                ))
            }
            Request::RunList => {
                let day_ago = now - time::Duration::days(1);
                let runs: Vec<Run> = self
                    .engine
                    .store()
                    .runs()?
                    .into_iter()
                    .filter(|r| {
                        !r.state.is_finished() || r.finished_at.is_some_and(|t| t > day_ago)
                    })
                    .collect();
                Reply::public(render::run_list(&runs, now))
            }
            Request::RunCancel { id } => {
                let run = self.engine.cancel(actor, id)?;
                Reply::public(format!(
                    "{} will stop at its next safe point (cancel requested by {})",
                    run.id, actor.user.name
                ))
            }
            Request::RunDone { id } => {
                let run = self.engine.confirm(actor, id)?;
                Reply::public(format!(
                    "{}: manual step confirmed by {}; verifying",
                    run.id, actor.user.name
                ))
            }
            Request::Approve { id } => {
                let run = self.engine.approve(actor, id, None)?;
                Reply::public(format!("{} approved by {}", run.id, actor.user.name))
            }
            Request::Reject { id, reason } => {
                let run = self.engine.reject(actor, id, &reason)?;
                Reply::public(format!(
                    "{} rejected by {}: {reason}",
                    run.id, actor.user.name
                ))
            }
            Request::Audit { run, since } => {
                let start = since.map_or(now - time::Duration::days(1), |s| s.start(now));
                let events: Vec<_> = self
                    .engine
                    .store()
                    .audit()?
                    .into_iter()
                    .filter(|e| e.at >= start && (run.is_none() || e.run == run))
                    .collect();
                Reply::public(render::audit(&events))
            }
            Request::Help { topic } => {
                Reply::private(render::help(topic.as_deref(), origin == Origin::Console))
            }
            Request::ActAs { .. } => Reply::private("`/as` works in the local console only"),
        })
    }
}
