//! The console socket that `opsbot run` serves to local accounts: each connection speaks as the
//! person of the OS account that connected (SO_PEERCRED, which the peer cannot forge), and sees
//! the console channel's progress messages as transcript lines. An account that maps to no
//! person is told so, audited and disconnected before it can type anything.

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, bail};
use opsbot_commands::maintenance::Announcement;
use opsbot_commands::people::{People, UnknownPerson};
use opsbot_commands::render::ProgressView;
use opsbot_commands::run::{ChannelId, MessageId};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{broadcast, mpsc};

use super::account::account_of;
use super::answered::{Answered, FirstPost};
use super::control;
use super::session::{Line, Session, Speaking, read_line};
use super::transcript::{self, PRIVATE, PUBLIC};
use crate::progress::{ChatError, ChatTransport};
use crate::service::{Asked, Service};

/// Who may connect: the owner and the group (the operators), nobody else.
const SOCKET_MODE: u32 = 0o660;
/// Transcript lines a slow connection may fall behind before it misses some (it is told).
const BACKLOG: usize = 1024;

/// The console channel for every connected console: progress and announcements go to all.
#[derive(Debug, Clone)]
pub struct Hub {
    lines: broadcast::Sender<Delivered>,
    next_message: Arc<AtomicU64>,
}

impl Default for Hub {
    fn default() -> Self {
        Self {
            lines: broadcast::channel(BACKLOG).0,
            next_message: Arc::new(AtomicU64::new(1)),
        }
    }
}

/// A block of the console channel's transcript, and the run it is the first message of, if it
/// is one.
#[derive(Debug, Clone)]
struct Delivered {
    text: String,
    first: Option<FirstPost>,
}

impl Hub {
    fn send(&self, header: &str, text: &str, first: Option<FirstPost>) {
        // No console connected is not an error: the run goes on and `/run status` shows it.
        let text = transcript::block(header, text);
        let _ = self.lines.send(Delivered { text, first });
    }
}

impl ChatTransport for Hub {
    async fn announce(&self, announcement: &Announcement) -> Result<(), ChatError> {
        self.send(transcript::ANNOUNCEMENT, &announcement.text, None);
        Ok(())
    }

    async fn notice(&self, _channel: &ChannelId, text: &str) -> Result<(), ChatError> {
        self.send(PUBLIC, text, None);
        Ok(())
    }

    async fn post(
        &self,
        _channel: &ChannelId,
        view: &ProgressView,
    ) -> Result<MessageId, ChatError> {
        let id = MessageId(format!(
            "c{}",
            self.next_message.fetch_add(1, Ordering::Relaxed)
        ));
        self.send(
            &transcript::posted(&id),
            &view.text,
            Some(FirstPost::of(view)),
        );
        Ok(id)
    }

    async fn edit(
        &self,
        _channel: &ChannelId,
        message: &MessageId,
        view: &ProgressView,
    ) -> Result<(), ChatError> {
        self.send(&transcript::edited(message), &view.text, None);
        Ok(())
    }
}

/// Binds the socket at `path`, owner and group only, replacing a socket a killed bot left
/// behind but nothing else. The socket is bound and restricted under a temporary name and then
/// renamed into place, so that it appears at `path` already listening and already restricted:
/// a client that finds the path never gets "connection refused" or a moment of wider access.
pub fn bind(path: &Path) -> anyhow::Result<UnixListener> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_socket() => bail!(
            "{} exists and is not a socket; [console] socket must name a path opsbot may own",
            path.display()
        ),
        _ => {}
    }
    let mut staging = path.as_os_str().to_owned();
    staging.push(".new");
    let staging = PathBuf::from(staging);
    if std::fs::symlink_metadata(&staging).is_ok_and(|meta| meta.file_type().is_socket()) {
        std::fs::remove_file(&staging).with_context(|| {
            format!("cannot remove the old console socket {}", staging.display())
        })?;
    }
    let listener = UnixListener::bind(&staging)
        .with_context(|| format!("cannot listen on the console socket {}", staging.display()))?;
    std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(SOCKET_MODE))
        .with_context(|| format!("cannot restrict the console socket {}", staging.display()))?;
    std::fs::rename(&staging, path)
        .with_context(|| format!("cannot put the console socket at {}", path.display()))?;
    Ok(listener)
}

/// Serves console connections until the task is dropped.
pub async fn serve(
    listener: UnixListener,
    path: PathBuf,
    service: Service,
    people: People,
    hub: Hub,
) {
    tracing::info!(socket = %path.display(), "serving the console");
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let connection = Connection {
                    service: service.clone(),
                    people: people.clone(),
                    hub: hub.clone(),
                };
                tokio::spawn(connection.serve(stream));
            }
            Err(error) => {
                tracing::warn!(%error, "a console connection could not be accepted");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
}

