use serde_json::json;

use super::*;
use crate::cluster::FlushMode;
use crate::name::NodeAddr;
use crate::openstack::ids::ProviderId;

fn restart() -> ProcedureRequest {
    ProcedureRequest::ClusterRestart {
        cluster: ClusterName::parse("logs").unwrap(),
    }
}

fn steps() -> Vec<ClusterStep> {
    let node = NodeAddr::parse("10.0.0.11").unwrap();
    vec![
        ClusterStep::Safe(ClusterSafe::Flush {
            mode: FlushMode::Plain,
        }),
        ClusterStep::Safe(ClusterSafe::StopNode { node }),
        ClusterStep::Wait(ClusterWait::NodeLeft { node }),
        ClusterStep::Gate {
            reason: "look first".into(),
        },
        ClusterStep::Destructive(ClusterDestructive::RetireNode { node }),
    ]
}

/// Stored plans and the digests approvals were given for stay what they were before steps were
/// typed: a plain list of steps beside the request.
#[test]
fn a_plan_is_stored_as_the_plain_list_of_its_steps() {
    let plan = Plan::new(restart(), steps(), vec!["a note".into()]).unwrap();
    let stored = serde_json::to_value(&plan).unwrap();
    assert_eq!(
        stored,
        json!({
            "request": serde_json::to_value(restart()).unwrap(),
            "steps": [
                {"safe": {"kind": "flush", "mode": "plain"}},
                {"safe": {"kind": "stop_node", "node": "10.0.0.11"}},
                {"wait": {"kind": "node_left", "node": "10.0.0.11"}},
                {"gate": {"reason": "look first"}},
                {"destructive": {"kind": "retire_node", "node": "10.0.0.11"}},
            ],
            "notes": ["a note"],
        })
    );
    let read: Plan = serde_json::from_slice(&serde_json::to_vec(&plan).unwrap()).unwrap();
    assert_eq!(read, plan);
    assert_eq!(read.digest(), plan.digest());
}

#[test]
fn steps_of_another_kind_of_target_are_refused_when_planned() {
    let cloud_steps = vec![CloudStep::Safe(CloudSafe::VerifyReleased {
        provider: ProviderId::parse("8f0d2f4e-3b7a-4c1e-9a55-2a1f0c6b7d10").unwrap(),
    })];
    assert_eq!(
        Plan::new(restart(), cloud_steps, vec![])
            .unwrap_err()
            .to_string(),
        "internal error: a cloud's steps were planned for cluster `logs`; nothing was done"
    );
}

#[test]
fn a_stored_step_of_another_kind_of_target_is_refused_when_read() {
    let plan = Plan::new(restart(), steps(), vec![]).unwrap();
    let mut stored = serde_json::to_value(&plan).unwrap();
    stored["steps"][1] = json!({"safe": {"kind": "restart_compute", "host": "compute-01"}});
    let error = serde_json::from_slice::<Plan>(&serde_json::to_vec(&stored).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with(
            "its steps are not all a search cluster's steps: unknown variant `restart_compute`"
        ),
        "{error}"
    );
}

#[test]
fn approval_is_asked_at_the_gate_or_before_a_destructive_plan() {
    let gated = Plan::new(restart(), steps(), vec![]).unwrap();
    assert_eq!(gated.approval_at(), Some(3));
    let mut ungated = steps();
    ungated.remove(3);
    let destructive = Plan::new(restart(), ungated.clone(), vec![]).unwrap();
    assert_eq!(destructive.approval_at(), Some(0));
    ungated.pop();
    let safe = Plan::new(restart(), ungated, vec![]).unwrap();
    assert_eq!(safe.approval_at(), None);
    assert!(!safe.needs_approval());
}

/// A new index a prune does not touch changes its notes (`selected 11 of 41`), never its
/// digest: a booked prune keeps its approval. A changed step changes it.
#[test]
fn the_digest_covers_the_request_and_the_steps_not_the_notes() {
    let seen = Plan::new(restart(), steps(), vec!["selected 11 of 40 indices".into()]).unwrap();
    let later = Plan::new(restart(), steps(), vec!["selected 11 of 41 indices".into()]).unwrap();
    assert_eq!(seen.digest(), later.digest());
    let mut fewer = steps();
    fewer.pop();
    let changed = Plan::new(restart(), fewer, vec!["selected 11 of 40 indices".into()]).unwrap();
    assert_ne!(seen.digest(), changed.digest());
    let other = ProcedureRequest::ClusterRestart {
        cluster: ClusterName::parse("logs2").unwrap(),
    };
    assert_ne!(
        seen.digest(),
        Plan::new(other, steps(), vec![]).unwrap().digest()
    );
}
