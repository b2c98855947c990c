//! Whom a message would ping: the mentions in its content, outside code, filtered by the
//! request's `allowed_mentions`, as Discord parses them; and the validation of that field.
//!
//! Relied on (`resources/message.mdx`, "Allowed Mentions Object" and "Edit Message"): only the
//! content is parsed, never embeds; without `allowed_mentions` a channel message parses users,
//! roles and everyone, an interaction response or webhook message users only; `parse` is
//! exclusive with a non-empty `users` (or `roles`) list, a 400 (the error's code and wording,
//! `MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE`, are as client libraries quote the real API);
//! at most 100 ids each; `@everyone` and `@here` need MENTION_EVERYONE; an edit of the content
//! rebuilds the mentions with the edit's own `allowed_mentions` or the defaults. Inside inline
//! code and code blocks nothing is a mention (Discord's markdown; the Discord re-implementation
//! Oldcord filed pinging from `` `@everyone` `` as a bug against its own backend).
//!
//! Not modelled, on the strict side: a role is pinged whether or not it is mentionable; a
//! backslash does not escape a mention; an edit's mentions count like a new message's, though
//! Discord may not push a notification for them; `SUPPRESS_NOTIFICATIONS` still counts.

use serde_json::{Value, json};

use crate::permissions::MENTION_EVERYONE;
use crate::rules::{Check, at_most, fail, items, join};
use crate::state::Inner;
use crate::{FakeConfig, Mention, Ping};

/// Where a message comes from, which decides what Discord parses by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// `POST`/`PATCH /channels/{id}/messages...`: users, roles and everyone.
    Channel,
    /// Interaction responses and the interaction webhook: users only.
    Interaction,
}

/// The `allowed_mentions` of a request, or the defaults in its place.
struct Allowed {
    users: bool,
    roles: bool,
    everyone: bool,
    user_ids: Vec<u64>,
    role_ids: Vec<u64>,
}

impl Allowed {
    fn of(body: &Value, source: Source) -> Self {
        let Some(given) = body.get("allowed_mentions").filter(|v| v.is_object()) else {
            return Self {
                users: true,
                roles: source == Source::Channel,
                everyone: source == Source::Channel,
                user_ids: Vec::new(),
                role_ids: Vec::new(),
            };
        };
        let parse = |kind: &str| items(given, "parse").iter().any(|p| p == kind);
        let ids = |key: &str| items(given, key).iter().filter_map(snowflake).collect();
        Self {
            users: parse("users"),
            roles: parse("roles"),
            everyone: parse("everyone"),
            user_ids: ids("users"),
            role_ids: ids("roles"),
        }
    }

    fn lets(&self, mention: Mention, can_everyone: bool) -> bool {
        match mention {
            Mention::Everyone | Mention::Here => self.everyone && can_everyone,
            Mention::User(id) => self.users || self.user_ids.contains(&id),
            Mention::Role(id) => self.roles || self.role_ids.contains(&id),
        }
    }
}

