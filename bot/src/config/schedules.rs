//! `[[schedules]]` and `[scheduling]`: procedures that run at cron times, and the limits every
//! schedule is held to. A schedule is validated at load like a line typed in chat (its command
//! is parsed by the same parser), and against the rest of the config (its target, its channel).

use std::time::Duration;

use anyhow::{Context, bail};
use opsbot_commands::parse::{Origin, parse_line};
use opsbot_commands::request::{ProcedureRequest, Request};
use opsbot_commands::run::ChannelId;
use opsbot_commands::schedule::{Bounds, CronSchedule, Schedule, ScheduleName};
use serde::Deserialize;
use time::OffsetDateTime;

use super::Config;

/// The limits of scheduling and booking.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SchedulingConfig {
    /// The closest two fires of one schedule may be: a typo such as `* 2 * * *` (every minute
    /// of 02:00) is refused at start-up rather than run sixty prunes.
    #[serde(with = "humantime_serde")]
    pub min_interval: Duration,
    /// How late a fire may still run after the bot was down at its time; an older one is
    /// reported as missed.
    #[serde(with = "humantime_serde")]
    pub lateness: Duration,
    /// How long a fire waits for its target to be free of another run before it is reported
    /// as not run.
    #[serde(with = "humantime_serde")]
    pub lock_wait: Duration,
    /// How long a request for a standing approval waits for a second person.
    #[serde(with = "humantime_serde")]
    pub standing_request_ttl: Duration,
    /// The furthest ahead a run may be booked (`at:`): a typo in the year is refused.
    #[serde(with = "humantime_serde")]
    pub booking_horizon: Duration,
    /// How long before a booked run's time the announcement channel is reminded of it, once
    /// each.
    #[serde(deserialize_with = "durations")]
    pub reminders: Vec<Duration>,
}

impl Default for SchedulingConfig {
    fn default() -> Self {
        Self {
            min_interval: Duration::from_secs(5 * 60),
            lateness: Duration::from_secs(60 * 60),
            lock_wait: Duration::from_secs(30 * 60),
            standing_request_ttl: Duration::from_secs(24 * 60 * 60),
            booking_horizon: Duration::from_secs(90 * 24 * 60 * 60),
            reminders: vec![
                Duration::from_secs(24 * 60 * 60),
                Duration::from_secs(60 * 60),
            ],
        }
    }
}

/// A list of durations as written (`["24h", "1h"]`).
fn durations<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Duration>, D::Error> {
    let written: Vec<humantime_serde::Serde<Duration>> = Deserialize::deserialize(d)?;
    Ok(written
        .into_iter()
        .map(humantime_serde::Serde::into_inner)
        .collect())
}

/// One `[[schedules]]` table as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSchedule {
    name: String,
    cron: String,
    #[serde(default = "utc")]
    time_zone: String,
    /// The command line, as typed in chat.
    command: String,
    /// `console`, or a Discord channel id of `[discord] channels`.
    channel: String,
    bounds: Option<Bounds>,
}

fn utc() -> String {
    "UTC".to_owned()
}

/// A schedule as the config holds it, validated.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawSchedule")]
pub struct ScheduleConfig(pub Schedule);

impl TryFrom<RawSchedule> for ScheduleConfig {
    /// The whole chain of causes: serde shows an error's `Display`, which for `anyhow` is the
    /// outermost context alone.
    type Error = String;

    fn try_from(raw: RawSchedule) -> Result<Self, String> {
        read(raw).map_err(|error| format!("{error:#}"))
    }
}

fn read(raw: RawSchedule) -> anyhow::Result<ScheduleConfig> {
    let name = ScheduleName::parse(&raw.name)?;
    let context = || format!("schedule `{name}`");
    let cron = CronSchedule::parse(&raw.cron, &raw.time_zone).with_context(context)?;
    let request = match parse_line(&raw.command, Origin::Console).with_context(context)? {
        Request::Procedure(request) => request,
        Request::Book { .. } => bail!(
            "schedule `{name}`: its command has at:, but a schedule runs at its cron times; \
             leave at: out"
        ),
        _ => bail!(
            "schedule `{name}`: `{}` is not a procedure; a schedule runs one of the \
             procedures (/indices prune, /cluster restart, ...)",
            opsbot_commands::echo::visible(&raw.command, 80)
        ),
    };
    check_bounds(&request, raw.bounds.as_ref()).with_context(context)?;
    Ok(ScheduleConfig(Schedule {
        name,
        cron,
        request,
        channel: ChannelId(raw.channel),
        bounds: raw.bounds,
    }))
}

