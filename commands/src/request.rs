//! What an operator asked for, once parsed: one closed enum, dispatched by one exhaustive `match`.

use std::fmt;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::audit::Since;
use crate::index::{IndexName, IndexPattern};
use crate::name::{CloudName, ClusterName, HostName, NodeAddr, Notice, PersonName, Reason, RunId};
use crate::openstack::ids::{ConsumerId, ImageRef};
use crate::openstack::image::PropertySet;
use crate::openstack::rpc::VersionCapError;
use crate::page::Page;
use crate::plan::DigestPrefix;
use crate::retention::RetentionDays;
use crate::runbook::RunbookRequest;
use crate::schedule::ScheduleRequest;
use crate::target::Target;

/// A parsed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Starts a procedure run.
    Procedure(ProcedureRequest),
    /// Books a procedure run for `at`: planned and approved now, started then.
    Book {
        procedure: ProcedureRequest,
        at: OffsetDateTime,
    },
    /// `/cluster status`: read-only look at a cluster.
    ClusterStatus { cluster: ClusterName },
    /// `/indices list`: the indices of a cluster, optionally those matching a pattern.
    IndicesList {
        cluster: ClusterName,
        pattern: Option<IndexPattern>,
    },
    /// `/placement allocations`: a hypervisor's provider and its allocations per consumer.
    PlacementAllocations { cloud: CloudName, host: HostName },
    /// `/compute services`: the compute services, disabled and down ones first.
    ComputeServices { cloud: CloudName },
    /// `/runbook list`: the loaded runbooks.
    RunbookList,
    /// `/runbook show`: one runbook's parameters and steps.
    RunbookShow { name: String },
    /// `/runbook run`: a runbook with its parameters' values as typed; they are checked against
    /// the runbook, which only the running bot knows.
    RunbookRun {
        name: String,
        params: Vec<(String, String)>,
        at: Option<OffsetDateTime>,
    },
    /// `/run status`: one run in detail.
    RunStatus { id: RunId },
    /// `/run log`: a page of the output a run's commands printed, counted from the end, of the
    /// lines containing `grep` if given.
    RunLog {
        id: RunId,
        page: Page,
        grep: Option<String>,
    },
    /// `/run list`: runs that are active or finished recently.
    RunList { page: Page },
    /// `/run cancel`: stop a run at its next safe point.
    RunCancel { id: RunId },
    /// `/run done`: an operator confirms a manual step.
    RunDone { id: RunId },
    /// `/run confirm`: the requester confirms their plan with this digest (the `confirm`
    /// policy).
    RunConfirm { id: RunId, digest: DigestPrefix },
    /// `/approve`: a second operator approves the destructive plan with this digest; without
    /// one, the plan and its digest are shown, so that what is approved is what was seen.
    Approve {
        id: RunId,
        digest: Option<DigestPrefix>,
    },
    /// `/reject`: a second operator refuses a destructive plan.
    Reject { id: RunId, reason: Reason },
    /// `/audit`: the audit trail, of one run or since a time (default: the last 24 hours).
    Audit {
        run: Option<RunId>,
        since: Option<Since>,
        page: Page,
    },
    /// `/maintenance announce`: the operators' own announcement.
    MaintenanceAnnounce { text: Notice },
    /// `/maintenance end`: the announced maintenance is over.
    MaintenanceEnd,
    /// `/maintenance status`: what is announced and which maintenance runs are under way.
    MaintenanceStatus,
    /// `/help`: the catalogue, or one group of it.
    Help { topic: Option<String> },
    /// `/as`: the demo's console speaks as another of its people.
    ActAs { user: PersonName },
    /// `/schedule ...`.
    Schedule(ScheduleRequest),
}

impl Request {
    /// The command's group and subcommand in the catalogue: `("cluster", Some("status"))`.
    pub fn path(&self) -> (&'static str, Option<&'static str>) {
        match self {
            Self::Procedure(procedure) | Self::Book { procedure, .. } => procedure.path(),
            Self::ClusterStatus { .. } => ("cluster", Some("status")),
            Self::IndicesList { .. } => ("indices", Some("list")),
            Self::PlacementAllocations { .. } => ("placement", Some("allocations")),
            Self::ComputeServices { .. } => ("compute", Some("services")),
            Self::RunbookList => ("runbook", Some("list")),
            Self::RunbookShow { .. } => ("runbook", Some("show")),
            Self::RunbookRun { .. } => ("runbook", Some("run")),
            Self::RunStatus { .. } => ("run", Some("status")),
            Self::RunLog { .. } => ("run", Some("log")),
            Self::RunList { .. } => ("run", Some("list")),
            Self::RunCancel { .. } => ("run", Some("cancel")),
            Self::RunDone { .. } => ("run", Some("done")),
            Self::RunConfirm { .. } => ("run", Some("confirm")),
            Self::Approve { .. } => ("approve", None),
            Self::Reject { .. } => ("reject", None),
            Self::Audit { .. } => ("audit", None),
            Self::MaintenanceAnnounce { .. } => ("maintenance", Some("announce")),
            Self::MaintenanceEnd => ("maintenance", Some("end")),
            Self::MaintenanceStatus => ("maintenance", Some("status")),
            Self::Help { .. } => ("help", None),
            Self::ActAs { .. } => ("as", None),
            Self::Schedule(request) => ("schedule", Some(request.sub())),
        }
    }

