//! The Matrix front end end to end: the real bot against the real Synapse (registered users,
//! real rooms, reactions, redactions, rate limits) and the simulated cluster.

use opsbot_tests::Setup;
use opsbot_tests::matrix::On429;
use opsbot_tests::matrix::scene::{MatrixScene, shown};

const PRUNE: &str = "!indices prune cluster:logs older_than_days:30";

/// The digest a waiting plan's message names in its `!approve … digest:…`.
fn digest(plan: &str) -> &str {
    plan.rsplit("digest:").next().unwrap_or_default().trim()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prune_is_approved_by_a_second_persons_reaction_and_nobody_elses() {
    let scene = MatrixScene::start(Setup::default()).await;
    let answer = scene.ask(&scene.alice, PRUNE).await;
    assert!(answer.contains("r-1"), "{answer}");
    let (plan, text) = scene
        .progress("r-1", |text| text.contains("waiting for approval"))
        .await;
    assert!(text.contains("Plan for !indices prune"), "{text}");
    assert!(
        text.contains("React ✅ to approve or ❌ to reject"),
        "{text}"
    );

    // The requester, and someone opsbot does not know: refused, in a reply.
    let own = scene.alice.react(&scene.room, &plan, "✅").await;
    let told = scene.answer_to(&scene.room, &own).await;
    assert!(told.contains("another approver must approve it"), "{told}");
    let stranger = scene.mallory.react(&scene.room, &plan, "✅").await;
    let told = scene.answer_to(&scene.room, &stranger).await;
    assert!(told.contains("is not one of opsbot's people"), "{told}");
    // A reaction that is no decision is nothing.
    scene.bob.react(&scene.room, &plan, "👀").await;
    assert!(
        scene.sim.state().deleted.is_empty(),
        "nothing deleted before the approval"
    );

    scene.bob.react(&scene.room, &plan, "✅").await;
    let (done, text) = scene.progress("r-1", |text| text.starts_with("✅")).await;
    assert_eq!(done, plan, "one message per run, edited in place");
    assert!(
        !text.contains("React ✅"),
        "decided: nothing left to decide: {text}"
    );
    assert_eq!(scene.sim.state().deleted.len(), 60);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_is_approved_by_command_and_a_stale_digest_is_refused() {
    let scene = MatrixScene::start(Setup::default()).await;
    scene.ask(&scene.alice, PRUNE).await;
    let (_, text) = scene
        .progress("r-1", |text| text.contains("waiting for approval"))
        .await;
    let stale = scene
        .ask(&scene.dave, "!approve id:r-1 digest:000000000000")
        .await;
    assert!(stale.contains("is not the one you name"), "{stale}");
    let approved = scene
        .ask(
            &scene.dave,
            &format!("!approve id:r-1 digest:{}", digest(&text)),
        )
        .await;
    assert!(approved.contains("approved"), "{approved}");
    scene.progress("r-1", |text| text.starts_with("✅")).await;
    assert_eq!(scene.sim.state().deleted.len(), 60);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_and_chat_reach_no_backend() {
    let scene = MatrixScene::start(Setup::default()).await;
    let refused = scene
        .ask(&scene.alice, "!indices delete cluster:logs index:_all")
        .await;
    assert!(
        refused.contains("index: `_all` would name every index"),
        "{refused}"
    );
    let stranger = scene.ask(&scene.mallory, "!run list").await;
    assert!(
        stranger.contains("is not one of opsbot's people"),
        "{stranger}"
    );
    // Chat is chat: no answer, nothing recorded. The next command is answered first.
    let chat = scene.say(&scene.bob, "restarting logs later, ok?").await;
    let listed = scene.ask(&scene.bob, "!run list").await;
    assert_eq!(listed, "no runs in the last 24 hours");
    let answers = scene.alice.messages(&scene.room, 50).await;
    assert!(
        !answers
            .iter()
            .any(|e| e["content"]["m.relates_to"]["m.in_reply_to"]["event_id"] == chat.as_str()),
        "chat was answered"
    );
    assert!(scene.sim.calls().is_empty(), "nothing reached the cluster");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_the_bot_posts_notifies_anyone() {
    let scene = MatrixScene::start(Setup::default()).await;
    // With the power to notify the whole room (50, as the room's moderators have).
    scene
        .alice
        .set_power_level(&scene.room, scene.bot.user_id(), 50)
        .await;
    let bob = scene.bob.user_id().to_owned();
    let echoed = scene
        .ask(&scene.alice, &format!("!run status id:\"@room {bob}\""))
        .await;
    assert!(echoed.contains("room") && echoed.contains(&bob), "{echoed}");
    // Synapse's own push rules say who would be pinged by what (highlighted: a mention).
    let notified = scene
        .bob
        .call(
            On429::WaitOut,
            reqwest::Method::GET,
            &["notifications"],
            &[],
            None,
        )
        .await
        .expect("bob's notifications");
    let from_bot: Vec<_> = notified["notifications"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| n["event"]["sender"] == scene.bot.user_id())
        .filter(|n| n["actions"].to_string().contains("highlight"))
        .map(|n| shown(&n["event"]).to_owned())
        .collect();
    assert_eq!(
        from_bot,
        Vec::<String>::new(),
        "the bot's messages pinged bob"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_encrypted_served_room_refuses_the_start_with_what_to_do() {
    let mut scene = MatrixScene::start_encrypted(Setup::default()).await;
    let error = scene.ended().await;
    assert!(
        error.contains("is encrypted, and opsbot reads only unencrypted rooms"),
        "{error}"
    );
    assert!(error.contains("Enable end-to-end encryption"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_plan_is_answered_with_the_whole_plan_as_a_file() {
    let scene = MatrixScene::start(Setup::long_plan()).await;
    let asked = scene.say(&scene.alice, PRUNE).await;
    let bot = scene.bot.user_id().to_owned();
    let file = scene
        .alice
        .wait_for(
            &scene.room,
            |e| {
                e["sender"] == bot.as_str()
                    && e["content"]["msgtype"] == "m.file"
                    && e["content"]["m.relates_to"]["m.in_reply_to"]["event_id"] == asked.as_str()
            },
            opsbot_tests::PATIENCE,
        )
        .await;
    assert_eq!(file["content"]["body"], "r-1-plan.txt");
    let uri = file["content"]["url"].as_str().unwrap_or_default();
    let media = uri.strip_prefix("mxc://").expect("an mxc:// URI");
    let url = format!(
        "{}/_matrix/client/v1/media/download/{media}",
        scene.synapse.base_url()
    );
    let text = reqwest::Client::new()
        .get(url)
        .bearer_auth(scene.alice.access_token())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        text.starts_with("Plan for /indices prune cluster:logs"),
        "{text}"
    );
    for n in [0, 75, 149] {
        assert!(text.contains(&format!("svc{n:03}-2020.01.01")), "{text}");
    }
}
