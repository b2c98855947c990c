//! The commands about the clouds: `/placement`, `/compute` and `/image`.

use super::options::{AT, CLOUD, HOST, PROPERTIES, cloud, host, procedure, properties};
use super::{CommandSpec, OptionKind, OptionSpec, Reach, Who};
use crate::consent::{Consent, ConsentRule};
use crate::openstack::ids::{ConsumerId, ImageRef};
use crate::openstack::rpc::VersionCapError;
use crate::request::{ProcedureRequest, Request};

/// `/placement`, `/compute` and `/image`, in the order `/help` lists them.
pub(super) static COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        group: "placement",
        sub: Some("allocations"),
        summary: "a hypervisor's resource provider and its allocations per instance",
        options: &[CLOUD, HOST],
        reach: Reach::Everywhere,
        who: Who::Operators,
        open: false,
        consent: None,
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
        summary: "delete allocations of instances gone from the compute database",
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
        consent: Some(ConsentRule::SecondPerson),
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
        consent: None,
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
        consent: Some(ConsentRule::SecondPerson),
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
        consent: Some(ConsentRule::Configurable {
            default: Consent::Confirm,
        }),
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
];
