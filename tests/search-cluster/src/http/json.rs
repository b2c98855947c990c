//! JSON bodies: compact like ES by default, Jackson's pretty printer with `?pretty`, and an
//! insertion-ordered map for bodies whose keys are data (index names, settings).

use std::io;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::ser::Formatter;

use super::errors::ApiError;

/// The content type ES sends with JSON.
pub(crate) const JSON_CONTENT_TYPE: &str = "application/json; charset=UTF-8";

/// A JSON object whose keys keep the order they were inserted in (serde_json's `Map` sorts).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Ordered<V>(pub Vec<(String, V)>);

impl<V: Serialize> Serialize for Ordered<V> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// Jackson's `DefaultPrettyPrinter` as ES configures it: `"key" : value`, two-space indent for
/// objects and arrays, `{ }` / `[ ]` when empty.
#[derive(Debug, Default)]
struct Jackson {
    indent: usize,
    has_value: bool,
}

impl Jackson {
    fn newline<W: ?Sized + io::Write>(&self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b"\n")?;
        for _ in 0..self.indent {
            writer.write_all(b"  ")?;
        }
        Ok(())
    }

    fn open<W: ?Sized + io::Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.indent += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    fn close<W: ?Sized + io::Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.indent -= 1;
        if self.has_value {
            self.newline(writer)?;
        } else {
            writer.write_all(b" ")?;
        }
        writer.write_all(bracket)
    }

    fn item<W: ?Sized + io::Write>(&self, writer: &mut W, first: bool) -> io::Result<()> {
        if !first {
            writer.write_all(b",")?;
        }
        self.newline(writer)
    }
}

impl Formatter for Jackson {
    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(writer, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(writer, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b" : ")
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Serializes a body; pretty output ends with a newline as ES's does.
pub(crate) fn to_body(value: &impl Serialize, pretty: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let written = if pretty {
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, Jackson::default());
        value.serialize(&mut serializer)
    } else {
        value.serialize(&mut serde_json::Serializer::new(&mut out))
    };
    match written {
        Ok(()) if pretty => {
            out.push(b'\n');
            out
        }
        Ok(()) => out,
        // Our bodies are plain data; report the impossible instead of panicking.
        Err(error) => format!("{{\"error\":\"simulator could not serialize the body: {error}\"}}")
            .into_bytes(),
    }
}

/// A request body that must be a JSON object: `None` when empty; ES's parse errors otherwise.
/// `what` names the request in the message, as ES's object parsers do.
pub(crate) fn object_body(
    body: &[u8],
    what: &str,
) -> Result<Option<serde_json::Map<String, serde_json::Value>>, ApiError> {
    if body.is_empty() {
        return Ok(None);
    }
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|error| {
        ApiError::exception(
            StatusCode::BAD_REQUEST,
            "json_parse_exception",
            error.to_string(),
        )
    })?;
    match value {
        serde_json::Value::Object(object) => Ok(Some(object)),
        _ => Err(ApiError::exception(
            StatusCode::BAD_REQUEST,
            "x_content_parse_exception",
            format!("[{what}] expected an object"),
        )),
    }
}

/// A JSON response with ES's content type.
pub(crate) fn reply(status: StatusCode, value: &impl Serialize, pretty: bool) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(JSON_CONTENT_TYPE),
        )],
        to_body(value, pretty),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pretty_matches_the_recorded_health_body() {
        let fixture =
            include_str!("../../../fixtures/search/cluster_health.es7.green.200.pretty.txt");
        // Parse with field order preserved by going through our ordered map.
        let value: serde_json::Value = serde_json::from_str(fixture).unwrap();
        let keys = [
            "cluster_name",
            "status",
            "timed_out",
            "number_of_nodes",
            "number_of_data_nodes",
            "active_primary_shards",
            "active_shards",
            "relocating_shards",
            "initializing_shards",
            "unassigned_shards",
            "delayed_unassigned_shards",
            "number_of_pending_tasks",
            "number_of_in_flight_fetch",
            "task_max_waiting_in_queue_millis",
            "active_shards_percent_as_number",
        ];
        let ordered = Ordered(
            keys.iter()
                .map(|key| (key.to_string(), value[key].clone()))
                .collect(),
        );
        assert_eq!(String::from_utf8(to_body(&ordered, true)).unwrap(), fixture);
    }

    #[test]
    fn empty_containers_get_a_space_and_compact_has_none() {
        let value = Ordered(vec![
            ("persistent".to_owned(), json!({})),
            ("list".to_owned(), json!([])),
        ]);
        assert_eq!(
            String::from_utf8(to_body(&value, true)).unwrap(),
            "{\n  \"persistent\" : { },\n  \"list\" : [ ]\n}\n"
        );
        assert_eq!(to_body(&value, false), br#"{"persistent":{},"list":[]}"#);
    }

    #[test]
    fn arrays_of_objects_indent_like_jackson() {
        let value = json!([{"a": "1"}]);
        assert_eq!(
            String::from_utf8(to_body(&value, true)).unwrap(),
            "[\n  {\n    \"a\" : \"1\"\n  }\n]\n"
        );
    }
}