/// Index deletions need bounds (they are what a standing approval covers), and bounds that
/// contradict the command would make every run wait for an approval.
fn check_bounds(request: &ProcedureRequest, bounds: Option<&Bounds>) -> anyhow::Result<()> {
    let deletes_indices = matches!(
        request,
        ProcedureRequest::IndicesPrune { .. } | ProcedureRequest::IndicesDelete { .. }
    );
    match (deletes_indices, bounds) {
        (true, None) => bail!(
            "`{request}` deletes indices, and the schedule has no [schedules.bounds]: give \
             max_indices and min_age_days (and optionally prefix, max_total_bytes)"
        ),
        (false, Some(_)) => bail!(
            "[schedules.bounds] limit index deletions, and `{request}` deletes no indices; \
             remove them (each destructive run of this schedule waits for an approval)"
        ),
        (true, Some(bounds)) if bounds.max_indices == 0 => bail!(
            "[schedules.bounds] max_indices = 0 lets no run delete anything under the standing \
             approval, so every run would wait for a person; give the most one run may delete"
        ),
        (true, Some(bounds)) => {
            if let ProcedureRequest::IndicesPrune {
                older_than, prefix, ..
            } = request
            {
                if *older_than < bounds.min_age_days {
                    bail!(
                        "the command prunes indices older than {older_than} days, and the \
                         bounds allow none younger than {} days: every run would exceed them",
                        bounds.min_age_days
                    );
                }
                if let Some(bound) = &bounds.prefix
                    && !prefix
                        .as_ref()
                        .is_some_and(|p| p.as_str().starts_with(bound.as_str()))
                {
                    bail!(
                        "the bounds allow only names starting with {bound}; give the command \
                         prefix:{bound} (or a longer prefix) so that its runs stay within them"
                    );
                }
            }
            Ok(())
        }
        (false, None) => Ok(()),
    }
}

/// The least `[scheduling] min_interval` may be: a procedure run every minute is never meant.
const MIN_INTERVAL_FLOOR: Duration = Duration::from_secs(60);

/// Checks the schedules against the rest of the config: unique names, a target and a channel
/// that exist, and fires no closer than the minimum interval.
pub(super) fn validate(config: &Config) -> anyhow::Result<()> {
    let min_interval = config.scheduling.min_interval;
    if min_interval < MIN_INTERVAL_FLOOR {
        bail!(
            "[scheduling] min_interval = {} turns off the check that refuses a schedule such as \
             `* 2 * * *` (every minute of 02:00, sixty runs); give at least {}",
            opsbot_commands::render::duration(crate::clock::span(min_interval)),
            opsbot_commands::render::duration(crate::clock::span(MIN_INTERVAL_FLOOR))
        );
    }
    let mut names = std::collections::BTreeSet::new();
    let now = OffsetDateTime::now_utc();
    for ScheduleConfig(schedule) in &config.schedules {
        let name = &schedule.name;
        if !names.insert(name) {
            bail!("schedule `{name}` is configured twice");
        }
        schedule
            .cron
            .check(now, config.scheduling.min_interval)
            .with_context(|| format!("schedule `{name}`"))?;
        let target = schedule.request.target();
        let known = match &target {
            opsbot_commands::target::Target::Cluster(cluster) => config.cluster(cluster).is_some(),
            opsbot_commands::target::Target::Cloud(cloud) => {
                config.clouds.iter().any(|c| &c.name == cloud)
            }
            opsbot_commands::target::Target::Hosts(_) => config.runbooks.dir.is_some(),
        };
        if !known {
            bail!("schedule `{name}`: {target} is not configured");
        }
        let channel = &schedule.channel.0;
        let discord = config.discord.as_ref().is_some_and(|discord| {
            channel
                .parse::<u64>()
                .is_ok_and(|id| discord.channels.contains(&id))
        });
        if channel != ChannelId::CONSOLE && !discord {
            bail!(
                "schedule `{name}`: channel `{}` is neither `console` nor one of [discord] \
                 channels",
                opsbot_commands::echo::visible(channel, 40)
            );
        }
    }
    Ok(())
}
