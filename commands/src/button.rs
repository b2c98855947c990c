//! The Approve and Reject buttons under a plan. A button's `custom_id` carries the run and the
//! digest prefix the operator saw; everything else is read from the store on every press, so a
//! button keeps working after a restart and a stale one is refused.

use std::fmt;

use crate::name::RunId;
use crate::plan::PlanDigest;

/// Discord's limit for a `custom_id`.
pub const MAX_CUSTOM_ID: usize = 100;

/// What a button decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Approve,
    /// The requester confirms their own plan (the `confirm` policy).
    Confirm,
    Reject,
}

impl Decision {
    /// The button's label.
    pub fn label(self) -> &'static str {
        match self {
            Self::Approve => "Approve",
            Self::Confirm => "Confirm",
            Self::Reject => "Reject",
        }
    }

    fn word(self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::Confirm => "confirm",
            Self::Reject => "reject",
        }
    }
}

/// One button of a plan awaiting approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalButton {
    pub decision: Decision,
    pub run: RunId,
    /// The digest prefix shown with the plan the button was posted under.
    pub digest: String,
}

impl ApprovalButton {
    pub fn new(decision: Decision, run: RunId, digest: &PlanDigest) -> Self {
        Self {
            decision,
            run,
            digest: digest.short().to_owned(),
        }
    }

    /// Reads a `custom_id` back; `None` for anything opsbot did not make.
    pub fn parse(custom_id: &str) -> Option<Self> {
        let mut parts = custom_id.split(':');
        let decision = match parts.next()? {
            "approve" => Decision::Approve,
            "confirm" => Decision::Confirm,
            "reject" => Decision::Reject,
            _ => return None,
        };
        let run = RunId::parse(parts.next()?).ok()?;
        let digest = parts.next()?;
        let hex =
            digest.len() == PlanDigest::SHORT && digest.bytes().all(|b| b.is_ascii_hexdigit());
        (hex && parts.next().is_none()).then(|| Self {
            decision,
            run,
            digest: digest.to_owned(),
        })
    }
}

/// The `custom_id`: `approve:r-42:3f9a0c1b2d4e`.
impl fmt::Display for ApprovalButton {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.decision.word(), self.run, self.digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_custom_id_round_trips_and_fits_discord() {
        let button = ApprovalButton {
            decision: Decision::Reject,
            run: RunId::new(999_999_999_999_999_999),
            digest: "3f9a0c1b2d4e".to_owned(),
        };
        let id = button.to_string();
        assert_eq!(id, "reject:r-999999999999999999:3f9a0c1b2d4e");
        assert!(id.len() <= MAX_CUSTOM_ID);
        assert_eq!(ApprovalButton::parse(&id), Some(button));
    }

    #[test]
    fn foreign_or_forged_ids_are_not_buttons() {
        for bad in [
            "",
            "approve",
            "approve:r-1",
            "approve:r-1:xyz",
            "approve:r-1:3f9a0c1b2d4e:extra",
            "delete:r-1:3f9a0c1b2d4e",
            "approve:r-x:3f9a0c1b2d4e",
            "approve:r-1:3f9a0c1b2d4",
        ] {
            assert_eq!(ApprovalButton::parse(bad), None, "{bad:?}");
        }
    }
}
