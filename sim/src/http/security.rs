//! Elasticsearch security's authentication, as a cluster with `xpack.security.enabled` (ES 8's
//! default) answers: every cluster API request needs `Authorization: Basic` of a known user and
//! its password, or `Authorization: ApiKey` of a known API key, else 401 `security_exception`
//! with the realms in `WWW-Authenticate`. Authorization is not modelled: whoever authenticates
//! may do everything (a superuser); nor is the metadata ES adds about failed API keys.

use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Serialize;
use serde_json::{Value, json};

use super::json::reply;
use crate::config::Flavor;

/// Who may use the cluster API: users and their passwords (the file or native realm), and API
/// keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Security {
    /// `(username, password)` pairs.
    pub users: Vec<(String, String)>,
    /// `(id, api_key)` pairs, as the create-API-key answer gives them; a client sends
    /// `ApiKey base64(id:api_key)` (the answer's `encoded`).
    pub api_keys: Vec<(String, String)>,
}

/// The realms ES announces: ES 8 has the token service and API keys on by default.
fn challenges(flavor: Flavor) -> &'static [&'static str] {
    const BASIC: &str = "Basic realm=\"security\" charset=\"UTF-8\"";
    match flavor {
        Flavor::Es8 => &[BASIC, "Bearer realm=\"security\"", "ApiKey"],
        _ => &[BASIC],
    }
}

/// ES's 401, unless the request carries the credentials of a known user.
pub(crate) fn refusal(security: &Security, flavor: Flavor, parts: &Parts) -> Option<Response> {
    let uri = parts.uri.path_and_query().map_or_else(
        || parts.uri.path().to_owned(),
        |uri| uri.as_str().to_owned(),
    );
    let known = |list: &[(String, String)], (name, secret): &(String, String)| {
        list.iter().any(|(n, s)| n == name && s == secret)
    };
    let reason = match presented(parts) {
        None => format!("missing authentication credentials for REST request [{uri}]"),
        Some(Presented::Basic(pair)) if known(&security.users, &pair) => return None,
        Some(Presented::ApiKey(pair)) if known(&security.api_keys, &pair) => return None,
        Some(Presented::Basic((user, _))) => {
            format!("unable to authenticate user [{user}] for REST request [{uri}]")
        }
        Some(Presented::ApiKey(_)) => "unable to authenticate with provided credentials and \
                                       anonymous access is not allowed for this request"
            .to_owned(),
    };
    Some(unauthenticated(flavor, &reason))
}

/// Credentials of a request, each `base64(name:secret)` on the wire.
enum Presented {
    Basic((String, String)),
    ApiKey((String, String)),
}

/// The credentials of `Authorization`; `None` for no header, another scheme or a value that
/// does not decode (ES then finds no token to authenticate with).
fn presented(parts: &Parts) -> Option<Presented> {
    let value = parts.headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
    let (name, secret) = decoded.split_once(':')?;
    let pair = (name.to_owned(), secret.to_owned());
    match scheme {
        "Basic" => Some(Presented::Basic(pair)),
        "ApiKey" => Some(Presented::ApiKey(pair)),
        _ => None,
    }
}

/// ES's 401: the challenges as headers and, in the body, under `header` (a string for one, a
/// list for several, as `ElasticsearchException` renders its headers).
fn unauthenticated(flavor: Flavor, reason: &str) -> Response {
    let challenges = challenges(flavor);
    let listed = match challenges {
        [one] => json!(one),
        many => json!(many),
    };
    let cause = Cause {
        kind: "security_exception",
        reason,
        header: Header {
            www_authenticate: listed,
        },
    };
    let body = Body {
        error: Error {
            root_cause: [&cause],
            cause: &cause,
        },
        status: 401,
    };
    let mut response = reply(StatusCode::UNAUTHORIZED, &body, false);
    for challenge in challenges {
        response.headers_mut().append(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static(challenge),
        );
    }
    response
}

#[derive(Serialize)]
struct Body<'a> {
    error: Error<'a>,
    status: u16,
}

#[derive(Serialize)]
struct Error<'a> {
    root_cause: [&'a Cause<'a>; 1],
    #[serde(flatten)]
    cause: &'a Cause<'a>,
}

#[derive(Serialize)]
struct Cause<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    reason: &'a str,
    header: Header,
}

#[derive(Serialize)]
struct Header {
    #[serde(rename = "WWW-Authenticate")]
    www_authenticate: Value,
}
