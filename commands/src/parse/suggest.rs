//! "Did you mean": the hint of an unknown command names the catalogue commands closest to what
//! was typed, by edit distance, so a typo (`/clustr status`, `/cluster restrat`) costs one
//! glance instead of a trip to `/help`. Only close words are suggested; a far one keeps the
//! plain hint, since a wrong guess misleads more than none.

use super::{Origin, ParseError};
use crate::catalogue::{self, CommandSpec, Reach};
use crate::echo::visible;

/// The refusal of `/group word ...` when no command has that path. `group` names no command
/// group, or `word` (the first token after it, if any) none of the group's subcommands.
pub(super) fn unknown_command(group: &str, word: Option<&str>, origin: Origin) -> ParseError {
    let offered: Vec<&'static CommandSpec> = catalogue::commands()
        .filter(|c| c.reach == Reach::Everywhere || origin == Origin::Demo)
        .collect();
    let in_group: Vec<&'static CommandSpec> = offered
        .iter()
        .copied()
        .filter(|c| c.group.eq_ignore_ascii_case(group))
        .collect();
    if !in_group.is_empty() {
        return unknown_sub(group, word.unwrap_or_default(), &in_group);
    }
    let mut groups: Vec<&'static str> = Vec::new();
    for command in &offered {
        if !groups.contains(&command.group) {
            groups.push(command.group);
        }
    }
    // A `name:value` after the group is an option, not a mistyped subcommand.
    let word = word.filter(|w| !w.contains(':'));
    let mut typed = format!("/{}", visible(group, 32));
    let mut guesses: Vec<String> = Vec::new();
    let mut listed = None;
    for near in closest(group, groups, |g| g) {
        let commands: Vec<&'static CommandSpec> = offered
            .iter()
            .copied()
            .filter(|c| c.group == near)
            .collect();
        if commands.iter().any(|c| c.sub.is_none()) {
            guesses.push(format!("/{near}"));
            continue;
        }
        if let Some(word) = word {
            typed = format!("/{} {}", visible(group, 32), visible(word, 32));
            let subs = closest(word, commands.iter().copied(), |c| {
                c.sub.unwrap_or_default()
            });
            if !subs.is_empty() {
                guesses.extend(subs.iter().map(|c| c.path()));
                continue;
            }
        }
        guesses.push(format!("/{near}"));
        listed = Some(paths(&commands));
    }
    let hint = match (guesses.as_slice(), listed) {
        ([], _) => "type /help for the list".to_owned(),
        ([group], Some(list)) => format!("did you mean {group}? try one of: {list}"),
        (guesses, _) => format!("did you mean {}?", either(guesses)),
    };
    ParseError::UnknownCommand { typed, hint }
}

