//! The remaining commands: `/maintenance` announcements, the `/audit` trail, `/help`, and the
//! demo's `/as`.

use super::options::{PAGE, topic};
use super::{CommandSpec, OptionKind, OptionSpec, Reach, Who};
use crate::audit::Since;
use crate::name::{Notice, PersonName, RunId};
use crate::page::Page;
use crate::request::Request;

/// `/maintenance`, `/audit`, `/help` and `/as`, in the order `/help` lists them.
pub(super) static COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        group: "maintenance",
        sub: Some("announce"),
        summary: "announce maintenance in the announcement channel",
        options: &[OptionSpec {
            name: "text",
            kind: OptionKind::Text {
                max_len: Notice::MAX_LEN,
            },
            required: true,
            summary: "what is maintained and until when",
        }],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |a| {
            Ok(Request::MaintenanceAnnounce {
                text: a.required("text", Notice::parse)?,
            })
        },
    },
    CommandSpec {
        group: "maintenance",
        sub: Some("end"),
        summary: "announce that the announced maintenance is over",
        options: &[],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |_| Ok(Request::MaintenanceEnd),
    },
    CommandSpec {
        group: "maintenance",
        sub: Some("status"),
        summary: "the announced maintenance and the maintenance runs under way",
        options: &[],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |_| Ok(Request::MaintenanceStatus),
    },
    CommandSpec {
        group: "audit",
        sub: None,
        summary: "the audit trail: who asked, approved, cancelled, and what each step did",
        options: &[
            OptionSpec {
                name: "run",
                kind: OptionKind::Run,
                required: false,
                summary: "only this run, e.g. r-42",
            },
            OptionSpec {
                name: "since",
                kind: OptionKind::Text { max_len: 40 },
                required: false,
                summary: "30m, 2h, 3d or an RFC 3339 time (default 24h)",
            },
            PAGE,
        ],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |a| {
            Ok(Request::Audit {
                run: a.optional("run", RunId::parse)?,
                since: a.optional("since", Since::parse)?,
                page: a.optional("page", Page::parse)?.unwrap_or(Page::FIRST),
            })
        },
    },
    CommandSpec {
        group: "help",
        sub: None,
        summary: "this list, or the commands of one group",
        options: &[OptionSpec {
            name: "topic",
            kind: OptionKind::Topic,
            required: false,
            summary: "a command group, e.g. cluster",
        }],
        reach: Reach::Everywhere,
        who: Who::Anyone,
        open: false,
        consent: None,
        build: |a| {
            Ok(Request::Help {
                topic: a.optional("topic", topic)?,
            })
        },
    },
    CommandSpec {
        group: "as",
        sub: None,
        summary: "speak as another of the demo's people (demo only)",
        options: &[OptionSpec {
            name: "user",
            kind: OptionKind::User,
            required: true,
            summary: "the person's name, e.g. bob",
        }],
        reach: Reach::Demo,
        who: Who::Anyone,
        open: false,
        consent: None,
        build: |a| {
            Ok(Request::ActAs {
                user: a.required("user", PersonName::parse)?,
            })
        },
    },
];
