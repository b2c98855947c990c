//! What real clouds do that kind simulators never did: a resize or migration in flight holds
//! the source host's allocations under the migration's UUID (never stale), and a restarted
//! `nova-compute` comes back late or not at all (the RPC-cap restarts roll, one host at a time).

use std::time::Duration;

use opsbot::config::EngineConfig;
use opsbot_cloud_sim::{
    CloudSimConfig, ComputeServiceSeed, ConsumerType, Microversion, Migration, MigrationType,
    RestartFault,
};
use opsbot_commands::render::step_label;
use opsbot_commands::run::{Outcome, StepState};
use opsbot_search_sim::FaultRule;
use opsbot_tests::Setup;
use opsbot_tests::cloud::CloudScene;
use time::OffsetDateTime;
use uuid::Uuid;

fn compute(host: &str) -> ComputeServiceSeed {
    ComputeServiceSeed::nova_compute(host, OffsetDateTime::now_utc() - time::Duration::seconds(5))
}

/// compute-01 and compute-02 with their services; `web-01` on compute-01 with its allocation,
/// and on compute-01 the leftover allocations of an instance deleted long ago.
struct Moving {
    scene: CloudScene,
    source: Uuid,
    vm: Uuid,
    leftover: Uuid,
}

async fn moving(config: CloudSimConfig) -> Moving {
    let scene = CloudScene::start(config).await;
    let source = scene.cloud.add_provider("compute-01");
    scene.cloud.add_provider("compute-02");
    for host in ["compute-01", "compute-02"] {
        scene.cloud.add_service(compute(host));
    }
    let vm = Uuid::new_v4();
    scene
        .cloud
        .add_server_on(vm, "web-01", "ACTIVE", "compute-01");
    let leftover = Uuid::new_v4();
    for consumer in [vm, leftover] {
        scene
            .cloud
            .add_allocation(source, consumer, &[("VCPU", 2), ("MEMORY_MB", 4096)]);
    }
    Moving {
        scene,
        source,
        vm,
        leftover,
    }
}

impl Moving {
    /// Starts moving `web-01` to compute-02.
    fn start(&self, migration_type: MigrationType) -> Migration {
        self.scene
            .cloud
            .start_migration(self.vm, "compute-02", migration_type)
            .unwrap()
    }
}

const STALE: &str = "/placement stale cloud:prod host:compute-01";

#[tokio::test]
async fn a_resize_in_flight_keeps_the_allocations_it_moved_to_its_migration() {
    let m = moving(CloudSimConfig::default()).await;
    let h = &m.scene.harness;
    let migration = m.start(MigrationType::Resize);
    let held: Vec<Uuid> = m.scene.cloud.allocations(m.source).into_keys().collect();
    assert!(held.contains(&migration.uuid), "{held:?}");

    // Named, it is refused: nothing is planned.
    let named = h
        .slash("alice", &format!("{STALE} instance:{}", migration.uuid))
        .await;
    assert!(
        named.private && named.text.contains("migration in progress"),
        "{}",
        named.text
    );

    let id = h.start_run("alice", STALE).await;
    let run = h.run(id);
    let plan = run.plan();
    let deleted: Vec<String> = plan.steps().map(step_label).collect();
    assert!(
        deleted.iter().any(|s| s.contains(&m.leftover.to_string()))
            && !deleted
                .iter()
                .any(|s| s.contains(&migration.uuid.to_string())),
        "{deleted:#?}"
    );
    let notes = plan.notes().join("\n");
    assert!(
        notes.contains(&format!("kept {}: migration in progress", migration.uuid))
            && notes.contains("1 migration(s) in progress"),
        "{notes}"
    );

    h.approve("bob", id).await;
    let run = h.finished(id).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{:?}",
        run.steps()
    );
    let left: Vec<Uuid> = m.scene.cloud.allocations(m.source).into_keys().collect();
    assert_eq!(left, vec![migration.uuid], "only the leftover went");
    // The resize can still be reverted: the source allocations go back to the instance.
    m.scene.cloud.revert_migration(migration.uuid).unwrap();
    let back: Vec<Uuid> = m.scene.cloud.allocations(m.source).into_keys().collect();
    assert_eq!(back, vec![m.vm]);
}

