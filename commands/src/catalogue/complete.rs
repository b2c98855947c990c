//! Completion of a console line from the catalogue (Tab at a terminal): the command's group,
//! its subcommand, then the names of its options not given yet.

use super::{CommandSpec, Reach, commands};

/// The completions of the word that ends `line` (the text before the cursor): where that word
/// starts, and the words that can replace it, each with what follows it (a space after a
/// command word, nothing after `name:`). `demo` offers the demo's own commands too.
pub fn complete(line: &str, demo: bool) -> (usize, Vec<String>) {
    let start = line.rfind(char::is_whitespace).map_or(0, |i| i + 1);
    let word = &line[start..];
    let before: Vec<&str> = line[..start].split_whitespace().collect();
    let offered = commands().filter(|c| demo || c.reach == Reach::Everywhere);
    let mut candidates: Vec<String> = match before.as_slice() {
        [] => offered
            .map(|c| format!("/{} ", c.group))
            .filter(|group| group.starts_with(word))
            .collect(),
        [group] => offered
            .filter(|c| format!("/{}", c.group) == *group)
            .filter_map(|c| c.sub)
            .filter(|sub| sub.starts_with(word))
            .map(|sub| format!("{sub} "))
            .collect(),
        [group, rest @ ..] => match command(group, rest.first().copied(), demo) {
            Some(command) => command
                .options
                .iter()
                .map(|o| format!("{}:", o.name))
                .filter(|name| name.starts_with(word))
                .filter(|name| !rest.iter().any(|given| given.starts_with(name.as_str())))
                .collect(),
            None => Vec::new(),
        },
    };
    candidates.dedup();
    (start, candidates)
}

/// The command `/group sub` (or `/group` alone, its first word then being an option).
fn command(group: &str, sub: Option<&str>, demo: bool) -> Option<&'static CommandSpec> {
    let group = group.strip_prefix('/')?;
    commands()
        .filter(|c| demo || c.reach == Reach::Everywhere)
        .find(|c| c.group == group && (c.sub.is_none() || c.sub == sub))
}

#[cfg(test)]
mod tests {
    use super::complete;

    #[test]
    fn groups_then_subcommands_then_options_not_given_yet() {
        assert_eq!(complete("/clu", false), (0, vec!["/cluster ".to_owned()]));
        assert_eq!(
            complete("/cluster re", false),
            (9, vec!["restart ".to_owned(), "remove-node ".to_owned()])
        );
        assert_eq!(
            complete("/cluster restart c", false),
            (17, vec!["cluster:".to_owned()])
        );
        assert_eq!(
            complete("/cluster restart cluster:logs ", false),
            (30, vec!["at:".to_owned()])
        );
        // Commands without a subcommand take options right after the group.
        assert_eq!(
            complete("/approve id:r-1 d", false),
            (16, vec!["digest:".to_owned()])
        );
        assert_eq!(complete("/nonsense x", false), (10, Vec::<String>::new()));
    }

    #[test]
    fn the_demo_alone_offers_its_own_commands() {
        assert!(complete("/a", false).1.iter().all(|c| c != "/as "));
        assert!(complete("/a", true).1.iter().any(|c| c == "/as "));
    }
}
