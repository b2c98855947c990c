//! Fault rules: network and server misbehaviour injected in front of the cluster API.

use std::str::FromStr;
use std::time::Duration;
use std::{fmt, io};

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use crate::units::{TimeParseError, parse_millis};

/// What a fault does to a matching request.
///
/// Durations are real (wall-clock) milliseconds, not simulated time: they model the network
/// and the proxy in front of the cluster, which do not speed up with the simulation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FaultKind {
    /// Wait, then answer normally.
    Latency {
        /// Delay in milliseconds.
        ms: u64,
    },
    /// Answer with this HTTP status (400..=599) and the body the real stack would send.
    Status {
        /// HTTP status code.
        status: u16,
    },
    /// Hold the request this long before answering normally; clients with shorter timeouts give up.
    Timeout {
        /// Hold time in milliseconds.
        ms: u64,
    },
    /// Answer 200 `application/json` with a truncated body.
    MalformedJson,
    /// Close the connection without a complete response.
    Drop,
    /// Answer as if the request was done and change nothing: what a client sees of a change a
    /// server acknowledged and did not keep (a master that failed over before every node had
    /// it, a snapshot or a block that held the index), and of a proxy that answered for it.
    /// Only changes match it: a read (GET, HEAD) has nothing to lose and is answered as usual.
    Lost,
}

/// One fault rule. The first rule that matches a request and has count left fires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultRule {
    /// What happens.
    #[serde(flatten)]
    pub kind: FaultKind,
    /// How many requests it still applies to; `None` = until the rules are cleared.
    #[serde(default)]
    pub count: Option<u32>,
    /// Only requests with this HTTP method (case-insensitive).
    #[serde(default)]
    pub method: Option<String>,
    /// Only requests whose path starts with this.
    #[serde(default)]
    pub path_prefix: Option<String>,
}

impl FaultRule {
    /// A rule with no filters and no count limit.
    pub fn new(kind: FaultKind) -> Self {
        FaultRule {
            kind,
            count: None,
            method: None,
            path_prefix: None,
        }
    }

    fn matches(&self, method: &str, path: &str) -> bool {
        let read = method.eq_ignore_ascii_case("GET") || method.eq_ignore_ascii_case("HEAD");
        self.count != Some(0)
            && !(read && self.kind == FaultKind::Lost)
            && self
                .method
                .as_deref()
                .is_none_or(|wanted| wanted.eq_ignore_ascii_case(method))
            && self
                .path_prefix
                .as_deref()
                .is_none_or(|prefix| path.starts_with(prefix))
    }
}

/// Finds the rule that fires for a request and consumes one of its count.
pub fn take_matching(rules: &mut [FaultRule], method: &str, path: &str) -> Option<FaultKind> {
    let rule = rules.iter_mut().find(|rule| rule.matches(method, path))?;
    if let Some(count) = rule.count.as_mut() {
        *count -= 1;
    }
    Some(rule.kind.clone())
}

/// Marks a response whose connection is cut, so a call log records no status for it.
#[derive(Debug, Clone, Copy)]
pub struct Dropped;

/// What is left to do once a fired fault has had the effect every simulated API shares.
///
/// Error bodies and truncated bodies differ per API, so those are left to the caller.
#[derive(Debug)]
pub enum FaultEffect {
    /// Any delay is over: answer normally.
    Proceed,
    /// Answer with this status and the error body the simulated service would send.
    Status(StatusCode),
    /// Answer 200 `application/json` with a body cut short.
    MalformedJson,
    /// Send this response: it aborts the connection mid-response and carries [`Dropped`].
    Drop(Response),
    /// Answer the service's success for the request, and change nothing.
    Lost,
}

impl FaultKind {
    /// Serves the delay of a latency or timeout fault, or builds the cut connection of a
    /// drop, for simulators other than this crate's cluster (which renders its own).
    pub async fn apply(&self) -> FaultEffect {
        match self {
            FaultKind::Latency { ms } | FaultKind::Timeout { ms } => {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                FaultEffect::Proceed
            }
            FaultKind::Status { status } => FaultEffect::Status(
                StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            ),
            FaultKind::MalformedJson => FaultEffect::MalformedJson,
            FaultKind::Lost => FaultEffect::Lost,
            FaultKind::Drop => {
                // A body stream that fails at once makes hyper abort the connection.
                let failing = futures::stream::once(async {
                    Err::<Bytes, io::Error>(io::Error::new(
                        io::ErrorKind::ConnectionReset,
                        "simulated connection drop",
                    ))
                });
                let mut response = Body::from_stream(failing).into_response();
                response.extensions_mut().insert(Dropped);
                FaultEffect::Drop(response)
            }
        }
    }
}