struct Connection {
    service: Service,
    people: People,
    hub: Hub,
}

impl Connection {
    async fn serve(self, mut stream: UnixStream) {
        // The user database may be a directory service (sssd, LDAP): looked up off the
        // runtime's threads.
        let account = match stream.peer_cred() {
            Ok(cred) => tokio::task::spawn_blocking(move || account_of(cred.uid()))
                .await
                .map_err(|e| e.to_string())
                .and_then(|found| found.map_err(|e| e.to_string())),
            Err(e) => Err(e.to_string()),
        };
        // Refused connections are closed whole (one close, no half-shutdown first), so that
        // the peer sees the end of the answer and the end of the connection at once.
        let actor = match account {
            Ok(account) => self.people.on_console(&account),
            Err(error) => {
                tracing::warn!(%error, "a console connection without an account");
                let _ = stream
                    .write_all(format!("{PRIVATE}{error}\n").as_bytes())
                    .await;
                return;
            }
        };
        let actor = match actor {
            Ok(actor) => actor,
            Err(unknown) => {
                let refusal = self.refuse(unknown).await;
                let _ = stream.write_all(refusal.as_bytes()).await;
                return;
            }
        };
        let (read, mut write) = stream.into_split();
        tracing::info!(person = %actor.name(), "console connected");
        // One writer for the socket: replies and the channel's lines, in the order they come.
        // Bounded: a console that stops reading makes its forwarder wait, so that it falls
        // behind in the broadcast (and is told so) instead of piling lines up in memory.
        let (out, mut outbox) = mpsc::channel::<String>(BACKLOG);
        let writer = tokio::spawn(async move {
            while let Some(text) = outbox.recv().await {
                if write.write_all(text.as_bytes()).await.is_err() {
                    break;
                }
            }
        });
        // Held while a command is answered, so that its answer comes before the progress of
        // the run it started.
        let answering = Arc::new(tokio::sync::Mutex::new(()));
        let answered = Arc::new(Answered::default());
        let channel = tokio::spawn(forward(
            self.hub.lines.subscribe(),
            out.clone(),
            Arc::clone(&answering),
            Arc::clone(&answered),
        ));
        let mut session = Session::new(self.service, Speaking::Fixed(actor));
        let greeting = format!(
            "you are {}; commands as in chat, /help lists them",
            session.speaker().name()
        );
        let _ = out.send(transcript::block(PUBLIC, &greeting)).await;
        let mut input = BufReader::new(read);
        while let Ok(Some(line)) = read_line(&mut input).await {
            if let Some(request) = match &line {
                Line::Text(text) => control::request(text),
                Line::NotUtf8(_) => None,
            } {
                // The command line's connection: its answer, unmixed with progress, then done.
                channel.abort();
                let person = session.speaker().name().to_string();
                control::answer(request, session.service(), &person, &out).await;
                break;
            }
            let _answering = answering.lock().await;
            let clock = session.service().engine().clock();
            // Told as they happen; one the connection has no room for is dropped, not waited on.
            let say = |text: &str| drop(out.try_send(transcript::block(PRIVATE, text)));
            if let Some((header, text)) =
                super::answer_watched(&mut session, &clock, &line, say).await
            {
                if out.send(transcript::block(header, &text)).await.is_err() {
                    break;
                }
            }
            answered.showed(session.take_waiting());
        }
        channel.abort();
        drop(out);
        let _ = writer.await;
    }

    /// Audits a connection from an account that maps to nobody, and says why it ends.
    async fn refuse(&self, unknown: UnknownPerson) -> String {
        let asked = Asked::new("console connection", None);
        let reply = self.service.refuse_unknown(unknown, &asked).await;
        transcript::block(PRIVATE, &reply.text)
    }
}

/// Copies the console channel's lines to one connection, never while it is being answered and
/// without the first message of a run its answer showed waiting; one that fell behind is told.
async fn forward(
    mut lines: broadcast::Receiver<Delivered>,
    out: mpsc::Sender<String>,
    answering: Arc<tokio::sync::Mutex<()>>,
    answered: Arc<Answered>,
) {
    loop {
        let (line, first) = match lines.recv().await {
            Ok(delivered) => (delivered.text, delivered.first),
            Err(broadcast::error::RecvError::Lagged(missed)) => (
                transcript::block(
                    PRIVATE,
                    &format!(
                        "{missed} progress lines were skipped; /run list shows where runs are"
                    ),
                ),
                None,
            ),
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let _quiet = answering.lock().await;
        if first.is_some_and(|first| answered.repeats(first)) {
            continue;
        }
        if out.send(line).await.is_err() {
            return;
        }
    }
}
