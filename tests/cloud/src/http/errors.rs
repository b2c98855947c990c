//! Error responses in the exact shapes each service sends: Keystone's, keystonemiddleware's,
//! placement's, nova's and Glance's (webob's).

use axum::http::{HeaderName, StatusCode, header};
use axum::response::Response;
use serde::Serialize;
use uuid::Uuid;

use super::microversion::{PLACEMENT_MIN, Version};
use super::reply::{json, set, text, title};

/// webob's default explanation of a status, which placement and Glance put in their bodies.
pub(crate) fn explanation(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => {
            "The server could not comply with the request since it is either malformed or otherwise incorrect."
        }
        401 => {
            "This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required."
        }
        403 => "Access was denied to this resource.",
        404 => "The resource could not be found.",
        405 => "The method specified is not allowed for this resource.",
        409 => "There was a conflict when trying to complete your request.",
        429 => "The client has sent too many requests in a given amount of time.",
        502 => "Bad gateway.",
        503 => "The server is currently unavailable. Please try again at a later time.",
        504 => "The gateway has timed out.",
        _ => "The server has either erred or is incapable of performing the requested operation.",
    }
}

/// The message Keystone and keystonemiddleware send with every 401.
const AUTH_REQUIRED: &str = "The request you have made requires authentication.";

#[derive(Serialize)]
struct KeystoneBody<'a> {
    error: KeystoneError<'a>,
}

#[derive(Serialize)]
struct KeystoneError<'a> {
    code: u16,
    message: &'a str,
    title: &'a str,
}

/// Keystone's own error: `{"error": {"code", "message", "title"}}`.
pub(crate) fn keystone(identity_url: &str, status: StatusCode, message: &str) -> Response {
    let mut response = json(
        status,
        &KeystoneBody {
            error: KeystoneError {
                code: status.as_u16(),
                message,
                title: title(status),
            },
        },
    );
    set(&mut response, header::VARY, "X-Auth-Token");
    if status == StatusCode::UNAUTHORIZED {
        set(
            &mut response,
            header::WWW_AUTHENTICATE,
            &format!("Keystone uri=\"{identity_url}\""),
        );
    }
    response
}

/// Keystone refusing credentials.
pub(crate) fn keystone_unauthorized(identity_url: &str) -> Response {
    keystone(identity_url, StatusCode::UNAUTHORIZED, AUTH_REQUIRED)
}

#[derive(Serialize)]
struct MiddlewareBody {
    error: MiddlewareError,
}

/// keystonemiddleware orders the keys differently from Keystone.
#[derive(Serialize)]
struct MiddlewareError {
    code: u16,
    title: &'static str,
    message: &'static str,
}

/// keystonemiddleware's 401 in front of placement, nova and Glance (no or invalid token).
pub(crate) fn unauthorized(identity_url: &str) -> Response {
    let mut response = json(
        StatusCode::UNAUTHORIZED,
        &MiddlewareBody {
            error: MiddlewareError {
                code: 401,
                title: "Unauthorized",
                message: AUTH_REQUIRED,
            },
        },
    );
    set(
        &mut response,
        header::WWW_AUTHENTICATE,
        &format!("Keystone uri=\"{identity_url}\""),
    );
    response
}

#[derive(Serialize)]
struct PlacementBody {
    errors: [PlacementError; 1],
}

#[derive(Serialize)]
struct PlacementError {
    status: u16,
    title: &'static str,
    detail: String,
    /// Error codes appeared in microversion 1.23.
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'static str>,
    request_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_version: Option<String>,
}

/// Placement's usual detail: webob's explanation, then the message.
pub(crate) fn placement_detail(status: StatusCode, message: &str) -> String {
    format!("{}\n\n {message}  ", explanation(status))
}

/// Placement's error body; `version` is the microversion it was served at, if one was chosen;
/// a 406's body names placement's range, up to `max`.
pub(crate) fn placement(
    status: StatusCode,
    detail: String,
    version: Option<Version>,
    max: Version,
) -> Response {
    let not_acceptable = status == StatusCode::NOT_ACCEPTABLE;
    let body = PlacementBody {
        errors: [PlacementError {
            status: status.as_u16(),
            title: title(status),
            detail,
            code: version
                .filter(|version| *version >= Version::new(1, 23))
                .map(|_| "placement.undefined_code"),
            request_id: format!("req-{}", Uuid::new_v4()),
            max_version: not_acceptable.then(|| max.to_string()),
            min_version: not_acceptable.then(|| PLACEMENT_MIN.to_string()),
        }],
    };
    let mut response = json(status, &body);
    if let Some(version) = version {
        super::microversion::stamp_placement(&mut response, version);
    }
    response
}

