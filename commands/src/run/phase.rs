//! Where a run is in its life, as one value: waiting for an approval until a time, booked,
//! running, or finished at a time with its outcome. A finished run always has its finish time
//! and an unfinished one never does, because the time is part of the finished phase.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::OffsetDateTime;

use crate::people::PersonRef;

/// Where a run is in its life.
///
/// Stored as it always was, two fields of the run's record: `finished_at` and the flat
/// `state` (`{"state": "failed", "error": ...}`); a record whose two disagree is refused when it
/// is decoded, so no code past the decoder meets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunState {
    /// A destructive plan waits for a second operator until `expires_at`.
    AwaitingApproval { expires_at: OffsetDateTime },
    /// Approved (or needing no approval), waiting for its booked time; it holds no lock yet.
    Booked,
    /// The engine is executing steps (or waiting for an operator's manual step).
    Running,
    /// Over, for good: finished runs release their target's lock and are never resumed.
    Finished {
        at: OffsetDateTime,
        outcome: Outcome,
    },
}

/// How a finished run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Outcome {
    Succeeded,
    /// A step failed; `error` says what happened and what to do next.
    Failed {
        error: String,
    },
    /// Stopped by an operator at a safe point; `note` says what is left in place.
    Cancelled {
        by: PersonRef,
        note: String,
    },
    Rejected {
        by: PersonRef,
        reason: String,
    },
    /// Taken back by its requester before anyone approved it; nothing was done.
    Withdrawn {
        by: PersonRef,
        reason: Option<String>,
    },
    /// Nobody approved in time.
    Expired,
}

impl RunState {
    /// Finished runs release their cluster's lock and are never resumed.
    pub fn is_finished(&self) -> bool {
        matches!(self, Self::Finished { .. })
    }

    /// When the run finished, if it has.
    pub fn finished_at(&self) -> Option<OffsetDateTime> {
        match self {
            Self::Finished { at, .. } => Some(*at),
            _ => None,
        }
    }

    /// How the run ended, if it has.
    pub fn outcome(&self) -> Option<&Outcome> {
        match self {
            Self::Finished { outcome, .. } => Some(outcome),
            _ => None,
        }
    }

    /// A short word for lists.
    pub fn label(&self) -> &'static str {
        match self {
            Self::AwaitingApproval { .. } => "awaiting approval",
            Self::Booked => "booked",
            Self::Running => "running",
            Self::Finished { outcome, .. } => outcome.label(),
        }
    }
}

impl Outcome {
    /// A short word for lists.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Succeeded => "succeeded",
            Self::Failed { .. } => "failed",
            Self::Cancelled { .. } => "cancelled",
            Self::Rejected { .. } => "rejected",
            Self::Withdrawn { .. } => "withdrawn",
            Self::Expired => "expired",
        }
    }
}

/// The stored form: the finish time beside the flat state of earlier versions.
#[derive(Serialize, Deserialize)]
struct Stored {
    #[serde(default, with = "time::serde::rfc3339::option")]
    finished_at: Option<OffsetDateTime>,
    state: StoredState,
}

#[derive(Serialize)]
#[serde(untagged)]
enum StoredState {
    Open(Open),
    Finished(Outcome),
}

/// The unfinished states; [`Outcome`] holds the finished ones, each tagged the same way.
#[derive(Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
enum Open {
    AwaitingApproval {
        #[serde(with = "time::serde::rfc3339")]
        expires_at: OffsetDateTime,
    },
    Booked,
    Running,
}

impl<'de> Deserialize<'de> for StoredState {
    /// Read by its tag, so that a damaged record names the state it does not know.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        let tag = value.get("state").and_then(serde_json::Value::as_str);
        let read = if matches!(tag, Some("awaiting_approval" | "booked" | "running")) {
            Open::deserialize(value).map(Self::Open)
        } else {
            Outcome::deserialize(value).map(Self::Finished)
        };
        read.map_err(serde::de::Error::custom)
    }
}

impl Serialize for RunState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let state = match self {
            Self::AwaitingApproval { expires_at } => StoredState::Open(Open::AwaitingApproval {
                expires_at: *expires_at,
            }),
            Self::Booked => StoredState::Open(Open::Booked),
            Self::Running => StoredState::Open(Open::Running),
            Self::Finished { outcome, .. } => StoredState::Finished(outcome.clone()),
        };
        Stored {
            finished_at: self.finished_at(),
            state,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RunState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Stored { finished_at, state } = Stored::deserialize(deserializer)?;
        let open = match (state, finished_at) {
            (StoredState::Finished(outcome), Some(at)) => {
                return Ok(Self::Finished { at, outcome });
            }
            (StoredState::Finished(outcome), None) => {
                let label = outcome.label();
                return Err(serde::de::Error::custom(format!(
                    "it is {label} but has no finish time"
                )));
            }
            (StoredState::Open(Open::AwaitingApproval { expires_at }), at) => {
                (Self::AwaitingApproval { expires_at }, at)
            }
            (StoredState::Open(Open::Booked), at) => (Self::Booked, at),
            (StoredState::Open(Open::Running), at) => (Self::Running, at),
        };
        match open {
            (state, None) => Ok(state),
            (state, Some(_)) => Err(serde::de::Error::custom(format!(
                "it is {} but has a finish time",
                state.label()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use time::macros::datetime;

    use super::*;

    const AT: OffsetDateTime = datetime!(2026-11-21 03:00 UTC);

    fn stored(state: &RunState) -> serde_json::Value {
        serde_json::to_value(state).unwrap()
    }

    #[test]
    fn a_phase_is_stored_as_the_finish_time_beside_the_flat_state() {
        let failed = RunState::Finished {
            at: AT,
            outcome: Outcome::Failed {
                error: "step 2 failed".into(),
            },
        };
        let wire = json!({
            "finished_at": "2026-11-21T03:00:00Z",
            "state": {"state": "failed", "error": "step 2 failed"},
        });
        assert_eq!(stored(&failed), wire);
        assert_eq!(serde_json::from_value::<RunState>(wire).unwrap(), failed);
        let running = json!({"finished_at": null, "state": {"state": "running"}});
        assert_eq!(stored(&RunState::Running), running);
        for unfinished in [running, json!({"state": {"state": "booked"}})] {
            let state = serde_json::from_value::<RunState>(unfinished).unwrap();
            assert_eq!(state.finished_at(), None);
        }
    }

    #[test]
    fn a_finish_time_that_disagrees_with_the_state_is_refused_when_read() {
        let cases = [
            (
                json!({"finished_at": null, "state": {"state": "expired"}}),
                "it is expired but has no finish time",
            ),
            (
                json!({"finished_at": "2026-11-21T03:00:00Z", "state": {"state": "running"}}),
                "it is running but has a finish time",
            ),
            (
                json!({"state": {"state": "paused"}}),
                "unknown variant `paused`, expected one of `succeeded`, `failed`, `cancelled`, \
                 `rejected`, `withdrawn`, `expired`",
            ),
        ];
        for (wire, why) in cases {
            let error = serde_json::from_value::<RunState>(wire).unwrap_err();
            assert_eq!(error.to_string(), why);
        }
    }
}
