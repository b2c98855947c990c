//! Validated names: a value of these types has passed its checks, so nothing downstream re-checks it.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::echo::visible;

/// Why a value typed by a user was refused. The `Display` text is shown in chat as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("{what} is empty")]
    Empty { what: &'static str },
    #[error("{what} `{value}` is too long ({len} characters, at most {max})")]
    TooLong {
        what: &'static str,
        value: String,
        len: usize,
        max: usize,
    },
    #[error("{what} `{value}` has {ch}; use {allowed}")]
    BadChar {
        what: &'static str,
        value: String,
        /// The character, described so that it can be seen (see [`crate::echo::describe`]).
        ch: String,
        allowed: &'static str,
    },
    #[error("`{value}` is not an IPv4 address such as 10.0.0.14")]
    NotIpv4 { value: String },
    #[error(
        "`{value}` is an IPv6 address; search nodes are named by the IPv4 address they have in \
         the inventory, such as 10.0.0.14"
    )]
    Ipv6 { value: String },
    #[error("`{value}` is not a host name such as compute-03 or compute-03.example.net")]
    BadHost { value: String },
    #[error("`{value}` is not a UUID such as 6f1a0c3e-2b7d-4c1e-9a55-0d3f4b2a8c11")]
    NotUuid { value: String },
    #[error("`{value}` is not a run id such as r-42")]
    NotRunId { value: String },
    #[error("`{value}` is not a standing approval id such as sa-3")]
    NotStandingId { value: String },
    #[error("`{value}` is not a date such as 2027-02-01 or a time such as 2027-02-01T00:00:00Z")]
    NotDate { value: String },
    #[error(
        "`{value}` is not a time such as 2026-11-28T02:00Z or 2026-11-28T03:00+01:00: a \
         date, hours 00-23 and minutes, and a zone"
    )]
    NotTime { value: String },
    #[error(
        "`{value}` is not a plan digest such as 3f9a0c1b2d4e (the 12 characters shown with the \
         plan)"
    )]
    NotDigest { value: String },
    /// An image property value outside spec 2.10.
    #[error(transparent)]
    Property(#[from] crate::openstack::image::PropertyError),
    /// Not a readable RPCVersionCapError line.
    #[error(transparent)]
    RpcLine(#[from] crate::openstack::rpc::RpcLineError),
    /// An index name or pattern was refused; its text says why.
    #[error(transparent)]
    Index(#[from] crate::index::IndexNameError),
    #[error("`{value}` is no time; write since: as 30m, 2h, 3d or 2026-11-21T03:00:00Z")]
    BadSince { value: String },
    #[error("{what} must be a whole number from {min} to {max}, not `{value}`")]
    OutOfRange {
        what: &'static str,
        value: String,
        min: u64,
        max: u64,
    },
}

/// How much of a refused value an error shows.
const SHOWN: usize = 40;

/// A whole number from `min` to `max` (a page, an age in days), as an option gives it: the
/// refusal names `what` and quotes the value as typed, cut and with hidden characters shown.
pub fn bounded_number(
    what: &'static str,
    value: &str,
    min: u32,
    max: u32,
) -> Result<u32, NameError> {
    value
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| NameError::OutOfRange {
            what,
            value: crate::echo::visible(value, SHOWN),
            min: min.into(),
            max: max.into(),
        })
}

/// Checks length and alphabet; `first` may be stricter than the rest.
fn check(
    what: &'static str,
    value: &str,
    max: usize,
    allowed: &'static str,
    first: impl Fn(char) -> bool,
    rest: impl Fn(char) -> bool,
) -> Result<(), NameError> {
    if value.is_empty() {
        return Err(NameError::Empty { what });
    }
    let len = value.chars().count();
    if len > max {
        return Err(NameError::TooLong {
            what,
            value: visible(value, SHOWN),
            len,
            max,
        });
    }
    for (i, ch) in value.chars().enumerate() {
        let ok = if i == 0 { first(ch) } else { rest(ch) };
        if !ok {
            return Err(NameError::BadChar {
                what,
                value: visible(value, SHOWN),
                ch: crate::echo::describe(ch),
                allowed,
            });
        }
    }
    Ok(())
}

/// The name of a configured cluster, as operators type it (`logs`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClusterName(String);

impl ClusterName {
    pub const MAX_LEN: usize = 64;

    pub fn parse(value: &str) -> Result<Self, NameError> {
        config_name("cluster name", value).map(Self)
    }
}
validated_string!(ClusterName, NameError);

/// The name of a configured cloud, as operators type it (`prod`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CloudName(String);

impl CloudName {
    pub const MAX_LEN: usize = ClusterName::MAX_LEN;

    pub fn parse(value: &str) -> Result<Self, NameError> {
        config_name("cloud name", value).map(Self)
    }
}
validated_string!(CloudName, NameError);

/// The name of a runbook, as its file declares it and operators type it (`nested-virt`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunbookName(String);

impl RunbookName {
    pub const MAX_LEN: usize = ClusterName::MAX_LEN;

    pub fn parse(value: &str) -> Result<Self, NameError> {
        config_name("runbook name", value).map(Self)
    }
}
validated_string!(RunbookName, NameError);

/// A group of the host inventory (`compute`, `control`), as runbooks and the config name it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupName(String);

impl GroupName {
    pub const MAX_LEN: usize = ClusterName::MAX_LEN;

    pub fn parse(value: &str) -> Result<Self, NameError> {
        config_name("group name", value).map(Self)
    }
}
validated_string!(GroupName, NameError);

/// The name of a runbook's parameter (`host`, `module`). Discord takes it as an option name, so
/// it keeps to what Discord accepts there, and `{name}` placeholders refer to it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ParamName(String);

impl ParamName {
    pub const MAX_LEN: usize = 32;

    pub fn parse(value: &str) -> Result<Self, NameError> {
        check(
            "parameter name",
            value,
            Self::MAX_LEN,
            "lower-case letters, digits and `_`, starting with a letter",
            |c| c.is_ascii_lowercase(),
            |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_',
        )?;
        Ok(Self(value.to_owned()))
    }
}
validated_string!(ParamName, NameError);

/// The alphabet of names operators give things in opsbot's config: a word that is safe in a
/// store key, a chat line and a command line alike.
pub(crate) fn config_name(what: &'static str, value: &str) -> Result<String, NameError> {
    let lower = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    check(
        what,
        value,
        ClusterName::MAX_LEN,
        "lower-case letters, digits, `-` and `_`",
        lower,
        |c| lower(c) || c == '-' || c == '_',
    )?;
    Ok(value.to_owned())
}

/// A hypervisor's host name as the compute service and placement know it (`compute-03`, or a
/// fully qualified `compute-03.example.net`): RFC 1123 labels, compared exactly as typed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostName(String);

impl HostName {
    /// The DNS limit on a whole name.
    pub const MAX_LEN: usize = 253;

    pub fn parse(value: &str) -> Result<Self, NameError> {
        let alnum = |c: char| c.is_ascii_alphanumeric();
        check(
            "host name",
            value,
            Self::MAX_LEN,
            "letters, digits, `-`, `_` and `.`",
            alnum,
            |c| alnum(c) || matches!(c, '-' | '_' | '.'),
        )?;
        if value.ends_with(['.', '-']) || value.contains("..") {
            return Err(NameError::BadHost {
                value: visible(value, SHOWN),
            });
        }
        Ok(Self(value.to_owned()))
    }
}
validated_string!(HostName, NameError);

/// A person's name, as the config names them once for every surface (`alice`). Requests,
/// approvals and audit records carry it; the two-person rule compares it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PersonName(String);

impl PersonName {
    pub const MAX_LEN: usize = 32;

    pub fn parse(value: &str) -> Result<Self, NameError> {
        let lower = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
        check(
            "person name",
            value,
            Self::MAX_LEN,
            "lower-case letters, digits, `.`, `-` and `_`",
            lower,
            |c| lower(c) || matches!(c, '.' | '-' | '_'),
        )?;
        Ok(Self(value.to_owned()))
    }

    /// A schedule's name as the name of its runs' requester: valid as it is, since a schedule
    /// name's alphabet is part of a person name's and it is at most as long.
    pub(crate) fn of_schedule(schedule: &crate::schedule::ScheduleName) -> Self {
        Self(schedule.as_str().to_owned())
    }
}
validated_string!(PersonName, NameError);

impl PersonName {
    /// Stands for someone an old record names in a way no person name can be written.
    pub(crate) fn unknown() -> Self {
        Self("unknown".to_owned())
    }
}

/// Printable text up to `max` characters, trimmed. Nothing hidden (zero-width, bidi controls):
/// what the bot repeats to others must read as what it is.
fn free_text(what: &'static str, value: &str, max: usize) -> Result<String, NameError> {
    let printable = |c: char| c == ' ' || c == '`' || !crate::echo::is_hidden(c);
    let value = value.trim();
    check(what, value, max, "visible text", printable, printable)?;
    Ok(value.to_owned())
}

/// Free text an operator gives as a reason (`/reject id:r-4 reason:"not tonight"`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reason(String);

impl Reason {
    pub const MAX_LEN: usize = 200;

    pub fn parse(value: &str) -> Result<Self, NameError> {
        free_text("reason", value, Self::MAX_LEN).map(Self)
    }
}
validated_string!(Reason, NameError);

/// What operators announce about maintenance (`/maintenance announce text:"..."`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Notice(String);

impl Notice {
    pub const MAX_LEN: usize = 300;

    pub fn parse(value: &str) -> Result<Self, NameError> {
        free_text("announcement", value, Self::MAX_LEN).map(Self)
    }
}
validated_string!(Notice, NameError);

/// A search node, addressed by its IPv4 address: Kolla names each node after its IP, and the
/// allocation exclusion setting takes an IP. IPv6 is refused because no supported deployment uses it
/// and `exclude._ip` would need brackets the operators never type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeAddr(Ipv4Addr);

impl NodeAddr {
    pub fn parse(value: &str) -> Result<Self, NameError> {
        // `Ipv4Addr::from_str` already refuses leading zeros, signs and spaces.
        value.parse::<Ipv4Addr>().map(Self).map_err(|_| {
            let value = visible(value, SHOWN);
            let brackets: &[char] = &['[', ']'];
            if value.trim_matches(brackets).parse::<Ipv6Addr>().is_ok() {
                NameError::Ipv6 { value }
            } else {
                NameError::NotIpv4 { value }
            }
        })
    }

    pub fn ip(self) -> Ipv4Addr {
        self.0
    }
}

impl From<Ipv4Addr> for NodeAddr {
    fn from(ip: Ipv4Addr) -> Self {
        Self(ip)
    }
}

impl fmt::Display for NodeAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for NodeAddr {
    type Err = NameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl Serialize for NodeAddr {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for NodeAddr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Self::parse(&raw).map_err(serde::de::Error::custom)
    }
}

/// A run's id, shown as `r-42` so it is easy to type at 3 a.m.; `42` is accepted too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(u64);

impl RunId {
    pub fn new(n: u64) -> Self {
        Self(n)
    }

    pub fn get(self) -> u64 {
        self.0
    }

    pub fn parse(value: &str) -> Result<Self, NameError> {
        let digits = value.strip_prefix("r-").unwrap_or(value);
        let bad = || NameError::NotRunId {
            value: visible(value, SHOWN),
        };
        if digits.is_empty() || digits.len() > 18 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        digits.parse().map(Self).map_err(|_| bad())
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r-{}", self.0)
    }
}

impl FromStr for RunId {
    type Err = NameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_names_are_lower_case_words() {
        assert!(ClusterName::parse("logs").is_ok());
        assert!(ClusterName::parse("kolla_logging-2").is_ok());
        for bad in [
            "",
            "Logs",
            "-logs",
            "logs!",
            "a b",
            "lo*gs",
            &"x".repeat(65),
        ] {
            assert!(ClusterName::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn host_names_are_dns_labels() {
        for good in [
            "compute-03",
            "compute-03.example.net",
            "HV1",
            "kolla_compute1",
        ] {
            assert!(HostName::parse(good).is_ok(), "{good:?} was refused");
        }
        for bad in [
            "",
            "-compute",
            "compute-03.",
            "compute..03",
            "compute 03",
            "compute*",
            "10.0.0.1/24",
            &"h".repeat(254),
        ] {
            assert!(HostName::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn cloud_names_follow_cluster_names() {
        assert!(CloudName::parse("prod").is_ok());
        assert!(CloudName::parse("Prod").is_err());
        assert_eq!(
            CloudName::parse("").unwrap_err().to_string(),
            "cloud name is empty"
        );
    }

    #[test]
    fn node_addresses_are_plain_ipv4() {
        assert_eq!(
            NodeAddr::parse("10.0.0.14").map(|n| n.to_string()),
            Ok("10.0.0.14".into())
        );
        for bad in [
            "10.0.0.256",
            "10.0.0",
            "010.0.0.1",
            "::1",
            "fe80::1",
            " 10.0.0.1",
            "host-1",
        ] {
            assert!(NodeAddr::parse(bad).is_err(), "{bad:?} was accepted");
        }
        for ipv6 in ["::1", "fe80::1", "[2001:db8::14]"] {
            assert!(
                matches!(NodeAddr::parse(ipv6), Err(NameError::Ipv6 { .. })),
                "{ipv6:?} was not recognised as IPv6"
            );
        }
    }

    #[test]
    fn run_ids_read_with_or_without_prefix() {
        assert_eq!(RunId::parse("r-42"), Ok(RunId::new(42)));
        assert_eq!(RunId::parse("42"), Ok(RunId::new(42)));
        for bad in ["r-", "r42", "-1", "r-1x", "99999999999999999999"] {
            assert!(RunId::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn long_values_are_shortened_in_errors() {
        let long = "x".repeat(300);
        let text = Reason::parse(&long).unwrap_err().to_string();
        assert!(text.len() < 120, "{text}");
        assert!(text.contains("at most 200"), "{text}");
    }

    #[test]
    fn deserializing_validates() {
        assert!(serde_json::from_str::<ClusterName>("\"Bad Name\"").is_err());
        assert!(serde_json::from_str::<NodeAddr>("\"::1\"").is_err());
    }
}
