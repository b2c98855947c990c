//! Index expressions (`a,b`, `flog-*`, `_all`, `*,-flog-2026*`) resolved against the indices and
//! data streams the way ES's `IndexNameExpressionResolver` does, under `IndicesOptions`.

use crate::config::Flavor;

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
    /// The name of a data stream, for a request that takes indices only
    /// (`IndicesRequest.includeDataStreams()` false: delete), without `ignore_unavailable`: to
    /// such a request the stream does not exist, so `index_not_found_exception` naming it.
    /// `marked`: ES 8 adds the `excluded_ds` metadata (`ensureAliasOrIndexExists`).
    ExcludedDataStream { name: String, marked: bool },
    /// `allow_no_indices=false` and nothing at all matched: ES's `no such index [null]`.
    Nothing(String),
    /// A name in the expression starts with `_`, `_all` in a list included: `validateAliasOrIndex`
    /// refuses it (`invalid_index_name_exception`), whatever the options say.
    Reserved(String),
}

/// What an expression may name besides indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Targets {
    /// Indices only (`includeDataStreams()` false): a data stream's name is unavailable, like a
    /// missing index's, and no wildcard expands a data stream.
    Indices,
    /// Indices and data streams (a stream stands for its backing indices).
    IndicesAndStreams,
}

/// The resolver generation: they differ in what an exclusion (`-name` after a wildcard) of a
/// concrete name does when the name does not resolve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// ES 6, ES 7 and OpenSearch (`WildcardExpressionResolver.innerResolve`): the excluded
    /// name is looked up like an included one, so `flog-*,-missing` is `no such index
    /// [missing]` unless `ignore_unavailable`.
    Checked,
    /// ES 8 since elastic/elasticsearch#90902 (October 2022, well before 8.11; later
    /// `ExplicitResourceNameFilter`, which keeps exclusions in unchecked): an exclusion never
    /// fails.
    Unchecked,
}

