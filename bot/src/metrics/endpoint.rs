//! The HTTP side of the metrics: `GET /metrics` for Prometheus and `GET /healthz` for a load
//! balancer, a watchdog or a person with curl.

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

/// `200` with the instance's role (active, or standby and who is active) while the store can
/// be read; `503` with the reason otherwise, or once the instance stepped down.
async fn health(axum::extract::State(metrics): axum::extract::State<Metrics>) -> Response {
    match tokio::task::spawn_blocking(move || metrics.health()).await {
        Ok(Ok(role)) => (StatusCode::OK, format!("ok: {role}\n")).into_response(),
        Ok(Err(why)) => {
            (StatusCode::SERVICE_UNAVAILABLE, format!("failing: {why}\n")).into_response()
        }
        Err(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "failing: the health check did not finish\n",
        )
            .into_response(),
    }
}
