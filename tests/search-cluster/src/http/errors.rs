//! Error responses in the exact shapes ES and OpenSearch send, plus haproxy's own error pages.

use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;

use super::json::{Ordered, reply};
use crate::config::Flavor;

/// An error answer from the cluster (or the proxy in front of it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ApiError {
    /// `RestController.handleBadRequest`: a flat string, and no `status` key.
    NoHandler { method: Method, uri: String },
    /// The path exists with other methods: 405 with an `Allow` header.
    WrongMethod {
        method: Method,
        uri: String,
        allowed: Vec<Method>,
    },
    /// A body without a JSON content type (ES >= 6 refuses it before any handler runs).
    ContentType { header: Option<String> },
    /// An `ElasticsearchException` rendered by `BytesRestResponse`.
    Exception(Exception),
    /// No node behind the load balancer answered.
    Haproxy(StatusCode),
}

/// Type, reason and extra metadata of an ES exception.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Exception {
    #[serde(skip)]
    pub status: StatusCode,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub reason: Option<String>,
    #[serde(flatten)]
    pub metadata: Ordered<String>,
    /// The exception this one wraps, as ES renders a cause (never in `root_cause`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caused_by: Option<Box<Exception>>,
    /// `ElasticsearchException` headers (security's `WWW-Authenticate`), under `header`.
    #[serde(skip_serializing_if = "no_headers")]
    pub header: Ordered<Value>,
}

fn no_headers(header: &Ordered<Value>) -> bool {
    header.0.is_empty()
}

#[derive(Serialize)]
struct ExceptionBody<'a> {
    error: ErrorObject<'a>,
    status: u16,
}

#[derive(Serialize)]
struct ErrorObject<'a> {
    root_cause: [Exception; 1],
    #[serde(flatten)]
    cause: &'a Exception,
}

#[derive(Serialize)]
struct SimpleBody<'a> {
    error: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
}

impl Exception {
    pub(crate) fn new(status: StatusCode, kind: &'static str, reason: impl Into<String>) -> Self {
        Exception {
            status,
            kind,
            reason: Some(reason.into()),
            metadata: Ordered::default(),
            caused_by: None,
            header: Ordered::default(),
        }
    }

    fn with(mut self, key: &str, value: impl Into<String>) -> Self {
        self.metadata.0.push((key.to_owned(), value.into()));
        self
    }
}

impl Exception {
    /// Adds a header as `ElasticsearchException.addHeader` does; it renders a string for one
    /// value, a list for several.
    /// Wraps `cause`, as `ElasticsearchException(msg, cause)` does.
    pub(crate) fn caused_by(mut self, cause: Exception) -> Self {
        self.caused_by = Some(Box::new(cause));
        self
    }

    pub(crate) fn with_header(mut self, name: &str, values: &[&str]) -> Self {
        let value = match values {
            [one] => Value::from(*one),
            many => Value::from(many.to_vec()),
        };
        self.header.0.push((name.to_owned(), value));
        self
    }
}

impl From<Exception> for ApiError {
    fn from(exception: Exception) -> Self {
        ApiError::Exception(exception)
    }
}

impl ApiError {
    pub(crate) fn illegal_argument(reason: impl Into<String>) -> Self {
        Exception::new(
            StatusCode::BAD_REQUEST,
            "illegal_argument_exception",
            reason,
        )
        .into()
    }

    pub(crate) fn parse(reason: impl Into<String>) -> Self {
        Exception::new(StatusCode::BAD_REQUEST, "parse_exception", reason).into()
    }

    pub(crate) fn index_not_found(name: &str) -> Self {
        Exception::new(
            StatusCode::NOT_FOUND,
            "index_not_found_exception",
            format!("no such index [{name}]"),
        )
        .with("resource.type", "index_or_alias")
        .with("resource.id", name)
        .with("index_uuid", "_na_")
        .with("index", name)
        .into()
    }

