//! Cloud texts: a hypervisor's allocations, the compute services, and what a cloud run that
//! stopped early leaves behind.

use std::collections::BTreeMap;

use time::OffsetDateTime;

use super::{duration, fit, plan::step_label};
use crate::name::CloudName;
use crate::openstack::compute::{ComputeService, Instance, ServiceState, ServiceStatus};
use crate::openstack::ids::ConsumerId;
use crate::openstack::placement::ProviderAllocations;
use crate::plan::Action;
use crate::run::{Run, StepState};

/// `/placement allocations`: the provider, then one line per consumer; when the compute API
/// was asked too, whether each instance exists.
pub fn allocations(
    allocations: &ProviderAllocations,
    instances: &BTreeMap<ConsumerId, Instance>,
) -> String {
    let provider = &allocations.provider;
    let mut lines = vec![format!(
        "provider `{}` {} · generation {} · {} consumer(s)",
        provider.name,
        provider.uuid,
        allocations.generation,
        allocations.consumers.len()
    )];
    for (consumer, resources) in &allocations.consumers {
        let instance = match instances.get(consumer) {
            Some(Instance::Exists { name, status }) => format!(" · `{name}` {status}"),
            Some(Instance::Gone) => " · ⚠ not in the compute database (stale)".to_owned(),
            None => String::new(),
        };
        lines.push(format!("{consumer} {resources}{instance}"));
    }
    fit(&lines.join("\n"))
}

/// `/compute services`: disabled and down services first, each marked.
pub fn services(cloud: &CloudName, services: &[ComputeService], now: OffsetDateTime) -> String {
    if services.is_empty() {
        return format!("cloud `{cloud}` lists no compute services");
    }
    let mut sorted: Vec<&ComputeService> = services.iter().collect();
    sorted.sort_by_key(|s| {
        (
            s.state == ServiceState::Up,
            s.status == ServiceStatus::Enabled,
            s.binary.clone(),
            s.host.clone(),
        )
    });
    let (down, disabled) = (
        services
            .iter()
            .filter(|s| s.state == ServiceState::Down)
            .count(),
        services
            .iter()
            .filter(|s| s.status == ServiceStatus::Disabled)
            .count(),
    );
    let mut lines = vec![format!(
        "cloud `{cloud}`: {} compute services · {down} down · {disabled} disabled",
        services.len()
    )];
    for s in sorted {
        let mark = match (s.status, s.state) {
            (ServiceStatus::Enabled, ServiceState::Up) => "  ",
            (_, ServiceState::Down) => "🔴",
            (ServiceStatus::Disabled, ServiceState::Up) => "🟡",
        };
        let updated = s.updated_at.map_or_else(
            || "never reported".to_owned(),
            |at| format!("updated {} ago", duration(now - at)),
        );
        let reason = s
            .disabled_reason
            .as_deref()
            .map(|r| format!(" · reason: {r}"))
            .unwrap_or_default();
        lines.push(format!(
            "{mark} {} {} · {} · {} · zone {} · {updated}{reason}",
            s.binary, s.host, s.status, s.state, s.zone
        ));
    }
    fit(&lines.join("\n"))
}

/// What a cloud run that stopped early did, did not do, and may have half-done.
pub(super) fn aftermath(run: &Run) -> String {
    let (mut done, mut pending, mut partial) = (Vec::new(), Vec::new(), Vec::new());
    for (action, state) in run.plan.steps.iter().zip(&run.steps) {
        if matches!(action, Action::Wait(_) | Action::Gate { .. }) {
            continue;
        }
        let label = step_label(action);
        match state {
            StepState::Done { .. } => done.push(label),
            StepState::Pending => pending.push(label),
            _ => partial.push(label),
        }
    }
    let mut said = Vec::new();
    if !done.is_empty() {
        said.push(format!("done: {}", done.join("; ")));
    }
    if !partial.is_empty() {
        said.push(format!("may be half-way: {}", partial.join("; ")));
    }
    if !pending.is_empty() {
        said.push(format!("not done: {}", pending.join("; ")));
    }
    if said.is_empty() {
        return "nothing was changed".to_owned();
    }
    said.push(format!("to finish, ask again: {}", run.plan.request));
    said.join("\n")
}
