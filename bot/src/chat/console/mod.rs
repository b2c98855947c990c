//! The local console: the team channel in a terminal (`opsbot console`, `opsbot demo`) and on
//! the console socket of `opsbot run`. A console speaks as the person of the OS account behind
//! it; only the demo can switch speakers, with `/as`.

mod account;
mod answered;
pub mod control;
mod editor;
mod interrupt;
mod screen;
mod session;
mod socket;
mod transcript;

use std::io::IsTerminal;
use std::sync::Arc;

use anyhow::{Context, bail};
use futures::future::BoxFuture;
use opsbot_commands::name::RunId;
use opsbot_commands::parse::{self, Origin};
use opsbot_commands::people::{Actor, People, UnknownPerson};
use opsbot_commands::request::Request;
use opsbot_state::StoreError;
use tokio::io::BufReader;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

pub use account::{AccountError, account_of, running_account};
pub use screen::Screen;
pub use socket::{Hub, bind, serve};

use crate::clock::Clock;
use crate::config::{Config, StoreBackend};
use crate::engine::Engine;
use crate::lease;
use crate::progress::Publisher;
use crate::service::{Asked, Service};
use editor::Input;
use session::{Line, Session, Speaking};
use transcript::PRIVATE;

/// `opsbot console`: the console on this terminal, speaking as the person of the account that
/// runs it, until the end of its input, going by `clock`.
pub async fn run(config: Config, clock: Clock) -> anyhow::Result<()> {
    let people = config.people()?;
    let account = running_account()?;
    let speaking = people.on_console(&account).map(Speaking::Fixed);
    terminal(&config, Opening::default(), speaking, clock).await
}

/// Piped input, line by line, read by a task of its own, so that waiting for a line can be
/// interrupted (by Ctrl-C) without losing one half read.
fn lines_of_stdin() -> mpsc::Receiver<Input> {
    let (send, lines) = mpsc::channel(1);
    tokio::spawn(async move {
        let mut input = BufReader::new(tokio::io::stdin());
        loop {
            let (input, more) = match session::read_line(&mut input).await {
                Ok(Some(line)) => (Input::Line(line), true),
                Ok(None) => (Input::End, false),
                Err(error) => (Input::Failed(error), false),
            };
            if send.send(input).await.is_err() || !more {
                break;
            }
        }
    });
    lines
}

/// Where the console's lines come from: the line editor at a terminal, else the pipe.
enum Source {
    Editor(editor::LineEditor),
    Pipe(mpsc::Receiver<Input>),
}

impl Source {
    async fn next(&mut self) -> Input {
        let inputs = match self {
            Self::Editor(editor) => &mut editor.inputs,
            Self::Pipe(lines) => lines,
        };
        inputs.recv().await.unwrap_or(Input::End)
    }

    /// Asks for the next line under `prompt` (the editor shows it; a pipe has none).
    fn prompt(&self, screen: &Screen, prompt: String) {
        match self {
            // An editor gone has sent its last input already.
            Self::Editor(editor) => drop(editor.prompts.send(prompt)),
            Self::Pipe(_) => screen.set_prompt(prompt),
        }
    }
}

/// What a demo does once its engine is up, before the first prompt at a terminal (not under
/// piped input, which names the runs it makes): the text it returns is shown to everyone.
pub type Greeting =
    for<'e> fn(&'e Engine, &'e People) -> BoxFuture<'e, anyhow::Result<Option<String>>>;

/// `opsbot demo`: the console as `first` of `people`, who can switch with `/as`; `greeting`
/// starts the demo's own scene.
pub async fn demo(
    config: Config,
    people: People,
    first: Actor,
    banner: String,
    greeting: Greeting,
) -> anyhow::Result<()> {
    let speaking = Speaking::Demo {
        people,
        current: first,
    };
    let opening = Opening {
        banner: Some(banner),
        greeting: Some(greeting),
    };
    terminal(&config, opening, Ok(speaking), Clock::system()).await
}

/// What a console shows before its first prompt.
#[derive(Debug, Default)]
struct Opening {
    banner: Option<String>,
    greeting: Option<Greeting>,
}

