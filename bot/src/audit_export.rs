//! `opsbot audit export`: the audit log as JSON lines for the team's log system, naming runs,
//! steps and plans as chat does (`r-1`, step 1, the 12-character digest that `/approve` and
//! `opsbot plan` show), so that a line found in the log system can be looked up in chat.

use anyhow::{Context, bail};
use opsbot_commands::audit::AuditEvent;
use opsbot_commands::name::RunId;
use opsbot_commands::plan::PlanDigest;
use opsbot_state::Store;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

/// Which events to export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filter {
    /// Only events at or after this instant.
    #[serde(with = "time::serde::rfc3339::option")]
    pub since: Option<OffsetDateTime>,
    /// Only this run's events.
    pub run: Option<RunId>,
}

impl Filter {
    fn keeps(&self, event: &AuditEvent) -> bool {
        self.since.is_none_or(|since| event.at >= since)
            && self.run.is_none_or(|run| event.run == Some(run))
    }
}

/// The events `filter` keeps, oldest first, one JSON line each (without its line end). A run
/// that does not exist is an error, not an empty export: a typo must not look like a quiet run.
pub fn lines(store: &Store, filter: Filter) -> anyhow::Result<Vec<String>> {
    if let Some(run) = filter.run {
        if store.run(run)?.is_none() {
            bail!("there is no run {run}; /run list shows the runs there are");
        }
    }
    store
        .audit()?
        .iter()
        .filter(|event| filter.keeps(event))
        .map(|event| {
            serde_json::to_string(&exported(event)?).context("an audit event cannot be written")
        })
        .collect()
}

/// An event as exported: its stored form with the run as `r-N`, steps numbered from 1 and
/// digests at the length chat shows.
fn exported(event: &AuditEvent) -> anyhow::Result<Value> {
    let mut value = serde_json::to_value(event).context("an audit event cannot be written")?;
    if let Some(run) = event.run {
        value["run"] = Value::String(run.to_string());
    }
    if let Some(kind) = value.get_mut("event").and_then(Value::as_object_mut) {
        if let Some(step) = kind.get("step").and_then(Value::as_u64) {
            kind.insert("step".to_owned(), Value::from(step + 1));
        }
        if let Some(Value::String(digest)) = kind.get_mut("digest") {
            digest.truncate(PlanDigest::SHORT.min(digest.len()));
        }
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use opsbot_commands::audit::AuditKind;
    use time::macros::datetime;

    use super::*;

    fn event(run: u64, kind: AuditKind) -> AuditEvent {
        AuditEvent {
            at: datetime!(2026-11-21 03:00 UTC),
            run: Some(RunId::new(run)),
            actor: None,
            event: kind,
        }
    }

    #[test]
    fn runs_steps_and_digests_are_named_as_chat_names_them() {
        let requested = event(
            1,
            AuditKind::RunRequested {
                command: "/cluster restart cluster:logs".to_owned(),
                digest: "0123456789abcdef".repeat(4),
            },
        );
        assert_eq!(
            exported(&requested).unwrap(),
            serde_json::json!({
                "at": "2026-11-21T03:00:00Z",
                "run": "r-1",
                "actor": null,
                "event": {
                    "kind": "run_requested",
                    "command": "/cluster restart cluster:logs",
                    "digest": "0123456789ab"
                }
            })
        );
        let started = event(
            7,
            AuditKind::StepStarted {
                step: 0,
                action: "disable allocation".to_owned(),
            },
        );
        let value = exported(&started).unwrap();
        assert_eq!(value["run"], "r-7");
        assert_eq!(value["event"]["step"], 1);
        let resumed = exported(&event(7, AuditKind::Resumed { step: Some(4) })).unwrap();
        assert_eq!(resumed["event"]["step"], 5);
    }
}
