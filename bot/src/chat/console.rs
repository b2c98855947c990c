//! The local console: a team channel in a terminal. On a terminal, a run's progress message is
//! redrawn in place while it is the last thing on screen; piped, every delivered edit is printed
//! as a line of the transcript, labelled with its message id.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context;
use opsbot_commands::maintenance::Announcement;
use opsbot_commands::parse::{self, Origin};
use opsbot_commands::render::ProgressView;
use opsbot_commands::request::Request;
use opsbot_commands::run::{Actor, ChannelId, MessageId, Roles, UserRef};
use opsbot_state::Store;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::config::Config;
use crate::engine::Engine;
use crate::progress::{ChatError, ChatTransport, Publisher};
use crate::service::Service;

/// The console's one channel.
pub const CHANNEL: &str = "console";

/// The terminal, as a chat transport.
#[derive(Debug)]
pub struct Screen {
    tty: bool,
    next_message: AtomicU64,
    state: Mutex<ScreenState>,
}

#[derive(Debug, Default)]
struct ScreenState {
    /// The progress message printed last and how many lines it took, while nothing followed it.
    last: Option<(MessageId, usize)>,
    /// The prompt of the current speaker, shown on a terminal after every output.
    prompt: String,
}

impl Screen {
    pub fn new(tty: bool) -> Self {
        Self {
            tty,
            next_message: AtomicU64::new(1),
            state: Mutex::new(ScreenState::default()),
        }
    }

    /// Shows the prompt of `prompt`'s speaker, replacing whatever the current line holds.
    fn set_prompt(&self, prompt: String) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.prompt = prompt;
        if self.tty {
            print!("\r\x1b[K{}", state.prompt);
            let _ = std::io::stdout().flush();
        }
    }

    /// Prints a block: `header` on the first line, the rest indented under it.
    fn print(&self, header: &str, text: &str, message: Option<&MessageId>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
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
        let indent = " ".repeat(header.chars().count());
        let mut lines = 0;
        for (i, line) in text.lines().enumerate() {
            let lead = if i == 0 { header } else { indent.as_str() };
            out.push_str(lead);
            out.push_str(line);
            out.push('\n');
            lines += 1;
        }
        state.last = message.map(|id| (id.clone(), lines));
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
        self.print("announcement: ", &announcement.text, None);
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
        self.print(&format!("opsbot [{}]: ", id.0), &view.text, Some(&id));
        Ok(id)
    }

    async fn edit(
        &self,
        _channel: &ChannelId,
        message: &MessageId,
        view: &ProgressView,
    ) -> Result<(), ChatError> {
        let header = if self.tty {
            format!("opsbot [{}]: ", message.0)
        } else {
            format!("opsbot [{} edited]: ", message.0)
        };
        self.print(&header, &view.text, Some(message));
        Ok(())
    }
}

/// A console speaker.
fn actor(name: &str, approver: bool) -> Actor {
    Actor {
        user: UserRef {
            id: format!("console:{name}"),
            name: name.to_owned(),
        },
        roles: Roles {
            operator: true,
            approver,
        },
    }
}

/// Runs the console until the end of its input. `banner` is printed first (the demo's welcome).
pub async fn run(config: Config, banner: Option<String>) -> anyhow::Result<()> {
    let speakers: Vec<Actor> = config
        .console
        .operators
        .iter()
        .map(|o| actor(o.name.as_str(), o.approver))
        .collect();
    let Some(first) = speakers.first() else {
        anyhow::bail!(
            "the config lists no console operators; add [console] operators = [{{ name = \"alice\" }}]"
        );
    };
    let mut speaker = first.clone();
    let store = Store::open(&config.store.path)
        .with_context(|| format!("cannot open the store at {}", config.store.path.display()))?;
    let tty = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let publisher = Arc::new(Publisher::new(
        Screen::new(tty),
        store.clone(),
        config.progress,
    ));
    let engine = Engine::new(&config, store, publisher.clone())?;
    let service = Service::new(engine.clone(), publisher.clone());
    let screen = publisher.transport();
    if let Some(banner) = banner {
        screen.print("", &banner, None);
    }
    let resumed = engine.resume_all()?;
    if resumed > 0 {
        screen.print(
            "opsbot: ",
            &format!("resumed {resumed} unfinished run(s)"),
            None,
        );
    }
    let channel = ChannelId(CHANNEL.to_owned());
    screen.set_prompt(format!("{}> ", speaker.user.name));
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = lines
        .next_line()
        .await
        .context("reading the console input")?
    {
        if line.trim().is_empty() {
            screen.set_prompt(format!("{}> ", speaker.user.name));
            continue;
        }
        if !tty {
            screen.print(&format!("{}> ", speaker.user.name), line.trim(), None);
        }
        match parse::parse_line(&line, Origin::Console) {
            Err(error) => screen.print("opsbot (only you): ", &error.to_string(), None),
            Ok(Request::ActAs { user }) => {
                match speakers.iter().find(|s| s.user.name == user.as_str()) {
                    Some(next) => {
                        speaker = next.clone();
                        screen.print("opsbot (only you): ", &format!("you are now {user}"), None);
                    }
                    None => {
                        let known: Vec<&str> =
                            speakers.iter().map(|s| s.user.name.as_str()).collect();
                        screen.print(
                            "opsbot (only you): ",
                            &format!(
                                "no console operator `{user}`; configured: {}",
                                known.join(", ")
                            ),
                            None,
                        );
                    }
                }
            }
            Ok(request) => {
                let reply = service
                    .handle(&speaker, &channel, Origin::Console, request)
                    .await;
                let header = if reply.private {
                    "opsbot (only you): "
                } else {
                    "opsbot: "
                };
                screen.print(header, &reply.text, None);
            }
        }
        screen.set_prompt(format!("{}> ", speaker.user.name));
    }
    // End of input: let executing runs finish (not those waiting for a person), then make sure
    // their last state has been shown.
    engine.idle().await;
    publisher.flushed().await;
    if tty {
        println!();
    }
    Ok(())
}
