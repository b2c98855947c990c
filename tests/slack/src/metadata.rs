//! Message metadata (docs.slack.dev/messaging/message-metadata, formerly api.slack.com/metadata):
//! `chat.postMessage` and `chat.update` take `metadata`, `{"event_type": ..., "event_payload":
//! {...}}`, a JSON object in a JSON body or the object's JSON text in a form.
//!
//! Slack tells two failures apart. Metadata that is not a JSON object at all is refused and the
//! message not posted: `invalid_metadata_format` ("Invalid metadata format provided", in both
//! methods' error tables). An object of the wrong shape is not refused: "Metadata with an
//! invalid `event_type` returns an `invalid_metadata_schema` warning and is ignored", the
//! message is posted without it (the metadata guide; slackapi/bolt-python#863 met it as a
//! message without `metadata`; slackapi/deno-slack-sdk#86 describes the same warning for a
//! payload that fails its manifest schema).

use serde_json::Value;

use crate::params::Params;

/// `event_type`'s longest.
pub(crate) const MAX_EVENT_TYPE: usize = 255;

/// What a call's `metadata` comes to.
#[derive(Debug, PartialEq)]
pub(crate) enum Metadata {
    /// No `metadata` (or `null`): an update keeps what the message had.
    Absent,
    /// Stored with the message, as sent.
    Valid(Value),
    /// The wrong shape: dropped, with the `invalid_metadata_schema` warning.
    Ignored,
}

/// Reads `metadata`, or the error code that refuses the call.
pub(crate) fn read(params: &Params) -> Result<Metadata, &'static str> {
    let value = match params.args.get("metadata") {
        None | Some(Value::Null) => return Ok(Metadata::Absent),
        Some(Value::String(text)) => {
            serde_json::from_str::<Value>(text).map_err(|_| "invalid_metadata_format")?
        }
        Some(other) => other.clone(),
    };
    if !value.is_object() {
        return Err("invalid_metadata_format");
    }
    if schema_ok(&value) {
        Ok(Metadata::Valid(value))
    } else {
        tracing::debug!("fake slack: invalid_metadata_schema: {value}");
        Ok(Metadata::Ignored)
    }
}

/// `event_type` a non-empty string of letters, digits, underscores and hyphens ("but not
/// periods or other punctuation"), at most [`MAX_EVENT_TYPE`] characters; `event_payload` an
/// object.
fn schema_ok(metadata: &Value) -> bool {
    let event_type = metadata.get("event_type").and_then(Value::as_str);
    let type_ok = event_type.is_some_and(|t| {
        !t.is_empty()
            && t.chars().count() <= MAX_EVENT_TYPE
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    });
    type_ok && metadata.get("event_payload").is_some_and(Value::is_object)
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;

    fn params(metadata: Value) -> Params {
        let mut args = Map::new();
        args.insert("metadata".into(), metadata);
        Params {
            args,
            ..Params::default()
        }
    }

    #[test]
    fn an_object_or_its_json_text_is_metadata() {
        let m = json!({"event_type": "run_started", "event_payload": {"id": "r-1"}});
        assert_eq!(read(&params(m.clone())), Ok(Metadata::Valid(m.clone())));
        let text = Value::String(m.to_string());
        assert_eq!(read(&params(text)), Ok(Metadata::Valid(m)));
        assert_eq!(read(&Params::default()), Ok(Metadata::Absent));
        assert_eq!(read(&params(Value::Null)), Ok(Metadata::Absent));
    }

    #[test]
    fn what_is_not_an_object_is_refused() {
        for bad in [
            json!("{not json"),
            json!("[1]"),
            json!([1]),
            json!(7),
            json!(true),
        ] {
            assert_eq!(read(&params(bad)), Err("invalid_metadata_format"));
        }
    }

    #[test]
    fn the_wrong_shape_is_ignored() {
        let payload = json!({"id": 1});
        let long = "x".repeat(MAX_EVENT_TYPE + 1);
        let at_most = "x".repeat(MAX_EVENT_TYPE);
        let ignored = [
            json!({"event_payload": payload}),
            json!({"event_type": "", "event_payload": payload}),
            json!({"event_type": "run.started", "event_payload": payload}),
            json!({"event_type": "run started", "event_payload": payload}),
            json!({"event_type": long, "event_payload": payload}),
            json!({"event_type": 7, "event_payload": payload}),
            json!({"event_type": "run_started"}),
            json!({"event_type": "run_started", "event_payload": "id=1"}),
            json!({"event_type": "run_started", "event_payload": [1]}),
        ];
        for m in ignored {
            assert_eq!(read(&params(m.clone())), Ok(Metadata::Ignored), "{m}");
        }
        for t in ["procurement-task", "Run_2", at_most.as_str()] {
            let m = json!({"event_type": t, "event_payload": {}});
            assert_eq!(read(&params(m.clone())), Ok(Metadata::Valid(m)));
        }
    }
}
