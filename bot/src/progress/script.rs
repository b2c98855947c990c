//! The one scripted chat transport of the progress tests: it records every call (when it was
//! made, and whether it got through) and answers each as the test's script says.

use std::sync::{Arc, Mutex};

use opsbot_commands::maintenance::Announcement;
use opsbot_commands::render::ProgressView;
use opsbot_commands::run::{ChannelId, MessageId};

use super::{ChatError, ChatTransport};

/// One chat call as the transport saw it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Call {
    pub(crate) kind: &'static str,
    /// The message edited or posted (`m1`, `m2`, ...), the announcement's key, or the channel
    /// of a notice.
    pub(crate) target: String,
    /// The nonce of a post; empty otherwise.
    pub(crate) nonce: String,
    pub(crate) text: String,
    /// When it was made, on tokio's clock.
    pub(crate) at: tokio::time::Instant,
    /// Whether the script let it through.
    pub(crate) delivered: bool,
}

type Answer = Box<dyn Fn(&Call) -> Result<(), ChatError> + Send + Sync>;

/// Answers every call with its `answer`, and records it.
pub(crate) struct Script {
    calls: Mutex<Vec<Call>>,
    answer: Answer,
}

impl Script {
    pub(crate) fn new(
        answer: impl Fn(&Call) -> Result<(), ChatError> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Self {
            calls: Mutex::new(Vec::new()),
            answer: Box::new(answer),
        })
    }

    /// A chat that takes every call.
    pub(crate) fn recording() -> Arc<Self> {
        Self::new(|_| Ok(()))
    }

    /// A chat that answers the first `n` calls with a 503, then takes every call.
    pub(crate) fn failing_first(n: usize) -> Arc<Self> {
        let failures = Mutex::new(n);
        Self::new(move |_| {
            let mut left = failures.lock().unwrap();
            if *left == 0 {
                return Ok(());
            }
            *left -= 1;
            Err(ChatError::Transient("503 from chat".into()))
        })
    }

    fn call(&self, mut call: Call) -> Result<(), ChatError> {
        let answered = (self.answer)(&call);
        call.delivered = answered.is_ok();
        self.calls.lock().unwrap().push(call);
        answered
    }

    /// Every call, in order, failed ones too.
    pub(crate) fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    /// The calls that got through.
    pub(crate) fn delivered(&self) -> Vec<Call> {
        let mut calls = self.calls();
        calls.retain(|c| c.delivered);
        calls
    }

    /// Posts and edits of runs' messages (a maintenance run announces too).
    pub(crate) fn messages(&self) -> Vec<Call> {
        let mut calls = self.calls();
        calls.retain(|c| matches!(c.kind, "post" | "edit"));
        calls
    }

    /// The message a post with `nonce` makes: as on Discord, a post with a nonce already
    /// posted (a retry) gets that message back, a new nonce a new message.
    fn message_for(&self, nonce: &str) -> String {
        let mut nonces: Vec<String> = Vec::new();
        for call in self.calls().into_iter().filter(|c| c.kind == "post") {
            if !nonces.contains(&call.nonce) {
                nonces.push(call.nonce);
            }
        }
        let index = nonces
            .iter()
            .position(|n| n == nonce)
            .unwrap_or(nonces.len());
        format!("m{}", index + 1)
    }
}

fn call(kind: &'static str, target: String, nonce: String, text: String) -> Call {
    Call {
        kind,
        target,
        nonce,
        text,
        at: tokio::time::Instant::now(),
        delivered: false,
    }
}

impl ChatTransport for Arc<Script> {
    async fn post(
        &self,
        _channel: &ChannelId,
        view: &ProgressView,
    ) -> Result<MessageId, ChatError> {
        let id = self.message_for(&view.message_key);
        self.call(call(
            "post",
            id.clone(),
            view.message_key.clone(),
            view.text.clone(),
        ))?;
        Ok(MessageId(id))
    }

    async fn edit(
        &self,
        _channel: &ChannelId,
        message: &MessageId,
        view: &ProgressView,
    ) -> Result<(), ChatError> {
        self.call(call(
            "edit",
            message.0.clone(),
            String::new(),
            view.text.clone(),
        ))
    }

    async fn announce(&self, announcement: &Announcement) -> Result<(), ChatError> {
        self.call(call(
            "announce",
            announcement.key.clone(),
            String::new(),
            announcement.text.clone(),
        ))
    }

    async fn report(&self, channel: &ChannelId, text: &str) -> Result<(), ChatError> {
        self.call(call(
            "report",
            channel.0.clone(),
            String::new(),
            text.to_owned(),
        ))
    }

    async fn notice(&self, channel: &ChannelId, text: &str) -> Result<(), ChatError> {
        self.call(call(
            "notice",
            channel.0.clone(),
            String::new(),
            text.to_owned(),
        ))
    }
}
