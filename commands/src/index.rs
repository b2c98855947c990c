//! Index names. An [`IndexName`] names exactly one ordinary index: it can never be a wildcard,
//! `_all`, a comma list or a dot (system) index, because Elasticsearch up to 7 and OpenSearch
//! delete whatever such a name expands to (`action.destructive_requires_name` is false there).
//! An [`IndexPattern`] may hold `*`, and is only ever used to list.

/// Why an index name or pattern was refused; the text is shown in chat as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexNameError {
    #[error("an index name is empty")]
    Empty,
    #[error("index name `{name}` is too long ({len} bytes, at most 255)")]
    TooLong { name: String, len: usize },
    #[error("`{name}` has a wildcard; name one index, or use /indices prune")]
    Wildcard { name: String },
    #[error("`{name}` has a wildcard; a prefix is matched as written: prefix:{stem}")]
    WildcardPrefix { name: String, stem: String },
    #[error("`{name}` would name every index; name one index")]
    All { name: String },
    #[error("`{name}` is a system index (it starts with a dot); opsbot never deletes those")]
    System { name: String },
    /// `ch` is described so that it can be seen (see [`crate::echo::describe`]).
    #[error("`{name}` has {ch}; index names are lower-case letters, digits, `-`, `_` and `.`")]
    BadChar { name: String, ch: String },
    #[error("`{name}` starts with `{ch}`, which no index name can")]
    BadStart { name: String, ch: char },
    #[error("`{uuid}` is not an index UUID")]
    BadUuid { uuid: String },
}

/// Longest index name Elasticsearch accepts, in bytes.
pub const MAX_INDEX_BYTES: usize = 255;

/// How much of a refused name an error shows: enough for a daily name and its suffix.
const SHOWN: usize = 60;

fn visible(name: &str) -> String {
    crate::echo::visible(name, SHOWN)
}

/// Checks what names and patterns share; `wildcards` allows `*` (patterns only).
fn check(name: &str, wildcards: bool) -> Result<(), IndexNameError> {
    let shown = || visible(name);
    if name.is_empty() {
        return Err(IndexNameError::Empty);
    }
    if name.len() > MAX_INDEX_BYTES {
        return Err(IndexNameError::TooLong {
            name: shown(),
            len: name.len(),
        });
    }
    if name == "_all" || name == "*" && !wildcards {
        return Err(IndexNameError::All { name: shown() });
    }
    for ch in name.chars() {
        match ch {
            '*' | '?' if !wildcards || ch == '?' => {
                return Err(IndexNameError::Wildcard { name: shown() });
            }
            '*' => {}
            'a'..='z' | '0'..='9' | '-' | '_' | '.' => {}
            other => {
                return Err(IndexNameError::BadChar {
                    name: shown(),
                    ch: crate::echo::describe(other),
                });
            }
        }
    }
    if let Some(first @ ('-' | '_' | '+')) = name.chars().next() {
        return Err(IndexNameError::BadStart {
            name: shown(),
            ch: first,
        });
    }
    Ok(())
}

/// One ordinary index, safe to put in a `DELETE` path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IndexName(String);

impl IndexName {
    pub fn parse(name: &str) -> Result<Self, IndexNameError> {
        check(name, false)?;
        if name.starts_with('.') {
            return Err(IndexNameError::System {
                name: visible(name),
            });
        }
        Ok(Self(name.to_owned()))
    }

    /// A prefix of index names (`/indices prune prefix:`): checked as a name, so that nothing
    /// a name cannot hold reaches a plan; a trailing wildcard is refused with the prefix meant.
    pub fn parse_prefix(prefix: &str) -> Result<Self, IndexNameError> {
        Self::parse(prefix).map_err(|error| match error {
            IndexNameError::Wildcard { name } => IndexNameError::WildcardPrefix {
                name,
                stem: visible(prefix.split(['*', '?']).next().unwrap_or_default()),
            },
            other => other,
        })
    }
}

/// A name or a `*` pattern, for listing only.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IndexPattern(String);

impl IndexPattern {
    pub fn parse(pattern: &str) -> Result<Self, IndexNameError> {
        check(pattern, true)?;
        Ok(Self(pattern.to_owned()))
    }

    /// Glob match with `*` as any run of characters.
    pub fn matches(&self, name: &str) -> bool {
        let mut parts = self.0.split('*');
        let first = parts.next().unwrap_or_default();
        let Some(mut rest) = name.strip_prefix(first) else {
            return false;
        };
        let parts: Vec<&str> = parts.collect();
        let Some((last, middle)) = parts.split_last() else {
            return rest.is_empty();
        };
        for part in middle {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
        rest.len() >= last.len() && rest.ends_with(last)
    }
}

validated_string!(IndexName, IndexNameError);
validated_string!(IndexPattern, IndexNameError);

/// The UUID a server gave one incarnation of an index: an index deleted and created again under
/// the same name has another one, so a plan bound to UUIDs never deletes a newcomer.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IndexUuid(String);

impl IndexUuid {
    /// Elasticsearch and OpenSearch write 22 URL-safe base64 characters; anything of that
    /// alphabet up to 64 characters is taken, anything else is refused as not theirs.
    pub fn parse(value: &str) -> Result<Self, IndexNameError> {
        let ok = (1..=64).contains(&value.len())
            && value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if ok {
            Ok(Self(value.to_owned()))
        } else {
            Err(IndexNameError::BadUuid {
                uuid: visible(value),
            })
        }
    }
}
validated_string!(IndexUuid, IndexNameError);

/// An index as a plan deletes it: its name and the incarnation that was shown and approved.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(from = "PlannedRecord")]
pub struct PlannedIndex {
    pub name: IndexName,
    /// `None` only in runs planned by an opsbot that did not bind names to UUIDs yet: those are
    /// checked by name alone, as they were planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<IndexUuid>,
    /// Its store size in bytes when it was planned, if the cluster said: what a standing
    /// approval's size bound is checked against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// When the cluster created it, if it said: an unattended run deletes it only when this is
    /// old enough too, not only the date in its name.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "time::serde::rfc3339::option"
    )]
    pub created: Option<time::OffsetDateTime>,
}

/// A planned index as stored: `{name, uuid}` now, a bare name before UUIDs were bound.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum PlannedRecord {
    Bound {
        name: IndexName,
        uuid: Option<IndexUuid>,
        #[serde(default)]
        bytes: Option<u64>,
        #[serde(default, with = "time::serde::rfc3339::option")]
        created: Option<time::OffsetDateTime>,
    },
    Name(IndexName),
}

impl From<PlannedRecord> for PlannedIndex {
    fn from(record: PlannedRecord) -> Self {
        match record {
            PlannedRecord::Bound {
                name,
                uuid,
                bytes,
                created,
            } => Self {
                name,
                uuid,
                bytes,
                created,
            },
            PlannedRecord::Name(name) => Self {
                name,
                uuid: None,
                bytes: None,
                created: None,
            },
        }
    }
}

impl AsRef<str> for PlannedIndex {
    fn as_ref(&self) -> &str {
        self.name.as_str()
    }
}

impl std::fmt::Display for PlannedIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.name.fmt(f)
    }
}

#[cfg(test)]
mod tests;
