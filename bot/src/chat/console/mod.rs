//! The local console: the team channel in a terminal (`opsbot console`, `opsbot demo`) and on
//! the console socket of `opsbot run`. A console speaks as the person of the OS account behind
//! it; only the demo can switch speakers, with `/as`.

mod account;
mod screen;
mod session;
mod socket;
mod transcript;

use std::io::IsTerminal;
use std::sync::Arc;

use anyhow::{Context, bail};
use opsbot_commands::parse::{self, Origin};
use opsbot_commands::people::{Actor, People, UnknownPerson};
use opsbot_commands::request::Request;
use opsbot_state::{Store, StoreError};
use tokio::io::BufReader;

pub use account::{AccountError, account_of, running_account};
pub use screen::Screen;
pub use socket::{Hub, bind, serve};

use crate::config::Config;
use crate::engine::Engine;
use crate::progress::Publisher;
use crate::service::{Asked, Service};
use session::{Session, Speaking};

/// The console's one channel.
pub const CHANNEL: &str = "console";

/// `opsbot console`: the console on this terminal, speaking as the person of the account that
/// runs it, until the end of its input.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let people = config.people()?;
    let account = running_account()?;
    let speaking = people.on_console(&account).map(Speaking::Fixed);
    terminal(&config, None, speaking).await
}

/// `opsbot demo`: the console as `first` of `people`, who can switch with `/as`.
pub async fn demo(
    config: Config,
    people: People,
    first: Actor,
    banner: String,
) -> anyhow::Result<()> {
    let speaking = Speaking::Demo {
        people,
        current: first,
    };
    terminal(&config, Some(banner), Ok(speaking)).await
}

/// Whether a line answers a run that waits for a person (`/approve`, `/reject`, `/run done`).
/// Piped input is a script, and a script that approves means the run once it waits for that:
/// such a line first lets executing runs reach where they wait (or end), as someone watching
/// the console would have waited before typing it.
fn answers_a_waiting_run(line: &str) -> bool {
    matches!(
        parse::parse_line(line, Origin::Console),
        Ok(Request::Approve { .. } | Request::Reject { .. } | Request::RunDone { .. })
    )
}

/// Runs a console on this terminal, spoken by `speaking`; someone the config does not know is
/// refused once the store is open (so that the refusal is audited). At the end of the input it
/// lets executing runs finish (not those waiting for a person) and shows their last state;
/// piped, it lets them reach a person before a line that answers one (see
/// [`answers_a_waiting_run`]).
async fn terminal(
    config: &Config,
    banner: Option<String>,
    speaking: Result<Speaking, UnknownPerson>,
) -> anyhow::Result<()> {
    let store = Store::open(&config.store.path)
        .map_err(|error| match (&error, &config.console.socket) {
            (StoreError::InUse { .. }, Some(socket)) => anyhow::anyhow!(
                "{error}\nthe running bot serves the console: socat READLINE UNIX-CONNECT:{}",
                socket.display()
            ),
            _ => anyhow::Error::from(error),
        })
        .with_context(|| format!("cannot open the store at {}", config.store.path.display()))?;
    let tty = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let publisher = Arc::new(Publisher::new(
        Screen::new(tty),
        store.clone(),
        config.progress,
    ));
    let engine = Engine::new(config, store, publisher.clone())?;
    let service = Service::new(engine.clone(), publisher.clone());
    let speaking = match speaking {
        Ok(speaking) => speaking,
        Err(unknown) => {
            let asked = Asked::new("opsbot console", None);
            bail!("{}", service.refuse_unknown(unknown, &asked).await.text)
        }
    };
    let mut session = Session::new(service.clone(), speaking);
    let screen = publisher.transport();
    if let Some(banner) = banner {
        screen.print("", &banner, None);
    }
    let resumed = engine.resume_all().await?;
    if resumed > 0 {
        let text = format!("resumed {resumed} unfinished run(s)");
        screen.print(transcript::PUBLIC, &text, None);
    }
    screen.set_prompt(session.prompt());
    let mut input = BufReader::new(tokio::io::stdin());
    while let Some(line) = session::read_line(&mut input)
        .await
        .context("reading the console input")?
    {
        if !tty && answers_a_waiting_run(&line) {
            engine.idle().await;
        }
        if !tty && !line.trim().is_empty() {
            screen.print(&session.prompt(), line.trim(), None);
        }
        if let Some((header, text)) = session.answer(&line).await {
            screen.print(header, &text, None);
        }
        screen.set_prompt(session.prompt());
    }
    engine.idle().await;
    publisher.flushed().await;
    if tty {
        println!();
    }
    Ok(())
}