impl Dialect {
    pub(crate) fn of(flavor: Flavor) -> Self {
        match flavor {
            Flavor::Es8 => Dialect::Unchecked,
            Flavor::Es6 | Flavor::Es7 | Flavor::Os2 => Dialect::Checked,
        }
    }
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

/// The indices one wildcard expands to (`expand` over `matches`): the visible indices it
/// matches and, `with_streams`, the backing indices of the data streams it matches (no stream
/// is hidden here). `None` when it expands to nothing.
fn expand(
    indices: &[Candidate],
    streams: &[StreamCandidate],
    pattern: &str,
    options: &IndicesOptions,
    with_streams: bool,
) -> Option<Vec<usize>> {
    let mut positions: Vec<usize> = indices
        .iter()
        .enumerate()
        .filter(|(_, index)| glob_match(pattern, index.name) && visible(index, pattern, options))
        .map(|(position, _)| position)
        .collect();
    if with_streams && options.expand_open {
        for stream in streams.iter().filter(|s| glob_match(pattern, s.name)) {
            positions.extend(&stream.backing);
        }
    }
    (!positions.is_empty()).then_some(positions)
}

/// Resolves `expression`. A missing concrete name fails the whole expression unless
/// `ignore_unavailable`; a wildcard matching nothing fails only without `allow_no_indices`.
/// `_all`, `*` and an empty expression alone match every visible index and, for requests that
/// take data streams, every data stream's backing indices (`resolveEmptyOrTrivialWildcard`,
/// then `expand` over all data streams when `includeDataStreams()`: elastic/elasticsearch#58869,
/// ES 7.9+ and OpenSearch). A data stream named outright stands for its backing indices until
/// an exclusion of that very name; excluding a wildcard removes the indices it expands to.
pub(crate) fn resolve(
    indices: &[Candidate],
    streams: &[StreamCandidate],
    expression: &str,
    options: &IndicesOptions,
    targets: Targets,
    dialect: Dialect,
) -> Result<Resolution, Unresolved> {
    let expression = expression.trim();
    let with_streams = targets == Targets::IndicesAndStreams;
    let mut selected = vec![false; indices.len()];
    // Data streams named as such: `innerResolve` keeps the name itself in its result and
    // expands it only afterwards (`concreteIndices`), so only the name excludes it again.
    let mut named_streams = vec![false; streams.len()];
    let mut wildcard = false;
    if expression.is_empty() || expression == "_all" || expression == "*" {
        wildcard = true;
        if options.expand_open {
            for (position, index) in indices.iter().enumerate() {
                selected[position] = visible(index, "*", options);
            }
            if with_streams {
                named_streams.fill(true);
            }
        }
    } else {
        for part in expression.split(',') {
            if part.starts_with('_') {
                return Err(Unresolved::Reserved(part.to_owned()));
            }
            // `-name` excludes, but only after a wildcard has been seen (ES 7 semantics).
            let excluded = part.strip_prefix('-').filter(|_| wildcard);
            let name = excluded.unwrap_or(part);
            let include = excluded.is_none();
            if name.contains('*') {
                wildcard = true;
                match expand(indices, streams, name, options, with_streams) {
                    Some(positions) => {
                        for position in positions {
                            selected[position] = include;
                        }
                    }
                    // Checked whether the wildcard adds or excludes.
                    None if !options.allow_no_indices => {
                        return Err(Unresolved::Missing(name.to_owned()));
                    }
                    None => {}
                }
            } else if let Some(position) = indices.iter().position(|index| index.name == name) {
                selected[position] = include;
            } else if let Some(stream) = streams.iter().position(|stream| stream.name == name) {
                if with_streams {
                    named_streams[stream] = include;
                } else if !options.ignore_unavailable && (include || dialect == Dialect::Checked) {
                    return Err(Unresolved::ExcludedDataStream {
                        name: name.to_owned(),
                        marked: dialect == Dialect::Unchecked,
                    });
                }
            } else if !options.ignore_unavailable && (include || dialect == Dialect::Checked) {
                return Err(Unresolved::Missing(name.to_owned()));
            }
        }
    }
    for stream in streams
        .iter()
        .zip(&named_streams)
        .filter_map(|(stream, &named)| named.then_some(stream))
    {
        for &position in &stream.backing {
            selected[position] = true;
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

    fn resolve_with(
        expression: &str,
        options: &IndicesOptions,
        targets: Targets,
        dialect: Dialect,
    ) -> Result<Vec<usize>, Unresolved> {
        resolve(&INDICES, &streams(), expression, options, targets, dialect)
            .map(|resolution| resolution.indices)
    }

    fn strict(expression: &str) -> Result<Vec<usize>, Unresolved> {
        resolve_with(
            expression,
            &IndicesOptions::STRICT_EXPAND_OPEN,
            Targets::IndicesAndStreams,
            Dialect::Checked,
        )
    }

    const LENIENT: IndicesOptions = IndicesOptions {
        ignore_unavailable: true,
        ..IndicesOptions::STRICT_EXPAND_OPEN
    };

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
        let resolved = resolve(
            &INDICES,
            &[],
            "audit-log,flog-1999.01.01",
            &LENIENT,
            Targets::Indices,
            Dialect::Checked,
        );
        assert_eq!(resolved.map(|r| r.indices), Ok(vec![3]));
    }

    #[test]
    fn wildcards_skip_hidden_indices_unless_asked() {
        assert_eq!(strict("flog-*"), Ok(vec![0, 1]));
        // Every wildcard expands the data streams it matches, a lone `*` or `_all` too (#58869).
        assert_eq!(strict("*,-flog-*"), Ok(vec![2, 3, 4]));
        assert_eq!(strict("_all"), Ok(vec![0, 1, 2, 3, 4]));
        assert_eq!(strict("*"), Ok(vec![0, 1, 2, 3, 4]));
        assert_eq!(strict(""), Ok(vec![0, 1, 2, 3, 4]));
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
        let resolved = resolve(&INDICES, &[], "*", &all, Targets::Indices, Dialect::Checked);
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
                Dialect::Checked,
            )
        };
        assert_eq!(
            resolve_strict("nothing-*"),
            Err(Unresolved::Missing("nothing-*".into()))
        );
        // An excluding wildcard that matches nothing fails the same way.
        assert_eq!(
            resolve_strict("flog-*,-nothing-*"),
            Err(Unresolved::Missing("nothing-*".into()))
        );
    }

    #[test]
    fn a_name_starting_with_an_underscore_in_a_list_is_refused() {
        for expression in ["audit-log,_all", "_all,audit-log", "_other"] {
            let name = expression.split(',').find(|part| part.starts_with('_'));
            let refused = resolve_with(expression, &LENIENT, Targets::Indices, Dialect::Checked);
            assert_eq!(
                refused,
                Err(Unresolved::Reserved(name.unwrap_or_default().into())),
                "{expression}"
            );
        }
    }

