//! How an answer reads in Slack: its text escaped (nothing in it pings), ephemeral when
//! private, and a public answer's file shared in the channel, or its start inline.

use serde_json::{Value, json};

use super::blocks::escape;
use crate::service::{Attachment, Reply};

/// The most of a file-sized answer shown in the message (Slack's section text is 3,000).
const INLINE_FILE: usize = 2500;

/// The file of a public answer, which is shared in the channel; a private answer's file is
/// shown inline, since a file shared in a channel is everyone's.
pub(super) fn shared_file(reply: &Reply) -> Option<&Attachment> {
    reply.attachment.as_ref().filter(|_| !reply.private)
}

/// The response that says an answer: its text alone when its file is shared in the channel
/// after it, else with the file's start inline.
pub(super) fn said(reply: &Reply) -> Value {
    match shared_file(reply) {
        Some(_) => response(&Reply {
            attachment: None,
            ..reply.clone()
        }),
        None => response(reply),
    }
}

/// The text of an answer, escaped, with the start of its file when it has one.
pub(super) fn text(reply: &Reply) -> String {
    let mut text = escape(&reply.text);
    if let Some(file) = &reply.attachment {
        text.push('\n');
        text.push_str(&excerpt(file));
    }
    text
}

/// The start of a file, escaped, as a code block.
pub(super) fn excerpt(file: &Attachment) -> String {
    let shown: String = file.text.chars().take(INLINE_FILE).collect();
    let cut = if shown.len() < file.text.len() {
        "\n… (cut here)"
    } else {
        ""
    };
    format!("```{}{cut}```", escape(&shown))
}

/// A slash command's response, carried by its acknowledgement.
pub(super) fn response(reply: &Reply) -> Value {
    let kind = if reply.private {
        "ephemeral"
    } else {
        "in_channel"
    };
    json!({ "response_type": kind, "text": text(reply) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_escaped_and_private_ones_ephemeral() {
        let reply = Reply::private("no <!channel> & <@U0BOB>");
        assert_eq!(
            response(&reply),
            json!({
                "response_type": "ephemeral",
                "text": "no &lt;!channel&gt; &amp; &lt;@U0BOB&gt;"
            })
        );
    }
}