    /// Who may ask for it: the catalogue's word on its command.
    pub fn who(&self) -> crate::catalogue::Who {
        let (group, sub) = self.path();
        crate::parse::command_by_path(group, sub)
            .map_or(crate::catalogue::Who::Operators, |c| c.who)
    }

    /// What was asked, in a few words, for the audit record of a refusal: the procedure's
    /// command line, or the command and what it names.
    pub fn summary(&self) -> String {
        match self {
            Self::Procedure(procedure) => return procedure.to_string(),
            Self::Book { procedure, at } => {
                return format!("{procedure} at:{}", crate::render::utc(*at));
            }
            _ => {}
        }
        let (group, sub) = self.path();
        let named = match self {
            Self::ClusterStatus { cluster } | Self::IndicesList { cluster, .. } => {
                format!(" cluster:{cluster}")
            }
            Self::PlacementAllocations { cloud, host } => format!(" cloud:{cloud} host:{host}"),
            Self::ComputeServices { cloud } => format!(" cloud:{cloud}"),
            Self::RunbookShow { name } | Self::RunbookRun { name, .. } => {
                format!(" name:{}", crate::echo::visible(name, 64))
            }
            Self::RunStatus { id }
            | Self::RunLog { id, .. }
            | Self::RunCancel { id }
            | Self::RunDone { id }
            | Self::RunConfirm { id, .. }
            | Self::Approve { id, .. }
            | Self::Reject { id, .. } => format!(" id:{id}"),
            Self::ActAs { user } => format!(" user:{user}"),
            Self::Schedule(request) => request
                .name()
                .map(|name| format!(" name:{name}"))
                .unwrap_or_default(),
            Self::Procedure(_)
            | Self::Book { .. }
            | Self::RunbookList
            | Self::RunList { .. }
            | Self::Audit { .. }
            | Self::MaintenanceAnnounce { .. }
            | Self::MaintenanceEnd
            | Self::MaintenanceStatus
            | Self::Help { .. } => String::new(),
        };
        match sub {
            Some(sub) => format!("/{group} {sub}{named}"),
            None => format!("/{group}{named}"),
        }
    }

    /// The run the request acts on, if it names one.
    pub fn run(&self) -> Option<RunId> {
        match self {
            Self::RunStatus { id }
            | Self::RunLog { id, .. }
            | Self::RunCancel { id }
            | Self::RunDone { id }
            | Self::RunConfirm { id, .. }
            | Self::Approve { id, .. }
            | Self::Reject { id, .. } => Some(*id),
            Self::Audit { run, .. } => *run,
            Self::Procedure(_)
            | Self::Book { .. }
            | Self::ClusterStatus { .. }
            | Self::IndicesList { .. }
            | Self::PlacementAllocations { .. }
            | Self::ComputeServices { .. }
            | Self::RunbookList
            | Self::RunbookShow { .. }
            | Self::RunbookRun { .. }
            | Self::RunList { .. }
            | Self::MaintenanceAnnounce { .. }
            | Self::MaintenanceEnd
            | Self::MaintenanceStatus
            | Self::Help { .. }
            | Self::ActAs { .. }
            | Self::Schedule(_) => None,
        }
    }
}

/// A request that becomes a durable procedure run. Its canonical text is part of the plan digest.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "procedure", rename_all = "snake_case")]
pub enum ProcedureRequest {
    /// Spec 3.1 "Stop the cluster".
    ClusterStop { cluster: ClusterName },
    /// Spec 3.1 "Start the cluster".
    ClusterStart { cluster: ClusterName },
    /// Stop then start, as one run.
    ClusterRestart { cluster: ClusterName },
    /// Spec 3.1 "Remove a node": drain it, stop it, take it out of the deployment, under approval.
    ClusterRemoveNode {
        cluster: ClusterName,
        node: NodeAddr,
    },
    /// Index retention: delete the indices older than `older_than` days (of those starting
    /// with `prefix`, of every index without one), under approval.
    IndicesPrune {
        cluster: ClusterName,
        older_than: RetentionDays,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prefix: Option<IndexName>,
    },
    /// Delete one index, under approval.
    IndicesDelete {
        cluster: ClusterName,
        index: IndexName,
    },
    /// Spec 4.2 and 7: delete a hypervisor's allocations whose instance is gone from the compute
    /// database (all of them, or the one named), under approval.
    PlacementStale {
        cloud: CloudName,
        host: HostName,
        instance: Option<ConsumerId>,
    },
    /// Spec 7 RPCVersionCapError: delete the old disabled compute services that hold the cap
    /// down (under approval), then restart the compute containers.
    ComputeRpcCap {
        cloud: CloudName,
        error: Option<VersionCapError>,
    },
    /// Spec 2.10: set image properties with the image API's JSON patch.
    ImageProperties {
        cloud: CloudName,
        image: ImageRef,
        properties: PropertySet,
    },
    /// An operator's runbook, with its parameters' values.
    Runbook(RunbookRequest),
}

