//! SIGKILL `opsbot run` while a plan waits for approval, start it again, and press Approve on
//! the message the killed bot posted: the run goes on and the same message shows it to the end.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod support;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use opsbot_fake_discord::{FakeConfig, FakeDiscord, FakeMessage};
use opsbot_sim::SimConfig;
use serde_json::json;
use support::{PATIENCE, scene};

const CHANNEL: u64 = 900_000_000_000_000_001;
const OPERATOR_ROLE: u64 = 800_000_000_000_000_001;
const APPROVER_ROLE: u64 = 800_000_000_000_000_002;

/// `opsbot run`, SIGKILLed when dropped, so a failing test leaves no bot behind.
struct Bot(Child);

impl Drop for Bot {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn bot(config: &std::path::Path) -> Bot {
    let child = Command::new(env!("CARGO_BIN_EXE_opsbot"))
        .args(["run", "--config", &config.display().to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Bot(child)
}

fn embed(message: &FakeMessage) -> String {
    message.embeds[0]["description"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_approved_after_a_sigkill_goes_on_in_the_same_message() {
    let fake = FakeDiscord::start(FakeConfig {
        channels: vec![CHANNEL],
        ..FakeConfig::default()
    })
    .await;
    let scene = scene(
        SimConfig {
            days_of_indices: 40,
            ..SimConfig::default()
        },
        r#"kind = "sim""#,
    )
    .await;
    let dir = scene.dir.path();
    std::fs::write(dir.join("token"), &fake.config().token).unwrap();
    std::fs::write(dir.join("ca.pem"), fake.ca_pem()).unwrap();
    let mut config = std::fs::read_to_string(&scene.config).unwrap();
    config.push_str(&format!(
        r#"
[discord]
token_file = "{token}"
guild = {guild}
channels = [{CHANNEL}]
api_address = "{address}"
ca_file = "{ca}"
"#,
        token = dir.join("token").display(),
        guild = fake.config().guild_id,
        address = fake.rest_addr(),
        ca = dir.join("ca.pem").display(),
    ));
    std::fs::write(&scene.config, config).unwrap();

    let first = bot(&scene.config);
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

    let second = bot(&scene.config);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while fake.gateway_counts().0 < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the restarted bot never identified"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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