/// Whether a line answers a run that waits for a person (`/approve`, `/reject`, `/run done`).
/// Piped input is a script, and a script that approves means the run once it waits for that:
/// such a line first lets executing runs reach where they wait (or end), as someone watching
/// the console would have waited before typing it.
fn answers_a_waiting_run(line: &Line) -> bool {
    let Line::Text(line) = line else {
        return false;
    };
    matches!(
        parse::parse_line(line, Origin::Console),
        Ok(Request::Approve { .. } | Request::Reject { .. } | Request::RunDone { .. })
    )
}

/// How long a command may keep the console silent before it says that the answer is still
/// being waited for.
const SLOW: std::time::Duration = std::time::Duration::from_secs(2);

/// Answers `line`, saying on the way (at once, not held back with progress) each retry the
/// answer makes, and that it is still waited for once it has taken [`SLOW`] without one: a
/// console silent for the seconds a backend's retries take looks hung.
/// `say` shows a private line to the one who typed it (a terminal, or a socket connection).
async fn answer_watched(
    session: &mut Session,
    clock: &Clock,
    line: &Line,
    mut say: impl FnMut(&str),
) -> Option<(&'static str, String)> {
    let (watcher, mut retries) = mpsc::unbounded_channel();
    let answer = crate::backend::watched(watcher, session.answer(line));
    tokio::pin!(answer);
    let slow = clock.sleep(SLOW);
    tokio::pin!(slow);
    let mut told = false;
    loop {
        tokio::select! {
            answer = &mut answer => return answer,
            Some(retry) = retries.recv() => {
                told = true;
                say(&format!("still waiting: {retry}"));
            }
            () = &mut slow, if !told => {
                told = true;
                say(&format!("`{}`: still waiting for the answer", line.shown().trim()));
            }
        }
    }
}

/// What the console says at the end of its input (Ctrl-D) while runs execute, before it waits
/// for them: a console that seems to hang would be killed mid-step.
fn waiting_for(runs: &[RunId]) -> Option<String> {
    (!runs.is_empty()).then(|| {
        format!(
            "end of input: waiting for {} to finish (Ctrl-C stops waiting; an unfinished run \
             resumes at the next start)",
            interrupt::names(runs)
        )
    })
}