impl ProcedureRequest {
    /// The command's group and subcommand in the catalogue.
    pub fn path(&self) -> (&'static str, Option<&'static str>) {
        match self {
            Self::ClusterStop { .. } => ("cluster", Some("stop")),
            Self::ClusterStart { .. } => ("cluster", Some("start")),
            Self::ClusterRestart { .. } => ("cluster", Some("restart")),
            Self::ClusterRemoveNode { .. } => ("cluster", Some("remove-node")),
            Self::IndicesPrune { .. } => ("indices", Some("prune")),
            Self::IndicesDelete { .. } => ("indices", Some("delete")),
            Self::PlacementStale { .. } => ("placement", Some("stale")),
            Self::ComputeRpcCap { .. } => ("compute", Some("rpc-cap")),
            Self::ImageProperties { .. } => ("image", Some("properties")),
            Self::Runbook(_) => ("runbook", Some("run")),
        }
    }

    /// What the run works on; it holds that target's lock for its whole life.
    pub fn target(&self) -> Target {
        match self {
            Self::ClusterStop { cluster }
            | Self::ClusterStart { cluster }
            | Self::ClusterRestart { cluster }
            | Self::ClusterRemoveNode { cluster, .. }
            | Self::IndicesPrune { cluster, .. }
            | Self::IndicesDelete { cluster, .. } => Target::Cluster(cluster.clone()),
            Self::PlacementStale { cloud, .. }
            | Self::ComputeRpcCap { cloud, .. }
            | Self::ImageProperties { cloud, .. } => Target::Cloud(cloud.clone()),
            Self::Runbook(runbook) => Target::Hosts(runbook.hosts.clone()),
        }
    }

    /// Maintenance procedures are announced; read-mostly ones would not be.
    pub fn is_maintenance(&self) -> bool {
        match self {
            Self::ClusterStop { .. }
            | Self::ClusterStart { .. }
            | Self::ClusterRestart { .. }
            | Self::ClusterRemoveNode { .. }
            | Self::ComputeRpcCap { .. } => true,
            Self::IndicesPrune { .. }
            | Self::IndicesDelete { .. }
            | Self::PlacementStale { .. }
            | Self::ImageProperties { .. } => false,
            Self::Runbook(runbook) => runbook.maintenance,
        }
    }
}

/// The canonical command line, e.g. `/cluster stop cluster:logs`.
impl fmt::Display for ProcedureRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ClusterStop { cluster } => write!(f, "/cluster stop cluster:{cluster}"),
            Self::ClusterStart { cluster } => write!(f, "/cluster start cluster:{cluster}"),
            Self::ClusterRestart { cluster } => write!(f, "/cluster restart cluster:{cluster}"),
            Self::ClusterRemoveNode { cluster, node } => {
                write!(f, "/cluster remove-node cluster:{cluster} node:{node}")
            }
            Self::IndicesPrune {
                cluster,
                older_than,
                prefix,
            } => {
                write!(
                    f,
                    "/indices prune cluster:{cluster} older_than_days:{older_than}"
                )?;
                match prefix {
                    Some(prefix) => write!(f, " prefix:{prefix}"),
                    None => Ok(()),
                }
            }
            Self::IndicesDelete { cluster, index } => {
                write!(f, "/indices delete cluster:{cluster} index:{index}")
            }
            Self::PlacementStale {
                cloud,
                host,
                instance,
            } => {
                write!(f, "/placement stale cloud:{cloud} host:{host}")?;
                match instance {
                    Some(instance) => write!(f, " instance:{instance}"),
                    None => Ok(()),
                }
            }
            Self::ComputeRpcCap { cloud, error } => {
                write!(f, "/compute rpc-cap cloud:{cloud}")?;
                match error {
                    // Words the parser reads back, so the line can be typed again as shown.
                    Some(e) => write!(
                        f,
                        " error:\"requested message version {} ... version cap {}\"",
                        e.requested, e.cap
                    ),
                    None => Ok(()),
                }
            }
            Self::ImageProperties {
                cloud,
                image,
                properties,
            } => {
                let image = image.to_string();
                if image.contains(' ') {
                    write!(
                        f,
                        "/image properties cloud:{cloud} image:\"{image}\" {properties}"
                    )
                } else {
                    write!(
                        f,
                        "/image properties cloud:{cloud} image:{image} {properties}"
                    )
                }
            }
            Self::Runbook(runbook) => runbook.fmt(f),
        }
    }
}
