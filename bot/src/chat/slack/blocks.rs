//! What a Slack message looks like: the `text` and `blocks` arguments of `chat.postMessage` and
//! `chat.update`. Everything shown is escaped, so that a mention an operator typed into a
//! command, a runbook or a reason is shown as text and never pings anyone, and cut to Slack's
//! limits, so that no message is refused for its size.

use opsbot_commands::button::ApprovalButton;
use opsbot_commands::render::{ApprovalButtons, ProgressView};
use serde_json::{Map, Value, json};

/// A message's `text`: Slack refuses a longer one (`msg_too_long`).
const MAX_TEXT: usize = 40_000;
/// A section's text (Block Kit's limit; a longer one is `invalid_blocks`).
const MAX_SECTION: usize = 3000;
/// The text of all of a message's sections. Slack also refuses blocks beyond an undocumented
/// total (`msg_blocks_too_long`, reported at about 13,000 characters); this leaves room for the
/// JSON around the text, and keeps the sections far below the 50 blocks a message may hold.
const MAX_SECTIONS_TEXT: usize = 10_000;
/// What a cut text ends with: the words Discord's messages use (`render::fit`).
const CUT: &str = "\n… (cut to fit; /run status shows the rest)";

/// Slack's escaping (api.slack.com/reference/surfaces/formatting#escaping): with `<` and `>`
/// escaped, `<!here>`, `<@U…>` and the like are text, not mentions, and `&` is escaped first so
/// that a literal `&lt;` stays what it was.
pub(super) fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            c => escaped.push(c),
        }
    }
    escaped
}

/// A run's progress message: its text, then the plan while it waits, in sections, and under
/// them the Approve and Reject buttons while the plan waits for a decision. The fallback
/// `text`, which notifications show, is the progress text alone.
pub(super) fn progress(view: &ProgressView) -> Map<String, Value> {
    let mut shown = escape(&view.text);
    if let Some(plan) = &view.plan {
        shown.push_str("\n\n");
        shown.push_str(&escape(plan));
    }
    let mut blocks: Vec<Value> = pieces(&fit(shown, MAX_SECTIONS_TEXT))
        .into_iter()
        .enumerate()
        .map(|(i, text)| section(i, text))
        .collect();
    blocks.extend(view.buttons.as_ref().map(decision));
    let mut message = plain(&view.text);
    message.insert("blocks".to_owned(), Value::Array(blocks));
    message
}

/// A message of text alone: a notice, an announcement.
pub(super) fn plain(text: &str) -> Map<String, Value> {
    let mut message = Map::new();
    message.insert("text".to_owned(), fit(escape(text), MAX_TEXT).into());
    message
}

/// `text` within `max` characters, saying so when it had to be cut.
fn fit(text: String, max: usize) -> String {
    if text.chars().count() <= max {
        return text;
    }
    let (kept, _) = split(&text, max.saturating_sub(CUT.chars().count()));
    format!("{kept}{CUT}")
}

/// The longest head of escaped `text` within `max` characters that does not end inside an
/// entity (`&am` would show as text), and the rest.
fn split(text: &str, max: usize) -> (&str, &str) {
    let end = text
        .char_indices()
        .nth(max)
        .map_or(text.len(), |(at, _)| at);
    let (head, _) = text.split_at(end);
    let end = match head.rfind('&') {
        Some(amp) if !head[amp..].contains(';') => amp,
        _ => end,
    };
    text.split_at(end)
}

/// `text` in pieces of at most a section's length, broken at line ends, and within a line only
/// when the line alone is longer than a section.
fn pieces(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut piece = String::new();
    let mut length = 0;
    for line in text.split('\n') {
        let mut line = line;
        while line.chars().count() > MAX_SECTION {
            let (head, rest) = split(line, MAX_SECTION);
            pieces.push(std::mem::take(&mut piece));
            pieces.push(head.to_owned());
            (line, length) = (rest, 0);
        }
        let wanted = line.chars().count();
        if length > 0 && length + 1 + wanted > MAX_SECTION {
            pieces.push(std::mem::take(&mut piece));
            length = 0;
        }
        if length > 0 {
            piece.push('\n');
            length += 1;
        }
        piece.push_str(line);
        length += wanted;
    }
    pieces.push(piece);
    // Slack refuses a section without text; blank lines between two pieces show as the gap.
    pieces.retain(|piece| !piece.trim().is_empty());
    pieces
}

/// A section of mrkdwn: bold and code show, but `verbatim` keeps Slack from turning bare names
/// and URLs into links or mentions of its own accord.
fn section(index: usize, text: String) -> Value {
    json!({
        "type": "section",
        "block_id": format!("text-{index}"),
        "text": {"type": "mrkdwn", "text": text, "verbatim": true},
    })
}

/// The buttons of a plan that waits for a decision. Slack cannot show a disabled button, so a
/// decided plan says so instead, and its buttons are gone.
fn decision(buttons: &ApprovalButtons) -> Value {
    if !buttons.enabled {
        let decided = format!(
            "The plan is decided; its {} and {} buttons are gone.",
            buttons.approve.decision.label(),
            buttons.reject.decision.label()
        );
        return json!({
            "type": "context",
            "block_id": "decided",
            "elements": [{"type": "plain_text", "text": decided}],
        });
    }
    json!({
        "type": "actions",
        "block_id": "decision",
        "elements": [
            button(&buttons.approve, "primary"),
            button(&buttons.reject, "danger"),
        ],
    })
}

/// A button whose `action_id` (what a press reports) and `value` are the button's own id, read
/// back with [`ApprovalButton::parse`].
fn button(button: &ApprovalButton, style: &str) -> Value {
    let id = button.to_string();
    json!({
        "type": "button",
        "action_id": id,
        "value": id,
        "style": style,
        "text": {"type": "plain_text", "text": button.decision.label()},
    })
}

#[cfg(test)]
mod tests {
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
}