    /// A data stream's name where the request takes indices only, without `ignore_unavailable`:
    /// `IndexNotFoundException(name)` like a missing index's. ES 8 (`ensureAliasOrIndexExists`)
    /// adds `EXCLUDED_DATA_STREAMS_KEY` (`es.excluded_ds`), which the metadata `HashMap` puts
    /// between `resource.type` and `resource.id`; ES 7 and OpenSearch throw it from
    /// `innerResolve` without.
    pub(crate) fn excluded_data_stream(name: &str, marked: bool) -> Self {
        if !marked {
            return Self::index_not_found(name);
        }
        Exception::new(
            StatusCode::NOT_FOUND,
            "index_not_found_exception",
            format!("no such index [{name}]"),
        )
        .with("resource.type", "index_or_alias")
        .with("excluded_ds", "true")
        .with("resource.id", name)
        .with("index_uuid", "_na_")
        .with("index", name)
        .into()
    }

    /// `Metadata.getIndexSafe` on a master task: the index bound on receipt is gone (or was
    /// re-created). Built from `IndexNotFoundException(Index)`: no `resource.*` keys, the uuid
    /// the request had bound.
    pub(crate) fn index_not_found_with_uuid(name: &str, uuid: &str) -> Self {
        Exception::new(
            StatusCode::NOT_FOUND,
            "index_not_found_exception",
            format!("no such index [{name}]"),
        )
        .with("index_uuid", uuid)
        .with("index", name)
        .into()
    }

    /// `allow_no_indices=false` and the whole expression matched nothing:
    /// `IndexNotFoundException((String) null)` with the expression as resource.
    pub(crate) fn no_indices(expression: &str) -> Self {
        Exception::new(
            StatusCode::NOT_FOUND,
            "index_not_found_exception",
            "no such index [null]",
        )
        .with("resource.type", "index_expression")
        .with("resource.id", expression)
        .into()
    }

    /// A document write that found the document there already (`version_conflict_engine_exception`).
    pub(crate) fn version_conflict(reason: &str, index: &str, uuid: &str) -> Self {
        Exception::new(
            StatusCode::CONFLICT,
            "version_conflict_engine_exception",
            reason,
        )
        .with("index_uuid", uuid)
        .with("shard", "0")
        .with("index", index)
        .into()
    }

    /// An error with a status and type of its own.
    pub(crate) fn exception(
        status: StatusCode,
        kind: &'static str,
        reason: impl Into<String>,
    ) -> Self {
        Exception::new(status, kind, reason).into()
    }

    pub(crate) fn index_exists(name: &str, uuid: &str) -> Self {
        Exception::new(
            StatusCode::BAD_REQUEST,
            "resource_already_exists_exception",
            format!("index [{name}/{uuid}] already exists"),
        )
        .with("index_uuid", uuid)
        .with("index", name)
        .into()
    }

    /// Quorum lost: OpenSearch renamed the exception along with "master".
    pub(crate) fn not_discovered(flavor: Flavor) -> Self {
        let kind = if flavor.is_opensearch() {
            "cluster_manager_not_discovered_exception"
        } else {
            "master_not_discovered_exception"
        };
        ApiError::Exception(Exception {
            status: StatusCode::SERVICE_UNAVAILABLE,
            kind,
            reason: None,
            metadata: Ordered::default(),
            caused_by: None,
            header: Ordered::default(),
        })
    }

