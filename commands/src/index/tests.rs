use super::*;

#[test]
fn ordinary_daily_indices_are_names() {
    for ok in [
        "flog-2026.09.01",
        "flog-2026.10.01-reindexed",
        "audit_log",
        "a",
        "logstash-2026.01.01",
    ] {
        assert_eq!(
            IndexName::parse(ok).map(|n| n.to_string()),
            Ok(ok.to_owned())
        );
    }
    assert!(IndexName::parse(&"x".repeat(255)).is_ok());
}

#[test]
fn anything_that_could_name_more_than_one_index_or_a_system_index_is_refused() {
    let long = "x".repeat(256);
    let cases: Vec<(&str, &str)> = vec![
        ("*", "`*` would name every index; name one index"),
        ("_all", "`_all` would name every index; name one index"),
        (
            "flog-*",
            "`flog-*` has a wildcard; name one index, or use /indices prune",
        ),
        (
            "flog-2026.10.0?",
            "`flog-2026.10.0?` has a wildcard; name one index, or use /indices prune",
        ),
        (
            "a,b",
            "`a,b` has `,`; index names are lower-case letters, digits, `-`, `_` and `.`",
        ),
        (
            "a b",
            "`a b` has ` `; index names are lower-case letters, digits, `-`, `_` and `.`",
        ),
        (
            "..",
            "`..` is a system index (it starts with a dot); opsbot never deletes those",
        ),
        (
            ".kibana_1",
            "`.kibana_1` is a system index (it starts with a dot); opsbot never deletes those",
        ),
        (
            "a/b",
            "`a/b` has `/`; index names are lower-case letters, digits, `-`, `_` and `.`",
        ),
        (
            "a#b",
            "`a#b` has `#`; index names are lower-case letters, digits, `-`, `_` and `.`",
        ),
        (
            "Flog",
            "`Flog` has `F`; index names are lower-case letters, digits, `-`, `_` and `.`",
        ),
        ("-flog", "`-flog` starts with `-`, which no index name can"),
        ("_flog", "`_flog` starts with `_`, which no index name can"),
        ("", "an index name is empty"),
        (
            long.as_str(),
            "index name `xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…` is too long (256 bytes, at most 255)",
        ),
    ];
    for (name, expected) in cases {
        assert_eq!(
            IndexName::parse(name).map_err(|e| e.to_string()),
            Err(expected.to_owned()),
            "{name:?}"
        );
    }
}

#[test]
fn multibyte_names_count_bytes() {
    // 128 two-byte characters are 256 bytes, over the limit even though only 128 characters;
    // they are refused for their characters first, which is what the operator must fix.
    assert!(IndexName::parse(&"é".repeat(128)).is_err());
}

#[test]
fn patterns_allow_stars_for_listing_only() {
    let pattern = IndexPattern::parse("flog-2026.10.*").unwrap();
    assert!(pattern.matches("flog-2026.10.01"));
    assert!(!pattern.matches("flog-2026.09.30"));
    assert!(IndexPattern::parse("*").unwrap().matches(".kibana_1"));
    assert!(
        IndexPattern::parse("f*-2026*01")
            .unwrap()
            .matches("flog-2026.10.01")
    );
    assert!(
        !IndexPattern::parse("f*-2026*01")
            .unwrap()
            .matches("flog-2026.10.02")
    );
    assert!(IndexPattern::parse("_all").is_err());
    assert!(IndexPattern::parse("flog-?").is_err());
    assert!(IndexPattern::parse("a,b").is_err());
}

proptest::proptest! {
    #[test]
    fn no_generated_input_becomes_a_name_with_a_wildcard_all_or_dot(input in "[a-z0-9*?_.,/ #+-]{0,40}|_all|\\PC{0,40}") {
        if let Ok(name) = IndexName::parse(&input) {
            let name = name.as_str();
            proptest::prop_assert!(!name.contains(['*', '?', ',', '/', ' ', '#']));
            proptest::prop_assert!(!name.starts_with(['.', '_', '-', '+']));
            proptest::prop_assert!(name != "_all" && !name.is_empty() && name.len() <= 255);
        }
    }
}

#[test]
fn a_prefix_with_a_wildcard_is_refused_with_the_prefix_meant() {
    assert_eq!(
        IndexName::parse_prefix("flog-*").unwrap_err().to_string(),
        "`flog-*` has a wildcard; a prefix is matched as written: prefix:flog-"
    );
    assert_eq!(IndexName::parse_prefix("flog-").unwrap().as_str(), "flog-");
    assert_eq!(
        IndexName::parse_prefix("_all").unwrap_err().to_string(),
        "`_all` would name every index; name one index"
    );
}
