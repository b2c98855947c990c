//! The options that several commands share, and the helpers that read their arguments into the
//! values of a request.

use super::{OptionKind, OptionSpec};
use crate::name::{CloudName, ClusterName, HostName, NameError, PersonName, RunId, RunbookName};
use crate::openstack::image::{Property, PropertyKey, PropertySet};
use crate::parse::{Args, ParseError};
use crate::request::{ProcedureRequest, Request};
use crate::schedule::ScheduleName;

pub(super) const CLUSTER: OptionSpec = OptionSpec {
    name: "cluster",
    kind: OptionKind::Cluster,
    required: true,
    summary: "which configured cluster",
};

pub(super) const RUN: OptionSpec = OptionSpec {
    name: "id",
    kind: OptionKind::Run,
    required: true,
    summary: "the run id, e.g. r-42",
};

/// Which page of a long listing; the reply says when there is a next one.
pub(super) const PAGE: OptionSpec = OptionSpec {
    name: "page",
    kind: OptionKind::Page,
    required: false,
    summary: "1 (the newest, the default), 2 for the ones before, …",
};

pub(super) const CLOUD: OptionSpec = OptionSpec {
    name: "cloud",
    kind: OptionKind::Cloud,
    required: true,
    summary: "which configured cloud",
};

pub(super) const HOST: OptionSpec = OptionSpec {
    name: "host",
    kind: OptionKind::Host,
    required: true,
    summary: "the hypervisor's host name, e.g. compute-03",
};

/// The image property options, one per key of spec 2.10, in the key's order.
pub(super) const PROPERTIES: [OptionSpec; 4] = [
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
pub(super) const AT: OptionSpec = OptionSpec {
    name: "at",
    kind: OptionKind::Time,
    required: false,
    summary: "book it for this time instead of now, e.g. 2026-11-28T02:00Z",
};

/// A procedure, run now or booked for the time given as `at:`.
pub(super) fn procedure(
    args: &Args<'_>,
    procedure: ProcedureRequest,
) -> Result<Request, ParseError> {
    Ok(match args.optional("at", crate::booking::parse_at)? {
        Some(at) => Request::Book { procedure, at },
        None => Request::Procedure(procedure),
    })
}

pub(super) const SCHEDULE: OptionSpec = OptionSpec {
    name: "name",
    kind: OptionKind::Schedule,
    required: true,
    summary: "the schedule, e.g. nightly-prune (/schedule list)",
};

pub(super) fn schedule(args: &Args<'_>) -> Result<ScheduleName, ParseError> {
    args.required("name", ScheduleName::parse)
}

pub(super) const RUNBOOK: OptionSpec = OptionSpec {
    name: "name",
    kind: OptionKind::Runbook,
    required: true,
    summary: "the runbook, e.g. nested-virt (/runbook list)",
};

/// A runbook's name as typed; whether such a runbook is loaded, only the running bot knows.
pub(super) fn runbook_name(value: &str) -> Result<String, NameError> {
    RunbookName::parse(value).map(|name| name.to_string())
}

pub(super) fn cloud(args: &Args<'_>) -> Result<CloudName, ParseError> {
    args.required("cloud", CloudName::parse)
}

pub(super) fn host(args: &Args<'_>) -> Result<HostName, ParseError> {
    args.required("host", HostName::parse)
}

/// The image properties given, at least one.
pub(super) fn properties(args: &Args<'_>) -> Result<PropertySet, ParseError> {
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

pub(super) fn cluster(args: &Args<'_>) -> Result<ClusterName, ParseError> {
    args.required("cluster", ClusterName::parse)
}

pub(super) fn run_id(args: &Args<'_>) -> Result<RunId, ParseError> {
    args.required("id", RunId::parse)
}

pub(super) fn topic(value: &str) -> Result<String, NameError> {
    PersonName::parse(value).map(|word| word.to_string())
}
