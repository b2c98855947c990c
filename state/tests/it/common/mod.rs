//! Shared test fixtures: a realistic 25-step restart plan, people, and run builders.

mod backends;

#[allow(unused_imports)] // the sled-only test binaries use neither
pub use backends::{Place, pg_config, sql};

use std::net::Ipv4Addr;

use opsbot_commands::cluster::{FlushMode, HealthStatus};
use opsbot_commands::name::PersonName;
use opsbot_commands::name::{ClusterName, NodeAddr, RunId};
use opsbot_commands::people::{PersonRef, Speaker, Surface};
use opsbot_commands::plan::{ClusterDestructive, ClusterSafe, ClusterStep, ClusterWait, Plan};
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::run::{ChannelId, Outcome, Run, StepState};
use time::OffsetDateTime;
use time::macros::datetime;

pub const STEPS: usize = 25;

/// Fixture names are literals, so a bad one is a bug in the test: panic with the reason (this
/// module is shared with the bench, where `unwrap` is denied).
pub fn cluster(name: &str) -> ClusterName {
    match ClusterName::parse(name) {
        Ok(cluster) => cluster,
        Err(error) => panic!("test fixture: {error}"),
    }
}

/// `/cluster restart` of five nodes: 25 steps, like the real planner produces.
pub fn restart_plan(cluster_name: &str) -> Plan {
    let nodes: Vec<NodeAddr> = (1..=5).map(|i| Ipv4Addr::new(10, 0, 0, i).into()).collect();
    let mut steps = vec![
        ClusterStep::Safe(ClusterSafe::DisableAllocation),
        ClusterStep::Safe(ClusterSafe::Flush {
            mode: FlushMode::Plain,
        }),
    ];
    for &node in &nodes {
        steps.push(ClusterStep::Safe(ClusterSafe::StopNode { node }));
        steps.push(ClusterStep::Wait(ClusterWait::NodeLeft { node }));
    }
    for &node in &nodes {
        steps.push(ClusterStep::Safe(ClusterSafe::StartNode { node }));
        steps.push(ClusterStep::Wait(ClusterWait::NodeJoined { node }));
    }
    steps.push(ClusterStep::Wait(ClusterWait::ClusterFormed {
        nodes: nodes.len(),
        status: HealthStatus::Green,
    }));
    steps.push(ClusterStep::Safe(ClusterSafe::EnableAllocation));
    steps.push(ClusterStep::Safe(ClusterSafe::Report));
    assert_eq!(steps.len(), STEPS);
    plan(
        ProcedureRequest::ClusterRestart {
            cluster: cluster(cluster_name),
        },
        steps,
        vec!["Elasticsearch 7.17.9: plain flush".into()],
    )
}

/// A cluster's plan of `steps`.
pub fn plan(request: ProcedureRequest, steps: Vec<ClusterStep>, notes: Vec<String>) -> Plan {
    match Plan::new(request, steps, notes) {
        Ok(plan) => plan,
        Err(error) => panic!("test fixture: {error}"),
    }
}

/// A person speaking from Discord.
fn person(name: &str, user: u64) -> PersonRef {
    match PersonName::parse(name) {
        Ok(name) => PersonRef {
            name,
            via: Surface::Discord { user },
        },
        Err(error) => panic!("test fixture: {error}"),
    }
}

pub fn alice() -> PersonRef {
    person("alice", 1001)
}

pub fn bob() -> PersonRef {
    person("bob", 1002)
}

/// The person as an audit record names them.
pub fn speaking(person: PersonRef) -> Speaker {
    Speaker::from(&person)
}

pub const T0: OffsetDateTime = datetime!(2025-03-04 03:00:00.123456789 UTC);

/// A builder for `create_run`: a new running restart of `cluster_name`, requested by alice.
pub fn new_run(cluster_name: &str) -> impl FnOnce(RunId) -> Run + use<> {
    new_run_at(cluster_name, T0)
}

/// [`new_run`], requested at `at`.
pub fn new_run_at(cluster_name: &str, at: OffsetDateTime) -> impl FnOnce(RunId) -> Run + use<> {
    let plan = restart_plan(cluster_name);
    move |id| {
        Run::new(
            id,
            plan,
            alice(),
            ChannelId("ops".into()),
            at,
            time::Duration::minutes(30),
        )
    }
}

/// A builder for a run of one index deletion, waiting for approval (requested by alice).
pub fn new_deletion_run(cluster_name: &str) -> impl FnOnce(RunId) -> Run + use<> {
    let index = match opsbot_commands::index::IndexName::parse("flog-2025.01.01") {
        Ok(index) => index,
        Err(error) => panic!("test fixture: {error}"),
    };
    let plan = plan(
        ProcedureRequest::IndicesDelete {
            cluster: cluster(cluster_name),
            index: index.clone(),
        },
        vec![ClusterStep::Destructive(
            ClusterDestructive::DeleteIndices {
                indices: vec![opsbot_commands::index::PlannedIndex {
                    name: index,
                    uuid: None,
                    bytes: None,
                    created: None,
                }],
            },
        )],
        vec![],
    );
    move |id| {
        Run::new(
            id,
            plan,
            alice(),
            ChannelId("ops".into()),
            T0,
            time::Duration::minutes(30),
        )
    }
}

/// A builder for a run already finished with every step done (history, as after a night).
pub fn finished_run(cluster_name: &str) -> impl FnOnce(RunId) -> Run + use<> {
    finished_run_at(cluster_name, T0)
}

/// [`finished_run`], requested and finished at `at`.
pub fn finished_run_at(
    cluster_name: &str,
    at: OffsetDateTime,
) -> impl FnOnce(RunId) -> Run + use<> {
    let build = new_run_at(cluster_name, at);
    move |id| {
        let mut run = build(id);
        run.steps_mut().fill(StepState::done(at, "ok"));
        run.finish(Outcome::Succeeded, at);
        run
    }
}

/// The store in `dir`, opened once sled lets go of the lock of the handle a test dropped just
/// before (see [`opsbot_state::wait_until_free`]); the bot never reopens a store in-process (a
/// restart is a new process), these tests do.
pub fn open(dir: &std::path::Path) -> Result<opsbot_state::Store, opsbot_state::StoreError> {
    opsbot_state::wait_until_free(&store_in(dir))?;
    opsbot_state::Store::open(&store_in(dir))
}

/// `opsbot store check` of the store in `dir`, once it is free as for [`open`].
pub fn check(dir: &std::path::Path) -> Result<opsbot_state::Summary, opsbot_state::StoreError> {
    opsbot_state::wait_until_free(&store_in(dir))?;
    opsbot_state::check(&store_in(dir))
}

/// The raw sled database, for tests that write what opsbot never would.
pub fn raw_open(dir: &std::path::Path) -> Result<sled::Db, opsbot_state::StoreError> {
    opsbot_state::wait_until_free(&store_in(dir))?;
    Ok(sled::open(store_in(dir))?)
}

/// The store of a test's temporary directory: inside it, so that its marker (kept beside the
/// store) is inside it too.
pub fn store_in(dir: &std::path::Path) -> std::path::PathBuf {
    dir.join("store")
}
