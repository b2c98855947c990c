//! `conversations.history` (docs.slack.dev/reference/methods/conversations.history): a channel's
//! messages, newest first, a page at a time.
//!
//! With a bot token Slack shows the history of "any conversation the relevant bot is a member
//! of": a public channel the bot is not in is `not_in_channel` ("Only user tokens can access
//! public channels they are not in"), a private one does not exist for it
//! (`channel_not_found`). The scope is the channel kind's: `channels:history` or
//! `groups:history`. Arguments: `limit` (default 100, "Maximum of 999"), `oldest` and `latest`
//! (exclusive unless `inclusive`), `cursor` (a previous page's `next_cursor`), and
//! `include_all_metadata` (only then do messages carry their `metadata`).

use serde_json::{Value, json};

use crate::chat::{message_json, visible};
use crate::methods::WebMethod;
use crate::web::{Call, Refusal};

/// Messages in a page when the call names no `limit` (or `0`).
pub(crate) const DEFAULT_LIMIT: usize = 100;
/// The most in a page: a larger `limit` gets this many, as Slack treats an over-large page.
pub(crate) const MAX_LIMIT: usize = 999;

pub(crate) fn conversations_history(call: Call<'_>) -> Result<Value, Refusal> {
    let channel = visible(&call)?;
    let scope = WebMethod::ConversationsHistory.scope(Some(channel.visibility));
    call.need(scope.unwrap_or("channels:history"))?;
    if !channel.members.contains(&call.shared.cfg.bot_user_id) {
        return Err(Refusal::Code("not_in_channel"));
    }
    let params = call.params;
    let limit = match params.str("limit") {
        None => DEFAULT_LIMIT,
        Some(text) => match text.trim().parse::<usize>() {
            Ok(0) => DEFAULT_LIMIT,
            Ok(n) => n.min(MAX_LIMIT),
            Err(_) => return Err(Refusal::Code("invalid_arguments")),
        },
    };
    let bound = |name: &str, code: &'static str| match params.str(name) {
        None => Ok(None),
        Some(text) => micros(&text).map(Some).ok_or(Refusal::Code(code)),
    };
    let oldest = bound("oldest", "invalid_ts_oldest")?;
    let latest = bound("latest", "invalid_ts_latest")?;
    let inclusive = params.flag("inclusive");
    let from = match params.str("cursor") {
        None => None,
        Some(cursor) => Some(decode_cursor(&cursor).ok_or(Refusal::Code("invalid_cursor"))?),
    };
    let with_metadata = params.flag("include_all_metadata");

    let within = |ts: u64| {
        let after_oldest = oldest.is_none_or(|o| ts > o || (inclusive && ts == o));
        let before_latest = latest.is_none_or(|l| ts < l || (inclusive && ts == l));
        after_oldest && before_latest && from.is_none_or(|f| ts <= f)
    };
    let mut listed = channel
        .messages
        .iter()
        .rev()
        .filter(|(_, m)| !m.deleted)
        .filter_map(|(ts, m)| Some((micros(ts)?, ts, m)))
        .filter(|(micros, _, _)| within(*micros));
    let page: Vec<Value> = listed
        .by_ref()
        .take(limit)
        .map(|(_, ts, m)| message_json(call.shared, ts, m, with_metadata))
        .collect();
    let next = listed.next().map(|(micros, _, _)| encode_cursor(micros));
    Ok(json!({
        "messages": page,
        "has_more": next.is_some(),
        "pin_count": 0,
        "channel_actions_ts": null,
        "channel_actions_count": 0,
        "response_metadata": {"next_cursor": next.unwrap_or_default()},
    }))
}

/// A Slack timestamp (`1512085950.000216`, `1512085950`, or a JSON number) in microseconds;
/// digits past the sixth decimal are dropped. `None` for anything else.
pub(crate) fn micros(ts: &str) -> Option<u64> {
    let (secs, frac) = ts.split_once('.').unwrap_or((ts, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if secs.is_empty() || !digits(secs) || !digits(frac) {
        return None;
    }
    let frac: String = frac.chars().chain(std::iter::repeat('0')).take(6).collect();
    let secs: u64 = secs.parse().ok()?;
    secs.checked_mul(1_000_000)?.checked_add(frac.parse().ok()?)
}

/// Slack's history cursors are base64 of `next_ts:` and the next page's first timestamp
/// without its dot (`bmV4dF90czoxNTEyMDg1ODYxMDAwNTQz` is `next_ts:1512085861000543`).
pub(crate) fn encode_cursor(micros: u64) -> String {
    base64(format!("next_ts:{micros}").as_bytes())
}

/// The timestamp a cursor resumes at; `None` for one the fake did not hand out.
pub(crate) fn decode_cursor(cursor: &str) -> Option<u64> {
    let text = String::from_utf8(unbase64(cursor)?).ok()?;
    let digits = text.strip_prefix("next_ts:")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                let six = usize::try_from((n >> (18 - 6 * i)) & 63).unwrap_or(0);
                out.push(char::from(ALPHABET[six]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Padded standard base64; `None` if it is not.
fn unbase64(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if bytes.is_empty() || bytes.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let quads = bytes.len() / 4;
    for (q, quad) in bytes.chunks(4).enumerate() {
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && q + 1 != quads) {
            return None;
        }
        let mut n = 0u32;
        for &c in &quad[..4 - pad] {
            let six = ALPHABET.iter().position(|&a| a == c)?;
            n = n << 6 | u32::try_from(six).ok()?;
        }
        n <<= 6 * pad;
        out.extend_from_slice(&n.to_be_bytes()[1..4 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_is_slacks_base64_of_next_ts() {
        assert_eq!(
            encode_cursor(1_512_085_861_000_543),
            "bmV4dF90czoxNTEyMDg1ODYxMDAwNTQz"
        );
        assert_eq!(
            decode_cursor("bmV4dF90czoxNTEyMDg1ODYxMDAwNTQz"),
            Some(1_512_085_861_000_543)
        );
        for bad in ["", "bm V4", "dXNlcjpVMDYxTkZUVDI=", "bmV4dF90czo=", "!!!!"] {
            assert_eq!(decode_cursor(bad), None, "{bad}");
        }
        for n in [0, 1, 42, 1_700_000_000_123_456] {
            assert_eq!(decode_cursor(&encode_cursor(n)), Some(n));
        }
    }

    #[test]
    fn timestamps_read_as_microseconds() {
        assert_eq!(micros("1512085950.000216"), Some(1_512_085_950_000_216));
        assert_eq!(micros("1512085950"), Some(1_512_085_950_000_000));
        assert_eq!(micros("1512085950.5"), Some(1_512_085_950_500_000));
        assert_eq!(micros("0"), Some(0));
        assert_eq!(micros("1.0000019"), Some(1_000_001));
        for bad in [
            "",
            "-1",
            "now",
            "1.2.3",
            ".5",
            "1e9",
            "99999999999999999999",
        ] {
            assert_eq!(micros(bad), None, "{bad}");
        }
    }
}