fn snowflake(v: &Value) -> Option<u64> {
    match v {
        Value::String(s) => s.parse().ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

/// `allowed_mentions` of a message body at `path` ("" or "data").
pub(crate) fn validate(body: &Value, path: &str) -> Check {
    let Some(given) = body.get("allowed_mentions").filter(|v| !v.is_null()) else {
        return Ok(());
    };
    let p = join(path, "allowed_mentions");
    if !given.is_object() {
        return fail(
            &p,
            "MODEL_TYPE_CONVERT",
            "Only dictionaries may be used in a ModelType",
        );
    }
    let parse = items(given, "parse");
    for (i, kind) in parse.iter().enumerate() {
        if !matches!(kind.as_str(), Some("users" | "roles" | "everyone")) {
            fail(
                &join(&join(&p, "parse"), i),
                "BASE_TYPE_CHOICES",
                "Value must be one of {'everyone', 'users', 'roles'}.",
            )?;
        }
    }
    for key in ["users", "roles"] {
        let ids = items(given, key);
        let kp = join(&p, key);
        at_most(ids, &kp, 100)?;
        for (i, id) in ids.iter().enumerate() {
            if snowflake(id).is_none() {
                fail(
                    &join(&kp, i),
                    "NUMBER_TYPE_COERCE",
                    format!("Value \"{}\" is not snowflake.", id.as_str().unwrap_or("?")),
                )?;
            }
        }
        if !ids.is_empty() && parse.iter().any(|k| k == key) {
            fail(
                &p,
                "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
                format!("parse:[\"{key}\"] and {key}: [ids...] are mutually exclusive."),
            )?;
        }
    }
    Ok(())
}

/// The content with inline code and code blocks blanked out. A run of n backticks opens code
/// that the next run of exactly n backticks closes, with something in between (Discord's
/// markdown: ``^(`+)([\s\S]*?[^`])\1(?!`)``, a code block being the case n = 3); a run that is
/// never closed is plain text.
fn outside_code(content: &str) -> String {
    let chars: Vec<char> = content.chars().collect();
    let run = |at: usize| chars[at..].iter().take_while(|c| **c == '`').count();
    let mut out = String::with_capacity(content.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let n = run(i);
        let mut j = i + n;
        let close = loop {
            match chars.get(j) {
                None => break None,
                Some('`') => {
                    let m = run(j);
                    if m == n && j > i + n {
                        break Some(j);
                    }
                    j += m;
                }
                Some(_) => j += 1,
            }
        };
        match close {
            Some(end) => {
                out.push(' ');
                i = end + n;
            }
            None => {
                out.extend(&chars[i..i + n]);
                i += n;
            }
        }
    }
    out
}

/// The mentions in `content`, first occurrence first, each once.
pub(crate) fn found(content: &str) -> Vec<Mention> {
    let text = outside_code(content);
    let mut out: Vec<Mention> = Vec::new();
    let mut push = |m| {
        if !out.contains(&m) {
            out.push(m);
        }
    };
    for (at, _) in text.char_indices() {
        let rest = &text[at..];
        if rest.starts_with("@everyone") {
            push(Mention::Everyone);
        } else if rest.starts_with("@here") {
            push(Mention::Here);
        } else if let Some(tag) = rest.strip_prefix("<@") {
            let (role, tag) = match tag.strip_prefix('&') {
                Some(tag) => (true, tag),
                None => (false, tag.strip_prefix('!').unwrap_or(tag)),
            };
            let digits = tag.len() - tag.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let id = tag[..digits].parse::<u64>().ok();
            if let (Some(id), true) = (id, tag[digits..].starts_with('>')) {
                push(if role {
                    Mention::Role(id)
                } else {
                    Mention::User(id)
                });
            }
        }
    }
    out
}

/// A message that was just created or edited.
pub(crate) struct Target {
    pub(crate) channel: u64,
    pub(crate) message: u64,
    pub(crate) source: Source,
    pub(crate) edit: bool,
}

/// Works out whom `body` pings, writes `mention_everyone`, `mentions` and `mention_roles` into
/// `message` as Discord returns them, and records each ping, as a violation too. A body without
/// `content` (an edit of other fields) leaves the mentions as they were.
pub(crate) fn apply(
    inner: &mut Inner,
    cfg: &FakeConfig,
    t: &Target,
    body: &Value,
    message: &mut Value,
) {
    let Some(content) = body.get("content").filter(|c| !c.is_null()) else {
        return;
    };
    let allowed = Allowed::of(body, t.source);
    let can_everyone = inner.bot_permissions(cfg, t.channel) & MENTION_EVERYONE != 0;
    let pinged: Vec<Mention> = found(content.as_str().unwrap_or(""))
        .into_iter()
        .filter(|m| allowed.lets(*m, can_everyone))
        .collect();
    if let Some(obj) = message.as_object_mut() {
        let everyone = pinged
            .iter()
            .any(|m| matches!(m, Mention::Everyone | Mention::Here));
        let users: Vec<Value> = pinged
            .iter()
            .filter_map(|m| match m {
                Mention::User(id) => Some(user(cfg, *id)),
                _ => None,
            })
            .collect();
        let roles: Vec<String> = pinged
            .iter()
            .filter_map(|m| match m {
                Mention::Role(id) => Some(id.to_string()),
                _ => None,
            })
            .collect();
        obj.insert("mention_everyone".into(), json!(everyone));
        obj.insert("mentions".into(), json!(users));
        obj.insert("mention_roles".into(), json!(roles));
    }
    for mention in pinged {
        inner.violation(format!(
            "message {} in channel {} would ping {mention}{}",
            t.message,
            t.channel,
            if t.edit { " (by an edit)" } else { "" }
        ));
        inner.pings.push(Ping {
            channel_id: t.channel,
            message_id: t.message,
            mention,
            edit: t.edit,
        });
    }
}

/// A mentioned user as a message's `mentions` lists it.
fn user(cfg: &FakeConfig, id: u64) -> Value {
    if id == cfg.bot_user_id {
        return crate::payloads::bot_user(cfg);
    }
    json!({
        "id": id.to_string(),
        "username": format!("user{id}"),
        "discriminator": "0",
        "global_name": null,
        "avatar": null,
        "public_flags": 0,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn mentions_outside_code_only() {
        let m = found("hi @everyone <@1> <@!2> <@&3> `@here` ```\n<@4>\n``` <@5");
        assert_eq!(
            m,
            [
                Mention::Everyone,
                Mention::User(1),
                Mention::User(2),
                Mention::Role(3)
            ]
        );
        assert_eq!(found("`` `@here` ``"), []);
        assert_eq!(found("unclosed `@here"), [Mention::Here]);
        assert_eq!(found("`a` @here `b`"), [Mention::Here]);
        assert_eq!(found("``@here`"), [Mention::Here]);
        assert_eq!(found("<@&x> <@> <@12a>"), []);
    }

    #[test]
    fn parse_and_ids_are_exclusive() {
        let bad = json!({"allowed_mentions": {"parse": ["users"], "users": ["1"]}});
        let err = validate(&bad, "data").unwrap_err();
        assert_eq!(err.path, "data.allowed_mentions");
        let fine = json!({"allowed_mentions": {"parse": ["users"], "users": [], "roles": ["2"]}});
        validate(&fine, "").unwrap();
        let odd = json!({"allowed_mentions": {"parse": ["all"]}});
        assert_eq!(
            validate(&odd, "").unwrap_err().path,
            "allowed_mentions.parse.0"
        );
    }
}
