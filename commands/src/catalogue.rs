//! The command catalogue: the one table that names every command and option. The console parser,
//! `/help` and the Discord registration are all derived from it, so no name is written twice.

mod spec;

pub use spec::{CommandSpec, OptionKind, OptionSpec, Reach, Who};

use crate::audit::Since;
use crate::index::{IndexName, IndexPattern};
use crate::name::{
    CloudName, ClusterName, HostName, NameError, NodeAddr, Notice, PersonName, Reason, RunId,
    RunbookName,
};
use crate::openstack::ids::{ConsumerId, ImageRef};
use crate::openstack::image::{Property, PropertyKey, PropertySet};
use crate::openstack::rpc::VersionCapError;
use crate::page::Page;
use crate::parse::{Args, ParseError};
use crate::plan::DigestPrefix;
use crate::request::{ProcedureRequest, Request};
use crate::retention::RetentionDays;
use crate::schedule::{ScheduleName, ScheduleRequest};

const CLUSTER: OptionSpec = OptionSpec {
    name: "cluster",
    kind: OptionKind::Cluster,
    required: true,
    summary: "which configured cluster",
};

const RUN: OptionSpec = OptionSpec {
    name: "id",
    kind: OptionKind::Run,
    required: true,
    summary: "the run id, e.g. r-42",
};

/// Which page of a long listing; the reply says when there is a next one.
const PAGE: OptionSpec = OptionSpec {
    name: "page",
    kind: OptionKind::Page,
    required: false,
    summary: "1 (the newest, the default), 2 for the ones before, …",
};

const CLOUD: OptionSpec = OptionSpec {
    name: "cloud",
    kind: OptionKind::Cloud,
    required: true,
    summary: "which configured cloud",
};

const HOST: OptionSpec = OptionSpec {
    name: "host",
    kind: OptionKind::Host,
    required: true,
    summary: "the hypervisor's host name, e.g. compute-03",
};

/// The image property options, one per key of spec 2.10, in the key's order.
const PROPERTIES: [OptionSpec; 4] = [
    OptionSpec {
        name: "hw_scsi_model",
        kind: OptionKind::Property(PropertyKey::HwScsiModel),
        required: false,
        summary: "the SCSI controller model: virtio-scsi",
    },
    OptionSpec {
        name: "hw_disk_bus",
        kind: OptionKind::Property(PropertyKey::HwDiskBus),
        required: false,
        summary: "the disk bus: scsi",
    },
    OptionSpec {
        name: "os_type",
        kind: OptionKind::Property(PropertyKey::OsType),
        required: false,
        summary: "linux or windows",
    },
    OptionSpec {
        name: "os_distro",
        kind: OptionKind::Property(PropertyKey::OsDistro),
        required: false,
        summary: "an OS id such as ubuntu, rhel, windows, or an osinfo short id like ubuntu22.04",
    },
];

/// Books a procedure for later instead of running it now.
const AT: OptionSpec = OptionSpec {
    name: "at",
    kind: OptionKind::Time,
    required: false,
    summary: "book it for this time instead of now, e.g. 2026-11-28T02:00Z",
};

/// A procedure, run now or booked for the time given as `at:`.
fn procedure(args: &Args<'_>, procedure: ProcedureRequest) -> Result<Request, ParseError> {
    Ok(match args.optional("at", crate::booking::parse_at)? {
        Some(at) => Request::Book { procedure, at },
        None => Request::Procedure(procedure),
    })
}

const SCHEDULE: OptionSpec = OptionSpec {
    name: "name",
    kind: OptionKind::Schedule,
    required: true,
    summary: "the schedule, e.g. nightly-prune (/schedule list)",
};

fn schedule(args: &Args<'_>) -> Result<ScheduleName, ParseError> {
    args.required("name", ScheduleName::parse)
}

const RUNBOOK: OptionSpec = OptionSpec {
    name: "name",
    kind: OptionKind::Runbook,
    required: true,
    summary: "the runbook, e.g. nested-virt (/runbook list)",
};

/// A runbook's name as typed; whether such a runbook is loaded, only the running bot knows.
fn runbook_name(value: &str) -> Result<String, NameError> {
    RunbookName::parse(value).map(|name| name.to_string())
}

fn cloud(args: &Args<'_>) -> Result<CloudName, ParseError> {
    args.required("cloud", CloudName::parse)
}

fn host(args: &Args<'_>) -> Result<HostName, ParseError> {
    args.required("host", HostName::parse)
}

/// The image properties given, at least one.
fn properties(args: &Args<'_>) -> Result<PropertySet, ParseError> {
    let mut given = Vec::new();
    for key in PropertyKey::ALL {
        if let Some(property) = args.optional(key.as_str(), |v| Ok(Property::parse(key, v)?))? {
            given.push(property);
        }
    }
    PropertySet::new(given).map_err(|error| ParseError::BadValue {
        option: "properties",
        error: error.into(),
    })
}

