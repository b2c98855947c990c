//! Backend failures, classified by whether repeating the request is safe and useful.

use std::fmt;

use super::transport::{Cause, Unreachable};

/// What went wrong with one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// No answer within the client timeout.
    Timeout,
    /// Connection refused, reset or dropped before a complete answer, at which address and why.
    Connect(Unreachable),
    /// The answer was larger than opsbot reads (`limit` bytes); it was refused unread.
    TooLarge { limit: u64 },
    /// The server answered with an error status; `reason` is its own error type or text.
    Status { status: u16, reason: String },
    /// The search cluster has no elected master (503 `master_not_discovered_exception`).
    NoMaster,
    /// The answer was not what the API documents (malformed JSON, missing field).
    Decode(String),
    /// The cloud's catalog lacks the endpoint opsbot needs; repeating cannot help.
    Catalog(String),
    /// Not the backend's: this instance may no longer act (another took the store's lease,
    /// or its own lapsed), so the request was not sent. The active instance resumes the run.
    NotActing(String),
}

impl Fault {
    /// Faults that a repeated request may not meet: timeouts, dropped connections, 408, 429,
    /// 5xx and garbled bodies (a proxy cutting an answer). Every call opsbot repeats is
    /// idempotent (reads, settings, flush), so repeating is also safe.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Timeout | Self::NoMaster | Self::Decode(_) => true,
            // A certificate does not change between tries.
            Self::Connect(unreachable) => !matches!(unreachable.cause, Cause::Tls(_)),
            Self::Status { status, .. } => matches!(status, 408 | 429 | 500..=599),
            Self::Catalog(_) | Self::TooLarge { .. } | Self::NotActing(_) => false,
        }
    }
}

impl Fault {
    /// A short name of the fault, from a closed set: the `fault` label of the backend-error
    /// metric.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::Connect(unreachable) => match unreachable.cause {
                Cause::Refused => "connection_refused",
                Cause::Dns => "dns",
                Cause::ConnectTimeout => "connect_timeout",
                Cause::Tls(_) => "tls",
                Cause::Closed => "connection_closed",
            },
            Self::TooLarge { .. } => "too_large",
            Self::Status { status: 401, .. } => "http_401",
            Self::Status { status: 403, .. } => "http_403",
            Self::Status { status: 429, .. } => "http_429",
            Self::Status {
                status: 500..=599, ..
            } => "http_5xx",
            Self::Status { .. } => "http_4xx",
            Self::NoMaster => "no_master",
            Self::Decode(_) => "malformed_answer",
            Self::Catalog(_) => "catalog",
            Self::NotActing(_) => "not_acting",
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout => f.write_str("did not answer in time"),
            Self::Connect(unreachable) => unreachable.fmt(f),
            Self::TooLarge { limit } => write!(
                f,
                "sent an answer larger than {} MiB; opsbot refuses it unread",
                limit / (1024 * 1024)
            ),
            Self::Status { status, reason } if reason.is_empty() => write!(f, "answered {status}"),
            Self::Status { status, reason } => write!(f, "answered {status} ({reason})"),
            Self::NoMaster => f.write_str("answered 503 (no elected master)"),
            Self::Decode(detail) => write!(f, "sent an answer opsbot cannot read ({detail})"),
            Self::Catalog(detail) => write!(f, "cannot be used: {detail}"),
            Self::NotActing(detail) => write!(f, "was not sent: {detail}"),
        }
    }
}

/// A failed call: which service, which request, what happened, and how many tries it took.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{service}: {request} {fault}{}", tries_text(*.tries))]
pub struct BackendError {
    pub service: String,
    pub request: String,
    pub fault: Fault,
    pub tries: u32,
}

impl BackendError {
    /// The failure of one try; the retry policy counts further tries. A long request line (a
    /// path naming a chunk of indices) is cut: an operator reads what failed, not 3,000 names.
    pub fn once(service: impl Into<String>, request: &str, fault: Fault) -> Self {
        const SHOWN: usize = 100;
        let request = match request.char_indices().nth(SHOWN) {
            Some((end, _)) => format!("{}…", &request[..end]),
            None => request.to_owned(),
        };
        Self {
            service: service.into(),
            request,
            fault,
            tries: 1,
        }
    }
}

fn tries_text(tries: u32) -> String {
    if tries > 1 {
        format!(" after {tries} tries")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_request_line_is_cut_in_what_an_operator_reads() {
        let names: Vec<String> = (1..=200).map(|n| format!("flog-2026.01.{n:03}")).collect();
        let request = format!("GET /_plugins/_ism/explain/{}", names.join(","));
        let error = BackendError::once("search cluster `logs`", &request, Fault::Timeout);
        assert_eq!(error.request.chars().count(), 101);
        assert!(
            error
                .request
                .starts_with("GET /_plugins/_ism/explain/flog-2026.01.001,")
        );
        assert!(error.request.ends_with('…'));
        let short = BackendError::once("search cluster `logs`", "GET /", Fault::Timeout);
        assert_eq!(short.request, "GET /");
    }
}
