//! The command catalogue: the one table that names every command and option. The console parser,
//! `/help` and the Discord registration are all derived from it, so no name is written twice.

use crate::audit::Since;
use crate::index::{IndexName, IndexPattern, MAX_INDEX_BYTES};
use crate::name::{ClusterName, NameError, NodeAddr, Notice, Reason, RunId, UserName};
use crate::parse::{Args, ParseError};
use crate::request::{ProcedureRequest, Request};
use crate::retention::RetentionDays;

/// Where a command can be typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// Console and chat.
    Everywhere,
    /// Only the local console (`/as`): in chat, identity comes from the chat platform.
    ConsoleOnly,
}

/// What an option's value is; front ends use it for typing, choices and autocomplete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// A configured cluster name (autocomplete from the config).
    Cluster,
    /// A run id such as `r-42` (autocomplete from the store).
    Run,
    /// A configured operator's handle.
    User,
    /// A node's IPv4 address (autocomplete from the cluster's inventory).
    Node,
    /// An index name or, where the command lists, a `*` pattern (autocomplete from the cluster).
    Index,
    /// A number of days.
    Days,
    /// A command group, for `/help` (Discord offers the groups as choices).
    Topic,
    /// Free text up to `max_len` characters.
    Text { max_len: usize },
}

impl OptionKind {
    /// Longest value accepted, checked before anything else looks at the value.
    pub fn max_len(self) -> usize {
        match self {
            Self::Cluster => ClusterName::MAX_LEN,
            Self::Run => 21,
            Self::User => UserName::MAX_LEN,
            // The longest IPv4 text is 15 bytes; an IPv6 address is let through to be named.
            Self::Node => 45,
            Self::Index => MAX_INDEX_BYTES,
            Self::Days => 10,
            Self::Topic => 32,
            Self::Text { max_len } => max_len,
        }
    }

    /// The placeholder shown in usage lines.
    pub fn placeholder(self) -> &'static str {
        match self {
            Self::Cluster => "<cluster>",
            Self::Run => "<run id>",
            Self::User => "<user>",
            Self::Node => "<node ip>",
            Self::Index => "<index>",
            Self::Days => "<days>",
            Self::Topic => "<group>",
            Self::Text { .. } => "<text>",
        }
    }
}

/// One option of a command.
#[derive(Debug, Clone, Copy)]
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: OptionKind,
    pub required: bool,
    pub summary: &'static str,
}

/// One command: `/group sub option:value ...`.
#[derive(Debug, Clone, Copy)]
pub struct CommandSpec {
    pub group: &'static str,
    pub sub: Option<&'static str>,
    pub summary: &'static str,
    pub options: &'static [OptionSpec],
    pub surface: Surface,
    /// Turns checked arguments into the request; the only place a command's options are read.
    pub build: fn(&Args<'_>) -> Result<Request, ParseError>,
}

impl CommandSpec {
    /// `/cluster status`.
    pub fn path(&self) -> String {
        match self.sub {
            Some(sub) => format!("/{} {sub}", self.group),
            None => format!("/{}", self.group),
        }
    }

    /// `/cluster status cluster:<cluster> [since:<text>]`.
    pub fn usage(&self) -> String {
        let mut usage = self.path();
        for option in self.options {
            let part = format!("{}:{}", option.name, option.kind.placeholder());
            if option.required {
                usage.push(' ');
                usage.push_str(&part);
            } else {
                usage.push_str(&format!(" [{part}]"));
            }
        }
        usage
    }

    pub fn option(&self, name: &str) -> Option<&'static OptionSpec> {
        self.options.iter().find(|o| o.name == name)
    }
}

/// Kolla's daily log indices: `flog-YYYY.MM.DD`.
const DEFAULT_PREFIX: &str = "flog-";

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

fn cluster(args: &Args<'_>) -> Result<ClusterName, ParseError> {
    args.required("cluster", ClusterName::parse)
}

fn run_id(args: &Args<'_>) -> Result<RunId, ParseError> {
    args.required("id", RunId::parse)
}

fn topic(value: &str) -> Result<String, NameError> {
    UserName::parse(value).map(|word| word.to_string())
}

