use opsbot_commands::button::Decision;
use opsbot_commands::name::RunId;
use opsbot_commands::render::Tone;
use opsbot_fake_slack::{FakeSlack, SlackConfig, Visibility};
use secrecy::SecretString;

use super::super::web::Web;
use super::*;

const MENTIONS: &str = "<!channel> <!here> <!everyone> <@U0ALICE1> <!subteam^S0OPS|ops> a&b";

fn view(text: &str, plan: Option<String>, enabled: Option<bool>) -> ProgressView {
    let run = RunId::new(1);
    let button = |decision| ApprovalButton {
        decision,
        run,
        digest: "3f9a0c1b2d4e".to_owned(),
    };
    ProgressView {
        run,
        message_key: "r1-1".to_owned(),
        text: text.to_owned(),
        tone: Tone::Waiting,
        plan,
        buttons: enabled.map(|enabled| ApprovalButtons {
            approve: button(Decision::Approve),
            reject: button(Decision::Reject),
            enabled,
        }),
    }
}

/// Posts `message` to a fresh fake Slack, which checks it as strictly as Slack does.
async fn posted(message: Map<String, Value>) -> (FakeSlack, Result<Value, String>) {
    let fake = FakeSlack::start(SlackConfig::default()).await;
    let ops = fake.add_channel("ops", Visibility::Public, true);
    let token = SecretString::from(fake.config().bot_token.as_str());
    let web = Web::new(reqwest::Client::new(), &fake.base_url(), token);
    let mut args = message;
    args.insert("channel".to_owned(), ops.into());
    let answer = web.call("chat.postMessage", &Value::Object(args)).await;
    (fake, answer.map_err(|error| error.to_string()))
}

fn sections(message: &Map<String, Value>) -> Vec<&str> {
    let blocks = message["blocks"].as_array().into_iter().flatten();
    blocks
        .filter_map(|block| block["text"]["text"].as_str())
        .collect()
}

#[test]
fn every_mention_form_is_escaped_into_text() {
    assert_eq!(
        escape(MENTIONS),
        "&lt;!channel&gt; &lt;!here&gt; &lt;!everyone&gt; &lt;@U0ALICE1&gt; \
         &lt;!subteam^S0OPS|ops&gt; a&amp;b"
    );
    assert_eq!(escape("&lt;"), "&amp;lt;");
}

#[tokio::test]
async fn mentions_in_a_run_a_plan_or_a_notice_ping_nobody() {
    let message = progress(&view(MENTIONS, Some(MENTIONS.to_owned()), Some(true)));
    let (fake, answer) = posted(message).await;
    answer.unwrap();
    let (notice, answer) = posted(plain(MENTIONS)).await;
    answer.unwrap();
    assert_eq!(fake.pings(), vec![]);
    assert_eq!(notice.pings(), vec![]);
}

#[tokio::test]
async fn a_ten_thousand_line_plan_is_cut_into_a_message_slack_takes() {
    let plan: Vec<String> = (1..=10_000)
        .map(|i| format!("{i:>5}. delete index logs-{i} <x&y>"))
        .collect();
    let message = progress(&view("⏸ r-1", Some(plan.join("\n")), Some(true)));
    let shown = sections(&message);
    assert!(shown.iter().all(|text| text.chars().count() <= MAX_SECTION));
    assert!(shown.concat().chars().count() <= MAX_SECTIONS_TEXT);
    let last = shown.last().unwrap();
    assert!(last.ends_with(CUT.trim_start()), "{last:?}");
    assert!(message["blocks"].as_array().unwrap().len() <= 50);
    let (fake, answer) = posted(message).await;
    answer.unwrap();
    assert_eq!(fake.pings(), vec![]);
}

#[test]
fn a_line_longer_than_a_section_is_broken_between_entities() {
    let message = progress(&view(&"&".repeat(5000), None, None));
    let shown = sections(&message);
    assert!(shown.len() > 1);
    for text in &shown {
        let whole = text.replace(CUT.trim_start(), "").replace("&amp;", "");
        assert_eq!(whole.trim(), "", "a piece of an entity in {text:?}");
    }
}

#[test]
fn buttons_carry_ids_that_read_back_and_a_decided_plan_has_none() {
    let waiting = progress(&view("⏸ r-1", Some("plan".to_owned()), Some(true)));
    let blocks = waiting["blocks"].as_array().unwrap();
    let actions = blocks.last().unwrap();
    assert_eq!(actions["type"], "actions");
    let ids: Vec<&str> = blocks
        .iter()
        .filter_map(|b| b["block_id"].as_str())
        .collect();
    assert_eq!(ids, ["text-0", "decision"]);
    let elements = actions["elements"].as_array().unwrap();
    for (element, style) in elements.iter().zip(["primary", "danger"]) {
        assert_eq!(element["style"], style);
        assert_eq!(element["value"], element["action_id"]);
        let id = element["action_id"].as_str().unwrap();
        assert_eq!(ApprovalButton::parse(id).unwrap().to_string(), id);
    }
    assert_eq!(elements[0]["action_id"], "approve:r-1:3f9a0c1b2d4e");
    let decided = progress(&view("✅ r-1", None, Some(false)));
    let last = decided["blocks"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["type"], "context");
    assert!(!decided["blocks"].to_string().contains("approve:"));
    let plain_run = progress(&view("⏳ r-2", None, None));
    assert_eq!(plain_run["blocks"].as_array().unwrap().len(), 1);
}
