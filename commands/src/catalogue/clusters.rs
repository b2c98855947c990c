//! The commands about the search clusters: `/cluster` and `/indices`.

use super::options::{AT, CLUSTER, cluster, procedure};
use super::{CommandSpec, OptionKind, OptionSpec, Reach, Who};
use crate::consent::{Consent, ConsentRule};
use crate::index::{IndexName, IndexPattern};
use crate::name::NodeAddr;
use crate::request::{ProcedureRequest, Request};
use crate::retention::RetentionDays;

/// `/cluster` and `/indices`, in the order `/help` lists them.
pub(super) static COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        group: "cluster",
        sub: Some("status"),
        summary: "health, nodes, shards, allocation settings and runs of a cluster",
        options: &[CLUSTER],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
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
        consent: Some(ConsentRule::Configurable {
            default: Consent::Confirm,
        }),
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
        consent: Some(ConsentRule::Configurable {
            default: Consent::Confirm,
        }),
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
        consent: Some(ConsentRule::Configurable {
            default: Consent::Confirm,
        }),
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
        summary: "drain a node, stop it, take it out of the deployment",
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
        consent: Some(ConsentRule::SecondPerson),
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
        consent: None,
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
        summary: "delete indices whose name date is older than N days",
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
        consent: Some(ConsentRule::SecondPerson),
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
        summary: "delete one index",
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
        consent: Some(ConsentRule::SecondPerson),
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
];
