//! One console conversation: lines in, replies out, spoken by one person. The terminal console
//! and every connection to the console socket hold one; only the demo's can change speaker.

use opsbot_commands::name::RunId;
use opsbot_commands::parse::{self, Origin};
use opsbot_commands::people::{Actor, People};
use opsbot_commands::plan::DigestPrefix;
use opsbot_commands::request::Request;
use opsbot_commands::run::ChannelId;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use super::transcript::{PRIVATE, PUBLIC};
use crate::service::Service;

/// Who speaks in a session.
#[derive(Debug, Clone)]
pub(crate) enum Speaking {
    /// A real console: the person of the OS account at the other end, for the whole session.
    Fixed(Actor),
    /// `opsbot demo`: `/as` picks among the demo's people.
    Demo { people: People, current: Actor },
}

/// What a console speaker types to approve the plan `/approve id:r-N` just showed them, or to
/// confirm the plan of the run they just asked for.
pub(crate) const CONFIRM: &str = "yes";

/// A plan on the screen that [`CONFIRM`] decides.
#[derive(Debug, Clone)]
struct Shown {
    id: RunId,
    digest: DigestPrefix,
    /// The speaker's own run under the `confirm` policy; else a plan `/approve` showed.
    confirms: bool,
}

impl Shown {
    fn request(self) -> Request {
        if self.confirms {
            Request::RunConfirm {
                id: self.id,
                digest: self.digest,
            }
        } else {
            Request::Approve {
                id: self.id,
                digest: Some(self.digest),
            }
        }
    }

    /// `type yes to run it`.
    fn prompt(&self) -> String {
        let what = if self.confirms { "run" } else { "approve" };
        format!("type {CONFIRM} to {what} it, or anything else to leave it waiting")
    }

    /// The command that decides it later, and how to withdraw a confirmation's run.
    fn later(&self) -> String {
        let (id, digest) = (self.id, self.digest.as_str());
        if self.confirms {
            format!("/run confirm id:{id} digest:{digest}; /run cancel id:{id} withdraws it")
        } else {
            format!("/approve id:{id} digest:{digest}")
        }
    }

    /// What a near miss (`y`, `YES`) is told: the plan still waits, and how to decide it.
    fn still_waiting(&self) -> String {
        let what = if self.confirms { "run" } else { "approve" };
        format!(
            "{} still waits: type `{CONFIRM}` exactly to {what} it, or later {}",
            self.id,
            self.later()
        )
    }

    /// What `no` is told: nothing was decided, and how to decide later.
    fn left_waiting(&self) -> String {
        format!("{} is left waiting; later: {}", self.id, self.later())
    }
}

/// A line that looks like an answer to a `yes` prompt but is not [`CONFIRM`].
fn near_miss(line: &str) -> bool {
    line != CONFIRM
        && ["yes", "y", "ok", "yep"]
            .iter()
            .any(|w| line.eq_ignore_ascii_case(w))
}

/// A line that answers a `yes` prompt with no.
fn declines(line: &str) -> bool {
    ["no", "n"].iter().any(|w| line.eq_ignore_ascii_case(w))
}

/// The answer to a line that is not UTF-8 (a stray byte, a terminal in another encoding).
const NOT_UTF8: &str = "that line is not UTF-8 text, so it was not read; type it again";

/// A line of console input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    Text(String),
    /// Bytes that are not UTF-8, as shown in a transcript (U+FFFD for each bad sequence).
    NotUtf8(String),
}

impl Line {
    /// The line as a transcript shows it.
    pub(crate) fn shown(&self) -> &str {
        match self {
            Self::Text(text) | Self::NotUtf8(text) => text,
        }
    }
}

#[derive(Debug)]
pub(crate) struct Session {
    service: Service,
    speaking: Speaking,
    /// The plan shown last that `yes` decides. Any other line but a near miss forgets it.
    shown: Option<Shown>,
    /// The run the last answer showed waiting for a decision, until the console takes it.
    waiting: Option<RunId>,
}

impl Session {
    pub(crate) fn new(service: Service, speaking: Speaking) -> Self {
        Self {
            service,
            speaking,
            shown: None,
            waiting: None,
        }
    }

    /// The run the last answer showed waiting for a decision: its first progress message
    /// would say the same again.
    pub(crate) fn take_waiting(&mut self) -> Option<RunId> {
        self.waiting.take()
    }

    pub(crate) fn speaker(&self) -> &Actor {
        match &self.speaking {
            Speaking::Fixed(actor) | Speaking::Demo { current: actor, .. } => actor,
        }
    }

    pub(crate) fn service(&self) -> &Service {
        &self.service
    }

    /// The prompt: `alice> `.
    pub(crate) fn prompt(&self) -> String {
        format!("{}> ", self.speaker().name())
    }

