//! High availability as the team sees it in Discord: two `opsbot run` on one PostgreSQL store,
//! only the active one on the gateway. The active one is SIGKILLed while a plan waits for
//! approval; the standby connects to Discord, and Approve pressed on the message the dead bot
//! posted goes on in that same message to the end. Meanwhile the standby's host reads the
//! store without the lease (`opsbot store status`, `store check`, `audit export`).

use crate::support::{
    APPROVER_ROLE, Bot, DISCORD_CHANNEL as CHANNEL, OPERATOR_ROLE, PATIENCE, embed, ha,
    prune_scene, with_fake_discord,
};
use opsbot_fake_discord::FakeDiscord;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_standby_takes_the_gateway_over_and_an_approval_on_the_dead_bots_message_goes_on() {
    let scene = prune_scene().await;
    let fake = with_fake_discord(&scene).await;
    let (url, schema) = (ha::shared_pg().url("postgres"), ha::fresh_schema("discord"));
    let (a, a_metrics) = ha::on_postgres(&scene.config, "a", &url, &schema);
    let (b, b_metrics) = ha::on_postgres(&scene.config, "b", &url, &schema);

    let active = Bot::run(&a);
    ha::until_healthz(a_metrics, "ok: active").await;
    fake.wait_ready(PATIENCE).await.unwrap();
    fake.wait_commands(PATIENCE).await.unwrap();
    let standby = Bot::run(&b);
    ha::until_healthz(b_metrics, "ok: standby").await;
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
    assert_eq!(
        fake.gateway_counts().0,
        1,
        "only the active bot is on the gateway; the standby waits for the lease"
    );
    // The standby's host reads the store without the lease.
    let status = opsbot(&["store", "status", "--config", &b.display().to_string()]);
    assert!(status.contains("at epoch 1 (its lease runs"), "{status}");
    assert!(
        status.contains("unfinished runs: 1\n  r-1 awaiting approval: /indices prune"),
        "{status}"
    );
    let check = opsbot(&["store", "check", "--config", &b.display().to_string()]);
    assert!(
        check.contains("is sound: runs: 1 (1 unfinished), audit entries: 1"),
        "{check}"
    );
    let audit = opsbot(&["audit", "export", "--config", &b.display().to_string()]);
    assert!(audit.contains(r#""run":"r-1""#), "{audit}");

    active.kill();
    ha::until_healthz(b_metrics, "ok: active").await;
    fake.wait_identifies(2, PATIENCE)
        .await
        .expect("the standby took over and connected to Discord");
    let bob = FakeDiscord::user(2, "bob", &[OPERATOR_ROLE, APPROVER_ROLE]);
    let approve = waiting.components[0]["components"][0]["custom_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let click = fake.click(&bob, CHANNEL, waiting.id, &approve).await;
    let answer = fake.response(click, PATIENCE).await.unwrap();
    assert_eq!(answer.kind, 7, "the message shows the decision: {answer:?}");
    let done = fake
        .wait_message(CHANNEL, PATIENCE, |m| {
            m.id == waiting.id && embed(m).starts_with("✅")
        })
        .await
        .unwrap();
    assert!(embed(&done).contains("deleted"), "{}", embed(&done));
    drop(standby);
}

/// `opsbot ARGS`, which must succeed; its standard output.
fn opsbot(args: &[&str]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_opsbot"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "opsbot {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}
