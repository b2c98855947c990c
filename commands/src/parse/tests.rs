use super::*;
use crate::name::{ClusterName, PersonName, RunId};
use crate::request::ProcedureRequest;

mod hints;

fn logs() -> ClusterName {
    ClusterName::parse("logs").unwrap()
}

#[test]
fn well_formed_lines_parse_to_requests() {
    let table = [
        (
            "/cluster status cluster:logs",
            Request::ClusterStatus { cluster: logs() },
        ),
        (
            "/cluster stop cluster:logs",
            Request::Procedure(ProcedureRequest::ClusterStop { cluster: logs() }),
        ),
        (
            "  /cluster   restart   cluster:logs  ",
            Request::Procedure(ProcedureRequest::ClusterRestart { cluster: logs() }),
        ),
        (
            "/cluster restart cluster:logs at:2026-11-28T03:00+01:00",
            Request::Book {
                procedure: ProcedureRequest::ClusterRestart { cluster: logs() },
                at: time::macros::datetime!(2026-11-28 02:00 UTC),
            },
        ),
        (
            "/run list",
            Request::RunList {
                page: crate::page::Page::FIRST,
            },
        ),
        (
            "/run cancel id:r-7",
            Request::RunCancel { id: RunId::new(7) },
        ),
        ("/run done id:7", Request::RunDone { id: RunId::new(7) }),
        (
            "/approve id:r-3",
            Request::Approve {
                id: RunId::new(3),
                digest: None,
            },
        ),
        (
            "/approve id:r-3 digest:3F9A0C1B2D4E",
            Request::Approve {
                id: RunId::new(3),
                digest: Some(crate::plan::DigestPrefix::parse("3f9a0c1b2d4e").unwrap()),
            },
        ),
        (
            "/reject id:r-3 reason:\"not during the backup\"",
            Request::Reject {
                id: RunId::new(3),
                reason: crate::name::Reason::parse("not during the backup").unwrap(),
            },
        ),
        ("/help", Request::Help { topic: None }),
        (
            "/help topic:cluster",
            Request::Help {
                topic: Some("cluster".into()),
            },
        ),
        (
            "/as user:bob",
            Request::ActAs {
                user: PersonName::parse("bob").unwrap(),
            },
        ),
    ];
    for (line, expected) in table {
        assert_eq!(parse_line(line, Origin::Demo), Ok(expected), "{line}");
    }
}

#[test]
fn canonical_text_parses_back_to_the_same_procedure() {
    for procedure in [
        ProcedureRequest::ClusterStop { cluster: logs() },
        ProcedureRequest::ClusterStart { cluster: logs() },
        ProcedureRequest::ClusterRestart { cluster: logs() },
    ] {
        assert_eq!(
            parse_line(&procedure.to_string(), Origin::Chat),
            Ok(Request::Procedure(procedure))
        );
    }
}

#[test]
fn bad_lines_get_errors_that_say_what_to_type() {
    let long = format!("/cluster status cluster:{}", "x".repeat(80));
    let too_long_line = format!("/run list {}", "y".repeat(2100));
    let lines = [
        "",
        "cluster status cluster:logs",
        "/clutser status cluster:logs",
        "/clustr",
        "/nope status",
        "/cluster stats cluster:logs",
        "/CLUSTER STATUS cluster:Logs",
        "/cluster",
        "/cluster status",
        "/cluster status logs",
        "/cluster status cluster:logs cluster:logs",
        "/cluster status cluster:logs colour:red",
        "/cluster status cluster:Logs",
        "/cluster status cluster:*",
        "/cluster status cluster:",
        "/cluster status cluster: logs",
        long.as_str(),
        "/run cancel id:forty-two",
        "/reject id:r-1 reason:\"unclosed",
        "/reject id:r-1",
        "/cluster remove-node cluster:logs",
        "/cluster remove-node cluster:logs node:fe80::14",
        "/cluster remove-node cluster:logs node:10.0.0.256",
        "/cluster remove-node cluster:logs node:node-4",
        "/cluster restart cluster:logs at:2026-11-28",
        "/cluster restart cluster:logs at:2026-11-28T02:00",
        "/cluster restart cluster:logs at:2026-11-24T25:00Z",
        too_long_line.as_str(),
    ];
    let rendered: Vec<String> = lines
        .iter()
        .map(|line| {
            let shown: String = line.chars().take(60).collect();
            let error = parse_line(line, Origin::Console).unwrap_err();
            format!("{shown}\n  -> {error}")
        })
        .collect();
    insta::assert_snapshot!(rendered.join("\n"));
}