fn cluster(args: &Args<'_>) -> Result<ClusterName, ParseError> {
    args.required("cluster", ClusterName::parse)
}

fn run_id(args: &Args<'_>) -> Result<RunId, ParseError> {
    args.required("id", RunId::parse)
}

fn topic(value: &str) -> Result<String, NameError> {
    PersonName::parse(value).map(|word| word.to_string())
}

/// Every command, in the order `/help` lists them.
pub static CATALOGUE: &[CommandSpec] = &[
    CommandSpec {
        group: "cluster",
        sub: Some("status"),
        summary: "health, nodes, shards, allocation settings and runs of a cluster",
        options: &[CLUSTER],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        build: |a| {
            Ok(Request::ClusterStatus {
                cluster: cluster(a)?,
            })
        },
    },
    CommandSpec {
        group: "cluster",
        sub: Some("stop"),
        summary: "disable allocation, flush, stop the nodes one by one",
        options: &[CLUSTER, AT],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        build: |a| {
            procedure(
                a,
                ProcedureRequest::ClusterStop {
                    cluster: cluster(a)?,
                },
            )
        },
    },
    CommandSpec {
        group: "cluster",
        sub: Some("start"),
        summary: "start the nodes one by one, wait for yellow, re-enable allocation",
        options: &[CLUSTER, AT],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        build: |a| {
            procedure(
                a,
                ProcedureRequest::ClusterStart {
                    cluster: cluster(a)?,
                },
            )
        },
    },
    CommandSpec {
        group: "cluster",
        sub: Some("restart"),
        summary: "stop and start the cluster as one run",
        options: &[CLUSTER, AT],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        build: |a| {
            procedure(
                a,
                ProcedureRequest::ClusterRestart {
                    cluster: cluster(a)?,
                },
            )
        },
    },
    CommandSpec {
        group: "cluster",
        sub: Some("remove-node"),
        summary: "drain a node, stop it, take it out of the deployment (needs approval)",
        options: &[
            CLUSTER,
            OptionSpec {
                name: "node",
                kind: OptionKind::Node,
                required: true,
                summary: "the node's IPv4 address, e.g. 10.0.0.14",
            },
            AT,
        ],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        build: |a| {
            procedure(
                a,
                ProcedureRequest::ClusterRemoveNode {
                    cluster: cluster(a)?,
                    node: a.required("node", NodeAddr::parse)?,
                },
            )
        },
    },
    CommandSpec {
        group: "indices",
        sub: Some("list"),
        summary: "the indices of a cluster, sorted by name, with health, documents and size",
        options: &[
            CLUSTER,
            OptionSpec {
                name: "pattern",
                kind: OptionKind::Index,
                required: false,
                summary: "only names matching this, e.g. flog-2026.10.*",
            },
        ],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        build: |a| {
            Ok(Request::IndicesList {
                cluster: cluster(a)?,
                pattern: a.optional("pattern", |p| Ok(IndexPattern::parse(p)?))?,
            })
        },
    },
    CommandSpec {
        group: "indices",
        sub: Some("prune"),
        summary: "delete indices whose name date is older than N days (needs approval)",
        options: &[
            CLUSTER,
            OptionSpec {
                name: "older_than_days",
                kind: OptionKind::Days,
                required: false,
                summary: "age in days, 1 to 3650 (default 30)",
            },
            OptionSpec {
                name: "prefix",
                kind: OptionKind::Index,
                required: false,
                summary: "only indices starting with this, e.g. flog- (default: every index)",
            },
            AT,
        ],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        build: |a| {
            procedure(
                a,
                ProcedureRequest::IndicesPrune {
                    cluster: cluster(a)?,
                    older_than: a
                        .optional("older_than_days", RetentionDays::parse)?
                        .unwrap_or(RetentionDays::DEFAULT),
                    prefix: a.optional("prefix", |p| Ok(IndexName::parse_prefix(p)?))?,
                },
            )
        },
    },
    CommandSpec {
        group: "indices",
        sub: Some("delete"),
        summary: "delete one index (needs approval)",
        options: &[
            CLUSTER,
            OptionSpec {
                name: "index",
                kind: OptionKind::Index,
                required: true,
                summary: "the exact index name, e.g. flog-2026.09.01",
            },
            AT,
        ],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        build: |a| {
            procedure(
                a,
                ProcedureRequest::IndicesDelete {
                    cluster: cluster(a)?,
                    index: a.required("index", |i| Ok(IndexName::parse(i)?))?,
                },
            )
        },
    },
    CommandSpec {
        group: "placement",
        sub: Some("allocations"),
        summary: "a hypervisor's resource provider and its allocations per instance",
        options: &[CLOUD, HOST],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        build: |a| {
            Ok(Request::PlacementAllocations {
                cloud: cloud(a)?,
                host: host(a)?,
            })
        },
    },
    CommandSpec {
        group: "placement",
        sub: Some("stale"),
        summary: "delete allocations of instances gone from the compute database (needs approval)",
        options: &[
            CLOUD,
            HOST,
            OptionSpec {
                name: "instance",
                kind: OptionKind::Instance,
                required: false,
                summary: "only this instance's allocations (its UUID, from the compute log)",
            },
            AT,
        ],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        build: |a| {
            procedure(
                a,
                ProcedureRequest::PlacementStale {
                    cloud: cloud(a)?,
                    host: host(a)?,
                    instance: a.optional("instance", ConsumerId::parse)?,
                },
            )
        },
    },
    CommandSpec {
        group: "compute",
        sub: Some("services"),
        summary: "the compute services: host, state, status, zone, last report",
        options: &[CLOUD],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        build: |a| Ok(Request::ComputeServices { cloud: cloud(a)? }),
    },
    CommandSpec {
        group: "compute",
        sub: Some("rpc-cap"),
        summary: "explain an RPCVersionCapError; delete old disabled services, restart computes",
        options: &[
            CLOUD,
            AT,
            OptionSpec {
                name: "error",
                kind: OptionKind::Text { max_len: 1000 },
                required: false,
                summary: "the RPCVersionCapError log line, to explain it",
            },
        ],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        build: |a| {
            procedure(
                a,
                ProcedureRequest::ComputeRpcCap {
                    cloud: cloud(a)?,
                    error: a.optional("error", |line| Ok(VersionCapError::parse(line)?))?,
                },
            )
        },
    },
    CommandSpec {
        group: "image",
        sub: Some("properties"),
        summary: "set image properties of spec 2.10 (SCSI model, disk bus, OS type and distro)",
        options: &[
            CLOUD,
            OptionSpec {
                name: "image",
                kind: OptionKind::Image,
                required: true,
                summary: "the image's name or id",
            },
            PROPERTIES[0],
            PROPERTIES[1],
            PROPERTIES[2],
            PROPERTIES[3],
            AT,
        ],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        build: |a| {
            procedure(
                a,
                ProcedureRequest::ImageProperties {
                    cloud: cloud(a)?,
                    image: a.required("image", ImageRef::parse)?,
                    properties: properties(a)?,
                },
            )
        },
    },
    CommandSpec {
        group: "runbook",
        sub: Some("list"),
        summary: "the operators' runbooks: name and what each does",
        options: &[],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
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
        build: |a| Ok(Request::RunStatus { id: run_id(a)? }),
    },
    CommandSpec {
        group: "run",
        sub: Some("log"),
        summary: "what a run's commands printed (the latest lines that fit)",
        options: &[RUN],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        build: |a| Ok(Request::RunLog { id: run_id(a)? }),
    },
    CommandSpec {
        group: "run",
        sub: Some("list"),
        summary: "active runs and those finished in the last 24 hours",
        options: &[PAGE],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
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
        build: |a| Ok(Request::RunDone { id: run_id(a)? }),
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
        build: |a| {
            Ok(Request::Reject {
                id: run_id(a)?,
                reason: a.required("reason", Reason::parse)?,
            })
        },
    },
    CommandSpec {
        group: "schedule",
        sub: Some("list"),
        summary: "the schedules, whether each may run unattended, and their next fires",
        options: &[],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
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
        who: Who::Operators,
        open: false,
        build: |a| {
            Ok(Request::Schedule(ScheduleRequest::Approve {
                name: schedule(a)?,
                digest: a.optional("digest", DigestPrefix::parse)?,
                until: a.optional("until", crate::schedule::parse_date)?,
            }))
        },
    },
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
        build: |a| {
            Ok(Request::ActAs {
                user: a.required("user", PersonName::parse)?,
            })
        },
    },
];

/// The command groups that chat offers, in catalogue order: `/help topic:` choices.
pub fn chat_groups() -> Vec<&'static str> {
    let mut groups: Vec<&'static str> = Vec::new();
    for command in CATALOGUE.iter().filter(|c| c.reach == Reach::Everywhere) {
        if !groups.contains(&command.group) {
            groups.push(command.group);
        }
    }
    groups
}

/// The commands of a group, for `/help cluster` and for suggestions after a typo.
pub fn group(name: &str) -> impl Iterator<Item = &'static CommandSpec> + '_ {
    CATALOGUE.iter().filter(move |c| c.group == name)
}

#[cfg(test)]
mod tests;
