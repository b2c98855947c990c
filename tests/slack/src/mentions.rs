//! Which mentions in a message would notify someone, as Slack's mrkdwn reads them
//! (api.slack.com/reference/surfaces/formatting): `<!here>`, `<!channel>`, `<!everyone>`,
//! `<@U…>` and `<!subteam^S…>`, optionally with a `|label`. `&lt;!here&gt;` is text, not a
//! mention. With `link_names` (or `parse=full`) Slack also links bare `@here`, `@channel` and
//! `@everyone`. Mentions in `mrkdwn` text objects of blocks count too; `plain_text` never pings.

use serde_json::Value;

use crate::Mention;

/// Every mention in `text` and in the blocks' mrkdwn, in order of appearance.
pub(crate) fn pings(text: &str, blocks: &[Value], link_names: bool) -> Vec<Mention> {
    let mut found = in_text(text, link_names);
    let mut mrkdwn = Vec::new();
    for block in blocks {
        mrkdwn_texts(block, &mut mrkdwn);
    }
    for t in mrkdwn {
        found.extend(in_text(&t, link_names));
    }
    found
}

fn in_text(text: &str, link_names: bool) -> Vec<Mention> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('<') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('>') else { break };
        let inner = &after[..end];
        let target = inner.split('|').next().unwrap_or("");
        if let Some(mention) = special(target) {
            found.push(mention);
        }
        rest = &after[end + 1..];
    }
    if link_names {
        for word in text.split(|c: char| c.is_whitespace() || ",.;:!?()".contains(c)) {
            match word {
                "@here" => found.push(Mention::Here),
                "@channel" => found.push(Mention::Channel),
                "@everyone" => found.push(Mention::Everyone),
                _ => {}
            }
        }
    }
    found
}

fn special(target: &str) -> Option<Mention> {
    match target {
        "!here" => Some(Mention::Here),
        "!channel" => Some(Mention::Channel),
        "!everyone" => Some(Mention::Everyone),
        _ => {
            if let Some(user) = target.strip_prefix('@') {
                let id = user.starts_with(['U', 'W']) && user.len() > 1;
                id.then(|| Mention::User(user.to_owned()))
            } else {
                let group = target.strip_prefix("!subteam^")?;
                (!group.is_empty()).then(|| Mention::Subteam(group.to_owned()))
            }
        }
    }
}

/// The `text` of every `{"type": "mrkdwn", "text": ...}` object, however deep.
fn mrkdwn_texts(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if map.get("type").and_then(Value::as_str) == Some("mrkdwn") {
                if let Some(text) = map.get("text").and_then(Value::as_str) {
                    out.push(text.to_owned());
                }
            }
            for v in map.values() {
                mrkdwn_texts(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| mrkdwn_texts(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn escaped_mentions_do_not_ping_and_labelled_ones_do() {
        assert!(pings("&lt;!here&gt; @here", &[], false).is_empty());
        assert_eq!(
            pings("<!here|here> <@U123> <!subteam^S9|ops> <#C1>", &[], false),
            vec![
                Mention::Here,
                Mention::User("U123".into()),
                Mention::Subteam("S9".into())
            ]
        );
    }

    #[test]
    fn link_names_links_bare_words_and_blocks_count_only_as_mrkdwn() {
        assert_eq!(pings("hi @channel.", &[], true), vec![Mention::Channel]);
        let blocks = [
            json!({"type": "section", "text": {"type": "mrkdwn", "text": "<!everyone>"}}),
            json!({"type": "header", "text": {"type": "plain_text", "text": "<!channel>"}}),
        ];
        assert_eq!(pings("", &blocks, false), vec![Mention::Everyone]);
    }
}