#[tokio::test]
async fn a_migration_in_progress_again_at_delete_time_keeps_its_allocations() {
    // A failed resize leaves its migration's allocations on the source: with the migration in
    // `error`, Nova (`nova-manage placement audit`) calls them orphaned, and so does the plan.
    // The migration is taken up again before the approval; the delete step looks again.
    let m = moving(CloudSimConfig::default()).await;
    let h = &m.scene.harness;
    let migration = m.start(MigrationType::Resize);
    m.scene.cloud.fail_migration(migration.uuid).unwrap();
    let id = h.start_run("alice", STALE).await;
    let planned: Vec<String> = h.run(id).plan().steps().map(step_label).collect();
    assert!(
        planned
            .iter()
            .any(|s| s.contains(&migration.uuid.to_string())),
        "{planned:#?}"
    );
    m.scene
        .cloud
        .set_migration_status(migration.uuid, "reverting")
        .unwrap();
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{:?}",
        run.steps()
    );
    let left: Vec<Uuid> = m.scene.cloud.allocations(m.source).into_keys().collect();
    assert!(left.contains(&migration.uuid), "{left:?}");
    assert!(!left.contains(&m.leftover), "{left:?}");
    let kept = run.steps().iter().any(|step| {
        matches!(step, StepState::Done { note, .. }
            if note.starts_with(&format!("kept the allocations of {}: migration in progress", migration.uuid)))
    });
    assert!(kept, "{:#?}", run.steps());
}

#[tokio::test]
async fn a_consumer_placement_types_as_a_migration_is_kept_though_nova_lists_none() {
    // A Nova that writes consumer types; the migration record says it is over (a leaked
    // record), yet placement still types the consumer MIGRATION: kept, for a person to look at.
    let m = moving(CloudSimConfig {
        nova_writes_consumer_types: true,
        ..CloudSimConfig::default()
    })
    .await;
    let migration = m.start(MigrationType::Migration);
    assert_eq!(
        m.scene.cloud.consumer_type(migration.uuid),
        Some(ConsumerType::Migration)
    );
    m.scene
        .cloud
        .set_migration_status(migration.uuid, "confirmed")
        .unwrap();
    let h = &m.scene.harness;
    let id = h.start_run("alice", STALE).await;
    let run = h.run(id);
    let plan = run.plan();
    let notes = plan.notes().join("\n");
    assert!(
        notes.contains(&format!(
            "kept {}: migration in progress (placement types it MIGRATION",
            migration.uuid
        )),
        "{notes}"
    );
    assert!(
        !plan
            .steps()
            .any(|s| step_label(s).contains(&migration.uuid.to_string())),
        "{:#?}",
        plan.cloud_steps()
    );
}

/// How long the harness gives a restarted compute to report up again.
const COMPUTE_TIMEOUT: Duration = Duration::from_secs(3);

/// Three hypervisors whose computes come back 1 s after a restart, and a harness that gives
/// each at most [`COMPUTE_TIMEOUT`].
async fn three_hypervisors() -> CloudScene {
    let scene = CloudScene::start_with(
        // Restart calls answer at once: no test here kills the bot midway through one.
        CloudSimConfig {
            compute_restart_downtime: Duration::from_secs(1),
            compute_restart_call: Duration::ZERO,
            ..CloudSimConfig::default()
        },
        Setup {
            engine: EngineConfig {
                compute_timeout: COMPUTE_TIMEOUT,
                ..Setup::default().engine
            },
            ..Setup::default()
        },
    )
    .await;
    for host in ["compute-01", "compute-02", "compute-03"] {
        scene.cloud.add_service(compute(host));
    }
    scene
}

const RPC_CAP: &str = "/compute rpc-cap cloud:prod";

#[tokio::test]
async fn rpc_cap_restarts_roll_one_host_at_a_time_under_approval() {
    let scene = three_hypervisors().await;
    let h = &scene.harness;
    let reply = h.slash("alice", RPC_CAP).await;
    assert!(
        reply.text.starts_with("r-1 waits for approval"),
        "nothing stale, still a restart of every hypervisor: {}",
        reply.text
    );
    assert_eq!(scene.cloud.compute_restarts().len(), 0);
    let id = opsbot_commands::name::RunId::new(1);
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    assert_eq!(
        run.outcome(),
        Some(&Outcome::Succeeded),
        "{:?}",
        run.steps()
    );
    let restarts = scene.cloud.compute_restarts();
    let hosts: Vec<&str> = restarts.iter().map(|r| r.host.as_str()).collect();
    assert_eq!(hosts, ["compute-01", "compute-02", "compute-03"]);
    // Each restart only after the one before reported again.
    for pair in restarts.windows(2) {
        let back = pair[0].reports_again_at.unwrap();
        assert!(back <= pair[1].at, "{pair:?}");
    }
    let StepState::Done { note, .. } = &run.steps()[2] else {
        panic!("{:?}", run.steps()[2])
    };
    assert!(
        note.starts_with("nova-compute on compute-01 reports up again"),
        "{note}"
    );
}