/// Runs a console on this terminal, spoken by `speaking`; someone the config does not know is
/// refused once the store is open (so that the refusal is audited). At the end of the input it
/// lets executing runs finish (not those waiting for a person) and shows their last state;
/// piped, it lets them reach a person before a line that answers one (see
/// [`answers_a_waiting_run`]).
async fn terminal(
    config: &Config,
    opening: Opening,
    speaking: Result<Speaking, UnknownPerson>,
    clock: Clock,
) -> anyhow::Result<()> {
    let store = config.store.open().map_err(|error| {
        let in_use = error
            .downcast_ref::<StoreError>()
            .is_some_and(|e| matches!(e, StoreError::InUse { .. }));
        match &config.console.socket {
            Some(socket) if in_use => error.context(format!(
                "the running bot serves the console: socat READLINE UNIX-CONNECT:{}",
                socket.display()
            )),
            _ => error,
        }
    })?;
    let tty = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let publisher = Arc::new(Publisher::with_clock(
        Screen::new(tty),
        store.clone(),
        config.progress,
        clock.clone(),
    ));
    let engine = Engine::with_clock(config, store.clone(), publisher.clone(), clock)?;
    // On a shared store this console acts, so it must be the active instance.
    let held = match &config.store.backend {
        StoreBackend::Sled { .. } => None,
        StoreBackend::Postgres(pg) => {
            let timing = crate::tenure::Timing::within(pg.takeover);
            Some(lease::Held::take_now(&store, timing, engine.tenure()).await?)
        }
    };
    let service = Service::new(engine.clone(), publisher.clone());
    let speaking = match speaking {
        Ok(speaking) => speaking,
        Err(unknown) => {
            let asked = Asked::new("opsbot console", None);
            bail!("{}", service.refuse_unknown(unknown, &asked).await.text)
        }
    };
    let demo_people = match &speaking {
        Speaking::Demo { people, .. } => Some(people.clone()),
        Speaking::Fixed(_) => None,
    };
    let mut session = Session::new(service.clone(), speaking);
    let screen = publisher.transport();
    // Listened for before anything is shown, so that a signal sent once the banner is up is
    // never the default one that ends the process where it stands. SIGTERM (a service manager,
    // `kill`) stops at once, as a second Ctrl-C does, and still ends the console cleanly: the
    // demo's temporary directory and simulators go with it.
    let mut interrupts = signal(SignalKind::interrupt()).context("cannot listen for Ctrl-C")?;
    let mut terms = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
    if let Some(banner) = opening.banner {
        screen.print("", &banner, None);
    }
    let resumed = engine.resume_all().await?;
    if resumed > 0 {
        let text = format!("resumed {resumed} unfinished run(s)");
        screen.print(transcript::PUBLIC, &text, None);
    }
    // While an interactive console holds the store, it is the bot: schedules fire here too.
    // Not under piped input: a script names the runs it makes (`/approve id:r-2`), and a fire
    // in the middle of it would take one of those ids.
    let schedules = if tty {
        if let Some((greet, people)) = opening.greeting.zip(demo_people.as_ref())
            && let Some(text) = greet(&engine, people).await?
        {
            screen.print(transcript::PUBLIC, &text, None);
        }
        crate::scheduler::spawn(&engine).await?
    } else {
        Vec::new()
    };
    let mut source = if tty {
        let history = crate::logging::state_dir().map(|dir| dir.join("console_history"));
        let (editor, printer) = editor::start(history, demo_people.is_some())?;
        screen.print_through(printer);
        Source::Editor(editor)
    } else {
        Source::Pipe(lines_of_stdin())
    };
    source.prompt(screen, session.prompt());
    let mut warned = false;
    let mut stopped_by = None;
    loop {
        let input = tokio::select! {
            input = source.next() => input,
            _ = terms.recv() => {
                stopped_by = Some("SIGTERM");
                break;
            }
            _ = interrupts.recv() => Input::Interrupted,
        };
        let line = match input {
            Input::Line(line) => line,
            Input::Interrupted => match interrupt::warning(&engine).filter(|_| !warned) {
                Some(warning) => {
                    screen.print(PRIVATE, &warning, None);
                    warned = true;
                    source.prompt(screen, session.prompt());
                    continue;
                }
                None => {
                    stopped_by = Some("Ctrl-C");
                    break;
                }
            },
            Input::Failed(error) => return Err(error).context("reading the console input"),
            Input::End => break,
        };
        if !tty && answers_a_waiting_run(&line) {
            engine.idle().await;
        }
        if !tty && !line.shown().trim().is_empty() {
            screen.print(&session.prompt(), line.shown().trim(), None);
        }
        screen.hold();
        let say = |text: &str| screen.print(PRIVATE, text, None);
        if let Some((header, text)) =
            answer_watched(&mut session, &engine.clock(), &line, say).await
        {
            screen.print(header, &text, None);
        }
        screen.answered(session.take_waiting());
        screen.release();
        source.prompt(screen, session.prompt());
    }
    schedules.iter().for_each(tokio::task::JoinHandle::abort);
    if stopped_by.is_none() {
        if let Some(text) = waiting_for(&engine.executing()?) {
            screen.print(PRIVATE, &text, None);
        }
        tokio::select! {
            () = engine.idle() => {}
            _ = interrupts.recv() => stopped_by = Some("Ctrl-C"),
            _ = terms.recv() => stopped_by = Some("SIGTERM"),
        }
    }
    let stopped = stopped_by.map(|by| interrupt::stopped(&engine, by));
    publisher.flushed().await;
    if let Some(held) = held {
        held.release().await;
    }
    engine.writes().close().await;
    if tty {
        println!();
    }
    stopped.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_of_input_names_the_runs_it_waits_for() {
        assert_eq!(waiting_for(&[]), None);
        let text = waiting_for(&[RunId::new(4)]).unwrap();
        assert!(
            text.starts_with("end of input: waiting for r-4 to finish"),
            "{text}"
        );
        let text = waiting_for(&[1, 2, 3].map(RunId::new)).unwrap();
        assert!(
            text.contains("waiting for r-1, r-2 and r-3 to finish"),
            "{text}"
        );
    }
}
