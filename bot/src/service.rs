//! Answers a parsed request: the one exhaustive dispatch shared by every front end, and the one
//! place that decides what an error looks like in chat.

use std::sync::Arc;

use opsbot_commands::approval;
use opsbot_commands::audit::{AuditEvent, AuditKind};
use opsbot_commands::button::{ApprovalButton, Decision};
use opsbot_commands::catalogue::Who;
use opsbot_commands::maintenance::{self, MaintenanceNotice};
use opsbot_commands::name::{Reason, RunId};
use opsbot_commands::page::PER_PAGE;
use opsbot_commands::parse::Origin;
use opsbot_commands::people::{Actor, Speaker, UnknownPerson};
use opsbot_commands::plan::PlanDigest;
use opsbot_commands::render;
use opsbot_commands::request::{ProcedureRequest, Request};
use opsbot_commands::run::{ChannelId, Run, RunState};
use opsbot_state::AuditQuery;
use time::OffsetDateTime;

use crate::engine::{Engine, Start};
use crate::progress::ProgressSink;
use crate::refusal::{EngineError, Refusal};

mod answer;
mod runs;
mod schedule;
pub use answer::{Asked, Attachment, Reply};

/// Requests whose answer needs a cluster or a cloud (seconds, retries): a chat front end says
/// it is working on them at once (Discord defers, Slack acknowledges), and answers after.
pub fn needs_a_backend(request: &Request) -> bool {
    match request {
        Request::Procedure(_)
        | Request::Book { .. }
        | Request::ClusterStatus { .. }
        | Request::IndicesList { .. }
        | Request::PlacementAllocations { .. }
        | Request::ComputeServices { .. }
        | Request::RunbookRun { .. } => true,
        Request::RunbookList
        | Request::RunbookShow { .. }
        | Request::RunLog { .. }
        | Request::RunStatus { .. }
        | Request::RunList { .. }
        | Request::RunCancel { .. }
        | Request::RunDone { .. }
        | Request::RunConfirm { .. }
        | Request::Approve { .. }
        | Request::Reject { .. }
        | Request::Audit { .. }
        | Request::MaintenanceAnnounce { .. }
        | Request::MaintenanceEnd
        | Request::MaintenanceStatus
        | Request::Help { .. }
        | Request::ActAs { .. }
        | Request::Schedule(_) => false,
    }
}

/// The reason recorded for a rejection by button; `/reject` takes a reason of one's own.
/// Whether replies to `origin` carry files: chat does; a console pages instead, so a file of
/// up to 8 MiB is not built for it.
fn takes_files(origin: Origin) -> bool {
    origin == Origin::Chat
}

