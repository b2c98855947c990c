use super::*;
use crate::cluster::{Exclusion, SettingScope};
use crate::people::testing::person;
use crate::plan::{Action, ClusterSafe};
use crate::planner::{Facts, plan};
use crate::render;
use crate::run::{ChannelId, Run, RunState, StepState};

fn node(ip: &str) -> NodeAddr {
    NodeAddr::parse(ip).unwrap()
}

fn nodes(range: std::ops::RangeInclusive<u8>) -> Vec<NodeAddr> {
    range.map(|i| node(&format!("10.0.0.{i}"))).collect()
}

fn facts() -> RemovalFacts {
    RemovalFacts {
        inventory: nodes(11..=15),
        membership: Membership::Formed {
            nodes: nodes(11..=15),
            master: Some(node("10.0.0.11")),
        },
        allocation: AllocationSettings::default(),
        node_shards: Some(37),
    }
}

fn request(ip: &str) -> ProcedureRequest {
    let line = format!("/cluster remove-node cluster:logs node:{ip}");
    match crate::parse::parse_line(&line, crate::parse::Origin::Chat) {
        Ok(crate::request::Request::Procedure(p)) => p,
        other => panic!("{line}: {other:?}"),
    }
}

fn removal(ip: &str, facts: RemovalFacts) -> Result<Plan, PlanError> {
    plan(&request(ip), &Facts::Removal(facts))
}

fn excluding(value: &str) -> AllocationSettings {
    AllocationSettings {
        enable: None,
        exclusion: Some(Exclusion {
            scope: SettingScope::Transient,
            value: value.to_owned(),
        }),
    }
}

#[test]
fn removal_excludes_drains_stops_unlists_clears_and_redeploys_under_approval() {
    let plan = removal("10.0.0.14", facts()).unwrap();
    assert!(plan.needs_approval());
    // Approval comes before the first step: the first destructive step is after the exclusion,
    // but the run waits for approval before it starts at all.
    assert!(matches!(
        plan.cluster_steps()[0],
        Action::Safe(ClusterSafe::ExcludeNode { .. })
    ));
    insta::assert_snapshot!(render::plan(&plan, &plan.digest()));
}

#[test]
fn the_elected_master_and_a_node_already_gone_are_noted() {
    let master = removal("10.0.0.11", facts()).unwrap();
    assert!(
        master
            .notes()
            .iter()
            .any(|n| n.contains("10.0.0.11 is the elected master")),
        "{:?}",
        master.notes()
    );
    let mut gone = facts();
    gone.membership = Membership::Formed {
        nodes: nodes(11..=13),
        master: Some(node("10.0.0.11")),
    };
    gone.node_shards = None;
    let plan = removal("10.0.0.14", gone).unwrap();
    assert!(
        plan.notes().iter().any(|n| n.contains("has not joined")),
        "{:?}",
        plan.notes()
    );
}