#[test]
fn the_last_text_option_takes_the_rest_of_the_line_without_quotes() {
    let notice = |text: &str| Request::MaintenanceAnnounce {
        text: crate::name::Notice::parse(text).unwrap(),
    };
    let reject = |reason: &str| Request::Reject {
        id: RunId::new(2),
        reason: crate::name::Reason::parse(reason).unwrap(),
    };
    let table = [
        (
            "/maintenance announce text:upgrading logs now",
            notice("upgrading logs now"),
        ),
        (
            "/maintenance announce text:  until 04:00 UTC, 5\" of slack  ",
            notice("until 04:00 UTC, 5\" of slack"),
        ),
        (
            "/maintenance announce text:\"quoted, as before\"",
            notice("quoted, as before"),
        ),
        (
            "/reject id:r-2 reason:wrong node, see r-1",
            reject("wrong node, see r-1"),
        ),
        // What follows the free-text option is its text, even what looks like an option.
        (
            "/reject id:r-2 reason:not now id:r-3",
            reject("not now id:r-3"),
        ),
    ];
    for (line, expected) in table {
        assert_eq!(parse_line(line, Origin::Console), Ok(expected), "{line}");
    }
    // Only the catalogue's last text option, and only where a word starts with its name.
    assert!(matches!(
        parse_line("/reject id:r-2", Origin::Console),
        Err(ParseError::MissingOption {
            option: "reason",
            ..
        })
    ));
    assert_eq!(
        parse_line("/cluster status cluster:logs extra words", Origin::Console)
            .unwrap_err()
            .to_string(),
        "`extra` is not an option; give options as name:value, e.g. /cluster status \
         cluster:<cluster>"
    );
    assert_eq!(
        parse_line("/reject id:r-2 reason:\"open", Origin::Console),
        Err(ParseError::UnclosedQuote)
    );
}

#[test]
fn two_commands_on_one_line_are_told_apart() {
    let refused = parse_line("/as user:bob /approve id:r-1", Origin::Demo).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "`/approve` starts another command: one command per line, `/as user:bob` first, then \
         `/approve …`"
    );
    let refused = parse_line("/cluster status cluster:logs /run list", Origin::Console);
    assert!(
        matches!(&refused, Err(ParseError::SecondCommand { token, first })
            if token == "/run" && first == "/cluster status cluster:logs"),
        "{refused:?}"
    );
}

#[test]
fn act_as_is_unknown_outside_the_demo() {
    for origin in [Origin::Chat, Origin::Console] {
        let refused = parse_line("/as user:bob", origin).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "unknown command `/as`; type /help for the list",
            "{origin:?}"
        );
    }
}

#[test]
fn echoed_text_shows_what_was_typed() {
    let cases = [
        (
            "/cluster status cluster:lo\u{200B}gs",
            "cluster: cluster name `lo\\u{200B}gs` has an invisible character \\u{200B}; use \
             lower-case letters, digits, `-` and `_`",
        ),
        (
            "/cluster status cluster:l\u{43E}gs",
            "cluster: cluster name `lоgs` has `о` (U+043E), a letter that is not ASCII; use \
             lower-case letters, digits, `-` and `_`",
        ),
        (
            "/cluster status cluster:\u{202E}sgol",
            "cluster: cluster name `\\u{202E}sgol` has an invisible character \\u{202E}; use \
             lower-case letters, digits, `-` and `_`",
        ),
        (
            "/nope\u{200D}",
            "unknown command `/nope\\u{200D}`; type /help for the list",
        ),
        (
            "/reject id:r-1 reason:\"ok\u{202E}txt.exe\"",
            "reason: reason `ok\\u{202E}txt.exe` has an invisible character \\u{202E}; use \
             visible text",
        ),
        (
            "/maintenance announce text:\"db\u{2066}down\"",
            "text: announcement `db\\u{2066}down` has an invisible character \\u{2066}; use \
             visible text",
        ),
    ];
    for (line, said) in cases {
        assert_eq!(
            parse_line(line, Origin::Console).unwrap_err().to_string(),
            said,
            "{line:?}"
        );
    }
}

