//! What a firing fault rule does to a request.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::errors::{ApiError, Exception};
use super::json::JSON_CONTENT_TYPE;
use crate::config::Flavor;
use crate::fault::{FaultEffect, FaultKind};

/// The error a real stack sends for a status: ES bodies from the cluster, haproxy pages for
/// gateway errors.
fn status_error(status: StatusCode, flavor: Flavor) -> ApiError {
    let kind = match status.as_u16() {
        429 if flavor.is_opensearch() => "rejected_execution_exception",
        429 => "es_rejected_execution_exception",
        502 | 504 => return ApiError::Haproxy(status),
        503 => return ApiError::not_discovered(flavor),
        401 | 403 => "security_exception",
        404 => "resource_not_found_exception",
        408 => "process_cluster_event_timeout_exception",
        500 => "exception",
        _ => "status_exception",
    };
    let reason = if status == StatusCode::TOO_MANY_REQUESTS {
        "rejected execution of coordinating operation [queue capacity = 1000, active threads = 8, queued tasks = 1000]"
    } else {
        "simulated fault"
    };
    Exception::new(status, kind, reason).into()
}

/// Applies a fault. `None` means: go on and answer normally (after any delay). The delay and
/// the cut connection are the ones every simulator shares; the bodies are the cluster's own.
pub(crate) async fn apply(
    kind: &FaultKind,
    flavor: Flavor,
    cluster_name: &str,
) -> Option<Response> {
    match kind.apply().await {
        FaultEffect::Proceed => None,
        FaultEffect::Status(status) => Some(status_error(status, flavor).into_response(false)),
        FaultEffect::MalformedJson => {
            // A health body cut short: `{"cluster_name":"kolla_log`.
            let cut: String = cluster_name.chars().take(9).collect();
            let body = format!("{{\"cluster_name\":\"{cut}");
            Some(
                (
                    StatusCode::OK,
                    [(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static(JSON_CONTENT_TYPE),
                    )],
                    body,
                )
                    .into_response(),
            )
        }
        FaultEffect::Drop(response) => Some(response),
        // Every change the cluster API takes answers this when done (index deletion, settings).
        FaultEffect::Lost => Some(
            (
                StatusCode::OK,
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static(JSON_CONTENT_TYPE),
                )],
                r#"{"acknowledged":true}"#,
            )
                .into_response(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn statuses_map_to_realistic_bodies() {
        let body = |response: Response| async move {
            axum::body::to_bytes(response.into_body(), 1 << 20)
                .await
                .unwrap()
        };
        let rejected = apply(&FaultKind::Status { status: 429 }, Flavor::Es7, "c")
            .await
            .unwrap();
        assert_eq!(rejected.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(rejected.headers().get(header::RETRY_AFTER).is_none());
        let json: serde_json::Value = serde_json::from_slice(&body(rejected).await).unwrap();
        assert_eq!(json["error"]["type"], "es_rejected_execution_exception");
        let gateway = apply(&FaultKind::Status { status: 502 }, Flavor::Es7, "c")
            .await
            .unwrap();
        assert_eq!(gateway.headers()[header::CONTENT_TYPE], "text/html");
        let malformed = apply(&FaultKind::MalformedJson, Flavor::Es7, "kolla_logging")
            .await
            .unwrap();
        assert_eq!(body(malformed).await, r#"{"cluster_name":"kolla_log"#);
        assert!(
            apply(&FaultKind::Latency { ms: 1 }, Flavor::Es7, "c")
                .await
                .is_none()
        );
    }
}
