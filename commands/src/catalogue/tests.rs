//! The catalogue fits the rules of every front end.

use super::*;
use std::collections::HashSet;

#[test]
fn every_command_path_is_unique() {
    let mut seen = HashSet::new();
    for command in CATALOGUE {
        assert!(seen.insert(command.path()), "{} twice", command.path());
    }
}

#[test]
fn a_group_is_either_one_command_or_subcommands() {
    for command in CATALOGUE.iter().filter(|c| c.sub.is_none()) {
        assert_eq!(group(command.group).count(), 1, "{}", command.group);
    }
}

#[test]
fn option_names_fit_discord_rules() {
    // Discord: 1-32 lower-case characters, at most 25 options.
    for command in CATALOGUE {
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
