//! A runbook's words as a step uses them: with the values earlier steps captured in place.

use std::collections::BTreeMap;

use opsbot_commands::runbook::Word;

use crate::engine::failure::StepFailure;

/// The words with captured values in place; a value no step captured fails the step.
pub(super) fn filled(
    words: &[Word],
    captured: &BTreeMap<String, String>,
) -> Result<Vec<String>, StepFailure> {
    words
        .iter()
        .map(|w| {
            w.fill(captured).map_err(|name| StepFailure::NeverCaptured {
                name: name.to_string(),
            })
        })
        .collect()
}

/// A word for a person: captured values in place, `{name}` where none was captured.
pub(super) fn shown(word: &Word, captured: &BTreeMap<String, String>) -> String {
    word.fill(captured).unwrap_or_else(|_| word.to_string())
}

pub(super) fn line(words: &[Word], captured: &BTreeMap<String, String>) -> String {
    words
        .iter()
        .map(|w| shown(w, captured))
        .collect::<Vec<_>>()
        .join(" ")
}