    pub(crate) fn status(&self) -> StatusCode {
        match self {
            ApiError::NoHandler { .. } => StatusCode::BAD_REQUEST,
            ApiError::WrongMethod { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::ContentType { .. } => StatusCode::NOT_ACCEPTABLE,
            ApiError::Exception(exception) => exception.status,
            ApiError::Haproxy(status) => *status,
        }
    }

    pub(crate) fn into_response(self, pretty: bool) -> Response {
        let status = self.status();
        let simple = |error: &str, status: Option<u16>| {
            reply(self.status(), &SimpleBody { error, status }, pretty)
        };
        match &self {
            ApiError::NoHandler { method, uri } => simple(
                &format!("no handler found for uri [{uri}] and method [{method}]"),
                None,
            ),
            ApiError::WrongMethod {
                method,
                uri,
                allowed,
            } => {
                // ES's RestController: the message shows the set (`[GET, PUT]`), the header
                // joins it with bare commas (`collectionToDelimitedString(set, ",")`).
                let allowed: Vec<&str> = allowed.iter().map(Method::as_str).collect();
                let mut response = simple(
                    &format!(
                        "Incorrect HTTP method for uri [{uri}] and method [{method}], allowed: [{}]",
                        allowed.join(", ")
                    ),
                    Some(status.as_u16()),
                );
                if let Ok(value) = HeaderValue::from_str(&allowed.join(",")) {
                    response.headers_mut().insert(header::ALLOW, value);
                }
                response
            }
            ApiError::ContentType { header: None } => {
                simple("Content-Type header is missing", Some(status.as_u16()))
            }
            ApiError::ContentType {
                header: Some(value),
            } => simple(
                &format!("Content-Type header [{value}] is not supported"),
                Some(status.as_u16()),
            ),
            ApiError::Exception(exception) => reply(
                status,
                &ExceptionBody {
                    error: ErrorObject {
                        // The root cause is this exception itself (its causes here are never
                        // ES exceptions), rendered without its cause.
                        root_cause: [Exception {
                            caused_by: None,
                            ..exception.clone()
                        }],
                        cause: exception,
                    },
                    status: status.as_u16(),
                },
                pretty,
            ),
            ApiError::Haproxy(status) => haproxy_page(*status),
        }
    }
}

/// haproxy's built-in error page, as Kolla's VIP sends it when no backend answers
/// (502 and 504 pages for faults; any other status gets the 503 page).
fn haproxy_page(status: StatusCode) -> Response {
    let (title, message) = match status {
        StatusCode::BAD_GATEWAY => (
            "502 Bad Gateway",
            "The server returned an invalid or incomplete response.",
        ),
        StatusCode::GATEWAY_TIMEOUT => {
            ("504 Gateway Time-out", "The server didn't respond in time.")
        }
        _ => (
            "503 Service Unavailable",
            "No server is available to handle this request.",
        ),
    };
    let body = format!("<html><body><h1>{title}</h1>\n{message}\n</body></html>\n");
    (
        status,
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("text/html")),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::to_bytes;

    async fn body_of(error: ApiError) -> serde_json::Value {
        let bytes = to_bytes(error.into_response(false).into_body(), 1 << 20)
            .await
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    fn fixture(text: &str) -> serde_json::Value {
        serde_json::from_str(text).unwrap()
    }

    #[tokio::test]
    async fn exception_bodies_equal_the_fixtures() {
        assert_eq!(
            body_of(ApiError::index_not_found("flog-2023.01.01")).await,
            fixture(include_str!(
                "../../../fixtures/search/delete_index.es7-os2.not-found.404.json"
            ))
        );
        assert_eq!(
            body_of(ApiError::not_discovered(Flavor::Es7)).await,
            fixture(include_str!(
                "../../../fixtures/search/error.es7.master-not-discovered.503.json"
            ))
        );
        assert_eq!(
            body_of(ApiError::not_discovered(Flavor::Os2)).await,
            fixture(include_str!(
                "../../../fixtures/search/error.os2.cluster-manager-not-discovered.503.json"
            ))
        );
    }

    #[tokio::test]
    async fn flat_errors_equal_the_fixtures() {
        let no_handler = ApiError::NoHandler {
            method: Method::GET,
            uri: "/_cat/nope".into(),
        };
        assert_eq!(
            body_of(no_handler).await,
            fixture(include_str!(
                "../../../fixtures/search/error.es7-os2.no-handler.400.json"
            ))
        );
        let wrong = ApiError::WrongMethod {
            method: Method::POST,
            uri: "/_cluster/settings".into(),
            allowed: vec![Method::GET, Method::PUT],
        };
        assert_eq!(
            wrong.clone().into_response(false).headers()[header::ALLOW],
            "GET,PUT"
        );
        assert_eq!(
            body_of(wrong).await,
            fixture(include_str!(
                "../../../fixtures/search/error.es7-os2.wrong-method.405.json"
            ))
        );
        let content_type = ApiError::ContentType {
            header: Some("application/x-www-form-urlencoded".into()),
        };
        assert_eq!(
            body_of(content_type).await,
            fixture(include_str!(
                "../../../fixtures/search/error.es7.content-type-missing.406.json"
            ))
        );
    }
}
