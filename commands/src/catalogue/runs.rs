//! The commands about runs: `/runbook`, `/run`, and the decisions on a plan, `/approve` and
//! `/reject`.

use super::options::{AT, PAGE, RUN, RUNBOOK, run_id, runbook_name};
use super::{CommandSpec, OptionKind, OptionSpec, Reach, Who};
use crate::consent::ConsentRule;
use crate::name::Reason;
use crate::page::Page;
use crate::plan::DigestPrefix;
use crate::request::Request;

/// `/runbook`, `/run`, `/approve` and `/reject`, in the order `/help` lists them.
pub(super) static COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        group: "runbook",
        sub: Some("list"),
        summary: "the operators' runbooks: name and what each does",
        options: &[],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |_| Ok(Request::RunbookList),
    },
    CommandSpec {
        group: "runbook",
        sub: Some("show"),
        summary: "one runbook: its parameters and steps",
        options: &[RUNBOOK],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |a| {
            Ok(Request::RunbookShow {
                name: a.required("name", runbook_name)?,
            })
        },
    },
    CommandSpec {
        group: "runbook",
        sub: Some("run"),
        summary: "run a runbook; give its parameters as name:value (see /runbook show)",
        options: &[RUNBOOK, AT],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: true,
        consent: Some(ConsentRule::Gates),
        build: |a| {
            Ok(Request::RunbookRun {
                name: a.required("name", runbook_name)?,
                at: a.optional("at", crate::booking::parse_at)?,
                params: a
                    .extra()
                    .map(|(name, value)| (name.to_owned(), value.to_owned()))
                    .collect(),
            })
        },
    },
    CommandSpec {
        group: "run",
        sub: Some("status"),
        summary: "one run: its steps, state and what it last observed",
        options: &[RUN],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |a| Ok(Request::RunStatus { id: run_id(a)? }),
    },
    CommandSpec {
        group: "run",
        sub: Some("log"),
        summary: "what a run's commands printed, a message a page, the latest first",
        options: &[
            RUN,
            PAGE,
            OptionSpec {
                name: "grep",
                kind: OptionKind::Text { max_len: 100 },
                required: false,
                summary: "only the lines containing this text (any case)",
            },
        ],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |a| {
            Ok(Request::RunLog {
                id: run_id(a)?,
                page: a.optional("page", Page::parse)?.unwrap_or(Page::FIRST),
                grep: a.optional("grep", |g| Ok::<_, crate::name::NameError>(g.to_owned()))?,
            })
        },
    },
    CommandSpec {
        group: "run",
        sub: Some("list"),
        summary: "active runs and those finished in the last 24 hours",
        options: &[PAGE],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |a| {
            Ok(Request::RunList {
                page: a.optional("page", Page::parse)?.unwrap_or(Page::FIRST),
            })
        },
    },
    CommandSpec {
        group: "run",
        sub: Some("cancel"),
        summary: "stop a run at its next safe point",
        options: &[RUN],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |a| Ok(Request::RunCancel { id: run_id(a)? }),
    },
    CommandSpec {
        group: "run",
        sub: Some("done"),
        summary: "confirm that you did the manual step a run asked for",
        options: &[RUN],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |a| Ok(Request::RunDone { id: run_id(a)? }),
    },
    CommandSpec {
        group: "run",
        sub: Some("confirm"),
        summary: "run your own plan that waits for your confirmation (the `confirm` policy)",
        options: &[
            RUN,
            OptionSpec {
                name: "digest",
                kind: OptionKind::Digest,
                required: true,
                summary: "the digest shown with the plan you confirm",
            },
        ],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
        build: |a| {
            Ok(Request::RunConfirm {
                id: run_id(a)?,
                digest: a.required("digest", DigestPrefix::parse)?,
            })
        },
    },
    CommandSpec {
        group: "approve",
        sub: None,
        summary: "approve a destructive plan (approver role; not your own run)",
        options: &[
            RUN,
            OptionSpec {
                name: "digest",
                kind: OptionKind::Digest,
                required: false,
                summary: "the digest of the plan you approve; without it, the plan is shown",
            },
        ],
        reach: Reach::Everywhere,
        who: Who::Deciders,
        open: false,
        consent: None,
        build: |a| {
            Ok(Request::Approve {
                id: run_id(a)?,
                digest: a.optional("digest", DigestPrefix::parse)?,
            })
        },
    },
    CommandSpec {
        group: "reject",
        sub: None,
        summary: "reject a destructive plan, saying why",
        options: &[
            RUN,
            OptionSpec {
                name: "reason",
                kind: OptionKind::Text {
                    max_len: Reason::MAX_LEN,
                },
                required: true,
                summary: "why, for the requester and the audit log",
            },
        ],
        reach: Reach::Everywhere,
        who: Who::Deciders,
        open: false,
        consent: None,
        build: |a| {
            Ok(Request::Reject {
                id: run_id(a)?,
                reason: a.required("reason", Reason::parse)?,
            })
        },
    },
];
