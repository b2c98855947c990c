//! What the command line asks a running bot over its console socket, because the store admits
//! one process: `opsbot audit export`, `opsbot run-log export` and `opsbot store backup` while
//! `opsbot run` holds it.
//!
//! The client connects as any console does (so only the OS account of a configured person gets
//! this far), and sends one line, [`PREFIX`] and a JSON [`Request`], which no chat command can
//! be. The bot stops sending the channel's progress to that connection, and answers in a frame:
//! a [`BEGIN`] line, the payload lines, and an [`END_OK`] or [`END_ERROR`] line; then it closes
//! the connection. What came before [`BEGIN`] (the greeting, progress) is the console's, not
//! the answer.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::mpsc;

use super::transcript::PRIVATE;
use opsbot_commands::name::RunId;

use crate::audit_export::{self, Filter};
use crate::service::Service;

/// Starts a request line.
const PREFIX: &str = "opsbot-cli ";
const BEGIN: &str = "opsbot-cli begin";
const END_OK: &str = "opsbot-cli end ok";
/// Followed by the error, on one line.
const END_ERROR: &str = "opsbot-cli end error: ";

/// What the command line asks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// The audit log's JSON lines.
    AuditExport(Filter),
    /// A run's command output, every line the store keeps.
    RunLogExport(RunId),
    /// A backup into this new directory (absolute: the bot's working directory is not the
    /// caller's), written by the bot's account.
    Backup(PathBuf),
}

/// The request a console line carries, if it is one.
pub(crate) fn request(line: &str) -> Option<anyhow::Result<Request>> {
    let json = line.strip_prefix(PREFIX)?;
    Some(serde_json::from_str(json).context("a request from the command line does not decode"))
}

/// Answers `request` in a frame on `out`; the store's work runs off the async threads and
/// sends each line as it comes, so that an export of the whole audit log never sits in memory
/// (the channel is bounded: a slow reader slows the export down, a gone one stops it).
pub(crate) async fn answer(
    request: anyhow::Result<Request>,
    service: &Service,
    person: &str,
    out: &mpsc::Sender<String>,
) {
    let store = service.engine().store().clone();
    tracing::info!(
        person,
        ?request,
        "a command line request on the console socket"
    );
    if out.send(format!("{BEGIN}\n")).await.is_err() {
        return;
    }
    let lines = out.clone();
    let send = move |line: String| {
        lines
            .blocking_send(format!("{line}\n"))
            .map_err(|_| anyhow::anyhow!("the command line closed the connection"))
    };
    let outcome = match request {
        Ok(request) => tokio::task::spawn_blocking(move || perform(&store, request, send))
            .await
            .unwrap_or_else(|error| Err(anyhow::anyhow!("the request was cut short: {error}"))),
        Err(error) => Err(error),
    };
    let end = match outcome {
        Ok(()) => format!("{END_OK}\n"),
        Err(error) => {
            let error = format!("{error:#}").replace('\n', " ");
            format!("{END_ERROR}{error}\n")
        }
    };
    // A connection gone meanwhile has nobody left to tell.
    let _ = out.send(end).await;
}

/// Does `request` on `store`, calling `send` with each line of its answer as it comes: in the
/// bot for a command line on its socket, or in the command line when it holds the store.
pub(crate) fn perform(
    store: &opsbot_state::Store,
    request: Request,
    mut send: impl FnMut(String) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    match request {
        Request::AuditExport(filter) => audit_export::write(store, filter, send),
        Request::RunLogExport(run) => store.run_log(run)?.into_iter().try_for_each(send),
        Request::Backup(dest) => {
            if !dest.is_absolute() {
                bail!(
                    "the backup directory {} is not absolute, and the bot's working directory \
                     is not the caller's; give a full path",
                    dest.display()
                );
            }
            let summary = store
                .backup(&dest)
                .with_context(|| format!("cannot back the store up into {}", dest.display()))?;
            send(backed_up(&dest, &summary))
        }
    }
}

/// What a finished backup says, from the bot or from the command line.
pub fn backed_up(dest: &Path, summary: &opsbot_state::Summary) -> String {
    format!(
        "backed up the store into {} ({summary}); `opsbot store check --path {0}` verifies it",
        dest.display()
    )
}

/// Asks the bot serving `socket`, and calls `line` with each line of its answer.
pub async fn ask(
    socket: &Path,
    request: &Request,
    mut line: impl FnMut(&str) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let stream = UnixStream::connect(socket).await.with_context(|| {
        format!(
            "the store is in use and the bot's console socket {} does not answer",
            socket.display()
        )
    })?;
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    // The bot speaks first: a greeting, or why this account may not connect (then it closes
    // the connection, and a request sent meanwhile would only reset it).
    let first = lines.next_line().await?.unwrap_or_default();
    if let Some(refusal) = first.strip_prefix(PRIVATE) {
        bail!("the running bot refused: {refusal}");
    }
    let sent = format!("{PREFIX}{}\n", serde_json::to_string(request)?);
    write.write_all(sent.as_bytes()).await?;
    while lines
        .next_line()
        .await?
        .context("the running bot closed the connection")?
        != BEGIN
    {
        // The console's own lines (progress) until the answer begins.
    }
    while let Some(text) = lines.next_line().await? {
        if text == END_OK {
            return Ok(());
        }
        if let Some(error) = text.strip_prefix(END_ERROR) {
            bail!("the running bot: {error}");
        }
        line(&text)?;
    }
    bail!("the running bot stopped in the middle of its answer")
}

#[cfg(test)]
mod tests {
    use opsbot_commands::audit::{AuditEvent, AuditKind};
    use time::OffsetDateTime;

    use super::*;

    /// The first event reaches the connection while the export still reads the store: with
    /// room for one line in the channel, it cannot have read the third.
    #[tokio::test]
    async fn an_audit_export_streams_its_lines_as_it_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let store = opsbot_state::Store::open(&dir.path().join("store")).unwrap();
        let writes = crate::store_writes::StoreWrites::new(store.clone());
        for _ in 0..3 {
            let event = AuditEvent {
                at: OffsetDateTime::now_utc(),
                run: None,
                actor: None,
                event: AuditKind::CancelRequested,
            };
            writes.append_audit(event).await.unwrap();
        }
        let (out, mut lines) = mpsc::channel(1);
        let filter = Filter {
            since: None,
            run: None,
        };
        let export = tokio::task::spawn_blocking(move || {
            perform(&store, Request::AuditExport(filter), |line| {
                Ok(out.blocking_send(line)?)
            })
        });
        let first = lines.recv().await.unwrap();
        assert!(first.contains("cancel_requested"), "{first}");
        assert!(!export.is_finished());
        let mut rest = Vec::new();
        while let Some(line) = lines.recv().await {
            rest.push(line);
        }
        export.await.unwrap().unwrap();
        assert_eq!(rest.len(), 2);
    }

    #[test]
    fn a_backup_into_a_relative_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = opsbot_state::Store::open(&dir.path().join("store")).unwrap();
        let error = perform(&store, Request::Backup("backups/b1".into()), |_| Ok(())).unwrap_err();
        assert!(error.to_string().contains("is not absolute"), "{error}");
    }
}
