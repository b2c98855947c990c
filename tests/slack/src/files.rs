//! Uploads as Slack takes them since `files.upload` was retired: `files.getUploadURLExternal`
//! (`filename`, `length` in bytes) gives a file id and a URL; the bytes are POSTed there, with
//! no token (the URL is the credential), and Slack answers `OK - <length>`; then
//! `files.completeUploadExternal` (`files`: a JSON array of `{"id", "title"}`, `channel_id`,
//! `initial_comment`) shares the file. Both methods need `files:write` and are Tier 4.
//!
//! Slack's reference pages list the refusals without saying which applies to what; the fake
//! answers `invalid_arguments` for a missing or malformed argument, `missing_argument` for a
//! `length` of 0 (as the page says), `file_not_found` for an id it never gave or already
//! shared, and `upload_incomplete` (its own code) for a file whose bytes never arrived or are
//! not as many as announced.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::SlackFile;
use crate::state::Shared;
use crate::web::{Call, Refusal};
use crate::{Visibility, chat};

/// An upload begun, not yet shared.
pub(crate) struct Upload {
    pub(crate) filename: String,
    /// As announced, in bytes.
    pub(crate) length: usize,
    /// As received at the upload URL, the last POST winning.
    pub(crate) bytes: Option<Vec<u8>>,
}

/// `files.getUploadURLExternal`
pub(crate) fn get_upload_url(call: Call<'_>) -> Result<Value, Refusal> {
    call.need("files:write")?;
    let filename = call
        .params
        .str("filename")
        .ok_or(Refusal::Code("invalid_arguments"))?;
    let length = call
        .params
        .str("length")
        .ok_or(Refusal::Code("invalid_arguments"))?;
    let length: usize = length
        .parse()
        .map_err(|_| Refusal::Code("invalid_arguments"))?;
    if length == 0 {
        return Err(Refusal::Code("missing_argument"));
    }
    let id = format!(
        "F0FAKE{:05}",
        call.inner.uploads.len() + call.inner.files.len() + 1
    );
    let upload = Upload {
        filename,
        length,
        bytes: None,
    };
    call.inner.uploads.insert(id.clone(), upload);
    let url = format!("{}{id}", call.shared.upload_url);
    Ok(json!({"upload_url": url, "file_id": id}))
}

/// `POST /upload/{id}`: the bytes of a file, raw; `OK - <length>`, or a 404 for an id the fake
/// never gave (or one already shared).
pub(crate) async fn receive(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    body: Bytes,
) -> (StatusCode, String) {
    let mut inner = shared.lock();
    match inner.uploads.get_mut(&id) {
        Some(upload) => {
            upload.bytes = Some(body.to_vec());
            (StatusCode::OK, format!("OK - {}", body.len()))
        }
        None => (StatusCode::NOT_FOUND, "file_not_found".to_owned()),
    }
}

/// `files`: a JSON array, or (in a form) its JSON text, of objects with an `id`.
fn files_arg(call: &Call<'_>) -> Result<Vec<(String, Option<String>)>, Refusal> {
    let invalid = Refusal::Code("invalid_arguments");
    let files = match call.params.args.get("files") {
        Some(Value::Array(files)) => files.clone(),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(files)) => files,
            _ => return Err(invalid),
        },
        _ => return Err(invalid),
    };
    if files.is_empty() {
        return Err(invalid);
    }
    let text = |file: &Value, key: &str| file.get(key).and_then(Value::as_str).map(str::to_owned);
    files
        .iter()
        .map(|file| {
            let id = text(file, "id").ok_or(Refusal::Code("invalid_arguments"))?;
            Ok((id, text(file, "title")))
        })
        .collect()
}

/// The channel a file is shared in: one the bot can see, and is in.
fn sharing_channel(call: &Call<'_>, id: &str) -> Result<String, Refusal> {
    let channel = call
        .inner
        .channels
        .get(id)
        .ok_or(Refusal::Code("channel_not_found"))?;
    let member = channel.members.contains(&call.shared.cfg.bot_user_id);
    if !member {
        return Err(Refusal::Code(match channel.visibility {
            Visibility::Private => "channel_not_found",
            Visibility::Public => "not_in_channel",
        }));
    }
    Ok(channel.id.clone())
}

/// `files.completeUploadExternal`
pub(crate) fn complete_upload(call: Call<'_>) -> Result<Value, Refusal> {
    call.need("files:write")?;
    let files = files_arg(&call)?;
    for (i, (id, _)) in files.iter().enumerate() {
        let upload = call
            .inner
            .uploads
            .get(id)
            .ok_or(Refusal::Code("file_not_found"))?;
        let arrived = upload.bytes.as_ref().map(Vec::len);
        if arrived != Some(upload.length) {
            return Err(Refusal::Code("upload_incomplete"));
        }
        if files[..i].iter().any(|(other, _)| other == id) {
            return Err(Refusal::Code("invalid_arguments"));
        }
    }
    let channel = match call.params.str("channel_id") {
        Some(id) => Some(sharing_channel(&call, &id)?),
        None => None,
    };
    let comment = call.params.str("initial_comment");
    if comment
        .as_ref()
        .is_some_and(|c| c.chars().count() > chat::MAX_TEXT)
    {
        return Err(Refusal::Code("msg_too_long"));
    }
    let mut shared = Vec::new();
    for (id, title) in files {
        let Some(upload) = call.inner.uploads.remove(&id) else {
            continue;
        };
        let file = SlackFile {
            title: title.unwrap_or_else(|| upload.filename.clone()),
            content: String::from_utf8_lossy(&upload.bytes.unwrap_or_default()).into_owned(),
            name: upload.filename,
            id,
            initial_comment: comment.clone(),
        };
        shared.push(json!({"id": file.id, "title": file.title, "name": file.name}));
        // A file shared nowhere is the uploader's alone: kept as shared in "" so that it
        // cannot be completed again.
        call.inner
            .files
            .push((channel.clone().unwrap_or_default(), file));
    }
    Ok(json!({"files": shared}))
}