/// Why a `--fault` specification could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FaultParseError {
    /// Nothing but separators.
    #[error("empty fault specification")]
    Empty,
    /// The first item is not a fault kind.
    #[error("unknown fault kind [{0}]: expected status=N, latency=T, timeout=T, malformed or drop")]
    UnknownKind(String),
    /// A kind that takes a value was given without one (or the reverse).
    #[error("fault [{0}] needs a value, e.g. status=503 or latency=200ms")]
    MissingValue(String),
    /// Status outside 400..=599.
    #[error("invalid status [{0}]: expected an HTTP error status 400..=599")]
    BadStatus(String),
    /// A duration without a unit or with an unknown one.
    #[error("invalid duration: {0}")]
    BadDuration(#[from] TimeParseError),
    /// `count=` not a non-negative integer.
    #[error("invalid count [{0}]: expected a whole number")]
    BadCount(String),
    /// An option other than count, method or path.
    #[error("unknown fault option [{0}]: expected count=, method= or path=")]
    UnknownOption(String),
    /// The same option twice.
    #[error("option [{0}] given twice")]
    Duplicate(String),
}

fn parse_kind(item: &str) -> Result<FaultKind, FaultParseError> {
    let (name, value) = match item.split_once('=') {
        Some((name, value)) => (name.trim(), Some(value.trim())),
        None => (item.trim(), None),
    };
    let missing = || FaultParseError::MissingValue(name.to_owned());
    match (name.to_ascii_lowercase().as_str(), value) {
        ("status", Some(value)) => value
            .parse::<u16>()
            .ok()
            .filter(|status| (400..=599).contains(status))
            .map(|status| FaultKind::Status { status })
            .ok_or_else(|| FaultParseError::BadStatus(value.to_owned())),
        ("latency", Some(value)) => Ok(FaultKind::Latency {
            ms: parse_millis(value)?,
        }),
        ("timeout", Some(value)) => Ok(FaultKind::Timeout {
            ms: parse_millis(value)?,
        }),
        ("malformed" | "malformed_json", None) => Ok(FaultKind::MalformedJson),
        ("drop", None) => Ok(FaultKind::Drop),
        ("lost", None) => Ok(FaultKind::Lost),
        (
            "status" | "latency" | "timeout" | "malformed" | "malformed_json" | "drop" | "lost",
            _,
        ) => Err(missing()),
        _ => Err(FaultParseError::UnknownKind(item.trim().to_owned())),
    }
}

fn set_once<T>(slot: &mut Option<T>, value: T, name: &str) -> Result<(), FaultParseError> {
    if slot.replace(value).is_some() {
        return Err(FaultParseError::Duplicate(name.to_owned()));
    }
    Ok(())
}

impl FromStr for FaultRule {
    type Err = FaultParseError;

    /// Parses the CLI form: `KIND[,count=N][,method=M][,path=/prefix]`, e.g. `status=429,count=3`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut items = s.split(',').map(str::trim).filter(|item| !item.is_empty());
        let mut rule = FaultRule::new(parse_kind(items.next().ok_or(FaultParseError::Empty)?)?);
        for item in items {
            let Some((name, value)) = item.split_once('=') else {
                return Err(FaultParseError::UnknownOption(item.to_owned()));
            };
            let (name, value) = (name.trim(), value.trim());
            match name.to_ascii_lowercase().as_str() {
                "count" => {
                    let count = value
                        .parse()
                        .map_err(|_| FaultParseError::BadCount(value.to_owned()))?;
                    set_once(&mut rule.count, count, name)?;
                }
                "method" => set_once(&mut rule.method, value.to_ascii_uppercase(), name)?,
                "path" => set_once(&mut rule.path_prefix, value.to_owned(), name)?,
                _ => return Err(FaultParseError::UnknownOption(name.to_owned())),
            }
        }
        Ok(rule)
    }
}

