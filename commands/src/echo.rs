//! User text shown back to users. A refusal that quotes what was typed must show what was typed:
//! a zero-width space would make `lo​gs` look like `logs`, a bidi override would reorder the line,
//! and a backtick would end the code span the value is quoted in. Such characters are shown
//! escaped (`\u{200B}`), and long values are cut, so that refusals stay short and truthful.

use std::fmt::Write as _;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Letters that render as blank space although Unicode files them as letters or symbols.
const BLANK_LOOKING: [char; 6] = [
    '\u{115F}', // HANGUL CHOSEONG FILLER
    '\u{1160}', // HANGUL JUNGSEONG FILLER
    '\u{2800}', // BRAILLE PATTERN BLANK
    '\u{3164}', // HANGUL FILLER
    '\u{FFA0}', // HALFWIDTH HANGUL FILLER
    '\u{034F}', // COMBINING GRAPHEME JOINER
];

/// True for a character that chat would not show as itself: controls, format characters
/// (zero-width spaces and joiners, bidi embeddings, overrides and isolates), separators other
/// than the plain space, combining marks (which stack onto their neighbour), unassigned and
/// private-use code points, blank-looking letters, and the backtick that ends a code span.
pub fn is_hidden(ch: char) -> bool {
    if ch == '`' {
        return true;
    }
    if ch.is_ascii() {
        return ch.is_ascii_control();
    }
    BLANK_LOOKING.contains(&ch)
        || matches!(
            ch.general_category(),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::Surrogate
                | GeneralCategory::PrivateUse
                | GeneralCategory::Unassigned
                | GeneralCategory::SpaceSeparator
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
                | GeneralCategory::NonspacingMark
                | GeneralCategory::EnclosingMark
                | GeneralCategory::SpacingMark
        )
}

/// One character as a refusal names it: itself when it shows, else `\u{200B}`.
pub fn char_shown(ch: char) -> String {
    if is_hidden(ch) {
        format!("\\u{{{:X}}}", u32::from(ch))
    } else {
        ch.to_string()
    }
}

/// `value` as a refusal quotes it: hidden characters escaped, and at most `max` characters of
/// the original, with `…` when something was cut.
pub fn visible(value: &str, max: usize) -> String {
    let mut shown = String::with_capacity(value.len());
    for (i, ch) in value.chars().enumerate() {
        if i == max {
            shown.push('…');
            break;
        }
        if is_hidden(ch) {
            let _ = write!(shown, "\\u{{{:X}}}", u32::from(ch));
        } else {
            shown.push(ch);
        }
    }
    shown
}

/// What a refused character is, for the refusal's text: `\u{200B}` (invisible), `о` (U+043E,
/// not an ASCII letter), or the character itself.
pub fn describe(ch: char) -> String {
    let code = u32::from(ch);
    if is_hidden(ch) && ch != '`' {
        format!("an invisible character \\u{{{code:X}}}")
    } else if ch.is_alphabetic() && !ch.is_ascii() {
        format!("`{ch}` (U+{code:04X}), a letter that is not ASCII")
    } else {
        format!("`{}`", char_shown(ch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_and_reordering_characters_are_escaped() {
        assert_eq!(visible("lo\u{200B}gs", 40), "lo\\u{200B}gs");
        assert_eq!(visible("a\u{202E}cba", 40), "a\\u{202E}cba");
        assert_eq!(visible("x\u{2066}y\u{2069}", 40), "x\\u{2066}y\\u{2069}");
        assert_eq!(visible("tab\there", 40), "tab\\u{9}here");
        assert_eq!(visible("nb\u{A0}sp", 40), "nb\\u{A0}sp");
        assert_eq!(visible("e\u{301}", 40), "e\\u{301}");
        assert_eq!(visible("\u{3164}", 40), "\\u{3164}");
        assert_eq!(visible("a`b", 40), "a\\u{60}b");
        assert_eq!(visible("\u{FEFF}bom", 40), "\\u{FEFF}bom");
    }

    #[test]
    fn visible_letters_stay_themselves() {
        assert_eq!(visible("lоgs", 40), "lоgs");
        assert_eq!(visible("flog-2026.11.21 ✅", 40), "flog-2026.11.21 ✅");
    }

    #[test]
    fn long_values_are_cut_after_max_characters() {
        assert_eq!(visible("abcdef", 3), "abc…");
        assert_eq!(visible("abc", 3), "abc");
        assert_eq!(
            visible("\u{200B}\u{200B}\u{200B}\u{200B}", 2),
            "\\u{200B}\\u{200B}…"
        );
    }

    #[test]
    fn refused_characters_say_what_they_are() {
        assert_eq!(describe('\u{200B}'), "an invisible character \\u{200B}");
        assert_eq!(describe('о'), "`о` (U+043E), a letter that is not ASCII");
        assert_eq!(describe('!'), "`!`");
        assert_eq!(describe('`'), "`\\u{60}`");
    }
}
