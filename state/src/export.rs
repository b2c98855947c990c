//! The export format: one JSON value a line. `opsbot audit export` writes audit entries in it,
//! and compaction archives old runs and audit entries in it, so that one tool reads both.
//! Audit entries name runs, steps and plans as chat does (`r-1`, step 1, the 12-character
//! digest that `/approve` and `opsbot plan` show), so that a line found in the team's log
//! system can be looked up in chat.

use std::io::{self, Write};

use opsbot_commands::audit::AuditEvent;
use opsbot_commands::plan::PlanDigest;
use serde::Serialize;
use serde_json::Value;

/// Writes `value` as one line of the export format.
pub fn write_line(out: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    out.write_all(b"\n")
}

/// An audit event as exported: its stored form with the run as `r-N`, steps numbered from 1
/// and digests at the length chat shows.
pub fn audit_event(event: &AuditEvent) -> serde_json::Result<Value> {
    let mut value = serde_json::to_value(event)?;
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
    #![allow(clippy::unwrap_used)]

    use opsbot_commands::audit::AuditKind;
    use opsbot_commands::name::RunId;
    use time::macros::datetime;

    use super::*;

    #[test]
    fn one_value_is_one_line() {
        let mut out = Vec::new();
        write_line(&mut out, &serde_json::json!({"a": "x\ny"})).unwrap();
        write_line(&mut out, &2).unwrap();
        assert_eq!(out, b"{\"a\":\"x\\ny\"}\n2\n");
    }

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
            audit_event(&requested).unwrap(),
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
        let value = audit_event(&started).unwrap();
        assert_eq!(value["run"], "r-7");
        assert_eq!(value["event"]["step"], 1);
        let resumed = audit_event(&event(7, AuditKind::Resumed { step: Some(4) })).unwrap();
        assert_eq!(resumed["event"]["step"], 5);
    }
}
