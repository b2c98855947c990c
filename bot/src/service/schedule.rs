//! `/schedule ...`: the schedules as the config and the store know them, pauses, and standing
//! approvals.

use opsbot_commands::people::Actor;
use opsbot_commands::render::{self, ScheduleState};
use opsbot_commands::schedule::{Schedule, ScheduleRequest};

use super::{Reply, Service};
use crate::refusal::EngineError;

impl Service {
    pub(super) async fn schedule(
        &self,
        actor: &Actor,
        request: ScheduleRequest,
    ) -> Result<Reply, EngineError> {
        let engine = &self.engine;
        let now = engine.clock().now();
        Ok(match request {
            ScheduleRequest::List => {
                let states = engine
                    .schedules()
                    .iter()
                    .map(|schedule| Ok((schedule, self.state(schedule)?)))
                    .collect::<Result<Vec<_>, EngineError>>()?;
                Reply::public(render::schedule_list(&states, now))
            }
            ScheduleRequest::Show { name } => {
                let schedule = engine.schedule(&name)?;
                Reply::public(render::schedule_show(schedule, &self.state(schedule)?, now))
            }
            ScheduleRequest::Pause { name } => {
                let changed = engine.set_paused(actor, &name, true).await?;
                Reply::public(if changed {
                    format!(
                        "schedule {name} paused by {}: it does not fire until /schedule resume \
                         name:{name}",
                        actor.name()
                    )
                } else {
                    format!("schedule {name} is already paused")
                })
            }
            ScheduleRequest::Resume { name } => {
                let changed = engine.set_paused(actor, &name, false).await?;
                let schedule = engine.schedule(&name)?;
                let next = schedule
                    .cron
                    .next_after(now)
                    .map_or_else(|| "never".to_owned(), |at| schedule.cron.local(at));
                Reply::public(if changed {
                    format!(
                        "schedule {name} resumed by {}; next fire {next}",
                        actor.name()
                    )
                } else {
                    format!("schedule {name} is not paused; next fire {next}")
                })
            }
            ScheduleRequest::Approve {
                name, digest: None, ..
            } => {
                let (standing, created) = engine.ask_standing(actor, &name).await?;
                Reply::public(render::standing_asked(&standing, created))
            }
            ScheduleRequest::Approve {
                name,
                digest: Some(digest),
                until,
            } => {
                let standing = engine
                    .approve_standing(actor, &name, digest.as_str(), until)
                    .await?;
                Reply::public(format!(
                    "{} approved by {}: schedule {} {}",
                    standing.id,
                    actor.name(),
                    standing.schedule,
                    standing.what()
                ))
            }
        })
    }

    fn state(&self, schedule: &Schedule) -> Result<ScheduleState, EngineError> {
        let store = self.engine.store();
        let now = self.engine.clock().now();
        Ok(ScheduleState {
            last: store.last_fire(&schedule.name)?,
            pause: store.pause(&schedule.name)?,
            standing: self.engine.live_standing(&schedule.name, now)?,
        })
    }
}
