//! The commands about the configured schedules: `/schedule`.

use super::options::{SCHEDULE, schedule};
use super::{CommandSpec, OptionKind, OptionSpec, Reach, Who};
use crate::plan::DigestPrefix;
use crate::request::Request;
use crate::schedule::ScheduleRequest;

/// `/schedule`, in the order `/help` lists them.
pub(super) static COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        group: "schedule",
        sub: Some("list"),
        summary: "the schedules, whether each may run unattended, and their next fires",
        options: &[],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |_| Ok(Request::Schedule(ScheduleRequest::List)),
    },
    CommandSpec {
        group: "schedule",
        sub: Some("show"),
        summary: "one schedule: command, bounds, digest, standing approval, last and next fires",
        options: &[SCHEDULE],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |a| {
            Ok(Request::Schedule(ScheduleRequest::Show {
                name: schedule(a)?,
            }))
        },
    },
    CommandSpec {
        group: "schedule",
        sub: Some("pause"),
        summary: "stop a schedule from firing until it is resumed",
        options: &[SCHEDULE],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |a| {
            Ok(Request::Schedule(ScheduleRequest::Pause {
                name: schedule(a)?,
            }))
        },
    },
    CommandSpec {
        group: "schedule",
        sub: Some("resume"),
        summary: "let a paused schedule fire again from its next time",
        options: &[SCHEDULE],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |a| {
            Ok(Request::Schedule(ScheduleRequest::Resume {
                name: schedule(a)?,
            }))
        },
    },
    CommandSpec {
        group: "schedule",
        sub: Some("approve"),
        summary: "ask for a standing approval; a second person approves it with digest and until",
        options: &[
            SCHEDULE,
            OptionSpec {
                name: "digest",
                kind: OptionKind::Digest,
                required: false,
                summary: "the schedule's digest you approve (from /schedule show); omit to ask",
            },
            OptionSpec {
                name: "until",
                kind: OptionKind::Date,
                required: false,
                summary: "when your approval ends, e.g. 2027-02-01 (at most a year ahead)",
            },
        ],
        reach: Reach::Everywhere,
        who: Who::Deciders,
        open: false,
        consent: None,
        build: |a| {
            Ok(Request::Schedule(ScheduleRequest::Approve {
                name: schedule(a)?,
                digest: a.optional("digest", DigestPrefix::parse)?,
                until: a.optional("until", crate::schedule::parse_date)?,
            }))
        },
    },
];
