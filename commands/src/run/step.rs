//! Where one step of a run stands.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// One step's state. `Started` is written (and flushed) before the side effect: a run found with
/// a started step after a crash settles it by observing the world, never by replaying blindly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum StepState {
    Pending,
    Started {
        #[serde(with = "time::serde::rfc3339")]
        at: OffsetDateTime,
    },
    /// A manual step: an operator was asked to act and to confirm with `/run done`.
    AwaitingOperator {
        #[serde(with = "time::serde::rfc3339")]
        since: OffsetDateTime,
        prompt: String,
    },
    Done {
        #[serde(with = "time::serde::rfc3339")]
        at: OffsetDateTime,
        note: String,
        /// Of a chunk of index deletions: how many of its indices its own DELETE removed (the
        /// others were gone already, or re-created since the plan and kept). The report counts
        /// these, the cluster's answer per index, never the chunk's size.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deleted: Option<usize>,
    },
    Failed {
        #[serde(with = "time::serde::rfc3339")]
        at: OffsetDateTime,
        error: String,
        /// The server refused the step's change before acting on it: nothing of the step was
        /// done, which the run's report says instead of "may be partly done".
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        unchanged: bool,
    },
}

impl StepState {
    /// A step done, with what it observed or did in words.
    pub fn done(at: OffsetDateTime, note: impl Into<String>) -> Self {
        Self::Done {
            at,
            note: note.into(),
            deleted: None,
        }
    }
}
