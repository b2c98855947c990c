//! What the bot's Matrix messages carry: `m.notice` (the msgtype for automated senders, which
//! other bots do not answer), plain text cut to fit the homeserver's 64 KiB event limit, an
//! empty `m.mentions` so that nothing in them notifies anyone (intentional mentions, Matrix
//! 1.7), and `@room` broken so that an older client's body rule cannot fire either. A plan's
//! message also carries its decisions (the approve and reject buttons other platforms show),
//! which a reaction to it is read against.

use opsbot_commands::button::{ApprovalButton, Decision};
use opsbot_commands::catalogue;
use opsbot_commands::render::{ApprovalButtons, ProgressView};
use serde_json::{Value, json};

use super::handler::PREFIX;

/// The field of a plan's message that holds the decisions it offers.
const DECISIONS: &str = "org.opsbot.decisions";

/// A message's body in bytes: an edit holds the text twice (its fallback and `m.new_content`),
/// and an event of more than 65,536 bytes is refused.
const MAX_BODY: usize = 24_000;

/// What a cut text ends with.
const CUT: &str = "\n… (cut to fit; !run status shows the rest)";

/// The reaction that approves (or confirms), and the one that rejects.
pub(super) const APPROVE: &str = "✅";
pub(super) const REJECT: &str = "❌";

/// A run's progress message: its text, then the plan and how to decide while it waits.
pub(super) fn progress(view: &ProgressView) -> Value {
    let mut body = view.text.clone();
    if let Some(plan) = &view.plan {
        body.push_str("\n\n");
        body.push_str(plan);
    }
    if let Some(buttons) = view.buttons.as_ref().filter(|b| b.enabled) {
        body.push_str("\n\n");
        body.push_str(&how_to_decide(buttons));
    }
    let mut content = notice(&body);
    if let Some(buttons) = view.buttons.as_ref().filter(|b| b.enabled) {
        content[DECISIONS] = json!({
            "approve": buttons.approve.to_string(),
            "reject": buttons.reject.to_string(),
        });
    }
    content
}

/// The words under a plan that wait for a decision.
fn how_to_decide(buttons: &ApprovalButtons) -> String {
    let (word, command) = match buttons.approve.decision {
        Decision::Confirm => ("confirm", "/run confirm"),
        Decision::Approve | Decision::Reject => ("approve", "/approve"),
    };
    let ApprovalButton { run, digest, .. } = &buttons.approve;
    format!(
        "React {APPROVE} to {word} or {REJECT} to reject, or type {command} id:{run} \
         digest:{digest}"
    )
}

/// A message of text alone: an answer, a notice, an announcement.
pub(super) fn notice(text: &str) -> Value {
    json!({
        "msgtype": "m.notice",
        "body": fit(&unpinged(text)),
        "m.mentions": {},
    })
}

/// A file already uploaded (`uri`, `mxc://…`), as a message.
pub(super) fn file(name: &str, uri: &str, size: usize) -> Value {
    json!({
        "msgtype": "m.file",
        "body": name,
        "filename": name,
        "url": uri,
        "info": { "mimetype": "text/plain", "size": size },
        "m.mentions": {},
    })
}

/// The edit of `event` to show `content` (`m.replace`): clients show the new content in place
/// of the old; the body outside is what a client that cannot show edits shows.
pub(super) fn replacing(event: &str, content: &Value) -> Value {
    json!({
        "msgtype": "m.notice",
        "body": format!("* {}", content["body"].as_str().unwrap_or_default()),
        "m.mentions": {},
        "m.new_content": content,
        "m.relates_to": { "rel_type": "m.replace", "event_id": event },
    })
}

/// Whether a reaction's key is one that decides.
pub(super) fn is_decision(key: &str) -> bool {
    matches!(key.trim_end_matches('\u{fe0f}'), APPROVE | REJECT)
}

/// The decision a reaction `key` takes on a message whose (latest) content is `content`: none
/// when the message offers no decision now, or the reaction is not one of the two.
pub(super) fn decision(content: &Value, key: &str) -> Option<ApprovalButton> {
    let decisions = content.get(DECISIONS)?;
    let field = match key.trim_end_matches('\u{fe0f}') {
        APPROVE => "approve",
        REJECT => "reject",
        _ => return None,
    };
    ApprovalButton::parse(decisions[field].as_str()?)
}

