//! The request log: every OpenStack API request, in arrival order, without any secret.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

/// One OpenStack API request as the simulator received it.
///
/// Tokens and passwords never appear here: only whether a token was sent, and no body for
/// Keystone's `POST /identity/v3/auth/tokens` (it carries the password).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    /// 1-based arrival number; keeps counting when the log is cleared.
    pub seq: u64,
    /// HTTP method, upper case.
    pub method: String,
    /// Request path as sent (still percent-encoded), e.g. `/placement/allocations/{uuid}`.
    pub path: String,
    /// Raw query string without `?`; empty if none.
    pub query: String,
    /// Status sent; 0 while pending, or if no complete response was sent (a `drop` fault).
    pub status: u16,
    /// The microversion the request was served at, as the `OpenStack-API-Version` response
    /// header names it (`placement 1.17`, `compute 2.53`); `None` where none applies.
    pub microversion: Option<String>,
    /// Whether an `X-Auth-Token` header was present.
    pub token_present: bool,
    /// The body of a POST, PUT or PATCH (lossy UTF-8); `None` for other methods and for
    /// token requests.
    pub body: Option<String>,
}

/// What is known of a request when it arrives.
#[derive(Debug)]
pub(crate) struct Arrival<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    pub token_present: bool,
    pub body: Option<String>,
}

/// Oldest entries are dropped past this size so a long demo cannot exhaust memory.
const CAPACITY: usize = 100_000;

/// The log itself; lives behind the app's mutex.
#[derive(Debug, Default)]
pub(crate) struct CallLog {
    next_seq: u64,
    calls: VecDeque<Call>,
}

impl CallLog {
    /// Records a request on arrival (status 0) and returns its sequence number.
    pub(crate) fn begin(&mut self, arrival: Arrival<'_>) -> u64 {
        self.next_seq += 1;
        if self.calls.len() == CAPACITY {
            self.calls.pop_front();
        }
        self.calls.push_back(Call {
            seq: self.next_seq,
            method: arrival.method.to_owned(),
            path: arrival.path.to_owned(),
            query: arrival.query.to_owned(),
            status: 0,
            microversion: None,
            token_present: arrival.token_present,
            body: arrival.body,
        });
        self.next_seq
    }

    /// Completes a recorded request once the response is ready.
    pub(crate) fn finish(&mut self, seq: u64, status: u16, microversion: Option<String>) {
        if let Some(call) = self.calls.iter_mut().rev().find(|call| call.seq == seq) {
            call.status = status;
            call.microversion = microversion;
        }
    }

    pub(crate) fn list(&self) -> Vec<Call> {
        self.calls.iter().cloned().collect()
    }

    pub(crate) fn clear(&mut self) {
        self.calls.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_survives_clearing_and_finish_fills_in() {
        let mut log = CallLog::default();
        let arrival = |path| Arrival {
            method: "GET",
            path,
            query: "",
            token_present: true,
            body: None,
        };
        let first = log.begin(arrival("/placement/"));
        log.finish(first, 200, Some("placement 1.0".into()));
        assert_eq!(log.list()[0].status, 200);
        assert_eq!(log.list()[0].microversion.as_deref(), Some("placement 1.0"));
        log.clear();
        assert_eq!(log.begin(arrival("/image/v2/images")), 2);
        assert_eq!(log.list().len(), 1);
    }
}
