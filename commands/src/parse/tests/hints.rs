//! What an operator's first night turned up: typos in a command get a "did you mean", case is
//! ignored in names but not in values, and a space after an option's colon is named as such.

use super::*;
use crate::name::ClusterName;

fn refusal(line: &str, origin: Origin) -> String {
    match parse_line(line, origin) {
        Ok(request) => panic!("{line} parsed to {request:?}"),
        Err(error) => error.to_string(),
    }
}

const CLUSTER_COMMANDS: &str = "/cluster status, /cluster stop, /cluster start, /cluster \
                                restart, /cluster remove-node";

#[test]
fn a_mistyped_group_suggests_the_nearest_command() {
    let cases = [
        (
            "/clustr status cluster:logs",
            "unknown command `/clustr status`; did you mean /cluster status?".to_owned(),
        ),
        (
            "/CLUSTR STATUS",
            "unknown command `/CLUSTR STATUS`; did you mean /cluster status?".to_owned(),
        ),
        (
            "/clutser restrat cluster:logs",
            "unknown command `/clutser restrat`; did you mean /cluster restart?".to_owned(),
        ),
        (
            "/indexes list cluster:logs",
            "unknown command `/indexes list`; did you mean /indices list?".to_owned(),
        ),
        (
            "/hepl",
            "unknown command `/hepl`; did you mean /help?".to_owned(),
        ),
        (
            "/aprove id:r-3",
            "unknown command `/aprove`; did you mean /approve?".to_owned(),
        ),
        // The group is near but the word after it is no subcommand: the group's list, as for
        // a known group.
        (
            "/clustr",
            format!(
                "unknown command `/clustr`; did you mean /cluster? try one of: {CLUSTER_COMMANDS}"
            ),
        ),
        (
            "/clustr cluster:logs",
            format!(
                "unknown command `/clustr`; did you mean /cluster? try one of: {CLUSTER_COMMANDS}"
            ),
        ),
        (
            "/clustr reboot",
            format!(
                "unknown command `/clustr reboot`; did you mean /cluster? try one of: \
                 {CLUSTER_COMMANDS}"
            ),
        ),
        // Nothing near: the plain hint of old.
        (
            "/deploy",
            "unknown command `/deploy`; type /help for the list".to_owned(),
        ),
        (
            "/st",
            "unknown command `/st`; type /help for the list".to_owned(),
        ),
        (
            "/",
            "unknown command `/`; type /help for the list".to_owned(),
        ),
    ];
    for (line, said) in cases {
        assert_eq!(refusal(line, Origin::Console), said, "{line}");
    }
}

#[test]
fn a_mistyped_subcommand_is_suggested_before_the_groups_list() {
    assert_eq!(
        refusal("/cluster restrat cluster:logs", Origin::Console),
        format!(
            "unknown command `/cluster restrat`; did you mean /cluster restart? try one of: \
             {CLUSTER_COMMANDS}"
        )
    );
    assert_eq!(
        refusal("/run lst", Origin::Chat),
        "unknown command `/run lst`; did you mean /run list? try one of: /run status, /run \
         log, /run list, /run cancel, /run done, /run confirm"
    );
    assert_eq!(
        refusal("/schedule pouse", Origin::Chat),
        "unknown command `/schedule pouse`; did you mean /schedule pause? try one of: \
         /schedule list, /schedule show, /schedule pause, /schedule resume, /schedule approve"
    );
    // Too far from every subcommand, or none typed: the list alone, as before.
    for line in ["/cluster frobnicate", "/cluster", "/cluster cluster:logs"] {
        assert!(
            refusal(line, Origin::Console).ends_with(&format!("; try one of: {CLUSTER_COMMANDS}")),
            "{line}"
        );
        assert!(
            !refusal(line, Origin::Console).contains("did you mean"),
            "{line}"
        );
    }
}

#[test]
fn demo_commands_are_suggested_only_in_the_demo() {
    assert_eq!(
        refusal("/ass user:bob", Origin::Demo),
        "unknown command `/ass`; did you mean /as?"
    );
    for origin in [Origin::Console, Origin::Chat] {
        assert_eq!(
            refusal("/ass user:bob", origin),
            "unknown command `/ass`; type /help for the list",
            "{origin:?}"
        );
    }
}