const REJECTED_BY_BUTTON: &str = "rejected with the button under the plan";

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
        let asked = Asked::from(&request);
        match self.dispatch(actor, channel, origin, request).await {
            Ok(reply) => reply,
            Err(error) => self.refused(&actor.speaker(), &asked, error).await,
        }
    }

    /// Refuses (and audits) someone the config does not know, as an answer to `asked`.
    pub async fn refuse_unknown(&self, unknown: UnknownPerson, asked: &Asked) -> Reply {
        self.refused(
            &Speaker::from(&unknown),
            asked,
            Refusal::UnknownPerson(unknown).into(),
        )
        .await
    }

    /// What the person is told when a request fails: a refusal says why (and is audited when
    /// it says no to the person); anything else is an internal error, logged with its causes
    /// and never shown.
    pub async fn refused(&self, speaker: &Speaker, asked: &Asked, error: EngineError) -> Reply {
        match error {
            EngineError::Refused(refusal) => {
                self.engine.metrics().refused(refusal.kind());
                if refusal.is_audited() {
                    self.audit_refusal(speaker, asked, &refusal.to_string())
                        .await;
                }
                Reply::private(refusal.to_string())
            }
            error => {
                let error = anyhow::Error::from(error);
                tracing::error!(error = format!("{error:#}"), %speaker, "internal error");
                Reply::private(
                    "internal error: nothing was changed by this command; the bot's log has the \
                     details",
                )
            }
        }
    }

    /// Records a refusal: who tried (the person, or the surface account that maps to nobody),
    /// what, and why.
    async fn audit_refusal(&self, speaker: &Speaker, asked: &Asked, reason: &str) {
        let event = AuditEvent {
            at: self.engine.clock().now(),
            run: asked.run,
            actor: Some(speaker.clone()),
            event: AuditKind::Refused {
                request: asked.summary.clone(),
                reason: reason.to_owned(),
            },
        };
        if let Err(error) = self.engine.writes().append_audit(event).await {
            tracing::error!(%error, "cannot audit a refusal");
        }
    }

    /// A press of a plan's Approve or Reject button: the rules of `/approve` and `/reject`,
    /// bound to the digest the button was posted with, so a stale button is refused. The
    /// updated run, or the private reply that says why not.
    pub async fn decide(&self, actor: &Actor, button: &ApprovalButton) -> Result<Run, Reply> {
        let word = button.decision.label();
        let asked = Asked::new(format!("{word} button of {}", button.run), Some(button.run));
        // The catalogue's rule for /approve and /reject, which the buttons stand for.
        let decided = if !Who::Deciders.admits(actor.roles) {
            Err(Refusal::NotOperator.into())
        } else {
            match button.decision {
                Decision::Approve => self.engine.approve(actor, button.run, &button.digest).await,
                Decision::Confirm => {
                    let (run, digest) = (button.run, &button.digest);
                    self.engine.confirm_plan(actor, run, digest).await
                }
                Decision::Reject => {
                    // A constant that passes `Reason::parse` (unit-tested); never refused.
                    let Ok(reason) = Reason::parse(REJECTED_BY_BUTTON) else {
                        return Err(Reply::private("internal error: the button's reason"));
                    };
                    self.engine.reject(actor, button.run, &reason).await
                }
            }
        };
        match decided {
            Ok(run) => Ok(run),
            Err(error) => Err(self.refused(&actor.speaker(), &asked, error).await),
        }
    }

    /// `/approve` without a digest: the plan and the command that approves exactly it, for
    /// the approver's eyes, with its digest; refused (and audited) as the approval itself
    /// would be, so that nobody is shown a plan they could not approve.
    pub async fn preview(&self, actor: &Actor, id: RunId) -> Result<(String, PlanDigest), Reply> {
        let approvable = self.engine.run(id).and_then(|run| {
            let now = self.engine.clock().now();
            approval::approve(&run, actor, run.digest.as_str(), now)
                .map_err(|refusal| Refusal::Approval(refusal).into())
                .map(|_| run)
        });
        match approvable {
            Ok(run) => Ok((render::approval_preview(&run), run.digest)),
            Err(error) => {
                let asked = Asked::new(format!("/approve id:{id}"), Some(id));
                Err(self.refused(&actor.speaker(), &asked, error).await)
            }
        }
    }

    async fn start(
        &self,
        actor: &Actor,
        channel: &ChannelId,
        origin: Origin,
        procedure: ProcedureRequest,
        at: Option<OffsetDateTime>,
    ) -> Result<Reply, EngineError> {
        Ok(
            match self
                .engine
                .start(actor, channel.clone(), procedure, at)
                .await?
            {
                Start::Started(run) => Reply {
                    awaits: run
                        .awaits_confirmation()
                        .then(|| (run.id, run.digest.clone())),
                    waiting: matches!(run.state, RunState::AwaitingApproval { .. })
                        .then_some(run.id),
                    attachment: takes_files(origin)
                        .then(|| render::plan_file(&run))
                        .flatten()
                        .map(|text| Attachment {
                            name: format!("{}-plan.txt", run.id),
                            text,
                        }),
                    ..Reply::public(render::started(&run))
                },
                Start::NothingToDo(plan) => Reply::public(plan.notes().join("\n")),
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
        let now = self.engine.clock().now();
        // Who may ask is the catalogue's word; the approval rules then check the approver role
        // themselves, with a precise refusal.
        let allowed = request.who().admits(actor.roles);
        if !allowed {
            return Err(Refusal::NotOperator.into());
        }
        Ok(match request {
            Request::Procedure(procedure) => {
                self.start(actor, channel, origin, procedure, None).await?
            }
            Request::Book { procedure, at } => {
                self.start(actor, channel, origin, procedure, Some(at))
                    .await?
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
            Request::PlacementAllocations { cloud, host } => {
                let clouds = self.engine.clouds();
                let facts = clouds.stale_facts(clouds.get(&cloud)?, &host).await?;
                Reply::public(render::allocations(&facts))
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
            Request::RunbookRun { name, params, at } => {
                let request = self
                    .engine
                    .library()
                    .request(&name, &params)
                    .map_err(Refusal::from)?;
                self.start(
                    actor,
                    channel,
                    origin,
                    ProcedureRequest::Runbook(request),
                    at,
                )
                .await?
            }
            Request::RunLog { id, page, grep } => {
                self.run_log(id, page, grep.as_deref(), origin)?
            }
            Request::RunStatus { id } => {
                let run = self.engine.run(id)?;
                Reply::public(render::run_status(
                    &run,
                    self.progress.observed(&run).as_ref(),
                    now,
                ))
            }
            Request::RunList { page } => {
                let day_ago = now - time::Duration::days(1);
                let listing = self.engine.store().recent_runs(day_ago, page, PER_PAGE)?;
                Reply::public(render::run_list(&listing.items, page, listing.more, now))
            }
            Request::RunCancel { id } => self.cancel(actor, id).await?,
            Request::RunDone { id } => {
                let run = self.engine.confirm(actor, id).await?;
                Reply::public(format!(
                    "{}: manual step confirmed by {}; verifying",
                    run.id,
                    actor.name()
                ))
            }
            Request::Approve { id, digest: None } => match self.preview(actor, id).await {
                Ok((text, _)) => Reply::private(text),
                Err(refusal) => refusal,
            },
            Request::Approve {
                id,
                digest: Some(digest),
            } => self.approve(actor, id, &digest).await?,
            Request::RunConfirm { id, digest } => self.confirm(actor, id, &digest).await?,
            Request::Reject { id, reason } => self.reject(actor, id, &reason).await?,
            Request::Audit { run, since, page } => {
                let start = since.map_or(now - time::Duration::days(1), |s| s.start(now));
                let query = AuditQuery {
                    since: Some(start),
                    run,
                };
                let listing = self.engine.store().audit_page(query, page, PER_PAGE)?;
                Reply::public(render::audit(
                    &listing.items,
                    run,
                    since,
                    page,
                    listing.more,
                ))
            }
            Request::MaintenanceAnnounce { text } => {
                let notice = MaintenanceNotice {
                    text,
                    by: actor.person.clone(),
                    since: now,
                };
                self.engine
                    .writes()
                    .set_maintenance_notice(Some(notice.clone()))
                    .await?;
                self.progress
                    .announce(notice.announcement(), channel.clone());
                Reply::public(format!(
                    "announced; /maintenance end when it is over\n📣 {}",
                    notice.text
                ))
            }
            Request::MaintenanceEnd => {
                let Some(ended) = self.engine.writes().set_maintenance_notice(None).await? else {
                    return Ok(Reply::private("no maintenance is announced"));
                };
                let ending = ended.ending(&actor.person);
                let reply = Reply::public(ending.text.clone());
                self.progress.announce(ending, channel.clone());
                reply
            }
            Request::MaintenanceStatus => {
                let notice = self.engine.store().maintenance_notice()?;
                let runs = self.engine.store().unfinished_runs()?;
                Reply::public(maintenance::status(notice.as_ref(), &runs))
            }
            Request::Help { topic } => {
                let (topic, demo) = (topic.as_deref(), origin == Origin::Demo);
                Reply::private(render::help(topic, demo, self.engine.consent()))
            }
            Request::ActAs { .. } => Reply::private("`/as` works in the demo only"),
            Request::Schedule(request) => self.schedule(actor, request).await?,
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
