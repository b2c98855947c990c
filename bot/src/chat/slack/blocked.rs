//! The served channels where the bot cannot post, as Slack last said: the start-up check (not
//! a member, no `chat:write`) and every refused post or edit. A command typed there is still
//! answered (its `response_url` needs neither), and the answer says what to grant: without it,
//! a run started there would go on unseen, its plan and progress refused one by one, and only
//! the log would know.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::reach::Reached;

/// What the bot lacks in a channel it is not a member of, and how it gets it.
pub(super) const MEMBERSHIP: &str = "membership (invite the bot: /invite @opsbot)";

/// Channel (`C…`) → what the bot lacks there, shared by the transport and the handler.
#[derive(Debug, Clone, Default)]
pub(super) struct Blocked(Arc<Mutex<HashMap<String, String>>>);

impl Blocked {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Slack refused the bot `missing` in `channel`.
    pub(super) fn refused(&self, channel: &str, missing: &str) {
        self.map().insert(channel.to_owned(), missing.to_owned());
    }

    /// The bot posted in `channel`: whatever it lacked there, it has now.
    pub(super) fn posted(&self, channel: &str) {
        self.map().remove(channel);
    }

    /// Takes what the start-up check (or a reconnection's) found of each served channel.
    pub(super) fn checked(&self, reached: &Reached) {
        let no_chat_write = reached
            .missing_scopes
            .as_ref()
            .is_some_and(|m| m.contains(&"chat:write"));
        for access in reached.access.iter().filter(|a| a.served) {
            match access.write {
                Some(false) if no_chat_write => {
                    self.refused(access.channel.as_str(), "the scope chat:write");
                }
                Some(false) => self.refused(access.channel.as_str(), MEMBERSHIP),
                Some(true) => self.posted(access.channel.as_str()),
                None => {}
            }
        }
    }

    /// Whether Slack refused the bot in `channel` (and has not let it post there since).
    pub(super) fn refuses(&self, channel: &str) -> bool {
        self.map().contains_key(channel)
    }

    /// What an answer in `channel` adds when the bot cannot post there: what to grant.
    pub(super) fn warning(&self, channel: &str) -> Option<String> {
        self.map().get(channel).map(|missing| {
            format!(
                "⚠️ opsbot cannot post in this channel: it lacks {missing}. Plans, buttons and \
                 progress of runs here are not shown until it is granted; then restart opsbot."
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_channel_is_warned_about_until_the_bot_posts_there() {
        let blocked = Blocked::default();
        assert_eq!(blocked.warning("C1"), None);
        blocked.refused("C1", MEMBERSHIP);
        assert!(blocked.refuses("C1") && !blocked.refuses("C2"));
        let warning = blocked.warning("C1").unwrap_or_default();
        assert!(warning.contains("/invite @opsbot"), "{warning}");
        assert_eq!(blocked.warning("C2"), None);
        blocked.posted("C1");
        assert_eq!(blocked.warning("C1"), None);
    }
}
