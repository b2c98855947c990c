//! The last word on a request that changes a cluster: whether this bot may still act, asked
//! in the connection's own write path, as the request's final bytes are released.
//!
//! The engine checks its tenure before each side effect, but between that check and the bytes
//! on the wire lie a few task switches (building the request, the pool, the connection's
//! task). A bot paused there (SIGSTOP, a frozen VM) past its lease would, on waking, send a
//! DELETE the instance that took over may already have sent: a search cluster has no fencing
//! token to refuse it. So a changing request carries its body as [`Gated`], sent with chunked
//! encoding: the cluster acts on a request only once its last chunk has arrived, and the
//! connection asks the gate for that chunk in the same poll that writes it out. A bot that
//! wakes past its tenure fails the request before its end leaves; the server drops the
//! incomplete one with the connection.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

/// Whether this bot may act now; the error says why not.
type Check = dyn Fn() -> Result<(), String> + Send + Sync;

/// Asked before the end of every request that changes a cluster.
#[derive(Clone)]
pub struct Gate(Option<Arc<Check>>);

impl Gate {
    /// Always open: a client that changes nothing (`opsbot plan`, `opsbot check`), or a bot
    /// alone on its store.
    pub fn open() -> Self {
        Self(None)
    }

    /// Open while `check` says this bot may act.
    pub fn new(check: impl Fn() -> Result<(), String> + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(check)))
    }

    fn check(&self) -> Result<(), Closed> {
        match &self.0 {
            None => Ok(()),
            Some(check) => check().map_err(Closed),
        }
    }
}

impl fmt::Debug for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Gate"
        } else {
            "Gate(open)"
        })
    }
}

/// Why the gate held a request back: the bot may no longer act.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Closed(pub String);

/// A request body released only through an open gate: its bytes, then its end, each asked
/// for by the connection as it writes. No size is announced, so the connection must ask for
/// the end (chunked encoding) even when there are no bytes.
pub struct Gated {
    gate: Gate,
    bytes: Option<Bytes>,
}

impl Gated {
    pub fn new(gate: Gate, bytes: Bytes) -> Self {
        Self {
            gate,
            bytes: Some(bytes).filter(|b| !b.is_empty()),
        }
    }
}

impl Body for Gated {
    type Data = Bytes;
    type Error = Closed;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Closed>>> {
        if let Err(closed) = self.gate.check() {
            return Poll::Ready(Some(Err(closed)));
        }
        Poll::Ready(self.bytes.take().map(|bytes| Ok(Frame::data(bytes))))
    }

    /// Unknown, even with the bytes at hand: a known length would let the connection end the
    /// request without asking for its end.
    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

#[cfg(test)]
mod tests;
