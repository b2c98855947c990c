//! Slack delivering, or refusing to: many runs in one channel within Slack's limits, a
//! connection recycled mid-run, and each of Slack's permanent errors ending as it should,
//! with the requests it costs bounded.

use std::time::Duration;

use opsbot_fake_slack::{DisconnectReason, Failure, TokenStatus, WebMethod};
use opsbot_tests::slack::{SlackScene, member, shown};
use opsbot_tests::{PATIENCE, Setup};

/// A restart slow enough that its message is edited while it runs.
fn slow_restart() -> Setup {
    Setup {
        days_of_indices: 10,
        sim_speed: 5.0,
        ..Setup::default()
    }
}

/// alice's restart of `logs`, confirmed.
async fn restart(scene: &SlackScene) {
    let answer = scene.slash("alice", "/cluster restart cluster:logs").await;
    assert!(!answer.private, "{answer:?}");
    scene.confirm("alice", &answer).await;
}

/// Waits until the restart has started every node again: where Slack shows nothing, the
/// cluster says how far the run got.
async fn every_node_restarted(scene: &SlackScene) {
    crate::support::until("the restart started every node again", || {
        scene.sim.state().nodes.iter().all(|n| n.starts > 0)
    })
    .await;
}

async fn maintenance_over(scene: &SlackScene) {
    scene.announced_until("✅ maintenance over").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_runs_at_once_in_one_channel_stay_within_slacks_limits_and_all_end_shown() {
    let scene = SlackScene::start(Setup {
        clusters: 20,
        days_of_indices: 5,
        ..Setup::default()
    })
    .await;
    let lines: Vec<String> = (1..=20)
        .map(|n| format!("/cluster restart cluster:{}", opsbot_tests::cluster_name(n)))
        .collect();
    let answers =
        futures::future::join_all(lines.iter().map(|line| scene.slash("alice", line))).await;
    for answer in &answers {
        scene.confirm("alice", answer).await;
    }
    for n in 1..=20 {
        scene
            .progress(&format!("r-{n}"), |text| text.starts_with("✅"))
            .await;
    }
    let messages: Vec<_> = scene
        .fake
        .messages(&scene.channel)
        .into_iter()
        .filter(|m| !m.blocks.is_empty())
        .collect();
    assert_eq!(messages.len(), 20, "one progress message per run");
    assert!(messages.iter().all(|m| shown(m).starts_with("✅")));
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_recycled_or_dropped_mid_run_is_opened_again_and_the_run_goes_on() {
    let scene = SlackScene::start(slow_restart()).await;
    restart(&scene).await;
    let running = scene.progress("r-1", |text| text.starts_with("⏳")).await;
    scene.fake.disconnect(DisconnectReason::Warning);
    scene.fake.disconnect(DisconnectReason::RefreshRequested);
    scene
        .fake
        .wait_hellos(2, opsbot_tests::PATIENCE)
        .await
        .unwrap();
    scene.fake.drop_sockets();
    scene
        .fake
        .wait_hellos(3, opsbot_tests::PATIENCE)
        .await
        .unwrap();
    // The new connection answers Slack's pings (Slack drops a client that does not).
    scene.fake.heartbeat_now();
    scene
        .fake
        .wait_pongs(1, opsbot_tests::PATIENCE)
        .await
        .unwrap();
    // Commands reach the bot on the new connection.
    let status = scene.slash("bob", "/run status id:r-1").await;
    assert!(status.text.contains("r-1"), "{status:?}");
    let done = scene.progress("r-1", |text| text.starts_with("✅")).await;
    assert_eq!(done.ts, running.ts, "the same message to the end");
    assert_eq!(scene.fake.open_sockets(), 1, "one connection at a time");
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_progress_message_is_posted_again_once_and_shows_the_final_state() {
    let scene = SlackScene::start(slow_restart()).await;
    restart(&scene).await;
    let first = scene.progress("r-1", |text| text.starts_with("⏳")).await;
    let updates = || {
        scene
            .fake
            .calls(WebMethod::ChatUpdate)
            .iter()
            .filter(|args| args["ts"] == first.ts.as_str())
            .count()
    };
    let before = updates();
    scene.fake.delete_message(&scene.channel, &first.ts);
    let done = scene.progress("r-1", |text| text.starts_with("✅")).await;
    assert_ne!(done.ts, first.ts, "the final state is on a new message");
    let showing: Vec<_> = scene
        .fake
        .messages(&scene.channel)
        .into_iter()
        .filter(|m| !m.deleted && shown(m).contains(" r-1 · "))
        .collect();
    assert_eq!(showing.len(), 1, "one message shows the run");
    assert_eq!(
        updates() - before,
        1,
        "one edit found it gone, then no more"
    );
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_the_bot_was_removed_from_stops_its_lane_after_one_request() {
    let scene = SlackScene::start(slow_restart()).await;
    let bot = scene.fake.config().bot_user_id.clone();
    scene.fake.remove_member(&scene.channel, &bot);
    // Slash commands still reach the bot there, and their answers come with the ack.
    restart(&scene).await;
    maintenance_over(&scene).await;
    assert_eq!(
        scene.calls_in(WebMethod::ChatPostMessage, &scene.channel),
        1,
        "one refused post, then nothing"
    );
    assert_eq!(scene.calls_in(WebMethod::ChatUpdate, &scene.channel), 0);
    // Nobody there can be told; the announcement channel is.
    let announced = scene.announced_until("✅ maintenance over").await;
    assert!(
        announced.iter().any(|text| text
            .contains("progress of the runs in that channel stopped: the bot lacks membership")),
        "{announced:#?}"
    );
    // The next command there is answered all the same, and says what to grant.
    let listed = scene.slash("bob", "/run list").await;
    assert!(
        listed.text.contains("opsbot cannot post in this channel: it lacks membership (invite the bot: /invite @opsbot)"),
        "{listed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_the_bot_is_not_in_at_start_is_told_with_the_first_answer() {
    let scene = SlackScene::start_with(Setup::default(), |fake, config, _| {
        let served = config.slack.as_ref().unwrap().channels[0]
            .as_str()
            .to_owned();
        fake.remove_member(&served, &fake.config().bot_user_id.clone());
    })
    .await;
    let listed = scene.slash("alice", "/run list").await;
    assert!(
        listed.text.starts_with("no runs in the last 24 hours\n⚠️ "),
        "{listed:?}"
    );
    assert!(listed.text.contains("/invite @opsbot"), "{listed:?}");
    assert_eq!(
        scene.calls_in(WebMethod::ChatPostMessage, &scene.channel),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_scope_stops_progress_and_announcements_after_one_request_each() {
    let scene = SlackScene::start(slow_restart()).await;
    let token = scene.fake.config().bot_token.clone();
    scene
        .fake
        .set_scopes(&token, &["commands", "channels:read", "groups:read"]);
    restart(&scene).await;
    // Nothing can be posted: the progress message, its report in the announcement channel,
    // the announcement and the notice that announcements stopped are each tried once, then
    // nothing more.
    every_node_restarted(&scene).await;
    let posts = scene.fake.calls(WebMethod::ChatPostMessage).len();
    assert!(posts <= 4, "{posts} posts refused for a missing scope");
    assert_eq!(scene.fake.calls(WebMethod::ChatUpdate).len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_token_stops_every_request_at_once() {
    let scene = SlackScene::start(slow_restart()).await;
    restart(&scene).await;
    scene.progress("r-1", |text| text.starts_with("⏳")).await;
    let token = scene.fake.config().bot_token.clone();
    scene.fake.set_token_status(&token, TokenStatus::Revoked);
    scene.fake.fail_next(
        WebMethod::ChatUpdate,
        1,
        Failure::Error("token_revoked".into()),
    );
    let calls = || {
        scene.fake.calls(WebMethod::ChatUpdate).len()
            + scene.fake.calls(WebMethod::ChatPostMessage).len()
    };
    let before = calls();
    every_node_restarted(&scene).await;
    assert!(
        calls() - before <= 1,
        "{} calls after the token was revoked",
        calls() - before
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mention_whose_ack_was_lost_is_delivered_again_and_handled_once() {
    let scene = SlackScene::start(Setup::default()).await;
    // The ack is lost on the way: Slack delivers the event again after its deadline.
    scene.fake.lose_acks(1);
    let text = "<@U0FAKEBOT1> indices prune cluster:logs older_than_days:30";
    let (first, _) = scene
        .fake
        .mention(&scene.channel, &member("alice"), text)
        .unwrap();
    scene.fake.wait_lost_acks(1, PATIENCE).await.unwrap();
    scene
        .progress("r-1", |text| text.contains("waiting for approval"))
        .await;
    scene.fake.advance(Duration::from_secs(3));
    let again = scene
        .fake
        .envelopes()
        .into_iter()
        .find(|e| e.retry_attempt == 1)
        .expect("Slack delivers an unacknowledged event again");
    assert_ne!(again.envelope_id, first);
    let ack = scene
        .fake
        .wait_ack(&again.envelope_id, PATIENCE)
        .await
        .unwrap();
    assert!(!ack.late, "{ack:?}");
    // Past every redelivery Slack would make: nothing more comes, nothing more is done.
    scene.fake.advance(Duration::from_secs(600));
    assert_eq!(
        scene.fake.envelopes().len(),
        2,
        "delivered twice, acknowledged once"
    );
    let list = scene.slash("bob", "/run list").await;
    assert!(
        list.text.contains("r-1") && !list.text.contains("r-2"),
        "{list:?}"
    );
    let answers: Vec<String> = scene
        .fake
        .messages(&scene.channel)
        .into_iter()
        .filter(|m| m.user == scene.fake.config().bot_user_id)
        .map(|m| m.text)
        .filter(|t| !t.contains(" r-1 · "))
        .collect();
    assert_eq!(answers.len(), 1, "one answer in the channel: {answers:?}");
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mention_is_answered_as_a_slash_command_is_privately_when_refused() {
    let scene = SlackScene::start(Setup::default()).await;
    let bad = "<@U0FAKEBOT1> indices delete cluster:logs index:_all";
    scene
        .fake
        .mention(&scene.channel, &member("alice"), bad)
        .unwrap();
    let told = wait_ephemeral(&scene, &member("alice")).await;
    assert!(
        told.contains("index: `_all` would name every index"),
        "{told}"
    );
    scene
        .fake
        .mention(&scene.channel, &member("carol"), "<@U0FAKEBOT1> run list")
        .unwrap();
    let refused = wait_ephemeral(&scene, &member("carol")).await;
    assert!(
        refused.contains("is not one of opsbot's people"),
        "{refused}"
    );
    assert!(scene.sim.calls().is_empty(), "nothing reached the cluster");
    scene.assert_well_behaved();
}

/// The first ephemeral message `user` was shown.
async fn wait_ephemeral(scene: &SlackScene, user: &str) -> String {
    scene
        .fake
        .wait_ephemeral(user, PATIENCE)
        .await
        .unwrap()
        .text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_started_while_slack_is_away_serves_once_slack_is_back() {
    let scene = SlackScene::launch(Setup::default(), |fake, _, _| fake.set_away(true)).await;
    // Slack refuses every connection: the start goes on without it and keeps trying.
    let health = opsbot_tests::PATIENCE;
    let tried = scene.fake.wait_refused_connections(2, health).await;
    assert!(tried.is_ok(), "the bot stopped trying: {tried:?}");
    assert!(scene.is_serving(), "an outage of Slack stops nothing");
    assert_eq!(scene.fake.open_sockets(), 0);
    scene.fake.set_away(false);
    scene.fake.wait_hellos(1, health).await.unwrap();
    let answer = scene.slash("alice", "/run list").await;
    assert_eq!(answer.text, "no runs in the last 24 hours");
    scene.assert_well_behaved();
}
