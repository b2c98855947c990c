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
    #[error("`{name}` would name every index; name one index")]
    All { name: String },
    #[error("`{name}` is a system index (it starts with a dot); opsbot never deletes those")]
    System { name: String },
    /// `ch` is described so that it can be seen (see [`crate::echo::describe`]).
    #[error("`{name}` has {ch}; index names are lower-case letters, digits, `-`, `_` and `.`")]
    BadChar { name: String, ch: String },
    #[error("`{name}` starts with `{ch}`, which no index name can")]
    BadStart { name: String, ch: char },
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

#[cfg(test)]
mod tests;
