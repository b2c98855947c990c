//! The request log: every cluster API request, in arrival order, with the status it got.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

/// One cluster API request as the simulator received it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    /// 1-based arrival number; keeps counting when the log is cleared.
    pub seq: u64,
    /// HTTP method, upper case.
    pub method: String,
    /// Request path as sent (still percent-encoded).
    pub path: String,
    /// Raw query string without `?`; empty if none.
    pub query: String,
    /// Request body (lossy UTF-8).
    pub body: String,
    /// Status sent; 0 while pending, or if no complete response was sent (a `drop` fault,
    /// or the client gave up first).
    pub status: u16,
    /// The request's `X-Opaque-Id` header: ES copies it into the headers of the request's
    /// tasks (`GET _tasks`) and echoes it in the response.
    #[serde(default)]
    pub opaque_id: Option<String>,
    /// The client closed the connection before the answer was ready. What the request started
    /// may go on regardless (an index deletion does).
    #[serde(default)]
    pub hung_up: bool,
}

impl Call {
    /// The index names the request's path names: `/a,b` names `a` and `b` (what a DELETE
    /// deletes).
    pub fn path_names(&self) -> Vec<String> {
        self.path
            .trim_start_matches('/')
            .split(',')
            .map(str::to_owned)
            .collect()
    }
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
    pub(crate) fn begin(
        &mut self,
        method: &str,
        path: &str,
        query: &str,
        body: &[u8],
        opaque_id: Option<&str>,
    ) -> u64 {
        self.next_seq += 1;
        if self.calls.len() == CAPACITY {
            self.calls.pop_front();
        }
        self.calls.push_back(Call {
            seq: self.next_seq,
            method: method.to_owned(),
            path: path.to_owned(),
            query: query.to_owned(),
            body: String::from_utf8_lossy(body).into_owned(),
            status: 0,
            opaque_id: opaque_id.map(str::to_owned),
            hung_up: false,
        });
        self.next_seq
    }

    fn entry(&mut self, seq: u64) -> Option<&mut Call> {
        self.calls.iter_mut().rev().find(|call| call.seq == seq)
    }

    /// Sets the status of a recorded request once the response is ready.
    pub(crate) fn finish(&mut self, seq: u64, status: u16) {
        if let Some(call) = self.entry(seq) {
            call.status = status;
        }
    }

    /// Marks a request whose client went away before its answer was ready (status stays 0).
    pub(crate) fn hang_up(&mut self, seq: u64) {
        if let Some(call) = self.entry(seq) {
            call.hung_up = true;
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
    fn sequence_survives_clearing() {
        let mut log = CallLog::default();
        let first = log.begin("GET", "/", "", b"", None);
        log.finish(first, 200);
        assert_eq!(log.list()[0].status, 200);
        log.clear();
        assert_eq!(
            log.begin("PUT", "/x", "pretty", b"{}", Some("opsbot/r-1/1")),
            2
        );
        log.hang_up(2);
        let call = &log.list()[0];
        assert_eq!(
            (call.opaque_id.as_deref(), call.hung_up, call.status),
            (Some("opsbot/r-1/1"), true, 0)
        );
    }
}