/// Nova's name for the fault of a status.
fn nova_fault_name(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "badRequest",
        401 => "unauthorized",
        403 => "forbidden",
        404 => "itemNotFound",
        405 => "badMethod",
        409 => "conflictingRequest",
        413 | 429 => "overLimit",
        415 => "badMediaType",
        501 => "notImplemented",
        503 => "serviceUnavailable",
        _ => "computeFault",
    }
}

#[derive(Serialize)]
struct NovaFault<'a> {
    code: u16,
    message: &'a str,
}

/// Nova's fault: `{"itemNotFound": {"code": 404, "message": "..."}}`.
pub(crate) fn nova(status: StatusCode, message: &str, version: Option<Version>) -> Response {
    let body = std::collections::BTreeMap::from([(
        nova_fault_name(status),
        NovaFault {
            code: status.as_u16(),
            message,
        },
    )]);
    let mut response = json(status, &body);
    if let Some(version) = version {
        super::microversion::stamp_nova(&mut response, version);
    }
    response
}

/// The representations webob offers for an error, in its order of preference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Representation {
    Html,
    Json,
    Plain,
}

/// webob's choice between `text/html` and `application/json` (ties go to HTML, so a client
/// sending `Accept: */*` or nothing gets HTML); plain text if neither is acceptable.
fn negotiate(accept: Option<&str>) -> Representation {
    let Some(accept) = accept else {
        return Representation::Html;
    };
    let quality = |offer: &str| {
        let (kind, _) = offer.split_once('/').unwrap_or((offer, ""));
        accept
            .split(',')
            .filter_map(|range| {
                let mut params = range.split(';');
                let media = params.next()?.trim().to_ascii_lowercase();
                let q = params
                    .filter_map(|param| param.trim().strip_prefix("q="))
                    .find_map(|q| q.trim().parse::<f32>().ok())
                    .unwrap_or(1.0);
                let specificity = if media == offer {
                    2
                } else if media == format!("{kind}/*") {
                    1
                } else if media == "*/*" {
                    0
                } else {
                    return None;
                };
                Some((specificity, q))
            })
            .max_by_key(|(specificity, _)| *specificity)
            .map_or(0.0, |(_, q)| q)
    };
    let (html, json) = (quality("text/html"), quality("application/json"));
    if html <= 0.0 && json <= 0.0 {
        Representation::Plain
    } else if json > html {
        Representation::Json
    } else {
        Representation::Html
    }
}

#[derive(Serialize)]
struct WebobJson<'a> {
    message: String,
    code: String,
    title: &'a str,
}

/// A webob `HTTPException` as Glance raises it, in the representation the client accepts.
pub(crate) fn webob(status: StatusCode, explanation: &str, accept: Option<&str>) -> Response {
    let status_line = format!("{} {}", status.as_u16(), title(status));
    match negotiate(accept) {
        Representation::Json => json(
            status,
            &WebobJson {
                message: format!("{explanation}<br /><br />\n\n\n"),
                code: status_line,
                title: title(status),
            },
        ),
        Representation::Html => text(
            status,
            "text/html; charset=UTF-8",
            format!(
                "<html>\n <head>\n  <title>{status_line}</title>\n </head>\n <body>\n  <h1>{status_line}</h1>\n  {explanation}<br /><br />\n\n\n\n </body>\n</html>"
            ),
        ),
        Representation::Plain => text(
            status,
            "text/plain; charset=UTF-8",
            format!("{status_line}\n\n{explanation}\n\n\n"),
        ),
    }
}

/// Adds an `Allow` header to a 405.
pub(crate) fn with_allow(mut response: Response, allow: &str) -> Response {
    set(&mut response, HeaderName::from_static("allow"), allow);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webob_prefers_html_on_ties() {
        assert_eq!(negotiate(None), Representation::Html);
        assert_eq!(negotiate(Some("*/*")), Representation::Html);
        assert_eq!(negotiate(Some("application/json")), Representation::Json);
        assert_eq!(
            negotiate(Some("text/html;q=0.5, application/json")),
            Representation::Json
        );
        assert_eq!(negotiate(Some("text/plain")), Representation::Plain);
    }
}
