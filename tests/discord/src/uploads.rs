//! Messages with files: Discord takes them as `multipart/form-data`, the message's JSON in the
//! part `payload_json` and each file in a part `files[n]` (`reference/uploading-files`). An
//! upload larger than the guild's limit is refused with 413 and code 40005, as Discord does;
//! the fake keeps every accepted file for the tests to read.

use serde_json::Value;

use crate::payloads::ATTACHMENT_SIZE_LIMIT;

/// A file a message carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    /// `POST /api/v10/...` it came with.
    pub request: String,
    pub filename: String,
    pub bytes: Vec<u8>,
}

/// Why a form was refused: a malformed one is the client's mistake, a large one Discord's
/// limit.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    Malformed(String),
    TooLarge { filename: String, size: usize },
}

/// The message and the files of a `multipart/form-data` body with `content_type`'s boundary.
pub(crate) fn parse(
    content_type: &str,
    body: &[u8],
    request: &str,
) -> Result<(Value, Vec<Upload>), Refused> {
    let malformed = |why: &str| Refused::Malformed(why.to_owned());
    let boundary = content_type
        .split(';')
        .find_map(|p| p.trim().strip_prefix("boundary="))
        .map(|b| b.trim_matches('"'))
        .ok_or_else(|| malformed("no boundary in the Content-Type"))?;
    let delimiter = format!("--{boundary}").into_bytes();
    let mut json = None;
    let mut files = Vec::new();
    for part in split(body, &delimiter).into_iter().skip(1) {
        if part.starts_with(b"--") {
            break;
        }
        let part = part.strip_prefix(b"\r\n").unwrap_or(part);
        let part = part.strip_suffix(b"\r\n").unwrap_or(part);
        let at = find(part, b"\r\n\r\n").ok_or_else(|| malformed("a part without headers"))?;
        let headers = String::from_utf8_lossy(&part[..at]).to_ascii_lowercase();
        let data = &part[at + 4..];
        let name = attribute(&headers, "name").ok_or_else(|| malformed("a part without name"))?;
        if name == "payload_json" {
            json = Some(
                serde_json::from_slice(data).map_err(|_| malformed("payload_json is not JSON"))?,
            );
        } else if name.starts_with("files[") {
            let filename = attribute(&headers, "filename")
                .ok_or_else(|| malformed("a file without filename"))?;
            if data.len() as u64 > ATTACHMENT_SIZE_LIMIT {
                return Err(Refused::TooLarge {
                    filename,
                    size: data.len(),
                });
            }
            files.push(Upload {
                request: request.to_owned(),
                filename,
                bytes: data.to_vec(),
            });
        }
    }
    let mut json = json.unwrap_or(Value::Null);
    // The message shows its attachments, as Discord's answer would.
    if let Some(object) = json.as_object_mut() {
        let shown: Vec<Value> = files
            .iter()
            .enumerate()
            .map(|(id, f)| serde_json::json!({"id": id, "filename": f.filename, "size": f.bytes.len()}))
            .collect();
        object.insert("attachments".into(), Value::Array(shown));
    }
    Ok((json, files))
}

/// `name="files[0]"` → `files[0]`, from a part's (lower-cased) headers.
fn attribute(headers: &str, key: &str) -> Option<String> {
    let start = headers.find(&format!("; {key}=\""))? + key.len() + 4;
    let end = headers[start..].find('"')? + start;
    Some(headers[start..end].to_owned())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn split<'a>(body: &'a [u8], delimiter: &[u8]) -> Vec<&'a [u8]> {
    let mut parts = Vec::new();
    let mut rest = body;
    while let Some(at) = find(rest, delimiter) {
        parts.push(&rest[..at]);
        rest = &rest[at + delimiter.len()..];
    }
    parts.push(rest);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(file: &[u8]) -> Vec<u8> {
        let mut body = b"--XyZ\r\nContent-Disposition: form-data; name=\"payload_json\"\r\n\
                         Content-Type: application/json\r\n\r\n{\"content\":\"log\"}\r\n--XyZ\r\n\
                         Content-Disposition: form-data; name=\"files[0]\"; filename=\"r-1.log\"\r\n\
                         Content-Type: text/plain\r\n\r\n"
            .to_vec();
        body.extend_from_slice(file);
        body.extend_from_slice(b"\r\n--XyZ--\r\n");
        body
    }

    #[test]
    fn a_form_gives_its_message_and_files_and_a_large_file_is_refused() {
        let (json, files) = parse(
            "multipart/form-data; boundary=XyZ",
            &form(b"a\r\nb"),
            "POST /x",
        )
        .unwrap();
        assert_eq!(json["content"], "log");
        assert_eq!(json["attachments"][0]["filename"], "r-1.log");
        assert_eq!(files[0].bytes, b"a\r\nb");
        let big = vec![b'x'; ATTACHMENT_SIZE_LIMIT as usize + 1];
        assert!(matches!(
            parse("multipart/form-data; boundary=XyZ", &form(&big), "POST /x"),
            Err(Refused::TooLarge { .. })
        ));
        assert!(matches!(
            parse("multipart/form-data", &form(b""), "POST /x"),
            Err(Refused::Malformed(_))
        ));
    }
}
