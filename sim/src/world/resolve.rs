//! Index expressions (`a,b`, `flog-*`, `_all`, `*,-flog-2026*`) resolved against the indices and
//! data streams the way ES's `IndexNameExpressionResolver` does, under `IndicesOptions`.

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

/// `IndicesOptions` as far as the simulator models them (every index is open, so `closed`
/// adds nothing to what a wildcard matches).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IndicesOptions {
    /// A missing concrete name is skipped instead of failing the request.
    pub ignore_unavailable: bool,
    /// A wildcard (or the whole request) matching nothing is fine.
    pub allow_no_indices: bool,
    /// Wildcards match open indices (`expand_wildcards` has `open` or `all`).
    pub expand_open: bool,
    /// Wildcards also match hidden indices (`hidden` or `all`; ES 7.7+).
    pub expand_hidden: bool,
}

impl IndicesOptions {
    /// `IndicesOptions.strictExpandOpen()`: the settings API's default.
    pub(crate) const STRICT_EXPAND_OPEN: IndicesOptions = IndicesOptions {
        ignore_unavailable: false,
        allow_no_indices: true,
        expand_open: true,
        expand_hidden: false,
    };
    /// `IndicesOptions.lenientExpandHidden()`: what ISM resolves with.
    pub(crate) const LENIENT_EXPAND_HIDDEN: IndicesOptions = IndicesOptions {
        ignore_unavailable: true,
        allow_no_indices: true,
        expand_open: true,
        expand_hidden: true,
    };
}

/// An index as the resolver sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate<'a> {
    pub name: &'a str,
    pub hidden: bool,
}

/// A data stream as the resolver sees it: its name and its backing indices' positions.
#[derive(Debug, Clone)]
pub(crate) struct StreamCandidate<'a> {
    pub name: &'a str,
    pub backing: Vec<usize>,
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

/// Why an expression does not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unresolved {
    /// A concrete name that does not exist, or (`allow_no_indices=false`) a wildcard matching
    /// nothing: `index_not_found_exception` naming it.
    Missing(String),
    /// `allow_no_indices=false` and nothing at all matched: ES's `no such index [null]`.
    Nothing(String),
    /// The name of a data stream, for a request that only takes indices (delete, ISM).
    DataStream(String),
}

/// What an expression may name besides indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Targets {
    /// Indices only: a data stream's name is refused.
    Indices,
    /// Indices and data streams (a stream stands for its backing indices).
    IndicesAndStreams,
}

/// Whether a wildcard matches an index under the options. Since ES 7.7 a wildcard skips hidden
/// indices unless `expand_wildcards` includes `hidden`, except that a pattern starting with `.`
/// still matches hidden `.`-indices (`implicitHiddenMatch`).
fn visible(index: &Candidate, pattern: &str, options: &IndicesOptions) -> bool {
    options.expand_open
        && (!index.hidden
            || options.expand_hidden
            || (pattern.starts_with('.') && index.name.starts_with('.')))
}

