//! The answers about one run that take more than a line: its log, and what a person decides
//! about it (cancel, approve, confirm, reject), told back in the words the channel reads.

use opsbot_commands::name::{Reason, RunId};
use opsbot_commands::page::Page;
use opsbot_commands::parse::Origin;
use opsbot_commands::people::Actor;
use opsbot_commands::plan::DigestPrefix;
use opsbot_commands::render;
use opsbot_commands::run::Outcome;
use opsbot_state::StoreError;

use super::{Attachment, Reply, Service};
use crate::refusal::{EngineError, Refusal};

impl Service {
    /// `/run log`: one page of the run's output, and all of it as a file where `origin` takes
    /// files.
    pub(super) fn run_log(
        &self,
        id: RunId,
        page: Page,
        grep: Option<&str>,
        origin: Origin,
    ) -> Result<Reply, EngineError> {
        let lines = self
            .engine
            .store()
            .run_log(id)
            .map_err(|error| match error {
                StoreError::NotFound { run } => EngineError::from(Refusal::NoSuchRun { run }),
                other => other.into(),
            })?;
        Ok(Reply {
            attachment: super::takes_files(origin)
                .then(|| render::run_log_file(id, &lines))
                .flatten()
                .map(|text| Attachment {
                    name: format!("{id}.log"),
                    text,
                }),
            ..Reply::public(render::run_log(id, &lines, page, grep))
        })
    }

    /// `/run cancel`: withdrawn or cancelled at once when nothing ran yet, else at the run's
    /// next safe point.
    pub(super) async fn cancel(&self, actor: &Actor, id: RunId) -> Result<Reply, EngineError> {
        let run = self.engine.cancel(actor, id).await?;
        let by = actor.name();
        Ok(Reply::public(match run.outcome() {
            Some(Outcome::Withdrawn { .. }) => {
                format!(
                    "{} withdrawn by {by} before approval; nothing was done",
                    run.id
                )
            }
            Some(Outcome::Cancelled { note, .. }) => {
                format!("{} cancelled by {by}: {note}", run.id)
            }
            _ => format!(
                "{} will stop at its next safe point (cancel requested by {by})",
                run.id
            ),
        }))
    }

    /// `/approve id: digest:`: a second person's approval of the plan shown.
    pub(super) async fn approve(
        &self,
        actor: &Actor,
        id: RunId,
        digest: &DigestPrefix,
    ) -> Result<Reply, EngineError> {
        let run = self.engine.approve(actor, id, digest.as_str()).await?;
        Ok(Reply::public(format!(
            "{} approved by {} (plan digest {})",
            run.id,
            actor.name(),
            run.digest
        )))
    }

    /// `/run confirm id: digest:`: the requester's confirmation of their plan.
    pub(super) async fn confirm(
        &self,
        actor: &Actor,
        id: RunId,
        digest: &DigestPrefix,
    ) -> Result<Reply, EngineError> {
        let run = self.engine.confirm_plan(actor, id, digest.as_str()).await?;
        let when = if run.is_ahead() { "booked" } else { "starting" };
        Ok(Reply::public(format!(
            "{} confirmed by {} (plan digest {}); {when}",
            run.id,
            actor.name(),
            run.digest
        )))
    }

    /// `/reject`: an approver's rejection, or the requester withdrawing their plan.
    pub(super) async fn reject(
        &self,
        actor: &Actor,
        id: RunId,
        reason: &Reason,
    ) -> Result<Reply, EngineError> {
        let run = self.engine.reject(actor, id, reason).await?;
        let verb = match run.outcome() {
            Some(Outcome::Withdrawn { .. }) => "withdrawn",
            _ => "rejected",
        };
        Ok(Reply::public(format!(
            "{} {verb} by {}: {reason}",
            run.id,
            actor.name()
        )))
    }
}