/// The approved RPC-cap fix on three hypervisors with `fault` on `host`: it must fail. The
/// scene, the failed run's steps and its error.
async fn failing_rolling_restart(
    host: &str,
    fault: RestartFault,
) -> (CloudScene, Vec<StepState>, String) {
    let scene = three_hypervisors().await;
    scene.cloud.set_restart_fault(host, Some(fault));
    let h = &scene.harness;
    let id = h.start_run("alice", RPC_CAP).await;
    h.approve("bob", id).await;
    if fault == RestartFault::StaysDown {
        // Once the wait for the host has looked (its deadline set), the bot's clock is moved
        // past the timeout instead of the test waiting it out.
        let looked = format!("nova-compute on {host}:");
        h.wait_for(id, "waiting for the host", |run| {
            let note = h.engine.progress().observed(run).and_then(|o| o.note);
            run.state.is_finished() || note.is_some_and(|note| note.contains(&looked))
        })
        .await;
        h.clock.skip(COMPUTE_TIMEOUT);
    }
    let run = h.finished(id).await;
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    let error = error.clone();
    (scene, run.steps().to_vec(), error)
}

#[tokio::test]
async fn a_hypervisor_that_does_not_come_back_stops_the_rolling_restart() {
    let (scene, steps, error) =
        failing_rolling_restart("compute-02", RestartFault::StaysDown).await;
    assert!(
        matches!(steps[4], StepState::Failed { .. }),
        "the wait for compute-02: {steps:?}"
    );
    assert!(
        error.contains("nova-compute on compute-02 has not reported up since its restart")
            && error.contains("restarts no other host"),
        "{error}"
    );
    assert_eq!(scene.cloud.restart_count("compute-01"), 1);
    assert_eq!(scene.cloud.restart_count("compute-02"), 1);
    assert_eq!(scene.cloud.restart_count("compute-03"), 0, "never reached");
    let shown = scene.harness.chat().messages()[0].text().to_owned();
    assert!(shown.contains("compute-02"), "{shown}");
}

#[tokio::test]
async fn a_restart_that_fails_stops_the_run_at_that_host() {
    let (scene, steps, error) = failing_rolling_restart("compute-01", RestartFault::Fails).await;
    assert!(matches!(steps[1], StepState::Failed { .. }), "{steps:?}");
    assert!(
        error.contains("Cannot restart container nova_compute"),
        "{error}"
    );
    assert_eq!(
        scene.cloud.compute_restarts().len(),
        1,
        "no other host tried"
    );
}

/// A cloud that refuses the look (403: the bot's role lost `os-services`) is not waited out
/// for `compute_timeout` and then blamed on the container: the wait fails at its first look.
#[tokio::test]
async fn a_refused_look_at_the_compute_services_fails_the_wait_at_once() {
    let scene = three_hypervisors().await;
    let h = &scene.harness;
    let id = h.start_run("alice", RPC_CAP).await;
    scene.cloud.set_faults(vec![
        "status=403,method=GET,path=/compute/v2.1/os-services"
            .parse::<FaultRule>()
            .unwrap(),
    ]);
    h.approve("bob", id).await;
    let run = h.finished(id).await;
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("{:?}", run.state)
    };
    assert!(
        error.contains("403") && !error.contains("has not reported up"),
        "{error}"
    );
    let refused = scene
        .cloud
        .calls()
        .into_iter()
        .filter(|c| c.status == 403)
        .count();
    assert_eq!(refused, 1, "one look, not one every poll interval");
    assert_eq!(scene.cloud.restart_count("compute-02"), 0, "never reached");
}

/// A placement older than Xena (Wallaby: 1.36) has no consumer types: asked at 1.38 it answers
/// 406, opsbot asks again at 1.17, and Nova's own migration list still keeps a resize's
/// allocations.
#[tokio::test]
async fn against_a_placement_without_consumer_types_a_resize_is_still_kept() {
    let m = moving(CloudSimConfig {
        placement_max_version: Microversion::new(1, 36),
        ..CloudSimConfig::default()
    })
    .await;
    let h = &m.scene.harness;
    let migration = m.start(MigrationType::Resize);
    let id = h.start_run("alice", STALE).await;
    let run = h.run(id);
    let plan = run.plan();
    let planned: Vec<Uuid> = plan.deleted_consumers().map(|c| c.uuid()).collect();
    assert_eq!(planned, vec![m.leftover], "{:#?}", plan.cloud_steps());
    let asked: Vec<(u16, Option<String>)> = m
        .scene
        .cloud
        .calls()
        .into_iter()
        .filter(|c| {
            c.method == "GET" && c.path == format!("/placement/allocations/{}", migration.uuid)
        })
        .map(|c| (c.status, c.microversion))
        .collect();
    assert_eq!(
        asked,
        vec![(406, None), (200, Some("placement 1.17".to_owned()))],
        "asked at 1.38, refused, asked at 1.17"
    );
}
