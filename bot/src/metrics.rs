//! What a running bot tells Prometheus, on `[metrics] listen`: runs by procedure and state,
//! approvals, refusals, backend errors by target, the progress backlog and the store's size;
//! and `/healthz` (see [`endpoint`]).
//!
//! Counters are counted where the fact is decided (a run's transition as the store records
//! it, a refusal as it is answered, a backend fault as it is classified); what is true right
//! now (unfinished runs, backlog, store size) is read at each scrape, so it can never drift
//! from the store.

mod endpoint;
mod labels;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use opsbot_commands::audit::AuditKind;
use opsbot_commands::run::{Outcome, Run};
use opsbot_state::Store;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use crate::tenure::{Role, Tenure};
pub use endpoint::serve;
use labels::{
    BackendLabels, DecisionLabels, HolderLabels, LaneLabels, ProcedureLabels, RefusalLabels,
    RunLabels,
};

/// What waits to reach the chat, read at each scrape: runs to publish by channel, and
/// announcements to send (as `announcements`). A sink that never waits has nothing.
pub trait Backlog: Send + Sync {
    fn backlog(&self) -> Vec<(String, usize)> {
        Vec::new()
    }
}

/// The bot's metrics: cheap to clone, every clone counting into the same registry.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    store: Store,
    tenure: Tenure,
    runs: RunMetrics,
    refusals: Family<RefusalLabels, Counter>,
    backend_errors: BackendErrors,
    /// Parts of the bot unavailable now (a chat platform out of reach), and why.
    outages: Arc<Mutex<BTreeMap<&'static str, String>>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// The metrics of a bot on `store`, whose progress waits in `progress`.
    pub fn new(store: Store, progress: Arc<dyn Backlog>, tenure: Tenure) -> Self {
        let mut registry = Registry::default();
        let runs = RunMetrics::default();
        let refusals = Family::default();
        let backend_errors = BackendErrors::default();
        registry.register(
            "opsbot_runs_requested",
            "Runs created, by procedure",
            runs.requested.clone(),
        );
        registry.register(
            "opsbot_runs_finished",
            "Runs that ended, by procedure and final state",
            runs.finished.clone(),
        );
        registry.register(
            "opsbot_approval_decisions",
            "Plans decided: approved, rejected, withdrawn by their requester, or expired",
            runs.decisions.clone(),
        );
        registry.register(
            "opsbot_refusals",
            "Requests refused, by reason (who may do what and where, the two-person rule, \
             unknown targets, busy targets)",
            refusals.clone(),
        );
        registry.register(
            "opsbot_backend_errors",
            "Failed requests to clusters and clouds (retried ones included), by target, \
             service and fault",
            backend_errors.0.clone(),
        );
        registry.register_collector(Box::new(Live {
            store: store.clone(),
            progress,
            tenure: tenure.clone(),
        }));
        Self {
            registry: Arc::new(registry),
            store,
            tenure,
            runs,
            refusals,
            backend_errors,
            outages: Arc::default(),
        }
    }

    /// `part` (`discord`) cannot be used now, for `why`: the bot goes on without it, and
    /// `/healthz` says so.
    pub fn unavailable(&self, part: &'static str, why: String) {
        self.outages
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(part, why);
    }

    /// `part` can be used again.
    pub fn available(&self, part: &'static str) {
        self.outages
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(part);
    }

    /// The counters of run transitions, for the store's writes.
    pub fn runs(&self) -> &RunMetrics {
        &self.runs
    }

    /// The counter of backend faults, for the clients.
    pub fn backend_errors(&self) -> &BackendErrors {
        &self.backend_errors
    }

    /// Counts a refusal, by its kind (`not_operator`, `busy`, ...), as it is answered.
    pub fn refused(&self, reason: &'static str) {
        self.refusals.get_or_create(&RefusalLabels { reason }).inc();
    }

    /// The metrics in the OpenMetrics text format. Reads the store (the unfinished runs and
    /// its size): call it off the async threads.
    pub fn encode(&self) -> Result<String, std::fmt::Error> {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)?;
        Ok(text)
    }

    /// Where this instance stands, for `/healthz`: active or standby while the store can be
    /// read; the error says what is wrong (a store that cannot be read, a stepped-down bot, an
    /// active one whose tenure lapsed: woken from a pause while another may have taken over).
    pub fn health(&self) -> Result<String, String> {
        self.store
            .maintenance_notice()
            .map_err(|error| format!("the store cannot be read: {error}"))?;
        let role = self.tenure.role();
        match &role {
            Role::SteppedDown { .. } => Err(role.describe()),
            Role::Active { .. } => role.acting().map(|()| role.describe()).map_err(|why| {
                format!("not active: {why}; it acts again only once it holds the lease")
            }),
            Role::Alone | Role::Standby { .. } => Ok(role.describe()),
        }
        .map(|role| {
            let outages = self.outages.lock().unwrap_or_else(PoisonError::into_inner);
            let unavailable = outages
                .iter()
                .map(|(part, why)| format!("; {part} unavailable ({why}), retrying"));
            std::iter::once(role).chain(unavailable).collect()
        })
    }
}

