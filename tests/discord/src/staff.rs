//! The test-control API for what a guild's staff and time do: the bot's permissions in a
//! channel, a moderator deleting a message, and the fake's clock moving ahead.

use std::time::Duration;

use crate::control::fake_message;
use crate::permissions::ADMINISTRATOR;
use crate::{FakeDiscord, FakeMessage, payloads};

impl FakeDiscord {
    /// An admin changes the bot's permissions in `channel` to exactly `bits` (Discord's values,
    /// see [`crate::permissions`]), as a member overwrite would. From now on Discord's checks use
    /// them, `GET /channels/{id}` and interactions show them, and the gateway sends
    /// CHANNEL_UPDATE. Panics on a channel not of the guild, or on ADMINISTRATOR, which is
    /// guild-wide and cannot be given in one channel.
    pub fn set_bot_permissions(&self, channel: u64, bits: u64) {
        let cfg = &self.shared.cfg;
        assert!(
            cfg.channels.contains(&channel),
            "fake discord: channel {channel} is not a channel of the guild"
        );
        assert!(
            bits & ADMINISTRATOR == 0,
            "fake discord: ADMINISTRATOR is a guild-wide permission, not a channel's"
        );
        let mut inner = self.shared.lock();
        inner.permissions.insert(channel, bits);
        let mut update = payloads::channel(cfg, channel, bits);
        if let Some(obj) = update.as_object_mut() {
            obj.insert("guild_id".into(), cfg.guild_id.to_string().into());
        }
        inner.gateway.dispatch("CHANNEL_UPDATE", update);
    }

    /// The bot's permission bits in `channel`.
    pub fn bot_permissions(&self, channel: u64) -> u64 {
        self.shared
            .read()
            .bot_permissions(&self.shared.cfg, channel)
    }

    /// A moderator deletes a message. It leaves [`FakeDiscord::messages`] for
    /// [`FakeDiscord::deleted_messages`]; reading, editing or deleting it answers
    /// `404 10008 Unknown Message`, and so does an `enforce_nonce` repeat of its nonce. A client
    /// subscribed to GUILD_MESSAGES gets MESSAGE_DELETE. Panics if there is no such message.
    pub fn delete_message(&self, channel: u64, message_id: u64) {
        let mut inner = self.shared.lock();
        assert!(
            inner.delete_message(self.shared.cfg.guild_id, channel, message_id),
            "fake discord: no message {message_id} in channel {channel} to delete"
        );
        tracing::debug!(
            channel,
            message_id,
            "fake discord: a moderator deleted a message"
        );
    }

    /// The messages of a channel that were deleted, by a moderator or by the client, oldest
    /// first, as they were when deleted.
    pub fn deleted_messages(&self, channel: u64) -> Vec<FakeMessage> {
        let inner = self.shared.read();
        inner.channels.get(&channel).map_or_else(Vec::new, |c| {
            c.deleted
                .iter()
                .map(|(id, m)| fake_message(*id, m))
                .collect()
        })
    }

    /// Moves the fake's clock `by` ahead at once: rate-limit windows, the 3-second deadline,
    /// interaction token lifetimes, nonce windows and the invalid-request span all see that much
    /// more time passed. The client's own clock does not move.
    pub fn advance_clock(&self, by: Duration) {
        self.shared.advance(by);
    }
}