/// `@room` as text: a zero-width word joiner after the `@` keeps it from matching a
/// notification rule, and shows the same. Commands named in the text are written as they are
/// typed in Matrix (`!run status`, not `/run status`, which Element would take for its own).
fn unpinged(text: &str) -> String {
    as_typed(&text.replace("@room", "@\u{2060}room"))
}

/// `text` with each `/group` of the catalogue that starts a word written `!group`.
fn as_typed(text: &str) -> String {
    let groups = catalogue::chat_groups();
    let mut typed = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('/') {
        let (before, from) = rest.split_at(at);
        typed.push_str(before);
        let starts_word = typed
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || matches!(c, '`' | '(' | '"' | '\''));
        let name: String = from[1..]
            .chars()
            .take_while(char::is_ascii_lowercase)
            .collect();
        let ends_word = from[1 + name.len()..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_ascii_alphanumeric() && c != '/' && c != '-');
        if starts_word && ends_word && groups.contains(&name.as_str()) {
            typed.push(PREFIX);
        } else {
            typed.push('/');
        }
        rest = &from[1..];
    }
    typed.push_str(rest);
    typed
}

/// `text` within [`MAX_BODY`] bytes, at a character boundary, saying so when it was cut.
fn fit(text: &str) -> String {
    if text.len() <= MAX_BODY {
        return text.to_owned();
    }
    let mut end = MAX_BODY - CUT.len();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{CUT}", &text[..end])
}

#[cfg(test)]
mod tests {
    use opsbot_commands::name::RunId;
    use opsbot_commands::render::Tone;

    use super::*;

    fn waiting() -> ProgressView {
        let button = |decision| ApprovalButton {
            decision,
            run: RunId::new(4),
            digest: "3f9a0c1b2d4e".to_owned(),
        };
        ProgressView {
            run: RunId::new(4),
            message_key: "k".to_owned(),
            text: "⏳ r-4 · waiting for approval @room".to_owned(),
            tone: Tone::Waiting,
            plan: Some("Plan for /indices prune".to_owned()),
            buttons: Some(ApprovalButtons {
                approve: button(Decision::Approve),
                reject: button(Decision::Reject),
                enabled: true,
            }),
        }
    }

    #[test]
    fn a_plan_says_how_to_decide_and_pings_nobody() {
        let content = progress(&waiting());
        let body = content["body"].as_str().unwrap_or_default();
        assert!(body.contains("Plan for !indices prune"), "{body}");
        assert!(
            body.ends_with("!approve id:r-4 digest:3f9a0c1b2d4e"),
            "{body}"
        );
        assert!(!body.contains("@room"), "{body}");
        assert_eq!(content["m.mentions"], json!({}));
        assert_eq!(content["msgtype"], "m.notice");
    }

    #[test]
    fn a_reaction_takes_the_decision_the_message_offers() {
        let content = progress(&waiting());
        let approve = decision(&content, "✅").map(|b| b.to_string());
        assert_eq!(approve.as_deref(), Some("approve:r-4:3f9a0c1b2d4e"));
        let reject = decision(&content, "❌\u{fe0f}").map(|b| b.decision);
        assert_eq!(reject, Some(Decision::Reject));
        assert_eq!(decision(&content, "👍"), None);
        let mut decided = waiting();
        decided.buttons = decided.buttons.map(|b| ApprovalButtons {
            enabled: false,
            ..b
        });
        assert_eq!(decision(&progress(&decided), "✅"), None);
        let edit = replacing("$e", &content);
        assert_eq!(
            decision(&edit["m.new_content"], "✅").map(|b| b.to_string()),
            approve
        );
    }

    #[test]
    fn commands_are_named_as_they_are_typed_in_matrix() {
        assert_eq!(
            as_typed("approve with /approve id:r-1 or `/run status id:r-1`; /tmp/x and a/run"),
            "approve with !approve id:r-1 or `!run status id:r-1`; /tmp/x and a/run"
        );
        assert_eq!(as_typed("/cluster\n/nothing"), "!cluster\n/nothing");
    }

    #[test]
    fn a_long_text_is_cut_within_the_event_limit() {
        let long = "é".repeat(20_000);
        let cut = fit(&long);
        assert!(cut.len() <= MAX_BODY && cut.ends_with(CUT));
    }
}
