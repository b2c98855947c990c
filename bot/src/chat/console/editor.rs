//! The console's input at a terminal: a line editor (rustyline) with history kept in the
//! user's state directory and Tab completion of commands and option names from the catalogue.
//! It runs on a thread of its own (reading a terminal blocks), reads one line each time the
//! console hands it the prompt, and prints what the chat delivers above the line being typed.

use std::path::PathBuf;

use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, ExternalPrinter, Helper};
use tokio::sync::mpsc;

use super::session::Line;

/// What the console reads: a line, a Ctrl-C, the end of the input, or why it cannot read.
#[derive(Debug)]
pub(super) enum Input {
    Line(Line),
    /// Ctrl-C at the line editor, which takes the terminal's keys: the console treats it as the
    /// interrupt signal it would have been.
    Interrupted,
    End,
    Failed(std::io::Error),
}

/// Prints above the line being typed, so that progress never garbles it.
pub(super) type Printer = Box<dyn FnMut(String) + Send>;

/// Completes from the catalogue (`/clu` → `/cluster `, then subcommands, then `name:`).
struct Catalogue {
    demo: bool,
}

impl Completer for Catalogue {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        Ok(opsbot_commands::catalogue::complete(
            line.get(..pos).unwrap_or(line),
            self.demo,
        ))
    }
}

impl Hinter for Catalogue {
    type Hint = String;
}

impl Highlighter for Catalogue {}

impl Validator for Catalogue {}

impl Helper for Catalogue {}

/// The line editor's thread, and how the console talks to it.
pub(super) struct LineEditor {
    /// The next prompt: the editor reads a line only once it is handed one, after the answer
    /// to the line before (the demo's `/as` changes it).
    pub(super) prompts: std::sync::mpsc::Sender<String>,
    pub(super) inputs: mpsc::Receiver<Input>,
}

/// `history`: where the lines typed are kept across sessions (none when the user has no state
/// directory). `demo` completes the demo's own commands too.
pub(super) fn start(history: Option<PathBuf>, demo: bool) -> anyhow::Result<(LineEditor, Printer)> {
    let mut editor: Editor<Catalogue, FileHistory> = Editor::new()?;
    editor.set_helper(Some(Catalogue { demo }));
    if let Some(path) = &history {
        // A first session has no history yet; any other failure is only logged.
        if let Err(error) = editor.load_history(path)
            && path.exists()
        {
            tracing::warn!(%error, path = %path.display(), "cannot read the console's history");
        }
    }
    let mut printer = editor.create_external_printer()?;
    let print: Printer = Box::new(move |text| {
        if let Err(error) = printer.print(text) {
            tracing::warn!(%error, "cannot print above the console's line");
        }
    });
    let (prompts, next_prompt) = std::sync::mpsc::channel::<String>();
    let (send, inputs) = mpsc::channel(1);
    std::thread::spawn(move || {
        while let Ok(prompt) = next_prompt.recv() {
            let input = match editor.readline(&prompt) {
                Ok(line) => {
                    remember(&mut editor, history.as_deref(), &line);
                    Input::Line(Line::Text(line))
                }
                Err(ReadlineError::Interrupted) => Input::Interrupted,
                Err(ReadlineError::Eof) => Input::End,
                Err(ReadlineError::Io(error)) => Input::Failed(error),
                Err(error) => Input::Failed(std::io::Error::other(error.to_string())),
            };
            let last = matches!(input, Input::End | Input::Failed(_));
            if send.blocking_send(input).is_err() || last {
                break;
            }
        }
    });
    Ok((LineEditor { prompts, inputs }, print))
}

/// Adds a typed line to the history and appends it to the file, so that a console killed
/// later keeps it.
fn remember(
    editor: &mut Editor<Catalogue, FileHistory>,
    history: Option<&std::path::Path>,
    line: &str,
) {
    if line.trim().is_empty() || editor.add_history_entry(line).ok() != Some(true) {
        return;
    }
    let Some(path) = history else { return };
    let saved = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .map_err(ReadlineError::from)
        .and_then(|()| editor.append_history(path));
    if let Err(error) = saved {
        tracing::warn!(%error, path = %path.display(), "cannot keep the console's history");
    }
}
