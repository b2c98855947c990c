//! Matrix delivering, or refusing to: many runs in one room within the homeserver's rate limit,
//! a redacted progress message, the bot kicked mid-run, and maintenance announced, against the
//! real Synapse.

use opsbot_tests::Setup;
use opsbot_tests::matrix::scene::{MatrixScene, shown};

/// A restart slow enough that its message is edited while it runs.
fn slow_restart() -> Setup {
    Setup {
        days_of_indices: 10,
        sim_speed: 5.0,
        ..Setup::default()
    }
}

/// alice's restart of `logs`, confirmed.
async fn restart(scene: &MatrixScene, cluster: &str) {
    let answer = scene
        .ask(&scene.alice, &format!("!cluster restart cluster:{cluster}"))
        .await;
    scene.confirm(&scene.alice, &answer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_runs_at_once_in_one_room_all_end_shown_without_a_429() {
    let scene = MatrixScene::start(Setup {
        clusters: 20,
        days_of_indices: 5,
        ..Setup::default()
    })
    .await;
    let scene = &scene;
    let asked = (1..=20).map(|n| {
        let line = format!("!cluster restart cluster:{}", opsbot_tests::cluster_name(n));
        async move { scene.ask(&scene.alice, &line).await }
    });
    for answer in futures::future::join_all(asked).await {
        scene.confirm(&scene.alice, &answer).await;
    }
    for n in 1..=20 {
        scene
            .progress(&format!("r-{n}"), |text| text.starts_with("✅"))
            .await;
    }
    let posted: Vec<_> = scene
        .alice
        .messages(&scene.room, 1000)
        .await
        .into_iter()
        .filter(|e| e["sender"] == scene.bot.user_id())
        .filter(|e| e["content"]["m.relates_to"].is_null())
        .filter(|e| shown(e).contains(" · "))
        .collect();
    assert_eq!(posted.len(), 20, "one progress message per run");
    assert_eq!(
        scene.answered(429, "/send/"),
        0,
        "the bot kept within the homeserver's limit"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redacted_plan_is_posted_again_once_and_a_decision_on_the_old_one_is_refused() {
    let scene = MatrixScene::start(Setup::default()).await;
    scene
        .ask(
            &scene.alice,
            "!indices prune cluster:logs older_than_days:30",
        )
        .await;
    let (old, text) = scene
        .progress("r-1", |text| text.contains("waiting for approval"))
        .await;
    // A room admin removes the bot's message.
    scene.alice.redact(&scene.room, &old).await;
    let on_old = scene.bob.react(&scene.room, &old, "✅").await;
    let told = scene.answer_to(&scene.room, &on_old).await;
    assert!(
        told.contains("that is an older message of run r-1"),
        "{told}"
    );
    assert!(scene.sim.state().deleted.is_empty(), "nothing deleted");

    let digest = text.rsplit("digest:").next().unwrap_or_default().trim();
    scene
        .ask(&scene.dave, &format!("!approve id:r-1 digest:{digest}"))
        .await;
    let (new, _) = scene.progress("r-1", |text| text.starts_with("✅")).await;
    assert_ne!(new, old, "the run's message posted again");
    assert_eq!(scene.sim.state().deleted.len(), 60);
    let posted = scene
        .alice
        .messages(&scene.room, 200)
        .await
        .into_iter()
        .filter(|e| e["sender"] == scene.bot.user_id())
        .filter(|e| e["content"]["m.relates_to"].is_null() && shown(e).contains(" r-1 · "))
        .count();
    assert_eq!(
        posted, 1,
        "posted again once (the redacted one shows nothing)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bot_kicked_mid_run_stops_posting_there_and_says_so_where_it_announces() {
    let scene = MatrixScene::start(slow_restart()).await;
    restart(&scene, "logs").await;
    scene.progress("r-1", |text| text.starts_with("⏳")).await;
    scene
        .alice
        .kick(&scene.room, scene.bot.user_id(), "not here")
        .await;
    let reported = scene
        .posted(&scene.announce_room, |text| {
            text.contains("was removed from room")
        })
        .await;
    assert!(
        reported.contains("not here") && reported.contains(scene.alice.user_id()),
        "{reported}"
    );
    // The run goes on to its end, which the announcement room is told.
    scene
        .posted(&scene.announce_room, |text| {
            text.starts_with("✅ maintenance over")
        })
        .await;
    let refused = scene.answered(403, "/send/");
    assert!(
        refused <= 1,
        "{refused} sends refused after the kick: one, then nothing"
    );
    assert!(scene.is_serving(), "a room lost stops nothing else");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_homeserver_stricter_than_the_config_is_waited_out_and_every_run_ends_shown() {
    // The bot believes it may send 20 messages a second; the homeserver allows it 4.
    let scene = MatrixScene::start_with(
        Setup {
            clusters: 5,
            days_of_indices: 5,
            ..Setup::default()
        },
        |matrix| matrix.messages_per_second = 20.0,
    )
    .await;
    scene
        .synapse
        .override_ratelimit(scene.bot.user_id(), 4, 2)
        .await;
    let scene = &scene;
    let asked = (1..=5).map(|n| {
        let line = format!("!cluster restart cluster:{}", opsbot_tests::cluster_name(n));
        async move { scene.ask(&scene.alice, &line).await }
    });
    for answer in futures::future::join_all(asked).await {
        scene.confirm(&scene.alice, &answer).await;
    }
    for n in 1..=5 {
        scene
            .progress(&format!("r-{n}"), |text| text.starts_with("✅"))
            .await;
    }
    assert!(
        scene.answered(429, "/send/") > 0,
        "the homeserver held the bot back"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_homeserver_that_does_not_answer_stops_nothing_else() {
    // Takes each connection and closes it unanswered, saying so.
    let away = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = away.local_addr().unwrap();
    let (tried, mut tries) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((connection, _)) = away.accept().await {
            drop(connection);
            let _ = tried.send(());
        }
    });
    let scene = MatrixScene::launch_with(Setup::default(), |matrix| {
        matrix.homeserver = format!("http://{address}");
    })
    .await;
    // The start, then a retry after the backoff: the bot goes on trying.
    for _ in 0..2 {
        let tried = tokio::time::timeout(opsbot_tests::PATIENCE, tries.recv()).await;
        assert!(matches!(tried, Ok(Some(()))), "the bot stopped trying");
    }
    assert!(
        scene.is_serving(),
        "an outage of the homeserver stops nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_room_made_encrypted_is_told_it_is_no_longer_read() {
    let scene = MatrixScene::start(Setup::default()).await;
    let encryption = serde_json::json!({ "algorithm": "m.megolm.v1.aes-sha2" });
    scene
        .alice
        .call(
            opsbot_tests::matrix::On429::WaitOut,
            reqwest::Method::PUT,
            &["rooms", &scene.room, "state", "m.room.encryption", ""],
            &[],
            Some(encryption),
        )
        .await
        .unwrap();
    let said = scene
        .posted(&scene.room, |text| text.contains("was made encrypted"))
        .await;
    assert!(said.contains("opsbot cannot read it from now on"), "{said}");
    let reported = scene
        .posted(&scene.announce_room, |text| {
            text.contains("was made encrypted")
        })
        .await;
    assert!(reported.contains(&scene.room), "{reported}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opsbot_check_while_the_bot_runs_leaves_its_session_alone() {
    let scene = MatrixScene::start(slow_restart()).await;
    restart(&scene, "logs").await;
    scene.progress("r-1", |text| text.starts_with("⏳")).await;
    // What `opsbot check` does, with the same password, while the bot edits its message.
    let dir = tempfile::tempdir().unwrap();
    let connector = opsbot::chat::matrix::Connector::new(&scene.world.config(dir.path())).unwrap();
    let reached = connector.inspect().await.unwrap();
    assert_eq!(reached.problems, Vec::<String>::new());
    scene.progress("r-1", |text| text.starts_with("✅")).await;
    // A request with an ended session names nobody in the log: its room does.
    let room = scene.room.replace('!', "%21");
    let refused = scene.requests(|line| line.contains(" 401 ") && line.contains(&room));
    assert_eq!(refused, 0, "the bot's session was ended under it");
    let devices = scene
        .bot
        .call(
            opsbot_tests::matrix::On429::WaitOut,
            reqwest::Method::GET,
            &["devices"],
            &[],
            None,
        )
        .await
        .unwrap();
    let ids: Vec<&str> = devices["devices"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["device_id"].as_str())
        .collect();
    assert!(ids.contains(&"OPSBOT"), "{ids:?}");
    assert!(
        !ids.contains(&"OPSBOT-CHECK"),
        "the check's session was ended: {ids:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bot_invited_back_into_a_served_room_joins_and_answers_there_again() {
    let scene = MatrixScene::start(Setup::default()).await;
    scene
        .alice
        .kick(&scene.room, scene.bot.user_id(), "by mistake")
        .await;
    scene
        .posted(&scene.announce_room, |text| {
            text.contains("was removed from room")
        })
        .await;
    scene.alice.invite(&scene.room, scene.bot.user_id()).await;
    // Answered only if the bot, seeing the invitation in its sync, joined the room again.
    let listed = scene.ask(&scene.bob, "!run list").await;
    assert_eq!(listed, "no runs in the last 24 hours");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_an_admin_ended_is_logged_into_again_and_the_run_goes_on() {
    let scene = MatrixScene::start(slow_restart()).await;
    restart(&scene, "logs").await;
    scene.progress("r-1", |text| text.starts_with("⏳")).await;
    // An admin removes the bot's device: its access token stops working at once.
    scene
        .synapse
        .delete_device(scene.bot.user_id(), "OPSBOT")
        .await;
    // The bot logs in again with its password, and the run's message goes on to the end.
    scene.progress("r-1", |text| text.starts_with("✅")).await;
    let listed = scene.ask(&scene.bob, "!run list").await;
    assert!(listed.contains("r-1"), "{listed}");
}
