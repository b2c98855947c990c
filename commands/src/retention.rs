//! Index retention with the selection of the spec's Curator action (`delete_indices`, filter `age`,
//! `source: name`, `timestring: '%Y.%m.%d'`, `unit: days`, `direction: older`): an index is
//! expired when the first `YYYY.MM.DD` anywhere in its name (Curator's `re.search`), taken as
//! midnight UTC, is strictly older than now minus N × 86400 seconds; with a prefix, only names
//! that start with it are considered (Curator's `pattern` filter, `kind: prefix`). Where
//! Curator is unsafe opsbot is stricter: dot indices are never selected, nor indices someone
//! else keeps (see [`Keeper`]), and a name whose date does not exist (`2026.02.30`, year 0000)
//! is skipped and reported, where Curator aborts the whole action on it.

mod keeper;

pub use keeper::{IndexInfo, Keeper};

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::{Date, Month, OffsetDateTime};

use crate::index::IndexName;
use crate::name::{NameError, bounded_number};

/// How old, in whole days, an index must be to expire: 1 to 3650.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RetentionDays(u32);

impl RetentionDays {
    /// Ten years: anything longer is a typo, not a retention policy.
    pub const MAX: u32 = 3650;
    /// The spec's Curator action: `unit_count: 30`.
    pub const DEFAULT: Self = Self(30);

    pub fn parse(value: &str) -> Result<Self, NameError> {
        bounded_number("the age in days", value, 1, Self::MAX).map(Self)
    }

    pub fn get(self) -> u32 {
        self.0
    }
}

impl Serialize for RetentionDays {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(self.0)
    }
}

/// Deserializing checks the range like parsing does: a stored value is a validated value.
impl<'de> Deserialize<'de> for RetentionDays {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let days = u32::deserialize(deserializer)?;
        Self::parse(&days.to_string()).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for RetentionDays {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// What retention decided about one index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Older than the cut-off: to be deleted.
    Expired { name: IndexName, date: Date },
    /// Dated, but not old enough.
    Young { date: Date },
    /// Not one of ours: the name does not start with the prefix.
    OtherPrefix,
    /// A dot (system) index: never selected.
    System,
    /// No `YYYY.MM.DD` in the name: never selected.
    NoDate,
    /// A `YYYY.MM.DD` that is no calendar date (`2026.02.30`): skipped and reported.
    BadDate { text: String },
    /// Old enough, but not a name opsbot can delete safely: skipped and reported.
    Undeletable { reason: String },
}

/// The rule: indices older than `older_than` days, of those starting with `prefix` (of every
/// index without one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retention {
    pub prefix: Option<IndexName>,
    pub older_than: RetentionDays,
}

impl Retention {
    /// The instant before which an index's date must lie to expire.
    pub fn cutoff(&self, now: OffsetDateTime) -> OffsetDateTime {
        now - time::Duration::days(i64::from(self.older_than.get()))
    }

    /// Judges one index name at `now`.
    pub fn judge(&self, name: &str, now: OffsetDateTime) -> Verdict {
        if name.starts_with('.') {
            return Verdict::System;
        }
        if self
            .prefix
            .as_ref()
            .is_some_and(|prefix| !name.starts_with(prefix.as_str()))
        {
            return Verdict::OtherPrefix;
        }
        let Some(text) = first_datestamp(name) else {
            return Verdict::NoDate;
        };
        let Some(date) = calendar_date(text) else {
            return Verdict::BadDate {
                text: text.to_owned(),
            };
        };
        if date.midnight().assume_utc() >= self.cutoff(now) {
            return Verdict::Young { date };
        }
        match IndexName::parse(name) {
            Ok(name) => Verdict::Expired { name, date },
            Err(error) => Verdict::Undeletable {
                reason: error.to_string(),
            },
        }
    }
}

/// The first `DDDD.DD.DD` in `text`, as Curator's `re.search` of `\d{4}\.\d{2}\.\d{2}` finds it.
fn first_datestamp(text: &str) -> Option<&str> {
    const SHAPE: &[u8; 10] = b"dddd.dd.dd";
    let bytes = text.as_bytes();
    (0..bytes.len().checked_sub(SHAPE.len() - 1)?)
        .find(|&start| {
            SHAPE
                .iter()
                .zip(&bytes[start..])
                .all(|(shape, b)| match shape {
                    b'd' => b.is_ascii_digit(),
                    _ => *b == b'.',
                })
        })
        .map(|start| &text[start..start + SHAPE.len()])
}

/// `2026.02.30` -> `None`; the digits are known to be ASCII. Year 0000 is no date either: the
/// calendar Curator's `strptime` reads starts at year 1.
fn calendar_date(text: &str) -> Option<Date> {
    let year: i32 = text.get(0..4)?.parse().ok().filter(|year| *year >= 1)?;
    let month: u8 = text.get(5..7)?.parse().ok()?;
    let day: u8 = text.get(8..10)?.parse().ok()?;
    Date::from_calendar_date(year, Month::try_from(month).ok()?, day).ok()
}

#[cfg(test)]
mod tests;
