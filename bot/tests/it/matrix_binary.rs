//! The real binary on Matrix, against the real Synapse: SIGKILLed while a plan waits for
//! approval, and replaced by its standby on PostgreSQL. Either way, the new bot sees the room's
//! recent events again and handles none of them twice, a ✅ on the message the dead bot posted
//! goes on in that same message to the end, and only the active instance syncs.

use opsbot_tests::matrix::scene::{MatrixWorld, shown};
use serde_json::Value;

use crate::support::{self, Bot, PATIENCE, Scene, ha};

async fn matrix_scene() -> (Scene, MatrixWorld) {
    let scene = support::prune_scene().await;
    let world = MatrixWorld::new(false).await;
    // alice and bob are the config's people; their Matrix ids and the bot's [matrix] join them.
    let mut config = std::fs::read_to_string(&scene.config).unwrap();
    for (slack, user) in [("U0ALICE", &world.alice), ("U0BOB", &world.bob)] {
        let line = format!("slack_user = \"{slack}\"\n");
        let with = format!("{line}matrix_user = \"{}\"\n", user.user_id());
        config = config.replace(&line, &with);
    }
    let matrix = world.config(scene.dir.path());
    config.push_str(&format!(
        "\n[matrix]\nhomeserver = \"{}\"\nuser = \"{}\"\npassword_file = \"{}\"\n\
         rooms = [\"{}\"]\nmessages_per_second = {}\n",
        matrix.homeserver,
        matrix.user,
        matrix.password_file.unwrap().display(),
        world.room,
        matrix.messages_per_second,
    ));
    std::fs::write(&scene.config, config).unwrap();
    (scene, world)
}

/// alice asks for a prune; her command's event and the plan's message (its event id), once
/// her command is answered too.
async fn ask(world: &MatrixWorld) -> (String, String) {
    let command = world
        .alice
        .send_text(
            &world.room,
            "!indices prune cluster:logs older_than_days:30",
        )
        .await;
    let bot = world.bot.user_id().to_owned();
    let plan = world
        .alice
        .wait_for(
            &world.room,
            |e| e["sender"] == bot.as_str() && shown(e).contains("waiting for approval"),
            PATIENCE,
        )
        .await;
    world
        .alice
        .wait_for(
            &world.room,
            |e| e["content"]["m.relates_to"]["m.in_reply_to"]["event_id"] == command.as_str(),
            PATIENCE,
        )
        .await;
    (command, plan["event_id"].as_str().unwrap().to_owned())
}

/// bob reacts ✅ to the plan; once the same message shows the run succeeded, its text.
async fn approve(world: &MatrixWorld, plan: &str) -> String {
    world.bob.react(&world.room, plan, "✅").await;
    let bot = world.bot.user_id().to_owned();
    let done = world
        .alice
        .wait_for(
            &world.room,
            |e| {
                e["sender"] == bot.as_str()
                    && e["content"]["m.relates_to"]["event_id"] == plan
                    && shown(e).starts_with("✅")
            },
            PATIENCE,
        )
        .await;
    shown(&done).to_owned()
}

/// One message for the run, one answer to alice's command, nothing else run.
async fn assert_handled_once(world: &MatrixWorld, scene: &Scene, command: &str) {
    let events = world.alice.messages(&world.room, 500).await;
    let from_bot = |e: &&Value| e["sender"] == world.bot.user_id();
    let originals: Vec<&Value> = events
        .iter()
        .filter(from_bot)
        .filter(|e| e["content"]["m.relates_to"]["rel_type"] != "m.replace")
        .collect();
    let runs = originals
        .iter()
        .filter(|e| shown(e).contains(" r-1 · "))
        .count();
    assert_eq!(runs, 1, "the new bot edited the same message");
    let answers = originals
        .iter()
        .filter(|e| e["content"]["m.relates_to"]["m.in_reply_to"]["event_id"] == command)
        .count();
    assert_eq!(answers, 1, "alice's command was answered once");
    // The homeserver would take a second answer's send as a repeat of the first (the same
    // transaction id): its log says how many were sent.
    let txn = format!("opsbot-answer-%24{}", command.trim_start_matches('$'));
    assert_eq!(
        world.answered(200, &txn),
        1,
        "alice's command was handled once"
    );
    assert!(
        !originals.iter().any(|e| shown(e).contains(" r-2 ")),
        "nothing ran twice"
    );
    assert_eq!(scene.sim.state().deleted.len(), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_approved_after_a_sigkill_goes_on_in_the_same_message_and_no_event_runs_twice() {
    let (scene, world) = matrix_scene().await;
    let first = Bot::run(&scene.config);
    let (command, plan) = ask(&world).await;
    drop(first); // SIGKILL
    let second = Bot::run(&scene.config);
    let done = approve(&world, &plan).await;
    drop(second);
    assert!(done.contains("deleted"), "{done}");
    assert_handled_once(&world, &scene, &command).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_active_instance_syncs_and_the_standby_takes_over_without_repeating_an_event() {
    let (scene, world) = matrix_scene().await;
    let (url, schema) = (ha::shared_pg().url("postgres"), ha::fresh_schema("matrix"));
    let (a, a_metrics) = ha::on_postgres(&scene.config, "a", &url, &schema);
    let (b, b_metrics) = ha::on_postgres(&scene.config, "b", &url, &schema);
    let active = Bot::run(&a);
    ha::until_healthz(a_metrics, "ok: active").await;
    let standby = Bot::run(&b);
    ha::until_healthz(b_metrics, "ok: standby").await;
    let (command, plan) = ask(&world).await;

    active.kill();
    ha::until_healthz(b_metrics, "ok: active").await;
    let done = approve(&world, &plan).await;
    drop(standby);
    assert!(done.contains("deleted"), "{done}");
    assert_handled_once(&world, &scene, &command).await;
}
