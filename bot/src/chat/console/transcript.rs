//! How the console writes what happens, as lines of a transcript: the same on a piped terminal
//! and on every connection to the console socket.

use opsbot_commands::run::MessageId;

/// The header of a reply only its speaker sees.
pub(crate) const PRIVATE: &str = "opsbot (only you): ";
/// The header of a reply everyone in the console sees.
pub(crate) const PUBLIC: &str = "opsbot: ";
/// The header of a maintenance announcement.
pub(crate) const ANNOUNCEMENT: &str = "announcement: ";

/// `opsbot [m3]: `, a progress message as first posted.
pub(crate) fn posted(message: &MessageId) -> String {
    format!("opsbot [{}]: ", message.0)
}

/// `opsbot [m3 edited]: `, a progress message as edited.
pub(crate) fn edited(message: &MessageId) -> String {
    format!("opsbot [{} edited]: ", message.0)
}

/// `header` and the first line of `text`, the rest indented under it; every line ends in `\n`.
pub(crate) fn block(header: &str, text: &str) -> String {
    let indent = " ".repeat(header.chars().count());
    let mut out = String::with_capacity(header.len() + text.len() + 1);
    for (i, line) in text.lines().enumerate() {
        out.push_str(if i == 0 { header } else { &indent });
        out.push_str(line);
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str(header.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_indents_its_lines_under_the_header() {
        assert_eq!(
            block("opsbot: ", "r-1 started\nPlan for x"),
            "opsbot: r-1 started\n        Plan for x\n"
        );
        assert_eq!(block("opsbot: ", ""), "opsbot:\n");
    }
}
