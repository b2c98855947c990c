//! The digest that binds an approval to the exact plan shown, and the prefix of it an approver types.

use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Hex SHA-256 of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PlanDigest(String);

impl PlanDigest {
    /// Length of the prefix shown in chat and carried in button ids.
    pub const SHORT: usize = 12;

    /// The digest of `value`'s canonical (JSON) encoding.
    pub(crate) fn of(value: &(impl Serialize + fmt::Debug)) -> Self {
        // Serializing plain data (strings, numbers, enums) into a Vec cannot fail; fall back to
        // the Debug text rather than panic, which is just as canonical.
        let canonical = serde_json::to_vec(value).unwrap_or_else(|_| format!("{value:?}").into());
        let hash = Sha256::digest(&canonical);
        PlanDigest(hash.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The whole hex digest, for the audit log.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The prefix operators see next to a plan.
    pub fn short(&self) -> &str {
        self.0.get(..Self::SHORT).unwrap_or(&self.0)
    }

    /// True when `shown` is this digest or a prefix of it at least [`Self::SHORT`] long.
    pub fn matches(&self, shown: &str) -> bool {
        shown.len() >= Self::SHORT && self.0.starts_with(shown)
    }
}

/// A digest as an approver types it: the 12 hex digits shown with a plan, or more of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigestPrefix(String);

impl DigestPrefix {
    pub fn parse(value: &str) -> Result<Self, crate::name::NameError> {
        let value = value.trim().to_ascii_lowercase();
        if (PlanDigest::SHORT..=64).contains(&value.len())
            && value.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Ok(Self(value));
        }
        Err(crate::name::NameError::NotDigest {
            value: crate::echo::visible(&value, 64),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PlanDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short())
    }
}
