use super::*;
use crate::cluster::{Distribution, ServerVersion};
use crate::plan::{Action, ClusterSafe};
use crate::planner::{Facts, plan};
use crate::render;

fn node(ip: &str) -> NodeAddr {
    NodeAddr::parse(ip).unwrap()
}

fn five() -> Vec<NodeAddr> {
    (11..=15).map(|i| node(&format!("10.0.0.{i}"))).collect()
}

fn facts(version: &str, membership: Membership) -> Facts {
    Facts::Cluster(ClusterFacts {
        inventory: five(),
        version: ServerVersion::parse(Distribution::Elasticsearch, version),
        membership,
    })
}

fn formed() -> Membership {
    Membership::Formed {
        nodes: five(),
        master: Some(node("10.0.0.12")),
    }
}

fn request(line: &str) -> ProcedureRequest {
    match crate::parse::parse_line(line, crate::parse::Origin::Chat) {
        Ok(crate::request::Request::Procedure(p)) => p,
        other => panic!("{line}: {other:?}"),
    }
}

#[test]
fn stop_plan_disables_allocation_flushes_and_stops_the_master_last() {
    let plan = plan(
        &request("/cluster stop cluster:logs"),
        &facts("7.10.2", formed()),
    )
    .unwrap();
    insta::assert_snapshot!(render::plan(&plan, &plan.digest()));
}

#[test]
fn old_elasticsearch_gets_a_synced_flush() {
    let plan = plan(
        &request("/cluster stop cluster:logs"),
        &facts("6.8.23", formed()),
    )
    .unwrap();
    assert!(
        plan.cluster_steps()
            .contains(&Action::Safe(ClusterSafe::Flush {
                mode: crate::cluster::FlushMode::Synced
            }))
    );
}

#[test]
fn start_plan_works_on_a_cluster_that_is_down() {
    let plan = plan(
        &request("/cluster start cluster:logs"),
        &facts("7.10.2", Membership::Unreachable),
    )
    .unwrap();
    insta::assert_snapshot!(render::plan(&plan, &plan.digest()));
}

#[test]
fn restart_is_stop_then_start() {
    let stop = plan(
        &request("/cluster stop cluster:logs"),
        &facts("8.11.3", formed()),
    )
    .unwrap();
    let start = plan(
        &request("/cluster start cluster:logs"),
        &facts("8.11.3", formed()),
    )
    .unwrap();
    let restart = plan(
        &request("/cluster restart cluster:logs"),
        &facts("8.11.3", formed()),
    )
    .unwrap();
    let joined: Vec<ClusterStep> = [stop.cluster_steps(), start.cluster_steps()].concat();
    assert_eq!(restart.cluster_steps(), joined.as_slice());
}

#[test]
fn stop_is_refused_when_the_cluster_cannot_be_flushed() {
    for membership in [Membership::NoMaster, Membership::Unreachable] {
        let error = plan(
            &request("/cluster stop cluster:logs"),
            &facts("7.10.2", membership),
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("/cluster start cluster:logs"),
            "{error}"
        );
    }
}

#[test]
fn a_node_outside_the_inventory_is_refused() {
    let mut nodes = five();
    nodes.push(node("10.0.0.16"));
    let error = plan(
        &request("/cluster restart cluster:logs"),
        &facts(
            "7.10.2",
            Membership::Formed {
                nodes,
                master: None,
            },
        ),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "node 10.0.0.16 is in cluster `logs` but not in its inventory; add it to the config so \
         that it is stopped and started with the others"
    );
}

#[test]
fn the_digest_changes_with_the_plan() {
    let a = plan(
        &request("/cluster stop cluster:logs"),
        &facts("7.10.2", formed()),
    )
    .unwrap();
    let b = plan(
        &request("/cluster stop cluster:logs"),
        &facts("6.8.23", formed()),
    )
    .unwrap();
    let again = plan(
        &request("/cluster stop cluster:logs"),
        &facts("7.10.2", formed()),
    )
    .unwrap();
    assert_ne!(a.digest(), b.digest());
    assert_eq!(a.digest(), again.digest());
}
