//! The RPC version cap (spec 7): delete the old disabled compute services that keep the cap
//! down, then restart the compute containers so that each chooses its cap again: under
//! approval (a restart interrupts the hypervisor's compute service), one hypervisor at a time,
//! the next only once the previous one's `nova-compute` reports up again. A hypervisor with a
//! migration in progress at either end is left for a later run: restarting its `nova-compute`
//! would break the migration (see [`Migration::broken_by_restart`]).

use std::collections::BTreeMap;

use crate::name::{CloudName, HostName};
use crate::openstack::compute::{ComputeService, InFlight, Migration, ServiceState, ServiceStatus};
use crate::openstack::rpc::VersionCapError;
use crate::plan::{CloudDestructive, CloudSafe, CloudStep, CloudWait, Plan};
use crate::planner::PlanError;
use crate::request::ProcedureRequest;

/// Every compute service record, as `GET /os-services` lists them, and the migrations at each
/// hypervisor a restart is planned for.
#[derive(Debug, Clone)]
pub struct RpcCapFacts {
    pub services: Vec<ComputeService>,
    /// Nova's migrations with the host at either end (`GET /os-migrations?host=`), for every
    /// host of [`restart_candidates`]; a candidate missing here was not asked about.
    pub migrations: BTreeMap<HostName, Vec<Migration>>,
}

/// The compute services whose hypervisors the fix restarts: enabled and up (a disabled one may
/// be under maintenance; a down one could not report back).
pub fn restart_candidates(services: &[ComputeService]) -> impl Iterator<Item = &ComputeService> {
    services.iter().filter(|s| {
        s.is_compute() && s.status == ServiceStatus::Enabled && s.state == ServiceState::Up
    })
}

pub(super) fn rpc_cap(
    request: &ProcedureRequest,
    cloud: &CloudName,
    error: Option<&VersionCapError>,
    facts: &RpcCapFacts,
) -> Result<Plan, PlanError> {
    let computes: Vec<&ComputeService> = facts.services.iter().filter(|s| s.is_compute()).collect();
    let stale: Vec<&&ComputeService> = computes
        .iter()
        .filter(|s| s.is_stale_registration())
        .collect();
    let running: Vec<&ComputeService> = restart_candidates(&facts.services).collect();
    if running.is_empty() {
        return Err(PlanError::NoComputeUp {
            cloud: cloud.clone(),
        });
    }
    let mut notes = Vec::new();
    if let Some(error) = error {
        notes.push(error.explanation());
    }
    notes.push(if stale.is_empty() {
        "no disabled compute service is down: every registered record is live, so the fix is \
         spec 7 (2): restart the compute containers so they choose the cap again"
            .to_owned()
    } else {
        format!(
            "{} old disabled compute service(s) still registered: {}; deleting them lets the cap \
             rise to the oldest live release",
            stale.len(),
            stale
                .iter()
                .map(|s| s.host.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    });
    for service in computes
        .iter()
        .filter(|s| s.status == ServiceStatus::Disabled && s.state == ServiceState::Up)
    {
        notes.push(format!(
            "kept {} on {}: disabled but up (a host under maintenance?); if it runs an old \
             release, upgrade it: compute services may differ by one release, not more",
            service.binary, service.host
        ));
    }
    let mut restarted = Vec::new();
    for service in running {
        let migrations = facts
            .migrations
            .get(&service.host)
            .ok_or(PlanError::FactsMismatch {
                needed: super::FactsKind::RpcCap,
            })?;
        match InFlight::among(migrations) {
            None => restarted.push(&service.host),
            Some(in_flight) => notes.push(format!(
                "{} is not restarted: {in_flight}; run /compute rpc-cap cloud:{cloud} again \
                 once {} finished",
                service.host,
                in_flight.have()
            )),
        }
    }
    if restarted.is_empty() && stale.is_empty() {
        notes.push(
            "nothing to do: every hypervisor that would be restarted has a migration in \
             progress"
                .to_owned(),
        );
        return Ok(Plan::new(request.clone(), Vec::<CloudStep>::new(), notes)?);
    }
    notes.push(
        "upgrade order (spec 7): hypervisors first, then controllers; restarted computes keep \
         the old version until the controllers are upgraded"
            .to_owned(),
    );
    let deletions = stale.iter().map(|s| {
        CloudStep::Destructive(CloudDestructive::DeleteComputeService {
            id: s.id,
            host: s.host.clone(),
        })
    });
    let restarts = restarted.iter().flat_map(|host| {
        [
            CloudStep::Safe(CloudSafe::RestartCompute {
                host: (*host).clone(),
            }),
            CloudStep::Wait(CloudWait::ComputeUp {
                host: (*host).clone(),
            }),
        ]
    });
    let reason = if restarted.is_empty() {
        "deleting compute service records cannot be undone; no hypervisor is restarted this \
         time: each has a migration in progress"
            .to_owned()
    } else {
        format!(
            "restarting nova_compute interrupts each hypervisor's compute service: {} \
             hypervisor(s), one at a time, each after the one before reports up again",
            restarted.len()
        )
    };
    let gate = CloudStep::Gate { reason };
    Ok(Plan::new(
        request.clone(),
        std::iter::once(gate)
            .chain(deletions)
            .chain(restarts)
            .collect::<Vec<_>>(),
        notes,
    )?)
}