/// The refusal of a known group with an unknown (or no) subcommand: the closest subcommand
/// first when there is one, then the group's commands as always, so the list reads the same.
fn unknown_sub(group: &str, sub: &str, in_group: &[&'static CommandSpec]) -> ParseError {
    let list = format!("try one of: {}", paths(in_group));
    let near = closest(sub, in_group.iter().copied(), |c| c.sub.unwrap_or_default());
    let hint = if near.is_empty() {
        list
    } else {
        let near: Vec<String> = near.iter().map(|c| c.path()).collect();
        format!("did you mean {}? {list}", either(&near))
    };
    ParseError::UnknownCommand {
        typed: format!("/{} {}", visible(group, 32), visible(sub, 32))
            .trim_end()
            .to_owned(),
        hint,
    }
}

/// `/cluster status, /cluster stop, ...`, in catalogue order.
fn paths(commands: &[&'static CommandSpec]) -> String {
    let paths: Vec<String> = commands.iter().map(|c| c.path()).collect();
    paths.join(", ")
}

/// `a`, `a or b`, `a, b or c`.
fn either(words: &[String]) -> String {
    match words {
        [init @ .., last] if !init.is_empty() => format!("{} or {last}", init.join(", ")),
        _ => words.join(""),
    }
}

/// The items whose name is nearest to `typed`, ties kept in order; none if even the nearest
/// is too far to be a typo of it (see [`near`]).
fn closest<T: Copy>(
    typed: &str,
    items: impl IntoIterator<Item = T>,
    name: impl Fn(T) -> &'static str,
) -> Vec<T> {
    let mut best: Vec<T> = Vec::new();
    let mut best_distance = usize::MAX;
    for item in items {
        let Some(distance) = near(typed, name(item)) else {
            continue;
        };
        if distance < best_distance {
            best_distance = distance;
            best.clear();
        }
        if distance == best_distance {
            best.push(item);
        }
    }
    best
}

/// The distance from `typed` to `name` when it is small enough to be a typo: one edit between
/// words of up to five letters (two would turn `/page` into `/image`), two between longer ones,
/// and always fewer edits than `typed` has letters (`/s` is no typo of `/as`). An empty `name`
/// (a command with no subcommand) is never near.
fn near(typed: &str, name: &str) -> Option<usize> {
    // No catalogue word is this long, and the distance takes time in the product of the lengths.
    const LONGEST: usize = 40;
    let typed_len = typed.chars().count();
    if name.is_empty() || typed_len > LONGEST {
        return None;
    }
    let limit = (typed_len.max(name.chars().count()) / 3).clamp(1, 2);
    let distance = distance(typed, name);
    (distance <= limit && distance < typed_len).then_some(distance)
}

/// Edit distance: Levenshtein's insertions, deletions and substitutions of one character, plus
/// the swap of two neighbours (`restrat`, `hepl`), the commonest typo, as one edit rather than
/// two (the "optimal string alignment" distance). ASCII case is ignored, as the parser ignores
/// it. The table is kept two rows at a time.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    let mut before: Vec<usize> = Vec::new();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut next = Vec::with_capacity(row.len());
        next.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let plus_one = |row: &[usize], k: usize| row.get(k).map_or(usize::MAX, |d| d + 1);
            let replace = row.get(j).map_or(usize::MAX, |d| d + usize::from(ca != cb));
            let swapped =
                i > 0 && j > 0 && a.get(i - 1) == Some(cb) && b.get(j - 1) == Some(ca) && ca != cb;
            let swap = if swapped {
                plus_one(&before, j - 1)
            } else {
                usize::MAX
            };
            let best = replace
                .min(plus_one(&row, j + 1))
                .min(plus_one(&next, j))
                .min(swap);
            next.push(best);
        }
        before = std::mem::replace(&mut row, next);
    }
    row.last().copied().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_single_character_edits_ignoring_ascii_case() {
        assert_eq!(distance("", ""), 0);
        assert_eq!(distance("", "run"), 3);
        assert_eq!(distance("run", ""), 3);
        assert_eq!(distance("clustr", "cluster"), 1);
        assert_eq!(distance("restrat", "restart"), 1, "a swap is one edit");
        assert_eq!(distance("hepl", "help"), 1);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("ca", "abc"), 3, "no edit of a swapped pair");
        assert_eq!(distance("CLUSTER", "cluster"), 0);
        assert_eq!(
            distance("stаtus", "status"),
            1,
            "a Cyrillic а is no ASCII a"
        );
    }

    #[test]
    fn only_near_words_are_typos() {
        assert_eq!(near("clustr", "cluster"), Some(1));
        assert_eq!(near("restrat", "restart"), Some(1));
        assert_eq!(near("hepl", "help"), Some(1));
        assert_eq!(near("indexes", "indices"), Some(2));
        assert_eq!(near("stats", "status"), Some(1));
        assert_eq!(near("sta", "stop"), None, "two edits in a four-letter word");
        assert_eq!(
            near("s", "as"),
            None,
            "one letter is too little to guess from"
        );
        assert_eq!(near("deploy", "delete"), None);
        assert_eq!(near("status", ""), None);
        assert_eq!(near(&"x".repeat(2000), "cluster"), None);
    }

    #[test]
    fn ties_are_all_suggested_in_order() {
        let words = ["stop", "start", "status"];
        assert_eq!(closest("stort", words, |w| w), ["start"]);
        assert_eq!(closest("STATUS", words, |w| w), ["status"]);
        assert_eq!(
            closest("bat", ["cat", "bar", "cart"], |w| w),
            ["cat", "bar"]
        );
        assert!(closest("nothing", words, |w| w).is_empty());
    }

    #[test]
    fn alternatives_read_as_a_sentence() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(either(&words(&["/a"])), "/a");
        assert_eq!(either(&words(&["/a", "/b"])), "/a or /b");
        assert_eq!(either(&words(&["/a", "/b", "/c"])), "/a, /b or /c");
    }
}
