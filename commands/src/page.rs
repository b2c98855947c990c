//! Which page of a long listing (`/audit`, `/run list`) to show: page 1 is the newest, page 2
//! the entries just before it, and so on, so that a long answer is read and shown a page at a
//! time instead of whole.

use std::num::NonZeroU32;

use crate::name::{NameError, bounded_number};

/// Entries on one page of `/run list` and `/audit`: what one chat message shows, each line cut
/// to its share of it.
pub const PER_PAGE: usize = 20;

/// A page number, from 1. Bounded so that skipping to it stays cheap: a page past what an
/// operator would page through is refused with the options that narrow the listing instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Page(NonZeroU32);

impl Page {
    pub const FIRST: Page = Page(NonZeroU32::MIN);
    /// The last page that can be asked for.
    pub const MAX: u32 = 1000;

    pub fn parse(raw: &str) -> Result<Self, NameError> {
        let number = bounded_number("the page number", raw, 1, Self::MAX)?;
        // From 1, as checked: page 1 plus the pages after it.
        Ok(Page(
            NonZeroU32::MIN.saturating_add(number.saturating_sub(1)),
        ))
    }

    pub fn number(self) -> u32 {
        self.0.get()
    }

    /// How many entries the pages before this one hold, at `per_page` a page.
    pub fn skip(self, per_page: usize) -> usize {
        usize::try_from(self.0.get() - 1)
            .unwrap_or(usize::MAX)
            .saturating_mul(per_page)
    }

    /// The page after this one (the older entries).
    pub fn next(self) -> Page {
        Page(self.0.saturating_add(1))
    }
}

impl std::fmt::Display for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_count_from_one_up_to_the_maximum() {
        assert_eq!(Page::parse("1"), Ok(Page::FIRST));
        assert_eq!(Page::parse(" 3 ").map(Page::number), Ok(3));
        assert_eq!(Page::parse("1000").map(Page::number), Ok(1000));
        for bad in ["0", "-1", "1001", "two", ""] {
            let error = Page::parse(bad).unwrap_err().to_string();
            assert!(error.contains("page number"), "{bad}: {error}");
        }
        // What was typed is quoted as chat shows it: a hidden character escaped, not kept.
        let error = Page::parse("2\u{200B}").unwrap_err().to_string();
        assert!(error.contains("`2\\u{200B}`"), "{error}");
    }

    #[test]
    fn a_page_skips_the_pages_before_it() {
        assert_eq!(Page::FIRST.skip(20), 0);
        assert_eq!(Page::FIRST.next().skip(20), 20);
        assert_eq!(Page::FIRST.next().to_string(), "2");
    }
}