/// Every command, in the order `/help` lists them.
pub static CATALOGUE: &[CommandSpec] = &[
    CommandSpec {
        group: "cluster",
        sub: Some("status"),
        summary: "health, nodes, shards, allocation settings and runs of a cluster",
        options: &[CLUSTER],
        surface: Surface::Everywhere,
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
        options: &[CLUSTER],
        surface: Surface::Everywhere,
        build: |a| {
            Ok(Request::Procedure(ProcedureRequest::ClusterStop {
                cluster: cluster(a)?,
            }))
        },
    },
    CommandSpec {
        group: "cluster",
        sub: Some("start"),
        summary: "start the nodes one by one, wait for yellow, re-enable allocation",
        options: &[CLUSTER],
        surface: Surface::Everywhere,
        build: |a| {
            Ok(Request::Procedure(ProcedureRequest::ClusterStart {
                cluster: cluster(a)?,
            }))
        },
    },
    CommandSpec {
        group: "cluster",
        sub: Some("restart"),
        summary: "stop and start the cluster as one run",
        options: &[CLUSTER],
        surface: Surface::Everywhere,
        build: |a| {
            Ok(Request::Procedure(ProcedureRequest::ClusterRestart {
                cluster: cluster(a)?,
            }))
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
        ],
        surface: Surface::Everywhere,
        build: |a| {
            Ok(Request::Procedure(ProcedureRequest::ClusterRemoveNode {
                cluster: cluster(a)?,
                node: a.required("node", NodeAddr::parse)?,
            }))
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
        surface: Surface::Everywhere,
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
                summary: "only indices starting with this (default flog-)",
            },
        ],
        surface: Surface::Everywhere,
        build: |a| {
            Ok(Request::Procedure(ProcedureRequest::IndicesPrune {
                cluster: cluster(a)?,
                older_than: a
                    .optional("older_than_days", RetentionDays::parse)?
                    .unwrap_or(RetentionDays::DEFAULT),
                prefix: match a.optional("prefix", |p| Ok(IndexName::parse(p)?))? {
                    Some(prefix) => prefix,
                    None => IndexName::parse(DEFAULT_PREFIX).map_err(|e| ParseError::BadValue {
                        option: "prefix",
                        error: e.into(),
                    })?,
                },
            }))
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
        ],
        surface: Surface::Everywhere,
        build: |a| {
            Ok(Request::Procedure(ProcedureRequest::IndicesDelete {
                cluster: cluster(a)?,
                index: a.required("index", |i| Ok(IndexName::parse(i)?))?,
            }))
        },
    },
    CommandSpec {
        group: "run",
        sub: Some("status"),
        summary: "one run: its steps, state and what it last observed",
        options: &[RUN],
        surface: Surface::Everywhere,
        build: |a| Ok(Request::RunStatus { id: run_id(a)? }),
    },
    CommandSpec {
        group: "run",
        sub: Some("list"),
        summary: "active runs and those finished in the last 24 hours",
        options: &[],
        surface: Surface::Everywhere,
        build: |_| Ok(Request::RunList),
    },
    CommandSpec {
        group: "run",
        sub: Some("cancel"),
        summary: "stop a run at its next safe point",
        options: &[RUN],
        surface: Surface::Everywhere,
        build: |a| Ok(Request::RunCancel { id: run_id(a)? }),
    },
    CommandSpec {
        group: "run",
        sub: Some("done"),
        summary: "confirm that you did the manual step a run asked for",
        options: &[RUN],
        surface: Surface::Everywhere,
        build: |a| Ok(Request::RunDone { id: run_id(a)? }),
    },
    CommandSpec {
        group: "approve",
        sub: None,
        summary: "approve a destructive plan (approver role; not your own run)",
        options: &[RUN],
        surface: Surface::Everywhere,
        build: |a| Ok(Request::Approve { id: run_id(a)? }),
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
        surface: Surface::Everywhere,
        build: |a| {
            Ok(Request::Reject {
                id: run_id(a)?,
                reason: a.required("reason", Reason::parse)?,
            })
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
        surface: Surface::Everywhere,
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
        surface: Surface::Everywhere,
        build: |_| Ok(Request::MaintenanceEnd),
    },
    CommandSpec {
        group: "maintenance",
        sub: Some("status"),
        summary: "the announced maintenance and the maintenance runs under way",
        options: &[],
        surface: Surface::Everywhere,
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
        ],
        surface: Surface::Everywhere,
        build: |a| {
            Ok(Request::Audit {
                run: a.optional("run", RunId::parse)?,
                since: a.optional("since", Since::parse)?,
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
        surface: Surface::Everywhere,
        build: |a| {
            Ok(Request::Help {
                topic: a.optional("topic", topic)?,
            })
        },
    },
    CommandSpec {
        group: "as",
        sub: None,
        summary: "speak as another configured operator (console only)",
        options: &[OptionSpec {
            name: "user",
            kind: OptionKind::User,
            required: true,
            summary: "the operator's handle, e.g. bob",
        }],
        surface: Surface::ConsoleOnly,
        build: |a| {
            Ok(Request::ActAs {
                user: a.required("user", UserName::parse)?,
            })
        },
    },
];

/// The command groups that chat offers, in catalogue order: `/help topic:` choices.
pub fn chat_groups() -> Vec<&'static str> {
    let mut groups: Vec<&'static str> = Vec::new();
    for command in CATALOGUE
        .iter()
        .filter(|c| c.surface == Surface::Everywhere)
    {
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
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_command_path_is_unique() {
        let mut seen = HashSet::new();
        for command in CATALOGUE {
            assert!(seen.insert(command.path()), "{} twice", command.path());
        }
    }

    #[test]
    fn a_group_is_either_one_command_or_subcommands() {
        for command in CATALOGUE.iter().filter(|c| c.sub.is_none()) {
            assert_eq!(group(command.group).count(), 1, "{}", command.group);
        }
    }

    #[test]
    fn option_names_fit_discord_rules() {
        // Discord: 1-32 lower-case characters, at most 25 options.
        for command in CATALOGUE {
            assert!(command.options.len() <= 25);
            for option in command.options {
                assert!(
                    (1..=32).contains(&option.name.len())
                        && option
                            .name
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b == b'_'),
                    "{}",
                    option.name
                );
                assert!(option.summary.len() <= 100, "{}", option.summary);
            }
            assert!(command.summary.len() <= 100, "{}", command.summary);
        }
    }
}
