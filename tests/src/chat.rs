//! A chat that records every post and edit, per message.

use std::collections::HashMap;
use std::sync::Mutex;

use opsbot::progress::{ChatError, ChatTransport};
use opsbot_commands::maintenance::Announcement;
use opsbot_commands::render::{ProgressView, Tone};
use opsbot_commands::run::{ChannelId, MessageId};
use tokio::sync::watch;

/// One message and every text it had, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub id: MessageId,
    pub channel: ChannelId,
    pub texts: Vec<String>,
}

impl Message {
    /// What the message shows now.
    pub fn text(&self) -> &str {
        self.texts.last().map(String::as_str).unwrap_or_default()
    }
}

#[derive(Debug)]
pub struct RecordingChat {
    messages: Mutex<Vec<Message>>,
    /// The announcements, in the order they were sent, for waiting on one.
    announcements: watch::Sender<Vec<String>>,
    /// The tone each run's message (by its key) shows now, for waiting on a delivery.
    tones: watch::Sender<HashMap<String, Tone>>,
}

impl Default for RecordingChat {
    fn default() -> Self {
        Self {
            messages: Mutex::default(),
            announcements: watch::channel(Vec::new()).0,
            tones: watch::channel(HashMap::new()).0,
        }
    }
}

impl RecordingChat {
    pub fn messages(&self) -> Vec<Message> {
        self.messages
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Waits until the message with `key` shows a tone that `done` accepts.
    pub async fn shows(&self, key: &str, done: impl Fn(Tone) -> bool) {
        let mut tones = self.tones.subscribe();
        let _ = tones
            .wait_for(|tones| tones.get(key).is_some_and(|tone| done(*tone)))
            .await;
    }

    fn shown(&self, view: &ProgressView) {
        self.tones.send_modify(|tones| {
            tones.insert(view.message_key.clone(), view.tone);
        });
    }

    /// The maintenance announcements, in the order they were sent.
    pub fn announcements(&self) -> Vec<String> {
        self.announcements.borrow().clone()
    }

    /// Waits until an announcement contains `what`, then returns them all.
    pub async fn announced(&self, what: &str) -> Vec<String> {
        let mut said = self.announcements.subscribe();
        let _ = said
            .wait_for(|said| said.iter().any(|text| text.contains(what)))
            .await;
        self.announcements()
    }
}

impl ChatTransport for RecordingChat {
    async fn announce(&self, announcement: &Announcement) -> Result<(), ChatError> {
        self.announcements
            .send_modify(|said| said.push(announcement.text.clone()));
        Ok(())
    }

    async fn post(&self, channel: &ChannelId, view: &ProgressView) -> Result<MessageId, ChatError> {
        let mut messages = self.messages.lock().unwrap_or_else(|e| e.into_inner());
        let id = MessageId(format!("m{}", messages.len() + 1));
        messages.push(Message {
            id: id.clone(),
            channel: channel.clone(),
            texts: vec![view.text.clone()],
        });
        self.shown(view);
        Ok(id)
    }

    async fn edit(
        &self,
        _channel: &ChannelId,
        message: &MessageId,
        view: &ProgressView,
    ) -> Result<(), ChatError> {
        let mut messages = self.messages.lock().unwrap_or_else(|e| e.into_inner());
        match messages.iter_mut().find(|m| &m.id == message) {
            Some(m) => {
                m.texts.push(view.text.clone());
                self.shown(view);
                Ok(())
            }
            None => Err(ChatError::Gone(format!("unknown message {}", message.0))),
        }
    }
}