    fn origin(&self) -> Origin {
        match self.speaking {
            Speaking::Fixed(_) => Origin::Console,
            Speaking::Demo { .. } => Origin::Demo,
        }
    }

    /// Answers one line: the header and the text to show, or `None` for a blank line. A line
    /// that is not UTF-8 is refused; the session goes on.
    pub(crate) async fn answer(&mut self, line: &Line) -> Option<(&'static str, String)> {
        let line = match line {
            Line::Text(text) => text.trim(),
            Line::NotUtf8(_) => return Some((PRIVATE, NOT_UTF8.to_owned())),
        };
        if line.is_empty() {
            return None;
        }
        let shown = self.shown.take();
        let origin = self.origin();
        if let Some(shown) = shown.as_ref().filter(|_| declines(line)) {
            return Some((PRIVATE, shown.left_waiting()));
        }
        let request = if line == CONFIRM || near_miss(line) {
            let Some(shown) = shown else {
                let nothing = "nothing to confirm: /approve id:r-N shows a plan, then yes \
                               approves it; a plan that waits for your confirmation asks for it";
                return Some((PRIVATE, nothing.to_owned()));
            };
            if line != CONFIRM {
                let text = shown.still_waiting();
                self.shown = Some(shown);
                return Some((PRIVATE, text));
            }
            shown.request()
        } else {
            match parse::parse_line(line, origin) {
                Ok(request) => request,
                Err(error) => return Some((PRIVATE, error.to_string())),
            }
        };
        match &request {
            Request::ActAs { user } => return Some((PRIVATE, self.switch(user))),
            Request::Approve { id, digest: None } => {
                return Some((PRIVATE, self.preview(*id).await));
            }
            _ => {}
        }
        let channel = ChannelId::console();
        let reply = self
            .service
            .handle(self.speaker(), &channel, origin, request)
            .await;
        self.waiting = reply.waiting;
        let mut text = reply.text;
        if let Some((id, digest)) = reply.awaits {
            if let Ok(digest) = DigestPrefix::parse(digest.short()) {
                let shown = Shown {
                    id,
                    digest,
                    confirms: true,
                };
                text = format!("{text}\n{}", shown.prompt());
                self.shown = Some(shown);
            }
        }
        Some((if reply.private { PRIVATE } else { PUBLIC }, text))
    }

    /// `/approve` without a digest: the plan, and `yes` on the next line approves exactly it.
    async fn preview(&mut self, id: RunId) -> String {
        match self.service.preview(self.speaker(), id).await {
            Ok((text, digest)) => {
                let Ok(digest) = DigestPrefix::parse(digest.short()) else {
                    return text;
                };
                let shown = Shown {
                    id,
                    digest,
                    confirms: false,
                };
                let text = format!("{text}\n{}", shown.prompt());
                self.shown = Some(shown);
                text
            }
            Err(refusal) => refusal.text,
        }
    }

    /// `/as`: the demo speaks as another of its people.
    fn switch(&mut self, user: &opsbot_commands::name::PersonName) -> String {
        let Speaking::Demo { people, current } = &mut self.speaking else {
            // The parser knows `/as` only in the demo.
            return "`/as` works in the demo only".to_owned();
        };
        match people.in_demo(user) {
            Some(next) => {
                *current = next;
                format!("you are now {user}")
            }
            None => {
                let known: Vec<String> = people.iter().map(|p| p.name.to_string()).collect();
                format!(
                    "the demo has no person `{user}`; it has {}",
                    known.join(", ")
                )
            }
        }
    }
}

/// The next line of `input` without its line ending, `None` at its end. Bytes that are not
/// UTF-8 make a line of their own kind, refused by the session instead of ending the console.
pub(crate) async fn read_line(
    input: &mut (impl AsyncBufRead + Unpin),
) -> std::io::Result<Option<Line>> {
    let mut bytes = Vec::new();
    if input.read_until(b'\n', &mut bytes).await? == 0 {
        return Ok(None);
    }
    while bytes.last().is_some_and(|b| matches!(b, b'\n' | b'\r')) {
        bytes.pop();
    }
    Ok(Some(match String::from_utf8(bytes) {
        Ok(text) => Line::Text(text),
        Err(error) => Line::NotUtf8(String::from_utf8_lossy(error.as_bytes()).into_owned()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_that_are_not_utf8_are_read_not_fatal() {
        let mut input: &[u8] = b"/run list\r\n\xff\xfe\n/help";
        let text = |s: &str| Some(Line::Text(s.to_owned()));
        assert_eq!(read_line(&mut input).await.unwrap(), text("/run list"));
        assert_eq!(
            read_line(&mut input).await.unwrap(),
            Some(Line::NotUtf8("\u{FFFD}\u{FFFD}".to_owned()))
        );
        assert_eq!(read_line(&mut input).await.unwrap(), text("/help"));
        assert_eq!(read_line(&mut input).await.unwrap(), None);
    }
}
