//! The RPC-cap fix against migrations in flight on the simulated cloud: restarting
//! `nova-compute` on a hypervisor with a live migration sets the migration to `error` (Nova's
//! `_reset_live_migration`, which the simulator models), so such a host is left alone, whether
//! the migration was there at planning time, started after the approval, or found when a run
//! is resumed after a crash.

use std::time::Duration;

use opsbot::config::EngineConfig;
use opsbot_cloud_sim::{CloudSimConfig, ComputeServiceSeed, Migration, MigrationType};
use opsbot_commands::name::{CloudName, PersonName, RunId};
use opsbot_commands::people::{PersonRef, Surface};
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::run::{ChannelId, Outcome, Run, RunState, StepState};
use opsbot_tests::Setup;
use opsbot_tests::cloud::CloudScene;
use time::OffsetDateTime;
use uuid::Uuid;

const HOSTS: [&str; 3] = ["compute-01", "compute-02", "compute-03"];
const RPC_CAP: &str = "/compute rpc-cap cloud:prod";

/// Three hypervisors, each with its provider and a server `vm-0N` holding allocations there,
/// whose computes come back `downtime` (by the simulator's clock) after a restart.
async fn three_hypervisors(downtime: Duration) -> CloudScene {
    let scene = CloudScene::start_with(
        CloudSimConfig {
            compute_restart_downtime: downtime,
            compute_restart_call: Duration::ZERO,
            ..CloudSimConfig::default()
        },
        Setup {
            engine: EngineConfig {
                compute_timeout: Duration::from_secs(30),
                ..Setup::default().engine
            },
            ..Setup::default()
        },
    )
    .await;
    for (n, host) in HOSTS.iter().enumerate() {
        scene.cloud.add_service(ComputeServiceSeed::nova_compute(
            host,
            OffsetDateTime::now_utc() - time::Duration::seconds(5),
        ));
        let provider = scene.cloud.add_provider(host);
        let vm = server(n);
        scene
            .cloud
            .add_server_on(vm, &format!("vm-0{}", n + 1), "ACTIVE", host);
        scene
            .cloud
            .add_allocation(provider, vm, &[("VCPU", 2), ("MEMORY_MB", 4096)]);
    }
    scene
}

/// The server on `HOSTS[n]`.
fn server(n: usize) -> Uuid {
    Uuid::from_u128(0x5e_0000 + n as u128)
}

/// Starts live-migrating the server of host `from` to host `to` (indices into [`HOSTS`]).
fn live_migrate(scene: &CloudScene, from: usize, to: usize) -> Migration {
    scene
        .cloud
        .start_migration(server(from), HOSTS[to], MigrationType::LiveMigration)
        .unwrap()
}

/// The migration's status now.
fn status(scene: &CloudScene, migration: &Migration) -> String {
    scene
        .cloud
        .migrations()
        .into_iter()
        .find(|m| m.uuid == migration.uuid)
        .unwrap()
        .status
}

fn restarts(scene: &CloudScene) -> Vec<String> {
    scene
        .cloud
        .compute_restarts()
        .into_iter()
        .map(|r| r.host)
        .collect()
}

#[tokio::test]
async fn hypervisors_with_a_live_migration_running_are_not_restarted_and_it_keeps_running() {
    let scene = three_hypervisors(Duration::from_secs(1)).await;
    let migration = live_migrate(&scene, 1, 2);
    assert_eq!(migration.status, "running");
    let h = &scene.harness;
    let id = h.start_run("alice", RPC_CAP).await;
    let notes = h.run(id).plan().notes().join("\n");
    for host in ["compute-02", "compute-03"] {
        assert!(
            notes.contains(&format!(
                "{host} is not restarted: live migration {} of instance {} is running \
                 (compute-02 → compute-03); run /compute rpc-cap cloud:prod again once it has \
                 finished",
                migration.id, migration.instance_uuid
            )),
            "{notes}"
        );
    }
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{:?}",
        run.steps()
    );
    assert_eq!(restarts(&scene), ["compute-01"]);
    assert_eq!(status(&scene, &migration), "running", "not reset to error");
}

#[tokio::test]
async fn with_every_hypervisor_migrating_nothing_is_planned_and_the_reply_says_why() {
    let scene = three_hypervisors(Duration::from_secs(1)).await;
    live_migrate(&scene, 0, 1);
    live_migrate(&scene, 2, 1);
    let reply = scene.harness.slash("alice", RPC_CAP).await;
    assert!(
        reply
            .text
            .contains("compute-01 is not restarted: live migration")
            && reply.text.contains("nothing to do"),
        "{}",
        reply.text
    );
    assert!(scene.harness.engine.store().runs().unwrap().is_empty());
    assert!(restarts(&scene).is_empty());
}