    #[test]
    fn all_expands_streams_only_for_requests_taking_them() {
        let indices_only = resolve_with(
            "_all",
            &IndicesOptions::STRICT_EXPAND_OPEN,
            Targets::Indices,
            Dialect::Checked,
        );
        assert_eq!(indices_only, Ok(vec![0, 1, 2, 3]), "no stream for delete");
        let none = IndicesOptions {
            expand_open: false,
            ..IndicesOptions::STRICT_EXPAND_OPEN
        };
        let nothing = resolve_with("*", &none, Targets::IndicesAndStreams, Dialect::Checked);
        assert_eq!(
            nothing,
            Ok(vec![]),
            "expand_wildcards=none expands no stream"
        );
    }

    #[test]
    fn a_stream_name_is_unavailable_to_requests_taking_indices_only() {
        for dialect in [Dialect::Checked, Dialect::Unchecked] {
            let refused = resolve_with(
                "logs",
                &IndicesOptions::STRICT_EXPAND_OPEN,
                Targets::Indices,
                dialect,
            );
            assert_eq!(
                refused,
                Err(Unresolved::ExcludedDataStream {
                    name: "logs".into(),
                    marked: dialect == Dialect::Unchecked,
                })
            );
            // `ignore_unavailable` skips it: nothing left, nothing deleted.
            assert_eq!(
                resolve_with("logs", &LENIENT, Targets::Indices, dialect),
                Ok(vec![])
            );
            assert_eq!(
                resolve_with("logs,audit-log", &LENIENT, Targets::Indices, dialect),
                Ok(vec![3])
            );
        }
        assert_eq!(
            strict("logs"),
            Ok(vec![4]),
            "the settings API takes streams"
        );
    }

    #[test]
    fn excluding_a_missing_name_fails_where_the_resolver_checks_it() {
        let checked = |expression, options: &IndicesOptions, targets| {
            resolve_with(expression, options, targets, Dialect::Checked)
        };
        let strict_options = IndicesOptions::STRICT_EXPAND_OPEN;
        for targets in [Targets::Indices, Targets::IndicesAndStreams] {
            assert_eq!(
                checked("flog-*,-missing", &strict_options, targets),
                Err(Unresolved::Missing("missing".into())),
                "ES 7 and OpenSearch look the excluded name up"
            );
            assert_eq!(
                checked("flog-*,-missing", &LENIENT, targets),
                Ok(vec![0, 1])
            );
            assert_eq!(
                resolve_with(
                    "flog-*,-missing",
                    &strict_options,
                    targets,
                    Dialect::Unchecked
                ),
                Ok(vec![0, 1]),
                "ES 8 never looks an exclusion up"
            );
            assert_eq!(
                checked("flog-*,-flog-2026.01.02", &strict_options, targets),
                Ok(vec![0])
            );
        }
        // A data stream's name is unavailable to delete even as an exclusion (ES 7, OpenSearch).
        assert_eq!(
            checked("flog-*,-logs", &strict_options, Targets::Indices),
            Err(Unresolved::ExcludedDataStream {
                name: "logs".into(),
                marked: false,
            })
        );
        assert_eq!(
            resolve_with(
                "flog-*,-logs",
                &strict_options,
                Targets::Indices,
                Dialect::Unchecked
            ),
            Ok(vec![0, 1])
        );
        // Before any wildcard `-name` is a plain (missing) name.
        assert_eq!(
            resolve_with(
                "-missing,flog-*",
                &strict_options,
                Targets::Indices,
                Dialect::Unchecked
            ),
            Err(Unresolved::Missing("-missing".into()))
        );
    }

    #[test]
    fn a_named_stream_is_excluded_by_its_name_only() {
        // `innerResolve` keeps the stream's name until `concreteIndices` expands it: excluding
        // its backing index by name or wildcard leaves it, excluding the name removes it.
        assert_eq!(strict("logs,*,-.ds-logs-000001"), Ok(vec![0, 1, 2, 3, 4]));
        assert_eq!(strict("logs,*,-lo*"), Ok(vec![0, 1, 2, 3, 4]));
        assert_eq!(
            strict("logs,*,-logs"),
            Ok(vec![0, 1, 2, 3, 4]),
            "`*` added them"
        );
        assert_eq!(strict("logs,flog-*,-logs"), Ok(vec![0, 1]));
        assert_eq!(
            strict("*,-lo*"),
            Ok(vec![0, 1, 2, 3]),
            "a wildcard removes what it expands"
        );
    }
}
