//! `/indices list`: a readable table, filtered by opsbot, never with a wildcard on the wire.

use opsbot_tests::{Harness, Setup};

#[tokio::test]
async fn listing_shows_every_index_sorted_within_the_chat_limit() {
    let h = Harness::start(Setup::default()).await;
    let reply = h.slash("alice", "/indices list cluster:logs").await;
    assert!(!reply.private);
    assert!(
        reply.text.starts_with("indices of logs · 91 indices · "),
        "{}",
        reply.text
    );
    assert!(reply.text.chars().count() <= 2000);
    assert!(reply.text.contains(".kibana_1"), "{}", reply.text);
    assert!(
        reply.text.contains("more; narrow it with pattern:"),
        "{}",
        reply.text
    );
}

#[tokio::test]
async fn a_pattern_filters_on_opsbot_s_side() {
    let h = Harness::start(Setup::default()).await;
    let today = h
        .sim
        .state()
        .indices
        .iter()
        .map(|i| i.name.clone())
        .filter(|name| name.starts_with("flog-"))
        .max()
        .unwrap();
    let month = &today[..12]; // flog-YYYY.MM
    let reply = h
        .slash(
            "alice",
            &format!("/indices list cluster:logs pattern:{month}.*"),
        )
        .await;
    let rows = reply.text.lines().skip(2).count();
    assert!((1..=31).contains(&rows), "{}", reply.text);
    assert!(
        reply.text.lines().skip(2).all(|l| l.starts_with(month)),
        "{}",
        reply.text
    );
    for call in h.calls() {
        assert_eq!(call.method, "GET");
        assert!(
            !call.path.contains('*') && !call.query.contains('*'),
            "{call:?}"
        );
    }
}

#[tokio::test]
async fn bad_patterns_never_reach_the_cluster() {
    let h = Harness::start(Setup::default()).await;
    for (pattern, expected) in [
        (
            "_all",
            "pattern: `_all` would name every index; name one index",
        ),
        (
            "flog-?",
            "pattern: `flog-?` has a wildcard; name one index, or use /indices prune",
        ),
        (
            "a,b",
            "pattern: `a,b` has `,`; index names are lower-case letters, digits, `-`, `_` and `.`",
        ),
    ] {
        let reply = h
            .slash(
                "alice",
                &format!("/indices list cluster:logs pattern:{pattern}"),
            )
            .await;
        assert!(reply.private);
        assert_eq!(reply.text, expected);
    }
    assert!(h.calls().is_empty());
}
