//! The ids people have on the chat platforms, checked when the config is read, so that a
//! display name or a handle (which its owner can change) is never taken for one.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A Slack member id as Slack writes it: `U` or `W` (an Enterprise Grid user) and up to 20
/// more capitals and digits. Checked when the config is read, so that a display name or an
/// `@handle` (which their owner can change) is never taken for one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SlackUser(String);

impl SlackUser {
    pub fn parse(text: &str) -> Result<Self, String> {
        let well_formed = (2..=21).contains(&text.len())
            && text.starts_with(['U', 'W'])
            && text
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
        if well_formed {
            Ok(Self(text.to_owned()))
        } else {
            Err(format!(
                "`{}` is not a Slack member id (like U024BE7LH: in Slack, the person's profile, ⋮, \
                 Copy member ID)",
                crate::echo::visible(text, 32)
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for SlackUser {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        Self::parse(&text)
    }
}

impl From<SlackUser> for String {
    fn from(user: SlackUser) -> Self {
        user.0
    }
}

impl fmt::Display for SlackUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A Matrix user id: `@localpart:server`, as the spec's grammar has it (a localpart of
/// lowercase letters, digits and `._=-/+`, or the wider historical set of printable ASCII; a
/// server name, optionally with a port; 255 bytes in all). A display name is not an id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct MatrixUser(String);

impl MatrixUser {
    pub fn parse(text: &str) -> Result<Self, String> {
        let well_formed = text.len() <= 255
            && text
                .strip_prefix('@')
                .and_then(|rest| rest.split_once(':'))
                .is_some_and(|(local, server)| {
                    !local.is_empty()
                        && local
                            .bytes()
                            .all(|b| (0x21..=0x7e).contains(&b) && b != b':')
                        && is_server_name(server)
                });
        if well_formed {
            Ok(Self(text.to_owned()))
        } else {
            Err(format!(
                "`{}` is not a Matrix user id (like @alice:example.org: in Element, the person's \
                 profile shows it under their name)",
                crate::echo::visible(text, 64)
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A Matrix server name: a host name, an IPv4 address or a bracketed IPv6 one, with an
/// optional port.
pub fn is_server_name(server: &str) -> bool {
    let (host, port) = match server.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(':') && !port.contains(']') => (host, Some(port)),
        _ => (server, None),
    };
    let port_ok =
        port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    let host_ok = if let Some(v6) = host.strip_prefix('[') {
        v6.strip_suffix(']').is_some_and(|a| {
            !a.is_empty()
                && a.bytes()
                    .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        })
    } else {
        !host.is_empty()
            && host.len() <= 255
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
    };
    port_ok && host_ok
}

impl TryFrom<String> for MatrixUser {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        Self::parse(&text)
    }
}

impl From<MatrixUser> for String {
    fn from(user: MatrixUser) -> Self {
        user.0
    }
}

impl fmt::Display for MatrixUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
