//! Answers a parsed request: the one exhaustive dispatch shared by every front end, and the one
//! place that decides what an error looks like in chat.

use std::sync::Arc;

use opsbot_commands::button::{ApprovalButton, Decision};
use opsbot_commands::maintenance::{self, MaintenanceNotice};
use opsbot_commands::name::Reason;
use opsbot_commands::parse::Origin;
use opsbot_commands::render;
use opsbot_commands::request::{ProcedureRequest, Request};
use opsbot_commands::run::{Actor, ChannelId, Run};
use time::OffsetDateTime;

use crate::engine::{Engine, EngineError, Refusal, Start};
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

/// The reason recorded for a rejection by button; `/reject` takes a reason of one's own.
const REJECTED_BY_BUTTON: &str = "rejected with the button under the plan";

/// What the person is told when a request fails: a refusal says why; anything else is an
/// internal error, logged with its causes and never shown.
fn refused(actor: &Actor, error: EngineError) -> Reply {
    match error {
        EngineError::Refused(refusal) => Reply::private(refusal.to_string()),
        error => {
            let error = anyhow::Error::from(error);
            tracing::error!(error = format!("{error:#}"), user = %actor.user.name, "internal error");
            Reply::private(
                "internal error: nothing was changed by this command; the bot's log has the details",
            )
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
            Err(error) => refused(actor, error),
        }
    }

    /// A press of a plan's Approve or Reject button: the rules of `/approve` and `/reject`,
    /// bound to the digest the button was posted with, so a stale button is refused. The
    /// updated run, or the private reply that says why not.
    pub fn decide(&self, actor: &Actor, button: &ApprovalButton) -> Result<Run, Reply> {
        if !(actor.roles.operator || actor.roles.approver) {
            return Err(refused(actor, Refusal::NotOperator.into()));
        }
        let decided = match button.decision {
            Decision::Approve => self.engine.approve(actor, button.run, Some(&button.digest)),
            Decision::Reject => {
                // A constant that passes `Reason::parse` (unit-tested); never refused.
                let Ok(reason) = Reason::parse(REJECTED_BY_BUTTON) else {
                    return Err(Reply::private("internal error: the button's reason"));
                };
                self.engine.reject(actor, button.run, &reason)
            }
        };
        decided.map_err(|error| refused(actor, error))
    }

    async fn start(
        &self,
        actor: &Actor,
        channel: &ChannelId,
        procedure: ProcedureRequest,
    ) -> Result<Reply, EngineError> {
        Ok(
            match self.engine.start(actor, channel.clone(), procedure).await? {
                Start::Started(run) => Reply::public(render::started(&run)),
                Start::NothingToDo(plan) => Reply::public(plan.notes.join("\n")),
            },
        )
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
            return Err(Refusal::NotOperator.into());
        }
        Ok(match request {
            Request::Procedure(procedure) => self.start(actor, channel, procedure).await?,
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
            Request::PlacementAllocations { cloud, host } => {
                let clouds = self.engine.clouds();
                let facts = clouds.stale_facts(clouds.get(&cloud)?, &host).await?;
                Reply::public(render::allocations(&facts.allocations, &facts.instances))
            }
            Request::ComputeServices { cloud } => {
                let clouds = self.engine.clouds();
                let services = clouds.services(clouds.get(&cloud)?).await?;
                Reply::public(render::services(&cloud, &services, now))
            }
            Request::RunbookList => {
                Reply::public(render::runbook_list(&self.engine.library().runbooks))
            }
            Request::RunbookShow { name } => {
                let runbook = self
                    .engine
                    .library()
                    .runbooks
                    .get(&name)
                    .map_err(Refusal::from)?;
                Reply::public(render::runbook_show(runbook))
            }
            Request::RunbookRun { name, params } => {
                let request = self
                    .engine
                    .library()
                    .request(&name, &params)
                    .map_err(Refusal::from)?;
                self.start(actor, channel, ProcedureRequest::Runbook(request))
                    .await?
            }
            Request::RunLog { id } => {
                let lines = self
                    .engine
                    .store()
                    .run_log(id)
                    .map_err(|error| match error {
                        opsbot_state::StoreError::NotFound { run } => {
                            EngineError::from(Refusal::NoSuchRun { run })
                        }
                        other => other.into(),
                    })?;
                Reply::public(render::run_log(id, &lines))
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
            Request::MaintenanceAnnounce { text } => {
                let notice = MaintenanceNotice {
                    text,
                    by: actor.user.clone(),
                    since: now,
                };
                self.engine.store().set_maintenance_notice(Some(&notice))?;
                self.progress.announce(notice.announcement());
                Reply::public(format!(
                    "announced; /maintenance end when it is over\n📣 {}",
                    notice.text
                ))
            }
            Request::MaintenanceEnd => {
                let Some(ended) = self.engine.store().set_maintenance_notice(None)? else {
                    return Ok(Reply::private("no maintenance is announced"));
                };
                let ending = ended.ending(&actor.user);
                let reply = Reply::public(ending.text.clone());
                self.progress.announce(ending);
                reply
            }
            Request::MaintenanceStatus => {
                let notice = self.engine.store().maintenance_notice()?;
                let runs = self.engine.store().unfinished_runs()?;
                Reply::public(maintenance::status(notice.as_ref(), &runs))
            }
            Request::Help { topic } => {
                Reply::private(render::help(topic.as_deref(), origin == Origin::Console))
            }
            Request::ActAs { .. } => Reply::private("`/as` works in the local console only"),
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_reason_of_a_rejection_by_button_is_a_valid_reason() {
        assert!(opsbot_commands::name::Reason::parse(super::REJECTED_BY_BUTTON).is_ok());
    }
}
