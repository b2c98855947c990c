//! The client's decoding, against payloads recorded from real servers.

use super::wire::{self, status_fault};
use super::*;
use opsbot_commands::cluster::{CatHealthRow, CatNodeRow, CatRecoveryRow};

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/../tests/fixtures/search/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn health_decodes_from_every_flavour() {
    for name in [
        "cluster_health.es7.green.200.json",
        "cluster_health.os2.green.200.json",
        "cluster_health.es8_recent.node-down.200.json",
        "cluster_health.es7.node-down-allocation-none.200.json",
    ] {
        let raw: wire::Health = serde_json::from_str(&fixture(name)).unwrap();
        let health = raw.into_health().unwrap();
        assert_eq!(health.cluster_name, "kolla_logging", "{name}");
    }
}

#[test]
fn cat_rows_decode() {
    let nodes: Vec<CatNodeRow> =
        serde_json::from_str(&fixture("cat_nodes.es7.format-json.json")).unwrap();
    assert_eq!(nodes.iter().filter(|n| n.master == "*").count(), 1);
    let health: Vec<CatHealthRow> =
        serde_json::from_str(&fixture("cat_health.os2.relocating.format-json.json")).unwrap();
    assert_eq!(health.len(), 1);
    let recovery: Vec<CatRecoveryRow> = serde_json::from_str(&fixture(
        "cat_recovery.es7-os2.rolling-restart.format-json.json",
    ))
    .unwrap();
    assert!(recovery.iter().any(|r| r.kind == "peer"));
}

#[test]
fn flush_bodies_decode_for_synced_and_plain() {
    for name in [
        "flush.es7-os2.200.json",
        "flush_synced.es5-es7.ok.200.json",
        "flush_synced.os2.simulated.200.json",
    ] {
        let raw: wire::ShardsEnvelope = serde_json::from_str(&fixture(name)).unwrap();
        assert_eq!(raw.shards.failed, 0, "{name}");
    }
}

#[test]
fn settings_read_flat_and_tolerate_missing_scopes() {
    let raw: wire::Settings =
        serde_json::from_str(r#"{"persistent":{"cluster.routing.allocation.enable":"none"}}"#)
            .unwrap();
    assert_eq!(raw.persistent.len(), 1);
    assert!(raw.transient.is_empty());
}

#[test]
fn error_answers_are_classified() {
    assert_eq!(
        status_fault(503, &fixture("error.es7.master-not-discovered.503.json")),
        Fault::NoMaster
    );
    assert_eq!(
        status_fault(
            503,
            &fixture("error.os2.cluster-manager-not-discovered.503.json")
        ),
        Fault::NoMaster
    );
    assert_eq!(
        status_fault(400, &fixture("flush_synced.es8.no-handler.400.json")),
        Fault::Status {
            status: 400,
            reason: "no handler found for uri [/_flush/synced] and method [POST]".into()
        }
    );
    assert_eq!(
        status_fault(404, &fixture("delete_index.es7-os2.not-found.404.json")),
        Fault::Status {
            status: 404,
            reason: "index_not_found_exception".into()
        }
    );
    let haproxy = "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n";
    assert_eq!(
        status_fault(503, haproxy),
        Fault::Status {
            status: 503,
            reason: String::new()
        }
    );
    assert!(is_unreachable(&status_fault(503, haproxy)));
    let connect = |cause| {
        Fault::Connect(crate::backend::transport::Unreachable {
            origin: "https://10.0.0.10:9200".into(),
            cause,
        })
    };
    assert!(is_unreachable(&connect(Cause::Refused)));
    assert!(!is_unreachable(&connect(Cause::Tls(
        "unknown issuer".into()
    ))));
}

#[test]
fn security_refusals_keep_the_reason_naming_the_privilege() {
    assert_eq!(
        status_fault(403, &fixture("error.es8.action-unauthorized.403.json")),
        Fault::Status {
            status: 403,
            reason: "action [cluster:monitor/health] is unauthorized for user [opsbot] with \
                     effective roles [logs_reader], this action is granted by the cluster \
                     privileges [monitor,manage,all]"
                .into()
        }
    );
    let missing = r#"{"error":{"type":"security_exception","reason":"missing authentication credentials for REST request [/]"},"status":401}"#;
    assert_eq!(
        status_fault(401, missing).to_string(),
        "answered 401 (missing authentication credentials for REST request [/]; check the \
         cluster's username and password, or its API key)"
    );
}

#[test]
fn an_opensearch_401_in_plain_text_still_says_what_to_check() {
    // The security plugin's answer, with `WWW-Authenticate: Basic realm="OpenSearch Security"`.
    assert_eq!(
        status_fault(401, "Unauthorized\n").to_string(),
        "answered 401 (Unauthorized; check the cluster's username and password, or its API key)"
    );
    assert_eq!(
        status_fault(401, "").to_string(),
        "answered 401 (check the cluster's username and password, or its API key)"
    );
}

#[test]
fn a_refused_delete_of_many_indices_still_names_the_privilege_to_grant() {
    let names: Vec<String> = (1..=60)
        .map(|day| format!("flog-2026.01.{day:02}"))
        .collect();
    let body = serde_json::json!({
        "error": {
            "type": "security_exception",
            "reason": format!(
                "action [indices:admin/delete] is unauthorized for user [opsbot] with effective \
                 roles [opsbot] on indices [{}], this action is granted by the index privileges \
                 [delete_index,manage,all]",
                names.join(",")
            ),
        },
        "status": 403,
    });
    assert_eq!(
        status_fault(403, &body.to_string()),
        Fault::Status {
            status: 403,
            reason: "action [indices:admin/delete] is unauthorized for user [opsbot] with \
                     effective roles [opsbot] on indices [flog-2026.01.01,flog-2026.01.02,\
                     flog-2026.01.03, … 60 in all], this action is granted by the index \
                     privileges [delete_index,manage,all]"
                .into()
        }
    );
    let roles = format!("[{}]", "r".repeat(900));
    let long = serde_json::json!({
        "error": {"type": "security_exception", "reason": format!(
            "action [indices:admin/delete] is unauthorized for user [opsbot] with effective \
             roles {roles}, this action is granted by the index privileges [delete_index]"
        )},
        "status": 403,
    });
    let Fault::Status { reason, .. } = status_fault(403, &long.to_string()) else {
        panic!("a status fault")
    };
    assert_eq!(reason.chars().count(), 399, "{reason}");
    assert!(
        reason.starts_with("action [indices:admin/delete] is unauthorized")
            && reason.ends_with("granted by the index privileges [delete_index]"),
        "{reason}"
    );
}
