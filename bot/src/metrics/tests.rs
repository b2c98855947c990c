#![allow(clippy::unwrap_used)] // Test code: a failed unwrap is a failed test.

use std::sync::Arc;

use opsbot_commands::audit::AuditKind;
use opsbot_commands::cluster::Observation;
use opsbot_commands::maintenance::Announcement;
use opsbot_commands::name::{ClusterName, PersonName, RunId};
use opsbot_commands::people::{PersonRef, Surface};
use opsbot_commands::plan::{ClusterSafe, ClusterStep, Plan};
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::run::{ChannelId, Outcome, Run};
use opsbot_state::Store;
use time::OffsetDateTime;

use super::{Backlog, Metrics};
use crate::backend::Fault;
use crate::progress::ProgressSink;
use crate::refusal::Refusal;
use crate::tenure::Role;

/// A sink with runs waiting in one channel.
struct Waiting;

impl ProgressSink for Waiting {
    fn changed(&self, _: &Run) {}
    fn observe(&self, _: &Run, _: Observation) {}
    fn observed(&self, _: &Run) -> Option<Observation> {
        None
    }
    fn announce(&self, _: Announcement, _: ChannelId) {}
}

impl Backlog for Waiting {
    fn backlog(&self) -> Vec<(String, usize)> {
        vec![("900".to_owned(), 3), ("announcements".to_owned(), 1)]
    }
}

fn metrics() -> (tempfile::TempDir, Metrics) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    (
        dir,
        Metrics::new(store, Arc::new(Waiting), Default::default()),
    )
}

/// The scrape, with the store's size (which sled decides) left out and each family's samples
/// sorted (a family keeps them in a hash map).
fn scrape(metrics: &Metrics) -> String {
    let text = metrics.encode().unwrap();
    let mut lines: Vec<String> = Vec::new();
    let mut samples: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(size) = line.strip_prefix("opsbot_store_size_bytes ") {
            assert!(size.parse::<u64>().unwrap() > 0, "{text}");
            samples.push("opsbot_store_size_bytes <size>".to_owned());
        } else if line.starts_with('#') {
            samples.sort();
            lines.append(&mut samples);
            lines.push(line.to_owned());
        } else {
            samples.push(line.to_owned());
        }
    }
    lines.join("\n")
}

fn restart(outcome: Outcome) -> Run {
    let plan = Plan::new(
        ProcedureRequest::ClusterRestart {
            cluster: ClusterName::parse("logs").unwrap(),
        },
        vec![ClusterStep::Safe(ClusterSafe::DisableAllocation)],
        vec![],
    )
    .unwrap();
    let requester = PersonRef {
        name: PersonName::parse("alice").unwrap(),
        via: Surface::Demo,
    };
    let now = OffsetDateTime::now_utc();
    let mut run = Run::new(
        RunId::new(1),
        plan,
        requester,
        ChannelId("900".into()),
        now,
        time::Duration::minutes(30),
    );
    run.finish(outcome, now);
    run
}

#[test]
fn a_scrape_shows_what_was_counted_and_what_waits_now() {
    let (_dir, metrics) = metrics();
    let errors = metrics.backend_errors();
    errors.count("logs", "search", Fault::Timeout.kind());
    errors.count("logs", "search", Fault::Timeout.kind());
    let unavailable = Fault::Status {
        status: 503,
        reason: String::new(),
    };
    errors.count("prod", "placement", unavailable.kind());
    metrics.refused(Refusal::NotOperator.kind());
    let runs = metrics.runs();
    let succeeded = restart(Outcome::Succeeded);
    runs.created(&succeeded);
    let finished = AuditKind::RunFinished {
        state: "succeeded".into(),
    };
    runs.recorded(&succeeded, std::slice::from_ref(&finished));
    // An expired plan is a decision too (nobody made one in time).
    let expired = restart(Outcome::Expired);
    runs.recorded(&expired, &[finished]);
    // Events that decide nothing and end nothing count nothing.
    runs.recorded(&succeeded, &[AuditKind::CancelRequested]);
    insta::assert_snapshot!(scrape(&metrics));
}

/// An instance woken from a pause after its lease lapsed is not active, whatever it last knew:
/// another may hold the lease at a newer epoch by now.
#[test]
fn health_says_active_only_within_the_tenure() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    let tenure = crate::tenure::Tenure::default();
    let metrics = Metrics::new(store, Arc::new(Waiting), tenure.clone());
    let until = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    tenure.set(Role::Active {
        holder: "a".into(),
        epoch: 3,
        until,
    });
    assert_eq!(metrics.health(), Ok("active (a at epoch 3)".to_owned()));
    tenure.set(Role::Active {
        holder: "a".into(),
        epoch: 3,
        until: tokio::time::Instant::now(),
    });
    assert_eq!(
        metrics.health(),
        Err(
            "not active: the lease of epoch 3 was not renewed in time; it acts again only once \
             it holds the lease"
                .to_owned()
        )
    );
}