proptest::proptest! {
    #[test]
    fn no_input_panics(line in "\\PC{0,300}") {
        let _ = parse_line(&line, Origin::Console);
    }

    #[test]
    fn a_parsed_cluster_name_is_always_valid(name in "[a-zA-Z0-9*_.,/ -]{0,80}") {
        if let Ok(Request::ClusterStatus { cluster }) =
            parse_line(&format!("/cluster status cluster:{name}"), Origin::Chat)
        {
            proptest::prop_assert!(ClusterName::parse(cluster.as_str()).is_ok());
            proptest::prop_assert!(!cluster.as_str().contains(['*', ',', '/', ' ', '.']));
        }
    }
}

#[test]
fn cloud_procedures_parse_back_from_their_canonical_text() {
    let lines = [
        "/placement stale cloud:prod host:compute-03",
        "/placement stale cloud:prod host:compute-03 instance:6f1a0c3e-2b7d-4c1e-9a55-0d3f4b2a8c11",
        "/compute rpc-cap cloud:prod",
        "/compute rpc-cap cloud:prod error:\"Requested message version, 5.0 is incompatible.  It \
         needs to be equal in major version and less than or equal in minor version as the \
         specified version cap 4.17.\"",
        "/image properties cloud:prod image:ubuntu-22.04 hw_scsi_model:virtio-scsi \
         hw_disk_bus:scsi os_type:linux os_distro:ubuntu",
        "/image properties cloud:prod image:\"Ubuntu 22.04 LTS\" os_distro:ubuntu22.04",
    ];
    for line in lines {
        let Ok(Request::Procedure(procedure)) = parse_line(line, Origin::Chat) else {
            panic!("{line} did not parse to a procedure");
        };
        assert_eq!(
            parse_line(&procedure.to_string(), Origin::Chat),
            Ok(Request::Procedure(procedure.clone())),
            "{procedure}"
        );
    }
}

#[test]
fn bad_cloud_input_is_refused_before_anything_is_asked() {
    let refused = [
        (
            "/placement stale cloud:prod host:compute-03 instance:1234",
            "is not a UUID",
        ),
        (
            "/placement stale cloud:prod host:compute*03",
            "host name `compute*03` has `*`",
        ),
        (
            "/placement allocations cloud:Prod host:compute-03",
            "cloud name",
        ),
        (
            "/image properties cloud:prod image:ubuntu",
            "give at least one property",
        ),
        (
            "/image properties cloud:prod image:ubuntu hw_disk_bus:virtio",
            "hw_disk_bus: must be `scsi`, not `virtio`",
        ),
        (
            "/image properties cloud:prod image:ubuntu os_type:Linux",
            "`linux` or `windows`",
        ),
        (
            "/image properties cloud:prod image:ubuntu os_distro:beos",
            "not a known OS",
        ),
        (
            "/compute rpc-cap cloud:prod error:\"nova-compute is down\"",
            "not an RPCVersionCapError",
        ),
    ];
    for (line, expected) in refused {
        let error = parse_line(line, Origin::Chat).unwrap_err().to_string();
        assert!(error.contains(expected), "{line}: {error}");
    }
}

proptest::proptest! {
    /// Whatever hidden character a value carries, the refusal that quotes it shows it escaped:
    /// nothing in a refusal can hide, join or reorder what the operator reads.
    #[test]
    fn refusals_never_carry_hidden_characters(
        before in "[a-z0-9]{0,6}",
        hidden in proptest::sample::select(vec![
            '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{202A}', '\u{202B}',
            '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
            '\u{00AD}', '\u{0301}', '\u{3164}', '\u{00A0}', '\u{2028}', '\u{0007}', '\u{001B}',
        ]),
        after in "[a-z0-9]{0,6}",
        template in proptest::sample::select(vec![
            "/cluster status cluster:{}",
            "/indices delete cluster:logs index:{}",
            "/cluster remove-node cluster:logs node:{}",
            "/placement stale cloud:prod host:{}",
            "/image properties cloud:prod image:{} os_type:linux",
            "/run status id:{}",
            "/approve id:r-1 digest:{}",
            "/reject id:r-1 reason:\"{}\"",
            "/maintenance announce text:\"{}\"",
            "/audit since:{}",
            "/help topic:{}",
            "/{}",
            "/cluster {}",
            "/cluster status {}:logs",
        ]),
    ) {
        let value = format!("{before}{hidden}{after}");
        let line = template.replace("{}", &value);
        if let Err(error) = parse_line(&line, Origin::Console) {
            let text = error.to_string();
            let shown: Vec<char> = text
                .chars()
                .filter(|&c| c != '`' && crate::echo::is_hidden(c))
                .collect();
            proptest::prop_assert!(shown.is_empty(), "{line:?} -> {text:?}");
        }
    }
}
