//! A chat that records every post and edit, per message.

use std::sync::Mutex;

use opsbot::progress::{ChatError, ChatTransport};
use opsbot_commands::maintenance::Announcement;
use opsbot_commands::render::ProgressView;
use opsbot_commands::run::{ChannelId, MessageId};

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

#[derive(Debug, Default)]
pub struct RecordingChat {
    messages: Mutex<Vec<Message>>,
    announcements: Mutex<Vec<String>>,
}

impl RecordingChat {
    pub fn messages(&self) -> Vec<Message> {
        self.messages
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The maintenance announcements, in the order they were sent.
    pub fn announcements(&self) -> Vec<String> {
        self.announcements
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl ChatTransport for RecordingChat {
    async fn announce(&self, announcement: &Announcement) -> Result<(), ChatError> {
        self.announcements
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(announcement.text.clone());
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
                Ok(())
            }
            None => Err(ChatError::Gone(format!("unknown message {}", message.0))),
        }
    }
}
