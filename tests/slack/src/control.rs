//! The test-control API: shape the workspace, break things, move time, and look at what the
//! client did (`interactions`: act as Slack's users, on the socket).

use std::time::Duration;

use serde_json::Value;

use crate::methods::WebMethod;
use crate::socket::sweep;
use crate::state::{Channel, StoredMessage};
use crate::{
    Ephemeral, Failure, FakeSlack, Ping, SlackFile, SlackMessage, TokenStatus, Visibility,
};

mod interactions;
pub use interactions::{BlockAction, SlashCommand};

fn slack_message(channel: &str, ts: &str, m: &StoredMessage) -> SlackMessage {
    SlackMessage {
        channel: channel.to_owned(),
        ts: ts.to_owned(),
        user: m.user.clone(),
        text: m.text.clone(),
        blocks: m.blocks.clone(),
        history: m.history.clone(),
        deleted: m.deleted,
        metadata: m.metadata.clone(),
    }
}

impl FakeSlack {
    /// Adds a channel (`C…` public, `G…` private) with the bot in it or not; returns its id.
    pub fn add_channel(&self, name: &str, visibility: Visibility, bot_member: bool) -> String {
        let mut inner = self.shared.lock();
        inner.channel_count += 1;
        let prefix = match visibility {
            Visibility::Public => 'C',
            Visibility::Private => 'G',
        };
        let id = format!("{prefix}0FAKE{:04}", inner.channel_count);
        let mut channel = Channel {
            id: id.clone(),
            name: name.to_owned(),
            visibility,
            members: Default::default(),
            messages: Default::default(),
        };
        if bot_member {
            channel.members.insert(self.shared.cfg.bot_user_id.clone());
        }
        inner.channels.insert(id.clone(), channel);
        id
    }

    /// Puts a user (or, with the bot's id, the bot) in a channel.
    pub fn add_member(&self, channel: &str, user: &str) {
        if let Some(c) = self.shared.lock().channels.get_mut(channel) {
            c.members.insert(user.to_owned());
        }
    }

    /// Takes a user (or, with the bot's id, the bot) out of a channel, as `/kick` does.
    pub fn remove_member(&self, channel: &str, user: &str) {
        if let Some(c) = self.shared.lock().channels.get_mut(channel) {
            c.members.remove(user);
        }
    }

    /// Deletes a message as a workspace admin would: later edits of it find it gone
    /// (`message_not_found`).
    pub fn delete_message(&self, channel: &str, ts: &str) {
        let mut inner = self.shared.lock();
        if let Some(m) = inner
            .channels
            .get_mut(channel)
            .and_then(|c| c.messages.get_mut(ts))
        {
            m.deleted = true;
        }
    }

    /// Replaces a token's scopes (the bot's or the app's), as reinstalling the app would.
    pub fn set_scopes(&self, token: &str, scopes: &[&str]) {
        if let Some(t) = self.shared.lock().tokens.get_mut(token) {
            t.scopes = scopes.iter().map(|s| (*s).to_owned()).collect();
        }
    }

    /// Revokes a token or deactivates its account (or makes it work again).
    pub fn set_token_status(&self, token: &str, status: TokenStatus) {
        if let Some(t) = self.shared.lock().tokens.get_mut(token) {
            t.status = status;
        }
    }

    /// The next `n` calls of `method` (past the token check) fail this way, whatever they ask.
    pub fn fail_next(&self, method: WebMethod, n: usize, failure: Failure) {
        let mut inner = self.shared.lock();
        let queue = inner.failures.entry(method).or_default();
        queue.extend(std::iter::repeat_n(failure, n));
    }

    /// Moves the fake's clock on: rate-limit windows, ack deadlines and redeliveries see the
    /// time pass at once.
    pub fn advance(&self, by: Duration) {
        self.shared.advance(by);
        let mut inner = self.shared.lock();
        sweep(&mut inner, self.shared.now(), self.shared.cfg.ack_deadline);
    }

    /// Forgets every call the rate limits counted.
    pub fn reset_rate_limits(&self) {
        self.shared.lock().limiter.reset();
    }

    /// 429s answered so far (queued ones excepted).
    pub fn rate_limited(&self) -> usize {
        self.shared.read().limiter.limited
    }

    /// A user posts `text` in a channel; returns the message's `ts`.
    pub fn post_as_user(&self, channel: &str, user: &str, text: &str) -> String {
        let mut inner = self.shared.lock();
        let ts = self.shared.next_ts(&mut inner);
        let message = StoredMessage {
            user: user.to_owned(),
            text: text.to_owned(),
            blocks: Vec::new(),
            history: vec![(text.to_owned(), Vec::new())],
            posted: self.shared.now(),
            deleted: false,
            metadata: None,
        };
        if let Some(c) = inner.channels.get_mut(channel) {
            c.messages.insert(ts.clone(), message);
        }
        ts
    }

    /// A channel's messages, oldest first, deleted ones included (marked).
    pub fn messages(&self, channel: &str) -> Vec<SlackMessage> {
        let inner = self.shared.read();
        inner.channels.get(channel).map_or_else(Vec::new, |c| {
            c.messages
                .iter()
                .map(|(ts, m)| slack_message(channel, ts, m))
                .collect()
        })
    }

    /// Waits for a message in `channel` that satisfies `predicate`.
    pub async fn wait_message(
        &self,
        channel: &str,
        timeout: Duration,
        predicate: impl Fn(&SlackMessage) -> bool,
    ) -> Result<SlackMessage, String> {
        let what = format!("a matching message in {channel}");
        self.shared
            .wait_for(timeout, &what, |inner| {
                let c = inner.channels.get(channel)?;
                c.messages
                    .iter()
                    .map(|(ts, m)| slack_message(channel, ts, m))
                    .find(|m| predicate(m))
            })
            .await
    }

    /// Every ephemeral message, in order.
    pub fn ephemerals(&self) -> Vec<Ephemeral> {
        self.shared.read().ephemerals.clone()
    }

    /// The files shared in `channel` (`files.completeUploadExternal`), in order.
    pub fn files(&self, channel: &str) -> Vec<SlackFile> {
        let inner = self.shared.read();
        let shared = inner.files.iter().filter(|(c, _)| c == channel);
        shared.map(|(_, file)| file.clone()).collect()
    }

    /// Every mention that would have notified someone, in order.
    pub fn pings(&self) -> Vec<Ping> {
        self.shared.read().pings.clone()
    }

    /// The arguments of every admitted call of `method`, in order.
    pub fn calls(&self, method: WebMethod) -> Vec<Value> {
        let inner = self.shared.read();
        inner
            .calls
            .iter()
            .filter(|(m, _)| *m == method)
            .map(|(_, args)| args.clone())
            .collect()
    }

    /// Things the client did on the socket that Slack would not have taken.
    pub fn violations(&self) -> Vec<String> {
        self.shared.read().violations.clone()
    }
}
