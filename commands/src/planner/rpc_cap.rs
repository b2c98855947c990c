//! The RPC version cap (spec 7): delete the old disabled compute services that keep the cap
//! down, then restart the compute containers so that each chooses its cap again: under
//! approval (a restart interrupts the hypervisor's compute service), one hypervisor at a time,
//! the next only once the previous one's `nova-compute` reports up again.

use crate::name::CloudName;
use crate::openstack::compute::{ComputeService, ServiceState, ServiceStatus};
use crate::openstack::rpc::VersionCapError;
use crate::plan::{Action, DestructiveAction, Plan, SafeAction, Wait};
use crate::planner::PlanError;
use crate::request::ProcedureRequest;

/// Every compute service record, as `GET /os-services` lists them.
#[derive(Debug, Clone)]
pub struct RpcCapFacts {
    pub services: Vec<ComputeService>,
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
    let running: Vec<&&ComputeService> = computes
        .iter()
        .filter(|s| s.status == ServiceStatus::Enabled && s.state == ServiceState::Up)
        .collect();
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
    notes.push(
        "upgrade order (spec 7): hypervisors first, then controllers; restarted computes keep \
         the old version until the controllers are upgraded"
            .to_owned(),
    );
    let deletions = stale.iter().map(|s| {
        Action::Destructive(DestructiveAction::DeleteComputeService {
            id: s.id,
            host: s.host.clone(),
        })
    });
    let restarts = running.iter().flat_map(|s| {
        [
            Action::Safe(SafeAction::RestartCompute {
                host: s.host.clone(),
            }),
            Action::Wait(Wait::ComputeUp {
                host: s.host.clone(),
            }),
        ]
    });
    let gate = Action::Gate {
        reason: format!(
            "restarting nova_compute interrupts each hypervisor's compute service: {} \
             hypervisor(s), one at a time, each after the one before reports up again",
            running.len()
        ),
    };
    Ok(Plan {
        request: request.clone(),
        steps: std::iter::once(gate)
            .chain(deletions)
            .chain(restarts)
            .collect(),
        notes,
    })
}
