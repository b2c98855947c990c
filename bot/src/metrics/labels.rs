//! The label sets of opsbot's metrics. Every value comes from a closed set (procedures, states,
//! reasons, fault kinds) or from the config (targets, channels), so no series is created by
//! what a user types.

use std::collections::BTreeMap;

use opsbot_commands::run::Run;
use prometheus_client::encoding::EncodeLabelSet;

/// A procedure, as the catalogue names it: `cluster restart`, `indices prune`, `runbook run`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub(super) struct ProcedureLabels {
    procedure: String,
}

impl ProcedureLabels {
    pub(super) fn of(run: &Run) -> Self {
        Self {
            procedure: procedure(run),
        }
    }
}

/// A run's procedure and state, in the words of `/run list`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub(super) struct RunLabels {
    procedure: String,
    state: &'static str,
}

impl RunLabels {
    pub(super) fn of(run: &Run) -> Self {
        Self {
            procedure: procedure(run),
            state: run.state.label(),
        }
    }
}

fn procedure(run: &Run) -> String {
    match run.plan().request().path() {
        (group, Some(command)) => format!("{group} {command}"),
        (group, None) => group.to_owned(),
    }
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct DecisionLabels {
    pub(super) decision: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct RefusalLabels {
    pub(super) reason: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct BackendLabels {
    pub(super) target: String,
    pub(super) service: &'static str,
    pub(super) fault: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct LaneLabels {
    pub(super) lane: String,
}

/// The instance holding the store's lease (its host and process).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct HolderLabels {
    pub(super) holder: String,
}

/// How many times each label set occurs, in a stable order.
pub(super) fn count<L: Ord>(labels: impl IntoIterator<Item = L>) -> Vec<(L, i64)> {
    let mut counts = BTreeMap::new();
    for label in labels {
        *counts.entry(label).or_insert(0) += 1;
    }
    counts.into_iter().collect()
}