#[test]
fn command_and_option_names_ignore_ascii_case() {
    let logs = || ClusterName::parse("logs").unwrap();
    for line in [
        "/CLUSTER STATUS cluster:logs",
        "/Cluster Status CLUSTER:logs",
        "/cluster status Cluster:logs",
    ] {
        assert_eq!(
            parse_line(line, Origin::Console),
            Ok(Request::ClusterStatus { cluster: logs() }),
            "{line}"
        );
    }
    assert_eq!(
        parse_line("/REJECT ID:r-2 REASON:wrong node, see r-1", Origin::Console),
        Ok(Request::Reject {
            id: crate::name::RunId::new(2),
            reason: crate::name::Reason::parse("wrong node, see r-1").unwrap(),
        })
    );
    // A runbook's parameters are option names too; they reach the runbook in lower case.
    assert_eq!(
        parse_line(
            "/runbook run NAME:nested-virt HOST:compute-03",
            Origin::Console
        ),
        Ok(Request::RunbookRun {
            name: "nested-virt".into(),
            params: vec![("host".into(), "compute-03".into())],
            at: None,
        })
    );
    // The same option in two cases is the same option given twice.
    assert_eq!(
        refusal("/cluster status cluster:logs CLUSTER:logs", Origin::Console),
        "option `cluster` is given twice; usage: /cluster status cluster:<cluster>"
    );
    assert_eq!(
        refusal(
            "/runbook run name:nested-virt host:a HOST:b",
            Origin::Console
        ),
        "option `host` is given twice; usage: /runbook run name:<runbook> [at:<time>] \
         [<parameter>:<value> ...]"
    );
}

#[test]
fn values_keep_their_case() {
    assert_eq!(
        refusal("/CLUSTER STATUS CLUSTER:LOGS", Origin::Console),
        "cluster: cluster name `LOGS` has `L`; use lower-case letters, digits, `-` and `_`"
    );
    assert_eq!(
        refusal("/cluster status cluster:logs COLOUR:red", Origin::Console),
        "`/cluster status` has no option `COLOUR`; usage: /cluster status cluster:<cluster>"
    );
}

#[test]
fn a_space_after_the_colon_is_named() {
    let cases = [
        (
            "/cluster status cluster: logs",
            "`cluster:` has no value: remove the space after the colon (cluster:logs)",
        ),
        (
            "/cluster status CLUSTER:  logs",
            "`cluster:` has no value: remove the space after the colon (cluster:logs)",
        ),
        (
            "/cluster status cluster: \"my logs\"",
            "`cluster:` has no value: remove the space after the colon (cluster:\"my logs\")",
        ),
        // A value with a colon of its own still reads as the value.
        (
            "/cluster restart cluster:logs at: 2026-11-28T03:00+01:00",
            "`at:` has no value: remove the space after the colon (at:2026-11-28T03:00+01:00)",
        ),
        (
            "/cluster remove-node cluster:logs node: fe80::14",
            "`node:` has no value: remove the space after the colon (node:fe80::14)",
        ),
        (
            "/reject id: r-1 reason:wrong node",
            "`id:` has no value: remove the space after the colon (id:r-1)",
        ),
        (
            "/runbook run name:nested-virt host: compute-03",
            "`host:` has no value: remove the space after the colon (host:compute-03)",
        ),
    ];
    for (line, said) in cases {
        assert_eq!(refusal(line, Origin::Console), said, "{line}");
    }
    // An empty option followed by another option is an empty value, as before.
    assert_eq!(
        refusal(
            "/cluster restart cluster: at:2026-11-28T03:00+01:00",
            Origin::Console
        ),
        "cluster: cluster name is empty"
    );
    assert_eq!(
        refusal("/cluster status cluster:", Origin::Console),
        "cluster: cluster name is empty"
    );
    // The free-text option takes the rest of the line, space or not.
    assert!(matches!(
        parse_line("/reject id:r-1 reason: wrong node", Origin::Console),
        Ok(Request::Reject { .. })
    ));
}

/// The replies bot/tests/it/e2e/bad_input.rs asserts, pinned here where they are made.
#[test]
fn the_replies_of_the_bad_input_end_to_end_test() {
    let cases = [
        (
            "/cluster restrat cluster:logs",
            format!(
                "unknown command `/cluster restrat`; did you mean /cluster restart? try one of: \
                 {CLUSTER_COMMANDS}"
            ),
        ),
        (
            "/cluster restart",
            "`/cluster restart` needs `cluster:`; usage: /cluster restart cluster:<cluster> \
             [at:<time>]"
                .to_owned(),
        ),
        (
            "/cluster restart cluster:logs force:yes",
            "`/cluster restart` has no option `force`; usage: /cluster restart \
             cluster:<cluster> [at:<time>]"
                .to_owned(),
        ),
    ];
    for (line, said) in cases {
        assert_eq!(refusal(line, Origin::Chat), said, "{line}");
    }
}