#[test]
fn removal_refuses_what_would_lose_data_or_is_not_there() {
    let refused = |ip: &str, facts: RemovalFacts| removal(ip, facts).unwrap_err().to_string();
    insta::assert_snapshot!(refused("10.0.0.99", facts()), @"10.0.0.99 is not a node of cluster `logs`; its nodes are 10.0.0.11, 10.0.0.12, 10.0.0.13, 10.0.0.14, 10.0.0.15");

    let mut alone = facts();
    alone.inventory = nodes(11..=11);
    alone.membership = Membership::Formed {
        nodes: nodes(11..=11),
        master: Some(node("10.0.0.11")),
    };
    insta::assert_snapshot!(refused("10.0.0.11", alone), @"10.0.0.11 is the last node of cluster `logs` that is up: its shards have nowhere to go; to take the whole cluster down, use /cluster stop cluster:logs");

    // Five in the inventory, but the node to remove is the only one up: still the last one.
    let mut last_up = facts();
    last_up.membership = Membership::Formed {
        nodes: nodes(14..=14),
        master: Some(node("10.0.0.14")),
    };
    assert!(matches!(
        removal("10.0.0.14", last_up),
        Err(PlanError::LastNode { .. })
    ));

    let mut other_excluded = facts();
    other_excluded.allocation = excluding("10.0.0.12");
    insta::assert_snapshot!(refused("10.0.0.14", other_excluded), @r#"cluster `logs` already excludes nodes from allocation (transient cluster.routing.allocation.exclude._ip: 10.0.0.12); an earlier removal may be half-done: finish it, or clear the setting with PUT /_cluster/settings {"transient":{"cluster.routing.allocation.exclude._ip":""}} and ask again"#);

    let mut also_excluded = facts();
    also_excluded.allocation = excluding("10.0.0.14,10.0.0.12");
    assert!(matches!(
        removal("10.0.0.14", also_excluded),
        Err(PlanError::ExclusionInPlace { .. })
    ));

    let mut no_master = facts();
    no_master.membership = Membership::NoMaster;
    assert!(matches!(
        removal("10.0.0.14", no_master),
        Err(PlanError::NoMasterToDrain { .. })
    ));
    let mut down = facts();
    down.membership = Membership::Unreachable;
    assert!(matches!(
        removal("10.0.0.14", down),
        Err(PlanError::Unreachable { .. })
    ));

    // Joined but unknown to opsbot: the config must say how to reach it first.
    let mut unknown = facts();
    unknown.inventory = nodes(11..=13);
    assert!(matches!(
        removal("10.0.0.14", unknown),
        Err(PlanError::NodeNotInInventory { .. })
    ));
}

#[test]
fn an_exclusion_of_the_same_node_is_taken_over() {
    let mut left_behind = facts();
    left_behind.allocation = excluding("10.0.0.14");
    let plan = removal("10.0.0.14", left_behind).unwrap();
    assert!(
        plan.notes().iter().any(|n| n.contains("already excluded")),
        "{:?}",
        plan.notes()
    );
}

fn started_run(plan: Plan) -> Run {
    let user = person("alice");
    let now = time::OffsetDateTime::UNIX_EPOCH;
    let mut run = Run::new(
        crate::name::RunId::new(7),
        plan,
        user,
        ChannelId("c".into()),
        now,
        time::Duration::minutes(30),
    );
    run.state = RunState::Running;
    run
}

fn done() -> StepState {
    StepState::done(time::OffsetDateTime::UNIX_EPOCH, String::new())
}

#[test]
fn an_exclusion_that_was_set_or_may_have_been_is_cleared_before_an_early_end() {
    let mut run = started_run(removal("10.0.0.14", facts()).unwrap());
    let clear = 5;
    assert!(matches!(
        run.plan().cluster_steps()[clear],
        Action::Safe(ClusterSafe::ClearExclusion { .. })
    ));
    assert_eq!(run.cleanup_steps(), Vec::<usize>::new(), "nothing set yet");
    run.steps_mut()[0] = StepState::Started {
        at: time::OffsetDateTime::UNIX_EPOCH,
    };
    assert_eq!(run.cleanup_steps(), vec![clear], "the PUT may have landed");
    run.steps_mut()[0] = done();
    run.steps_mut()[1] = done();
    assert_eq!(run.cleanup_steps(), vec![clear]);
    run.steps_mut()[clear] = done();
    assert_eq!(run.cleanup_steps(), Vec::<usize>::new(), "already cleared");
}

#[test]
fn an_early_end_says_what_is_left_and_how_to_finish() {
    let mut run = started_run(removal("10.0.0.14", facts()).unwrap());
    run.steps_mut()[0] = done();
    insta::assert_snapshot!(render::aftermath(&run, None), @r#"
    still set: transient cluster.routing.allocation.exclude._ip: 10.0.0.14; clear it with PUT /_cluster/settings {"transient":{"cluster.routing.allocation.exclude._ip":""}} on cluster `logs`
    10.0.0.14 still runs and stays in the deployment
    "#);
    for step in 1..=3 {
        run.steps_mut()[step] = done();
    }
    run.steps_mut()[5] = done();
    insta::assert_snapshot!(render::aftermath(&run, None), @r"
    the exclusion of 10.0.0.14 was cleared
    10.0.0.14 is stopped but still in the deployment inventory; to finish, ask again: /cluster remove-node cluster:logs node:10.0.0.14; to bring it back, start its search container
    ");
}
