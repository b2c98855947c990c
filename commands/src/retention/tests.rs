use super::*;
use time::macros::{date, datetime};

fn rule(days: &str) -> Retention {
    Retention {
        prefix: Some(IndexName::parse("flog-").unwrap()),
        older_than: RetentionDays::parse(days).unwrap(),
    }
}

fn expired(verdict: &Verdict) -> bool {
    matches!(verdict, Verdict::Expired { .. })
}

#[test]
fn the_boundaries_of_the_age_filter() {
    // (now, older_than_days, index, expired?)
    let table = [
        // exactly N days at midnight: not strictly older
        (
            datetime!(2026-11-21 00:00:00 UTC),
            "30",
            "flog-2026.10.22",
            false,
        ),
        (
            datetime!(2026-11-21 00:00:00 UTC),
            "30",
            "flog-2026.10.21",
            true,
        ),
        // one second either side
        (
            datetime!(2026-11-21 00:00:01 UTC),
            "30",
            "flog-2026.10.22",
            true,
        ),
        (
            datetime!(2026-11-20 23:59:59 UTC),
            "30",
            "flog-2026.10.22",
            false,
        ),
        (
            datetime!(2026-11-20 23:59:59 UTC),
            "30",
            "flog-2026.10.21",
            true,
        ),
        // month boundary (March has 31 days, February 28)
        (
            datetime!(2026-03-31 00:00:00 UTC),
            "30",
            "flog-2026.03.01",
            false,
        ),
        (
            datetime!(2026-03-31 00:00:00 UTC),
            "30",
            "flog-2026.02.28",
            true,
        ),
        // year boundary
        (
            datetime!(2026-01-15 00:00:00 UTC),
            "30",
            "flog-2025.12.16",
            false,
        ),
        (
            datetime!(2026-01-15 00:00:00 UTC),
            "30",
            "flog-2025.12.15",
            true,
        ),
        // leap day
        (
            datetime!(2024-03-30 00:00:00 UTC),
            "30",
            "flog-2024.02.29",
            false,
        ),
        (
            datetime!(2024-03-30 00:00:01 UTC),
            "30",
            "flog-2024.02.29",
            true,
        ),
        (
            datetime!(2024-03-30 00:00:00 UTC),
            "30",
            "flog-2024.02.28",
            true,
        ),
        // one day
        (
            datetime!(2026-11-21 12:00:00 UTC),
            "1",
            "flog-2026.11.20",
            true,
        ),
        (
            datetime!(2026-11-21 12:00:00 UTC),
            "1",
            "flog-2026.11.21",
            false,
        ),
        // suffixes keep their date; of two dates the first counts, as Curator's re.search
        (
            datetime!(2026-11-21 00:00:00 UTC),
            "30",
            "flog-2026.01.01-reindexed",
            true,
        ),
        (
            datetime!(2026-11-21 00:00:00 UTC),
            "30",
            "flog-2026.01.01-2026.11.20",
            true,
        ),
        (
            datetime!(2026-11-21 00:00:00 UTC),
            "30",
            "flog-2026.11.20-2026.01.01",
            false,
        ),
        // a time zone offset in `now` changes nothing: the cut-off is an instant
        (
            datetime!(2026-11-21 02:00:00 +02:00),
            "30",
            "flog-2026.10.22",
            false,
        ),
    ];
    for (now, days, name, want) in table {
        let verdict = rule(days).judge(name, now);
        assert_eq!(
            expired(&verdict),
            want,
            "{name} at {now} older than {days}: {verdict:?}"
        );
    }
}

#[test]
fn what_is_never_selected_and_what_is_skipped() {
    let now = datetime!(2026-11-21 00:00:00 UTC);
    let r = rule("30");
    assert_eq!(r.judge(".kibana_1", now), Verdict::System);
    assert_eq!(r.judge(".flog-2020.01.01", now), Verdict::System);
    assert_eq!(r.judge("audit-2020.01.01", now), Verdict::OtherPrefix);
    assert_eq!(r.judge("flog-current", now), Verdict::NoDate);
    assert_eq!(r.judge("flog-2020.1.01", now), Verdict::NoDate);
    for impossible in [
        "flog-2026.02.30",
        "flog-2026.13.01",
        "flog-2026.00.10",
        "flog-2025.02.29",
    ] {
        assert!(
            matches!(r.judge(impossible, now), Verdict::BadDate { .. }),
            "{impossible}"
        );
    }
    assert_eq!(
        r.judge("flog-2026.01.01", now),
        Verdict::Expired {
            name: IndexName::parse("flog-2026.01.01").unwrap(),
            date: date!(2026 - 01 - 01)
        }
    );
}

