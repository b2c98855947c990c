//! The real binary on Slack: SIGKILLed while a plan waits for approval, and replaced by its
//! standby on PostgreSQL. Either way, Approve pressed on the message the dead bot posted goes
//! on in that same message to the end, and only the active instance holds the socket.

use opsbot_fake_slack::{BlockAction, FakeSlack, SlackMessage, SlashCommand};
use opsbot_tests::slack::{buttons, shown};

use crate::support::{Bot, PATIENCE, Scene, ha, prune_scene, with_fake_slack};

/// alice asks for a prune in `channel`; the plan's message once it waits for approval.
async fn ask(fake: &FakeSlack, channel: &str) -> SlackMessage {
    fake.slash_command(&SlashCommand {
        user_id: "U0ALICE".into(),
        channel_id: channel.into(),
        command: "/indices".into(),
        text: "prune cluster:logs older_than_days:30".into(),
    })
    .unwrap();
    fake.wait_message(channel, PATIENCE, |m| {
        shown(m).contains("waiting for approval")
    })
    .await
    .unwrap()
}

/// bob presses Approve on `waiting`; the same message once it shows the run succeeded.
async fn approve(fake: &FakeSlack, waiting: &SlackMessage) -> SlackMessage {
    let (_, approve) = buttons(waiting).remove(0);
    let press = fake
        .block_action(&BlockAction {
            user_id: "U0BOB".into(),
            channel_id: waiting.channel.clone(),
            message_ts: waiting.ts.clone(),
            action_id: approve,
        })
        .unwrap();
    let ack = fake.wait_ack(&press, PATIENCE).await.unwrap();
    assert!(!ack.late, "{ack:?}");
    fake.wait_message(&waiting.channel, PATIENCE, |m| {
        m.ts == waiting.ts && shown(m).starts_with("✅")
    })
    .await
    .unwrap()
}

fn assert_one_message_and_well_behaved(fake: &FakeSlack, channel: &str, scene: &Scene) {
    let runs: Vec<SlackMessage> = fake
        .messages(channel)
        .into_iter()
        .filter(|m| shown(m).contains(" r-1 · "))
        .collect();
    assert_eq!(runs.len(), 1, "the new bot edited the same message");
    assert_eq!(scene.sim.state().deleted.len(), 10);
    assert_eq!(fake.violations(), Vec::<String>::new());
    assert_eq!(fake.rate_limited(), 0);
    assert!(fake.pings().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_approved_after_a_sigkill_goes_on_in_the_same_message() {
    let scene = prune_scene().await;
    let (fake, channel) = with_fake_slack(&scene).await;
    let first = Bot::run(&scene.config);
    fake.wait_hellos(1, PATIENCE).await.unwrap();
    let waiting = ask(&fake, &channel).await;
    drop(first); // SIGKILL
    // Slack's minute for `apps.connections.open` passes before the new bot asks for one.
    fake.advance(opsbot_tests::slack::MINUTE);
    let second = Bot::run(&scene.config);
    fake.wait_hellos(2, PATIENCE).await.unwrap();

    let done = approve(&fake, &waiting).await;
    drop(second);
    assert!(shown(&done).contains("deleted"), "{}", shown(&done));
    assert_one_message_and_well_behaved(&fake, &channel, &scene);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_active_instance_holds_the_socket_and_the_standby_takes_it_over() {
    let scene = prune_scene().await;
    let (fake, channel) = with_fake_slack(&scene).await;
    let (url, schema) = (ha::shared_pg().url("postgres"), ha::fresh_schema("slack"));
    let (a, a_metrics) = ha::on_postgres(&scene.config, "a", &url, &schema);
    let (b, b_metrics) = ha::on_postgres(&scene.config, "b", &url, &schema);
    let active = Bot::run(&a);
    ha::until_healthz(a_metrics, "ok: active").await;
    fake.wait_hellos(1, PATIENCE).await.unwrap();
    let standby = Bot::run(&b);
    ha::until_healthz(b_metrics, "ok: standby").await;
    let waiting = ask(&fake, &channel).await;
    assert_eq!(fake.open_sockets(), 1, "the standby holds no socket");

    fake.advance(opsbot_tests::slack::MINUTE);
    active.kill();
    ha::until_healthz(b_metrics, "ok: active").await;
    fake.wait_hellos(2, PATIENCE)
        .await
        .expect("the standby took over and connected to Slack");
    let done = approve(&fake, &waiting).await;
    drop(standby);
    assert!(shown(&done).contains("deleted"), "{}", shown(&done));
    assert_one_message_and_well_behaved(&fake, &channel, &scene);
}