/// Resolves `expression`. A missing concrete name fails the whole expression unless
/// `ignore_unavailable`; a wildcard matching nothing fails only without `allow_no_indices`.
/// `_all`, `*` and an empty expression alone match every visible index but no data stream's
/// (hidden) backing index (`resolveEmptyOrTrivialWildcard` takes the visible indices), while
/// any other wildcard also expands the data streams it matches.
pub(crate) fn resolve(
    indices: &[Candidate],
    streams: &[StreamCandidate],
    expression: &str,
    options: &IndicesOptions,
    targets: Targets,
) -> Result<Resolution, Unresolved> {
    let expression = expression.trim();
    let mut selected = vec![false; indices.len()];
    let mut wildcard = false;
    if expression.is_empty() || expression == "_all" || expression == "*" {
        wildcard = true;
        for (position, index) in indices.iter().enumerate() {
            selected[position] = visible(index, "*", options);
        }
    } else {
        for part in expression.split(',') {
            // `-name` excludes, but only after a wildcard has been seen (ES 7 semantics).
            if let Some(excluded) = part.strip_prefix('-').filter(|_| wildcard) {
                for (position, index) in indices.iter().enumerate() {
                    if glob_match(excluded, index.name) {
                        selected[position] = false;
                    }
                }
            } else if part == "_all" || part.contains('*') {
                wildcard = true;
                let pattern = if part == "_all" { "*" } else { part };
                let mut matched = false;
                for (position, index) in indices.iter().enumerate() {
                    if glob_match(pattern, index.name) && visible(index, pattern, options) {
                        selected[position] = true;
                        matched = true;
                    }
                }
                if targets == Targets::IndicesAndStreams && part != "_all" && options.expand_open {
                    for stream in streams.iter().filter(|s| glob_match(pattern, s.name)) {
                        for &position in &stream.backing {
                            selected[position] = true;
                            matched = true;
                        }
                    }
                }
                if !matched && !options.allow_no_indices {
                    return Err(Unresolved::Missing(part.to_owned()));
                }
            } else if let Some(position) = indices.iter().position(|index| index.name == part) {
                selected[position] = true;
            } else if let Some(stream) = streams.iter().find(|stream| stream.name == part) {
                if targets == Targets::Indices {
                    return Err(Unresolved::DataStream(part.to_owned()));
                }
                for &position in &stream.backing {
                    selected[position] = true;
                }
            } else if !options.ignore_unavailable {
                return Err(Unresolved::Missing(part.to_owned()));
            }
        }
    }
    let positions: Vec<usize> = (0..indices.len())
        .filter(|&position| selected[position])
        .collect();
    if positions.is_empty() && !options.allow_no_indices {
        return Err(Unresolved::Nothing(expression.to_owned()));
    }
    Ok(Resolution {
        indices: positions,
        wildcard,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const INDICES: [Candidate; 5] = [
        Candidate {
            name: "flog-2026.01.01",
            hidden: false,
        },
        Candidate {
            name: "flog-2026.01.02",
            hidden: false,
        },
        Candidate {
            name: ".kibana_1",
            hidden: false,
        },
        Candidate {
            name: "audit-log",
            hidden: false,
        },
        Candidate {
            name: ".ds-logs-000001",
            hidden: true,
        },
    ];

    fn streams() -> Vec<StreamCandidate<'static>> {
        vec![StreamCandidate {
            name: "logs",
            backing: vec![4],
        }]
    }

    fn strict(expression: &str) -> Result<Vec<usize>, Unresolved> {
        resolve(
            &INDICES,
            &streams(),
            expression,
            &IndicesOptions::STRICT_EXPAND_OPEN,
            Targets::IndicesAndStreams,
        )
        .map(|resolution| resolution.indices)
    }

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
        assert_eq!(strict("audit-log,flog-2026.01.01"), Ok(vec![0, 3]));
        assert_eq!(
            strict("audit-log,flog-1999.01.01"),
            Err(Unresolved::Missing("flog-1999.01.01".into()))
        );
        let lenient = IndicesOptions {
            ignore_unavailable: true,
            ..IndicesOptions::STRICT_EXPAND_OPEN
        };
        let resolved = resolve(
            &INDICES,
            &[],
            "audit-log,flog-1999.01.01",
            &lenient,
            Targets::Indices,
        );
        assert_eq!(resolved.map(|r| r.indices), Ok(vec![3]));
    }

    #[test]
    fn wildcards_skip_hidden_indices_unless_asked() {
        assert_eq!(strict("flog-*"), Ok(vec![0, 1]));
        // Only a lone `*` or `_all` skips the data stream; a wildcard in a list expands it (ES 7.10).
        assert_eq!(strict("*,-flog-*"), Ok(vec![2, 3, 4]));
        assert_eq!(strict("_all"), Ok(vec![0, 1, 2, 3]));
        assert_eq!(
            strict(".*"),
            Ok(vec![2, 4]),
            "a dot pattern sees dot indices"
        );
        assert_eq!(strict(".ds-logs-000001"), Ok(vec![4]), "named, it is found");
        assert_eq!(
            strict("log*"),
            Ok(vec![4]),
            "a matching data stream expands"
        );
        let all = IndicesOptions {
            expand_hidden: true,
            ..IndicesOptions::STRICT_EXPAND_OPEN
        };
        let resolved = resolve(&INDICES, &[], "*", &all, Targets::Indices);
        assert_eq!(resolved.map(|r| r.indices), Ok(vec![0, 1, 2, 3, 4]));
        assert!(strict("nothing-*").unwrap().is_empty());
        assert!(strict("-audit-log").is_err());
    }

    #[test]
    fn strictness_options_apply() {
        let strict_wildcards = IndicesOptions {
            allow_no_indices: false,
            ..IndicesOptions::STRICT_EXPAND_OPEN
        };
        let resolve_strict = |expression| {
            resolve(
                &INDICES,
                &[],
                expression,
                &strict_wildcards,
                Targets::Indices,
            )
        };
        assert_eq!(
            resolve_strict("nothing-*"),
            Err(Unresolved::Missing("nothing-*".into()))
        );
        let refused = resolve(
            &INDICES,
            &streams(),
            "logs",
            &IndicesOptions::STRICT_EXPAND_OPEN,
            Targets::Indices,
        );
        assert_eq!(refused, Err(Unresolved::DataStream("logs".into())));
    }
}
