//! Cloud texts: a hypervisor's allocations, the compute services, and what a cloud run that
//! stopped early leaves behind.

use time::OffsetDateTime;

use super::{duration, fit, plan::step_label};
use crate::name::CloudName;
use crate::openstack::compute::{ComputeService, ServiceState, ServiceStatus};
use crate::planner::{Holder, StaleFacts};
use crate::run::{Run, StepState};

/// `/placement allocations`: the provider, then one line per consumer and who holds it: an
/// instance, a migration in progress, or nobody the compute API knows (stale).
pub fn allocations(facts: &StaleFacts) -> String {
    let allocations = &facts.allocations;
    let provider = &allocations.provider;
    let mut lines = vec![format!(
        "provider `{}` {} · generation {} · {} consumer(s)",
        provider.name,
        provider.uuid,
        allocations.generation,
        allocations.consumers.len()
    )];
    for (consumer, resources) in &allocations.consumers {
        let holder = match facts.holder(consumer) {
            Holder::Instance { name, status } => format!(" · `{name}` {status}"),
            Holder::Migration(migration) => format!(" · migration in progress: {migration}"),
            Holder::TypedMigration => {
                " · migration in progress (consumer type MIGRATION; Nova lists none)".to_owned()
            }
            Holder::Stale => " · ⚠ not in the compute database (stale)".to_owned(),
            Holder::Unknown => String::new(),
        };
        lines.push(format!("{consumer} {resources}{holder}"));
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
    for (step, state) in run.planned_steps() {
        if step.is_wait() || step.is_gate() {
            continue;
        }
        let label = step_label(step);
        match state {
            StepState::Done { .. } => done.push(label),
            StepState::Pending => pending.push(label),
            // A step a cancel stopped says what it left (a failed one says so in the run's error).
            StepState::Failed { error, .. } if run.cancel.is_some() => {
                partial.push(format!("{label}\n{error}"));
            }
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
    said.push(format!("to finish, ask again: {}", run.plan().request()));
    said.join("\n")
}
