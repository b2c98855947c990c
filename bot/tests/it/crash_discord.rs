//! SIGKILL `opsbot run` while a plan waits for approval, start it again, and press Approve on
//! the message the killed bot posted: the run goes on and the same message shows it to the end.

use crate::support::{
    APPROVER_ROLE, Bot, DISCORD_CHANNEL as CHANNEL, OPERATOR_ROLE, PATIENCE, embed, prune_scene,
    with_fake_discord,
};
use opsbot_fake_discord::{FakeDiscord, FakeMessage};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_approved_after_a_sigkill_goes_on_in_the_same_message() {
    let scene = prune_scene().await;
    let fake = with_fake_discord(&scene).await;

    let first = Bot::run(&scene.config);
    fake.wait_ready(PATIENCE).await.unwrap();
    fake.wait_commands(PATIENCE).await.unwrap();
    let alice = FakeDiscord::user(1, "alice", &[OPERATOR_ROLE]);
    let prune = json!([{"name": "prune", "type": 1, "options": [
        {"name": "cluster", "type": 3, "value": "logs"},
        {"name": "older_than_days", "type": 4, "value": 30},
    ]}]);
    fake.slash(&alice, CHANNEL, "indices", prune).await;
    let waiting = fake
        .wait_message(CHANNEL, PATIENCE, |m| {
            !m.embeds.is_empty() && embed(m).contains("waiting for approval")
        })
        .await
        .unwrap();
    drop(first); // SIGKILL

    let second = Bot::run(&scene.config);
    fake.wait_identifies(2, PATIENCE)
        .await
        .expect("the restarted bot identified");
    let bob = FakeDiscord::user(2, "bob", &[OPERATOR_ROLE, APPROVER_ROLE]);
    let approve = waiting.components[0]["components"][0]["custom_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let click = fake.click(&bob, CHANNEL, waiting.id, &approve).await;
    let answer = fake.response(click, PATIENCE).await.unwrap();
    assert_eq!(
        answer.kind, 7,
        "the message itself shows the decision: {answer:?}"
    );
    let done = fake
        .wait_message(CHANNEL, PATIENCE, |m| {
            m.id == waiting.id && embed(m).starts_with("✅")
        })
        .await
        .unwrap();
    drop(second);

    assert!(embed(&done).contains("deleted"), "{}", embed(&done));
    let runs: Vec<FakeMessage> = fake
        .messages(CHANNEL)
        .into_iter()
        .filter(|m| !m.embeds.is_empty() && embed(m).contains(" r-1 · "))
        .collect();
    assert_eq!(runs.len(), 1, "the restarted bot edited the same message");
    assert_eq!(scene.sim.state().deleted.len(), 10);
    assert_eq!(fake.violations(), Vec::<String>::new());
    assert_eq!(fake.rate_limited(), 0);
}
