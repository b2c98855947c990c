//! The HTTP side of the metrics: `GET /metrics` for Prometheus and `GET /healthz` for a load
//! balancer, a watchdog or a person with curl.

use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::net::TcpListener;

use super::Metrics;

/// The content type of the OpenMetrics text format, which Prometheus negotiates.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Serves `/metrics` and `/healthz` on `listener` until the task is aborted.
pub async fn serve(listener: TcpListener, metrics: Metrics) -> std::io::Result<()> {
    let router = Router::new()
        .route("/metrics", get(scrape))
        .route("/healthz", get(health))
        .with_state(metrics);
    axum::serve(listener, router).await
}

async fn scrape(axum::extract::State(metrics): axum::extract::State<Metrics>) -> Response {
    // Reading the store is blocking I/O, kept off the async threads.
    match tokio::task::spawn_blocking(move || metrics.encode()).await {
        Ok(Ok(text)) => ([(header::CONTENT_TYPE, OPENMETRICS)], text).into_response(),
        Ok(Err(_)) | Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the metrics could not be encoded; the bot's log has the details\n",
        )
            .into_response(),
    }
}

/// How long `/healthz` waits for the store: a load balancer or a watchdog asks with a short
/// timeout of its own, and a store that hangs is itself the answer.
const HEALTH_WITHIN: Duration = Duration::from_secs(1);

/// `200` with the instance's role (active, or standby and who is active) while the store can
/// be read; `503` with the reason otherwise, once the instance stepped down, or when the store
/// does not answer within [`HEALTH_WITHIN`].
async fn health(axum::extract::State(metrics): axum::extract::State<Metrics>) -> Response {
    checked(HEALTH_WITHIN, move || metrics.health()).await
}

/// The answer of `check`, which reads the store (blocking I/O, kept off the async threads),
/// or a `503` once it has taken longer than `within`.
async fn checked<F>(within: Duration, check: F) -> Response
where
    F: FnOnce() -> Result<String, String> + Send + 'static,
{
    let failing = |why: &str| (StatusCode::SERVICE_UNAVAILABLE, format!("failing: {why}\n"));
    match tokio::time::timeout(within, tokio::task::spawn_blocking(check)).await {
        Ok(Ok(Ok(role))) => (StatusCode::OK, format!("ok: {role}\n")).into_response(),
        Ok(Ok(Err(why))) => failing(&why).into_response(),
        Ok(Err(_)) => failing("the health check did not finish").into_response(),
        Err(_) => failing(&format!("the store did not answer within {within:?}")).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn said(response: Response) -> (StatusCode, String) {
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .unwrap_or_default();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    /// The clock is moved past the bound, not waited for; the check itself stays blocked.
    #[tokio::test(start_paused = true)]
    async fn a_store_that_hangs_is_a_prompt_503() {
        let (release, hung) = std::sync::mpsc::channel::<()>();
        let answer = tokio::spawn(checked(HEALTH_WITHIN, move || {
            let _ = hung.recv();
            Ok("active".to_owned())
        }));
        tokio::task::yield_now().await;
        tokio::time::advance(HEALTH_WITHIN).await;
        assert_eq!(
            said(answer.await.unwrap()).await,
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "failing: the store did not answer within 1s\n".to_owned()
            )
        );
        let _ = release.send(());
    }

    #[tokio::test]
    async fn the_role_or_the_reason_is_the_answer() {
        let ok = checked(HEALTH_WITHIN, || {
            Ok("standby (no active instance yet)".into())
        })
        .await;
        assert_eq!(
            said(ok).await,
            (
                StatusCode::OK,
                "ok: standby (no active instance yet)\n".to_owned()
            )
        );
        let failing = checked(HEALTH_WITHIN, || Err("the store cannot be read: x".into())).await;
        assert_eq!(
            said(failing).await,
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "failing: the store cannot be read: x\n".to_owned()
            )
        );
    }
}
