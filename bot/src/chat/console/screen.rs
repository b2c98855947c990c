//! The terminal as a chat transport. On a terminal, a run's progress message is redrawn in place
//! while it is the last thing on screen; piped, every delivered edit is printed as a line of the
//! transcript, labelled with its message id.

use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use opsbot_commands::maintenance::Announcement;
use opsbot_commands::name::RunId;
use opsbot_commands::render::ProgressView;
use opsbot_commands::run::{ChannelId, MessageId};

use super::answered::{Answered, FirstPost};
use super::editor::Printer;
use super::transcript;
use crate::progress::{ChatError, ChatTransport};

/// The terminal, as a chat transport.
pub struct Screen {
    tty: bool,
    next_message: AtomicU64,
    state: Mutex<ScreenState>,
    /// At a terminal, the line editor's printer: it prints above the line being typed and
    /// draws the prompt itself.
    editor: Mutex<Option<Printer>>,
    answered: Answered,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screen")
            .field("tty", &self.tty)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct ScreenState {
    /// The progress message printed last and how many lines it took, while nothing followed it.
    last: Option<(MessageId, usize)>,
    /// The prompt of the current speaker, shown on a terminal after every output.
    prompt: String,
    /// While a command is answered: the progress and announcements that came meanwhile, in
    /// order, shown after the answer they follow from.
    held: Option<Vec<Block>>,
    /// Messages whose post was left out (it repeated the answer): the first edit shown of
    /// each is labelled as the post.
    left_out: HashSet<MessageId>,
}

/// A block the chat delivered, as [`Screen::print`] takes it.
#[derive(Debug)]
struct Block {
    header: String,
    text: String,
    message: Option<MessageId>,
    /// A run's first message.
    first: Option<FirstPost>,
}

impl Screen {
    pub fn new(tty: bool) -> Self {
        Self {
            tty,
            next_message: AtomicU64::new(1),
            state: Mutex::new(ScreenState::default()),
            editor: Mutex::new(None),
            answered: Answered::default(),
        }
    }

    /// The run the answer just printed showed waiting for a decision: its first progress
    /// message, which would say the same, is left out.
    pub(super) fn answered(&self, waiting: Option<RunId>) {
        self.answered.showed(waiting);
    }

    /// From now on, prints through the line editor's `printer`.
    pub(super) fn print_through(&self, printer: Printer) {
        *self.editor.lock().unwrap_or_else(PoisonError::into_inner) = Some(printer);
    }

    /// Shows the prompt of `prompt`'s speaker, replacing whatever the current line holds.
    pub(super) fn set_prompt(&self, prompt: String) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.prompt = prompt;
        if self.tty {
            print!("\r\x1b[K{}", state.prompt);
            let _ = std::io::stdout().flush();
        }
    }

    /// Holds back what the chat delivers (a run's progress, announcements) until
    /// [`Self::release`]: the answer to a command comes first, then the progress it started.
    pub(super) fn hold(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.held.get_or_insert_with(Vec::new);
    }

    /// Shows what was held back, in the order it came.
    pub(super) fn release(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        for block in state.held.take().unwrap_or_default() {
            self.show_delivered(&mut state, block);
        }
    }

    /// What the chat delivers: shown now, or after the answer being given.
    fn deliver(&self, block: Block) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match &mut state.held {
            Some(held) => held.push(block),
            None => self.show_delivered(&mut state, block),
        }
    }

    /// Shows a delivered block, but a run's first message that repeats the answer before it.
    fn show_delivered(&self, state: &mut ScreenState, mut block: Block) {
        let message = block.message.clone();
        if block
            .first
            .is_some_and(|first| self.answered.repeats(first))
        {
            state.left_out.extend(message);
            return;
        }
        if let Some(id) = message.as_ref().filter(|id| state.left_out.remove(*id)) {
            block.header = transcript::posted(id);
        }
        self.show(state, &block.header, &block.text, message.as_ref());
    }

    /// Prints a block now: `header` on the first line, the rest indented under it.
    pub(super) fn print(&self, header: &str, text: &str, message: Option<&MessageId>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.show(&mut state, header, text, message);
    }

    fn show(&self, state: &mut ScreenState, header: &str, text: &str, message: Option<&MessageId>) {
        let mut out = String::new();
        if self.tty {
            match (&state.last, message) {
                // Redraw in place: up over the old block and the prompt line, clear, print.
                (Some((last, lines)), Some(id)) if last == id => {
                    out.push_str(&format!("\r\x1b[{lines}A\x1b[J"));
                }
                _ => out.push_str("\r\x1b[K"),
            }
        }
        let block = transcript::block(header, text);
        out.push_str(&block);
        state.last = message.map(|id| (id.clone(), block.lines().count()));
        // The line editor clears the prompt's row first and draws the prompt again after.
        if let Some(print) = self
            .editor
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            print(out.trim_start_matches("\r\x1b[K").to_owned());
            return;
        }
        if self.tty {
            out.push_str(&state.prompt);
        }
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(out.as_bytes());
        let _ = stdout.flush();
    }
}

impl ChatTransport for Screen {
    async fn announce(&self, announcement: &Announcement) -> Result<(), ChatError> {
        self.deliver(Block {
            header: transcript::ANNOUNCEMENT.to_owned(),
            text: announcement.text.clone(),
            message: None,
            first: None,
        });
        Ok(())
    }

    async fn post(
        &self,
        _channel: &ChannelId,
        view: &ProgressView,
    ) -> Result<MessageId, ChatError> {
        let id = MessageId(format!(
            "m{}",
            self.next_message.fetch_add(1, Ordering::Relaxed)
        ));
        self.deliver(Block {
            header: transcript::posted(&id),
            text: view.text.clone(),
            message: Some(id.clone()),
            first: Some(FirstPost::of(view)),
        });
        Ok(id)
    }

    async fn edit(
        &self,
        _channel: &ChannelId,
        message: &MessageId,
        view: &ProgressView,
    ) -> Result<(), ChatError> {
        // On a terminal the message is redrawn in place; in a transcript each edit is a line.
        let header = if self.tty {
            transcript::posted(message)
        } else {
            transcript::edited(message)
        };
        self.deliver(Block {
            header,
            text: view.text.clone(),
            message: Some(message.clone()),
            first: None,
        });
        Ok(())
    }
}