#[tokio::test]
async fn a_live_migration_started_after_the_approval_stops_the_run_before_its_host() {
    // compute-01 comes back only when the test moves the simulator's clock on: the migration
    // starts while the run waits for it, before compute-02's restart step.
    let scene = three_hypervisors(Duration::from_secs(60)).await;
    let h = &scene.harness;
    let id = h.start_run("alice", RPC_CAP).await;
    h.approve("bob", id).await;
    h.wait_for(id, "past compute-01's restart", |run| {
        matches!(run.steps()[1], StepState::Done { .. })
    })
    .await;
    let migration = live_migrate(&scene, 2, 1);
    scene.cloud.advance_clock(Duration::from_secs(70));
    let run = h.finished(id).await;
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert!(
        matches!(run.steps()[2], StepState::Done { .. })
            && matches!(run.steps()[3], StepState::Failed { .. }),
        "compute-01 came back, compute-02's restart failed: {:?}",
        run.steps()
    );
    assert!(
        error.starts_with(&format!(
            "nova_compute on compute-02 was not restarted: live migration {} of instance {} is \
             running (compute-03 → compute-02)",
            migration.id, migration.instance_uuid
        )) && error.contains("restarts no other host")
            && error.contains("run /compute rpc-cap cloud:prod again once it has finished"),
        "{error}"
    );
    assert_eq!(restarts(&scene), ["compute-01"]);
    assert_eq!(status(&scene, &migration), "running");
}

#[tokio::test]
async fn a_restart_found_started_after_a_crash_is_not_put_to_an_operator_while_a_migration_runs() {
    let scene = three_hypervisors(Duration::from_secs(1)).await;
    let h = &scene.harness;
    // The plan of a run the bot was killed in: approved, compute-01's restart started (whether
    // it happened is unknown). A live migration from compute-01 has started since.
    let cloud = CloudName::parse("prod").unwrap();
    let request = ProcedureRequest::ComputeRpcCap {
        cloud: cloud.clone(),
        error: None,
    };
    let plan = h.engine.clouds().plan(&cloud, &request).await.unwrap();
    let migration = live_migrate(&scene, 0, 1);
    let now = OffsetDateTime::now_utc();
    let created = h
        .engine
        .writes()
        .create_run(
            move |id| {
                let alice = PersonRef {
                    name: PersonName::parse("alice").unwrap(),
                    via: Surface::Demo,
                };
                let mut run = Run::new(
                    id,
                    plan,
                    alice,
                    ChannelId("ops".into()),
                    now,
                    time::Duration::minutes(30),
                );
                run.state = RunState::Running;
                run.steps_mut()[0] = StepState::done(now, "approved by bob");
                run.steps_mut()[1] = StepState::Started { at: now };
                run
            },
            None,
        )
        .await
        .unwrap();
    assert_eq!(h.engine.resume_all().await.unwrap(), 1);
    let run = h.finished(created.id).await;
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert!(
        error.starts_with(&format!(
            "opsbot stopped while restarting nova_compute on compute-01 and cannot tell whether \
             the restart happened; do not restart it by hand now: live migration {} of instance \
             {} is running (compute-01 → compute-02)",
            migration.id, migration.instance_uuid
        )),
        "{error}"
    );
    assert!(restarts(&scene).is_empty());
    assert_eq!(status(&scene, &migration), "running");
    assert_eq!(created.id, RunId::new(1));
}

#[tokio::test]
async fn migrations_that_cannot_be_read_before_a_restart_stop_the_run_before_it() {
    let scene = three_hypervisors(Duration::from_secs(1)).await;
    let h = &scene.harness;
    let id = h.start_run("alice", RPC_CAP).await;
    // The bot's role lost `os-migrations:index` after the plan was made.
    scene.cloud.set_faults(vec![
        "status=403,method=GET,path=/compute/v2.1/os-migrations"
            .parse::<opsbot_cloud_sim::FaultRule>()
            .unwrap(),
    ]);
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert!(
        error.contains("403")
            && error.contains("while looking for migrations in progress at compute-01"),
        "{error}"
    );
    assert!(restarts(&scene).is_empty());
}
