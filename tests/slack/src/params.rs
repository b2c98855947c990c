//! A call's arguments, from the three ways Slack takes them: a JSON body
//! (`application/json; charset=utf-8`, token only in the header), a form body
//! (`application/x-www-form-urlencoded`, token in the header or the body), or a GET's query.

use serde_json::{Map, Value};

/// What a client sent, or the error code Slack answers a malformed request with.
#[derive(Debug, Default)]
pub(crate) struct Params {
    pub(crate) args: Map<String, Value>,
    /// JSON without `charset=utf-8`: Slack accepts it with a `missing_charset` warning.
    pub(crate) missing_charset: bool,
    /// Where a token in the body was allowed (form and query), the token.
    pub(crate) body_token: Option<String>,
}

impl Params {
    pub(crate) fn parse(
        content_type: Option<&str>,
        query: &str,
        body: &[u8],
    ) -> Result<Self, &'static str> {
        let mut params = match content_type.map(str::to_ascii_lowercase) {
            None if body.is_empty() => Self::default(),
            None => return Err("missing_post_type"),
            Some(ct) if ct.starts_with("application/json") => {
                let value: Value = serde_json::from_slice(body).map_err(|_| "invalid_json")?;
                let Value::Object(args) = value else {
                    return Err("json_not_object");
                };
                Self {
                    args,
                    missing_charset: !ct.replace(' ', "").contains("charset=utf-8"),
                    body_token: None,
                }
            }
            Some(ct) if ct.starts_with("application/x-www-form-urlencoded") => {
                let text = std::str::from_utf8(body).map_err(|_| "invalid_charset")?;
                let args = form(text)?;
                Self {
                    body_token: args.get("token").and_then(Value::as_str).map(str::to_owned),
                    args,
                    missing_charset: false,
                }
            }
            Some(_) => return Err("invalid_post_type"),
        };
        for (key, value) in form(query)? {
            if key == "token" {
                params
                    .body_token
                    .get_or_insert(value.as_str().unwrap_or("").to_owned());
            } else {
                params.args.entry(key).or_insert(value);
            }
        }
        params.args.remove("token");
        Ok(params)
    }

    /// A non-empty string argument (a form's values are all strings; JSON numbers count too).
    pub(crate) fn str(&self, name: &str) -> Option<String> {
        match self.args.get(name)? {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    /// Slack's booleans: `true`, `"true"` or `"1"`.
    pub(crate) fn flag(&self, name: &str) -> bool {
        match self.args.get(name) {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => s == "true" || s == "1",
            Some(Value::Number(n)) => n.as_u64() == Some(1),
            _ => false,
        }
    }

    /// `blocks`: a JSON array, or (in a form) the array's JSON text. `None` when absent.
    pub(crate) fn blocks(&self) -> Result<Option<Vec<Value>>, &'static str> {
        match self.args.get("blocks") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(blocks)) => Ok(Some(blocks.clone())),
            Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                Ok(Value::Array(blocks)) => Ok(Some(blocks)),
                _ => Err("invalid_blocks_format"),
            },
            Some(_) => Err("invalid_blocks_format"),
        }
    }
}

/// `a=1&b=x%20y` into string values.
fn form(text: &str) -> Result<Map<String, Value>, &'static str> {
    let mut args = Map::new();
    for pair in text.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        args.insert(decode(key)?, Value::String(decode(value)?));
    }
    Ok(args)
}

fn decode(text: &str) -> Result<String, &'static str> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut input = text.bytes();
    while let Some(b) = input.next() {
        match b {
            b'+' => bytes.push(b' '),
            b'%' => {
                let hex = [input.next(), input.next()];
                let [Some(hi), Some(lo)] = hex else {
                    return Err("invalid_form_data");
                };
                let digit = |c: u8| char::from(c).to_digit(16);
                let (Some(hi), Some(lo)) = (digit(hi), digit(lo)) else {
                    return Err("invalid_form_data");
                };
                bytes.push(u8::try_from(hi * 16 + lo).map_err(|_| "invalid_form_data")?);
            }
            other => bytes.push(other),
        }
    }
    String::from_utf8(bytes).map_err(|_| "invalid_charset")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_body_is_decoded_and_its_token_kept_apart() {
        let p = Params::parse(
            Some("application/x-www-form-urlencoded"),
            "",
            b"token=xoxb-1&channel=C1&text=a+b%3C%21here%3E",
        )
        .unwrap();
        assert_eq!(p.str("text").as_deref(), Some("a b<!here>"));
        assert_eq!(p.body_token.as_deref(), Some("xoxb-1"));
        assert!(p.args.get("token").is_none());
    }

    #[test]
    fn json_without_charset_is_flagged_and_other_types_refused() {
        let p = Params::parse(Some("application/json"), "", br#"{"a":1}"#).unwrap();
        assert!(p.missing_charset);
        assert_eq!(
            Params::parse(Some("text/plain"), "", b"x").err(),
            Some("invalid_post_type")
        );
        assert_eq!(
            Params::parse(Some("application/json"), "", b"[1]").err(),
            Some("json_not_object")
        );
        assert_eq!(
            Params::parse(Some("application/json"), "", b"{").err(),
            Some("invalid_json")
        );
    }
}
