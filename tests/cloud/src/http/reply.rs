//! Building responses: JSON bodies and headers, without any way to panic.

use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// The content type every simulated service sends with JSON.
pub(crate) const JSON: &str = "application/json";

/// A JSON response.
pub(crate) fn json<T: Serialize + ?Sized>(status: StatusCode, body: &T) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => (status, [(header::CONTENT_TYPE, JSON)], bytes).into_response(),
        Err(error) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "text/plain",
            format!("cannot encode the response: {error}"),
        ),
    }
}

/// A response with a body of another content type.
pub(crate) fn text(status: StatusCode, content_type: &str, body: String) -> Response {
    let mut response = (status, body).into_response();
    set(&mut response, header::CONTENT_TYPE, content_type);
    response
}

/// Sets a header; a value that is not a valid header (only possible from odd client input
/// echoed back) is left out rather than failing the response.
pub(crate) fn set(response: &mut Response, name: HeaderName, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        response.headers_mut().insert(name, value);
    }
}

/// The reason phrase of a status, as the services' error titles spell it.
pub(crate) fn title(status: StatusCode) -> &'static str {
    status.canonical_reason().unwrap_or("Unknown Error")
}
