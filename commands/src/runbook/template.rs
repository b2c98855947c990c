//! `{name}` placeholders in a runbook's words. A name is a parameter, the host of an `each`
//! block, or a value an earlier step captured; `{{` and `}}` are literal braces. Parameters are
//! filled in when the run is planned, so the plan shows (and its digest binds) the exact words;
//! captured values exist only once the run is under way, so a planned [`Word`] keeps their places.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// A word as a runbook file writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template(Vec<Piece>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Var(String),
}

impl Template {
    /// Reads `text`; the error says what is wrong in words.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let mut pieces = Vec::new();
        let mut text_piece = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    text_piece.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    text_piece.push('}');
                }
                '{' => {
                    let mut name = String::new();
                    let mut closed = false;
                    for c in chars.by_ref() {
                        if c == '}' {
                            closed = true;
                            break;
                        }
                        name.push(c);
                    }
                    if !closed || !is_name(&name) {
                        return Err(format!(
                            "`{{{name}` in `{text}` is no placeholder: write {{name}} with \
                             lower-case letters, digits and `_`, or {{{{ for a literal brace"
                        ));
                    }
                    if !text_piece.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text_piece)));
                    }
                    pieces.push(Piece::Var(name));
                }
                '}' => {
                    return Err(format!(
                        "`}}` in `{text}` closes nothing; write }}}} for a literal brace"
                    ));
                }
                c => text_piece.push(c),
            }
        }
        if !text_piece.is_empty() {
            pieces.push(Piece::Text(text_piece));
        }
        Ok(Self(pieces))
    }

    /// The placeholder names, in order.
    pub(crate) fn vars(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|p| match p {
            Piece::Var(name) => Some(name.as_str()),
            Piece::Text(_) => None,
        })
    }

    /// Fills in `values`; names not among them are values a step captures, kept as places.
    pub(crate) fn bind(&self, values: &BTreeMap<&str, &str>) -> Word {
        let mut segments: Vec<Segment> = Vec::new();
        for piece in &self.0 {
            let text = match piece {
                Piece::Text(text) => text.as_str(),
                Piece::Var(name) => match values.get(name.as_str()) {
                    Some(value) => value,
                    None => {
                        segments.push(Segment::Capture(name.clone()));
                        continue;
                    }
                },
            };
            match segments.last_mut() {
                Some(Segment::Text(last)) => last.push_str(text),
                _ => segments.push(Segment::Text(text.to_owned())),
            }
        }
        Word(segments)
    }
}

/// Placeholder and capture names: those of parameters.
pub(crate) fn is_name(name: &str) -> bool {
    crate::name::ParamName::parse(name).is_ok()
}

/// A word of a planned command: text, and the places where a value captured by an earlier step
/// goes when the step runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Word(Vec<Segment>);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Segment {
    Text(String),
    Capture(String),
}

impl Word {
    /// The word with captured values in place; `Err` names a value nothing captured.
    pub fn fill(&self, captured: &BTreeMap<String, String>) -> Result<String, String> {
        let mut word = String::new();
        for segment in &self.0 {
            match segment {
                Segment::Text(text) => word.push_str(text),
                Segment::Capture(name) => match captured.get(name) {
                    Some(value) => word.push_str(value),
                    None => return Err(name.clone()),
                },
            }
        }
        Ok(word)
    }
}

/// Captured places show as `{name}`, as the runbook wrote them.
impl fmt::Display for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for segment in &self.0 {
            match segment {
                Segment::Text(text) => f.write_str(text)?,
                Segment::Capture(name) => write!(f, "{{{name}}}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_filled_in_and_captures_keep_their_place() {
        let template = Template::parse("/proc/{pid}/{{x}}/{module}").unwrap();
        assert_eq!(template.vars().collect::<Vec<_>>(), ["pid", "module"]);
        let word = template.bind(&BTreeMap::from([("module", "kvm_amd")]));
        assert_eq!(word.to_string(), "/proc/{pid}/{x}/kvm_amd");
        let captured = BTreeMap::from([("pid".to_owned(), "41".to_owned())]);
        assert_eq!(word.fill(&captured).unwrap(), "/proc/41/{x}/kvm_amd");
        assert_eq!(word.fill(&BTreeMap::new()), Err("pid".to_owned()));
    }

    #[test]
    fn stray_braces_and_bad_names_are_refused() {
        for bad in ["{", "{host", "{Host}", "a}b", "{}", "{a-b}"] {
            assert!(Template::parse(bad).is_err(), "{bad}");
        }
    }
}