impl fmt::Display for FaultRule {
    /// The CLI form, so that a displayed rule parses back to itself.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            FaultKind::Latency { ms } => write!(f, "latency={ms}ms")?,
            FaultKind::Status { status } => write!(f, "status={status}")?,
            FaultKind::Timeout { ms } => write!(f, "timeout={ms}ms")?,
            FaultKind::MalformedJson => f.write_str("malformed")?,
            FaultKind::Drop => f.write_str("drop")?,
            FaultKind::Lost => f.write_str("lost")?,
        }
        if let Some(count) = self.count {
            write!(f, ",count={count}")?;
        }
        if let Some(method) = &self.method {
            write!(f, ",method={method}")?;
        }
        if let Some(path) = &self.path_prefix {
            write!(f, ",path={path}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_examples() {
        let rule: FaultRule = "status=429,count=3".parse().unwrap();
        assert_eq!(rule.kind, FaultKind::Status { status: 429 });
        assert_eq!(rule.count, Some(3));
        let rule: FaultRule = "timeout=60s,path=/_cluster/health".parse().unwrap();
        assert_eq!(rule.kind, FaultKind::Timeout { ms: 60_000 });
        assert_eq!(rule.path_prefix.as_deref(), Some("/_cluster/health"));
        let rule: FaultRule = "drop,count=2,method=put".parse().unwrap();
        assert_eq!(
            (rule.kind, rule.method.as_deref()),
            (FaultKind::Drop, Some("PUT"))
        );
        assert_eq!(
            "malformed,count=1".parse::<FaultRule>().unwrap().kind,
            FaultKind::MalformedJson
        );
        assert_eq!(
            "latency=200ms".parse::<FaultRule>().unwrap().kind,
            FaultKind::Latency { ms: 200 }
        );
        let lost: FaultRule = "lost,count=1,method=DELETE".parse().unwrap();
        assert_eq!(lost.kind, FaultKind::Lost);
        assert_eq!(lost.to_string(), "lost,count=1,method=DELETE");
        // A read has no change to lose: it neither matches nor uses up the count.
        let mut rules = vec!["lost,count=1".parse::<FaultRule>().unwrap()];
        assert_eq!(take_matching(&mut rules, "GET", "/_cat/indices"), None);
        assert_eq!(
            take_matching(&mut rules, "DELETE", "/flog-2026.01.01"),
            Some(FaultKind::Lost)
        );
    }

    #[test]
    fn rejects_bad_syntax_with_specific_errors() {
        let parse = |s: &str| s.parse::<FaultRule>().unwrap_err();
        assert_eq!(parse(""), FaultParseError::Empty);
        assert_eq!(
            parse("status=200"),
            FaultParseError::BadStatus("200".into())
        );
        assert_eq!(
            parse("latency=200"),
            FaultParseError::BadDuration(TimeParseError("200".into()))
        );
        assert_eq!(
            parse("explode"),
            FaultParseError::UnknownKind("explode".into())
        );
        assert_eq!(
            parse("status"),
            FaultParseError::MissingValue("status".into())
        );
        assert_eq!(parse("drop,count=x"), FaultParseError::BadCount("x".into()));
        assert_eq!(
            parse("drop,colour=red"),
            FaultParseError::UnknownOption("colour".into())
        );
        assert_eq!(
            parse("drop,count=1,count=2"),
            FaultParseError::Duplicate("count".into())
        );
    }

    #[test]
    fn display_parses_back() {
        for spec in [
            "status=503,count=2,method=GET,path=/_cat",
            "timeout=1500ms",
            "drop",
        ] {
            let rule: FaultRule = spec.parse().unwrap();
            assert_eq!(rule.to_string().parse::<FaultRule>().unwrap(), rule);
        }
    }

    #[test]
    fn json_form_is_flat_and_tagged() {
        let rule: FaultRule =
            serde_json::from_str(r#"{"kind":"status","status":503,"count":1}"#).unwrap();
        assert_eq!(rule, "status=503,count=1".parse().unwrap());
        let json = serde_json::to_value(FaultRule::new(FaultKind::MalformedJson)).unwrap();
        assert_eq!(json["kind"], "malformed_json");
    }

    #[test]
    fn first_matching_rule_with_count_left_fires() {
        let mut rules = vec![
            "status=429,count=1,method=PUT".parse().unwrap(),
            "latency=5ms,path=/_cat".parse().unwrap(),
        ];
        assert_eq!(take_matching(&mut rules, "GET", "/_cluster/health"), None);
        assert_eq!(
            take_matching(&mut rules, "put", "/_cluster/settings"),
            Some(FaultKind::Status { status: 429 })
        );
        assert_eq!(take_matching(&mut rules, "PUT", "/_cluster/settings"), None);
        assert_eq!(rules[0].count, Some(0));
        assert!(take_matching(&mut rules, "GET", "/_cat/health").is_some());
    }

    #[tokio::test]
    async fn apply_leaves_bodies_to_the_caller() {
        assert!(matches!(
            FaultKind::Latency { ms: 1 }.apply().await,
            FaultEffect::Proceed
        ));
        assert!(matches!(
            FaultKind::Status { status: 503 }.apply().await,
            FaultEffect::Status(StatusCode::SERVICE_UNAVAILABLE)
        ));
        assert!(matches!(
            FaultKind::MalformedJson.apply().await,
            FaultEffect::MalformedJson
        ));
        let FaultEffect::Drop(response) = FaultKind::Drop.apply().await else {
            panic!("a drop fault must cut the connection");
        };
        assert!(response.extensions().get::<Dropped>().is_some());
    }
}