/// Counters of run transitions, counted from what the store recorded.
#[derive(Debug, Clone, Default)]
pub struct RunMetrics {
    requested: Family<ProcedureLabels, Counter>,
    finished: Family<RunLabels, Counter>,
    decisions: Family<DecisionLabels, Counter>,
}

impl RunMetrics {
    /// `run` was created.
    pub fn created(&self, run: &Run) {
        self.requested
            .get_or_create(&ProcedureLabels::of(run))
            .inc();
    }

    /// The store recorded `events` for `run`, which is now as given.
    pub fn recorded(&self, run: &Run, events: &[AuditKind]) {
        for event in events {
            let decision = match event {
                AuditKind::ApprovalGranted { .. } => Some("approved"),
                AuditKind::Confirmed { .. } => Some("confirmed"),
                AuditKind::Rejected { .. } => Some("rejected"),
                AuditKind::Withdrawn { .. } => Some("withdrawn"),
                AuditKind::RunFinished { .. } if run.outcome() == Some(&Outcome::Expired) => {
                    Some("expired")
                }
                _ => None,
            };
            if let Some(decision) = decision {
                self.decisions
                    .get_or_create(&DecisionLabels { decision })
                    .inc();
            }
            if let AuditKind::RunFinished { .. } = event {
                self.finished.get_or_create(&RunLabels::of(run)).inc();
            }
        }
    }
}

/// Failed requests to clusters and clouds, counted by the clients as each fault is classified.
#[derive(Debug, Clone, Default)]
pub struct BackendErrors(Family<BackendLabels, Counter>);

impl BackendErrors {
    /// Counts a fault of kind `fault` (`timeout`, `status_503`, ...) of `service` (search,
    /// identity, placement, compute, image) of `target` (the cluster's or the cloud's name).
    pub fn count(&self, target: &str, service: &'static str, fault: &'static str) {
        let labels = BackendLabels {
            target: target.to_owned(),
            service,
            fault,
        };
        self.0.get_or_create(&labels).inc();
    }
}

/// What is read at each scrape.
struct Live {
    store: Store,
    progress: Arc<dyn Backlog>,
    tenure: Tenure,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live").finish_non_exhaustive()
    }
}

impl Live {
    fn gauges<L: prometheus_client::encoding::EncodeLabelSet>(
        encoder: &mut DescriptorEncoder,
        name: &str,
        help: &str,
        values: impl IntoIterator<Item = (L, i64)>,
    ) -> Result<(), std::fmt::Error> {
        let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
        for (labels, value) in values {
            ConstGauge::new(value).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}

impl Collector for Live {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        // A store that cannot be read leaves its gauges out (the scrape still succeeds, and
        // `/healthz` says what is wrong) rather than showing a false zero.
        match self.store.unfinished_runs() {
            Ok(runs) => Self::gauges(
                &mut encoder,
                "opsbot_runs",
                "Unfinished runs, by procedure and state.",
                labels::count(runs.iter().map(RunLabels::of)),
            )?,
            Err(error) => tracing::warn!(%error, "metrics: cannot read the unfinished runs"),
        }
        match self.store.size_on_disk() {
            Ok(bytes) => ConstGauge::new(i64::try_from(bytes).unwrap_or(i64::MAX)).encode(
                encoder.encode_descriptor(
                    "opsbot_store_size_bytes",
                    "Bytes the store's files take on disk.",
                    None,
                    MetricType::Gauge,
                )?,
            )?,
            Err(error) => tracing::warn!(%error, "metrics: cannot read the store's size"),
        }
        lease_gauges(&mut encoder, &self.tenure.role())?;
        Self::gauges(
            &mut encoder,
            "opsbot_progress_backlog",
            "Runs waiting to be published, by channel, and announcements waiting to be sent.",
            self.progress.backlog().into_iter().map(|(lane, waiting)| {
                (
                    LaneLabels { lane },
                    i64::try_from(waiting).unwrap_or(i64::MAX),
                )
            }),
        )
    }
}

/// `opsbot_active` (1 on the instance that acts, 0 on a standby) and `opsbot_lease_epoch` of
/// the lease's holder as this instance knows it (absent when alone on a sled store).
fn lease_gauges(encoder: &mut DescriptorEncoder, role: &Role) -> Result<(), std::fmt::Error> {
    let active = i64::from(matches!(role, Role::Alone | Role::Active { .. }));
    ConstGauge::new(active).encode(encoder.encode_descriptor(
        "opsbot_active",
        "1 on the instance that acts (holds the lease, or is alone on a sled store), 0 on a standby.",
        None,
        MetricType::Gauge,
    )?)?;
    let holder = match role {
        Role::Active { holder, epoch, .. } => Some((holder.clone(), *epoch)),
        Role::Standby {
            active: Some(lease),
        } => Some((lease.holder.clone(), lease.epoch)),
        Role::Alone | Role::Standby { active: None } | Role::SteppedDown { .. } => None,
    };
    Live::gauges(
        encoder,
        "opsbot_lease_epoch",
        "The epoch of the store's lease, labelled with the instance that holds it.",
        holder.map(|(holder, epoch)| {
            (
                HolderLabels { holder },
                i64::try_from(epoch).unwrap_or(i64::MAX),
            )
        }),
    )
}

#[cfg(test)]
mod tests;
