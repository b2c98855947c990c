//! The command catalogue: the one place that names every command and option. The console parser,
//! `/help` and the Discord registration are all derived from it, so no name is written twice.
//!
//! Its table is kept in a few modules of a few command groups each; [`commands`] chains them in
//! the order `/help` lists them. The options several commands share live in `options`.

mod clusters;
mod complete;
mod general;
mod openstack;
mod options;
mod runs;
mod schedules;
mod spec;

pub use complete::complete;
pub use spec::{CommandSpec, OptionKind, OptionSpec, Reach, Who};

/// The groups' tables, in the order `/help` lists them.
static TABLES: [&[CommandSpec]; 5] = [
    clusters::COMMANDS,
    openstack::COMMANDS,
    runs::COMMANDS,
    schedules::COMMANDS,
    general::COMMANDS,
];

/// Every command, in the order `/help` lists them.
pub fn commands() -> impl Iterator<Item = &'static CommandSpec> {
    TABLES.iter().flat_map(|table| table.iter())
}

/// The command groups that chat offers, in catalogue order: `/help topic:` choices.
pub fn chat_groups() -> Vec<&'static str> {
    let mut groups: Vec<&'static str> = Vec::new();
    for command in commands().filter(|c| c.reach == Reach::Everywhere) {
        if !groups.contains(&command.group) {
            groups.push(command.group);
        }
    }
    groups
}

/// The commands of a group, for `/help cluster` and for suggestions after a typo.
pub fn group(name: &str) -> impl Iterator<Item = &'static CommandSpec> + '_ {
    commands().filter(move |c| c.group == name)
}

#[cfg(test)]
mod tests;
