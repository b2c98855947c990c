//! The catalogue fits the rules of every front end.

use super::*;
use crate::openstack::image::PropertyKey;
use std::collections::HashSet;

#[test]
fn every_command_path_is_unique() {
    let mut seen = HashSet::new();
    for command in commands() {
        assert!(seen.insert(command.path()), "{} twice", command.path());
    }
}

#[test]
fn a_group_is_either_one_command_or_subcommands() {
    for command in commands().filter(|c| c.sub.is_none()) {
        assert_eq!(group(command.group).count(), 1, "{}", command.group);
    }
}

#[test]
fn option_names_fit_discord_rules() {
    // Discord: 1-32 lower-case characters, at most 25 options.
    for command in commands() {
        assert!(command.options.len() <= 25);
        for option in command.options {
            assert!(
                (1..=32).contains(&option.name.len())
                    && option
                        .name
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{}",
                option.name
            );
            assert!(option.summary.len() <= 100, "{}", option.summary);
        }
        assert!(command.summary.len() <= 100, "{}", command.summary);
    }
}

/// A value each option kind accepts.
fn sample(kind: OptionKind) -> &'static str {
    match kind {
        OptionKind::Cluster => "logs",
        OptionKind::Run => "r-1",
        OptionKind::User => "bob",
        OptionKind::Digest => "3f9a0c1b2d4e",
        OptionKind::Node => "10.0.0.11",
        OptionKind::Index => "flog-2026.01.01",
        OptionKind::Days => "30",
        OptionKind::Page => "2",
        OptionKind::Cloud => "prod",
        OptionKind::Host => "compute-01",
        OptionKind::Instance => "6f1a0c3e-2b7d-4c1e-9a55-0d3f4b2a8c11",
        OptionKind::Image => "cirros",
        OptionKind::Property(PropertyKey::HwScsiModel) => "virtio-scsi",
        OptionKind::Property(PropertyKey::HwDiskBus) => "scsi",
        OptionKind::Property(PropertyKey::OsType) => "linux",
        OptionKind::Property(PropertyKey::OsDistro) => "ubuntu",
        OptionKind::Runbook => "nested-virt",
        OptionKind::Param => "x",
        OptionKind::Topic => "run",
        OptionKind::Schedule => "nightly-prune",
        OptionKind::Date => "2027-02-01",
        OptionKind::Time => "2027-02-01T02:00Z",
        OptionKind::Text { .. } => "\"some text\"",
    }
}

#[test]
fn every_command_knows_its_requests_and_who_may_ask() {
    for command in commands() {
        let mut line = command.path();
        // Optional free text is checked by its own parser (an RPC error line); leave it out.
        let given = command
            .options
            .iter()
            .filter(|o| o.required || !matches!(o.kind, OptionKind::Text { .. }));
        for option in given {
            line.push_str(&format!(" {}:{}", option.name, sample(option.kind)));
        }
        let request = crate::parse::parse_line(&line, crate::parse::Origin::Demo)
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        assert_eq!(request.path(), (command.group, command.sub), "{line}");
        assert_eq!(request.who(), command.who, "{line}");
    }
}
