//! Index expressions (`a,b`, `flog-*`, `_all`, `*,-flog-2026*`) resolved against the index list
//! the way ES's `IndexNameExpressionResolver` does.

/// `Regex.simpleMatch`: `*` matches any run of characters; nothing else is special.
/// (ES has no `?` wildcard in index expressions; a `?` is just an invalid name character.)
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    let (pattern, text) = (pattern.as_bytes(), text.as_bytes());
    let (mut p, mut t) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                backtrack = Some((p, t));
                p += 1;
            }
            Some(&c) if c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match backtrack {
                Some((star, matched)) => {
                    p = star + 1;
                    t = matched + 1;
                    backtrack = Some((star, matched + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// Indices an expression names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolution {
    /// Positions in the index list, ascending, without duplicates.
    pub indices: Vec<usize>,
    /// The expression used a wildcard or `_all`: refused for deletes when
    /// `action.destructive_requires_name` is true.
    pub wildcard: bool,
}

/// A concrete name that does not exist (ES: `index_not_found_exception`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MissingIndex(pub String);

/// Resolves `expression` against `names`. Wildcards that match nothing are fine
/// (`allow_no_indices=true`); a missing concrete name fails the whole expression unless
/// `ignore_unavailable`.
pub(crate) fn resolve(
    names: &[&str],
    expression: &str,
    ignore_unavailable: bool,
) -> Result<Resolution, MissingIndex> {
    let expression = expression.trim();
    if expression.is_empty() || expression == "_all" {
        return Ok(Resolution {
            indices: (0..names.len()).collect(),
            wildcard: true,
        });
    }
    let mut selected = vec![false; names.len()];
    let mut wildcard = false;
    for part in expression.split(',') {
        // `-name` excludes, but only after a wildcard has been seen (ES 7 semantics).
        if let Some(excluded) = part.strip_prefix('-').filter(|_| wildcard) {
            for (position, name) in names.iter().enumerate() {
                if glob_match(excluded, name) {
                    selected[position] = false;
                }
            }
        } else if part.contains('*') {
            wildcard = true;
            for (position, name) in names.iter().enumerate() {
                selected[position] |= glob_match(part, name);
            }
        } else if part == "_all" {
            wildcard = true;
            selected.fill(true);
        } else {
            match names.iter().position(|name| *name == part) {
                Some(position) => selected[position] = true,
                None if ignore_unavailable => {}
                None => return Err(MissingIndex(part.to_owned())),
            }
        }
    }
    Ok(Resolution {
        indices: (0..names.len())
            .filter(|&position| selected[position])
            .collect(),
        wildcard,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 4] = [
        "flog-2026.01.01",
        "flog-2026.01.02",
        ".kibana_1",
        "audit-log",
    ];

    #[test]
    fn star_is_the_only_wildcard() {
        assert!(glob_match("flog-*", "flog-2026.01.01"));
        assert!(glob_match("*log*", "audit-log"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("flog-2026.01.0?", "flog-2026.01.01"));
        assert!(!glob_match("flog-*-x", "flog-2026"));
    }

    #[test]
    fn concrete_names_must_all_exist() {
        let resolved = resolve(&NAMES, "audit-log,flog-2026.01.01", false).unwrap();
        assert_eq!(
            resolved,
            Resolution {
                indices: vec![0, 3],
                wildcard: false
            }
        );
        assert_eq!(
            resolve(&NAMES, "audit-log,flog-1999.01.01", false),
            Err(MissingIndex("flog-1999.01.01".into()))
        );
        assert_eq!(
            resolve(&NAMES, "audit-log,flog-1999.01.01", true)
                .unwrap()
                .indices,
            vec![3]
        );
    }

    #[test]
    fn wildcards_expand_and_exclusions_apply_after_them() {
        assert_eq!(
            resolve(&NAMES, "flog-*", false).unwrap().indices,
            vec![0, 1]
        );
        assert_eq!(
            resolve(&NAMES, "*,-flog-*", false).unwrap().indices,
            vec![2, 3]
        );
        assert!(resolve(&NAMES, "_all", false).unwrap().wildcard);
        assert!(
            resolve(&NAMES, "nothing-*", false)
                .unwrap()
                .indices
                .is_empty()
        );
        assert!(resolve(&NAMES, "-audit-log", false).is_err());
    }
}