#[test]
fn the_date_may_stand_anywhere_in_the_name_and_year_0000_is_no_date() {
    let now = datetime!(2026-11-21 00:00:00 UTC);
    let every = Retention {
        prefix: None,
        older_than: RetentionDays::DEFAULT,
    };
    // (name, expired?): the first YYYY.MM.DD anywhere, as Curator's re.search finds it.
    for (name, want) in [
        ("2026.08.22-log", true),
        ("log-2026.08.22", true),
        ("app-2026.08.22-shard2", true),
        ("2026.11.20-log", false),
        ("x2026.08.22", true),
        ("flog-2026.08.22", true),
    ] {
        assert_eq!(expired(&every.judge(name, now)), want, "{name}");
    }
    for impossible in ["log-0000.01.01", "0000.12.31-log", "log-0000.02.29"] {
        assert!(
            matches!(every.judge(impossible, now), Verdict::BadDate { .. }),
            "{impossible}: {:?}",
            every.judge(impossible, now)
        );
    }
    assert_eq!(every.judge(".kibana-2020.01.01", now), Verdict::System);
    assert_eq!(every.judge("no-date-here", now), Verdict::NoDate);
    // With a prefix, a date-first name is not one of ours.
    assert_eq!(
        rule("30").judge("2026.08.22-flog-", now),
        Verdict::OtherPrefix
    );
    assert!(expired(&rule("30").judge("flog-x-2026.08.22", now)));
}

#[test]
fn keepers_are_named_by_the_most_telling_reason() {
    let info = |keepers: Vec<Keeper>| IndexInfo {
        row: crate::cluster::CatIndexRow {
            index: "logs-2026.01.01".into(),
            uuid: Some("u".into()),
            health: None,
            status: None,
            docs_count: None,
            store_size: None,
        },
        uuid: crate::index::IndexUuid::parse("u").unwrap(),
        keepers,
        created: None,
    };
    assert_eq!(info(vec![]).keeper(), None);
    let stream = Keeper::DataStream {
        stream: "logs".into(),
    };
    let ilm = Keeper::Ilm {
        policy: "30d".into(),
    };
    assert_eq!(
        info(vec![Keeper::Hidden, ilm.clone(), stream.clone()]).keeper(),
        Some(&stream)
    );
    assert_eq!(info(vec![Keeper::Hidden, ilm.clone()]).keeper(), Some(&ilm));
    assert_eq!(ilm.to_string(), "ILM policy `30d`");
}

#[test]
fn retention_days_are_bounded() {
    for bad in ["0", "-1", "3651", "99999999999", "thirty", "", "1.5"] {
        assert!(RetentionDays::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(
        RetentionDays::parse("0").unwrap_err().to_string(),
        "the age in days must be a whole number from 1 to 3650, not `0`"
    );
}

proptest::proptest! {
    #[test]
    fn nothing_younger_than_the_cutoff_is_ever_selected(
        day_offset in -4000i64..4000,
        now_secs in 1_600_000_000i64..1_900_000_000,
        days in 1u32..=3650,
        suffix in "(-[a-z0-9.]{0,12})?",
    ) {
        let now = OffsetDateTime::from_unix_timestamp(now_secs).unwrap();
        let date = now.date() + time::Duration::days(day_offset);
        let name = format!(
            "flog-{:04}.{:02}.{:02}{suffix}",
            date.year(),
            u8::from(date.month()),
            date.day()
        );
        let r = rule(&days.to_string());
        let verdict = r.judge(&name, now);
        let older = date.midnight().assume_utc() < r.cutoff(now);
        proptest::prop_assert_eq!(expired(&verdict), older, "{} {:?}", name, verdict);
    }
}
