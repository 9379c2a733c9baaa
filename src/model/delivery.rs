//! The webhook outbox as it is stored and shown: deliveries, their attempts, and what became of
//! an attempt.

use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// A row of the outbox.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct DeliveryRow {
    pub id: Uuid,
    pub regression_id: i64,
    pub event: String,
    pub target: String,
    pub status: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub next_attempt_at: OffsetDateTime,
    pub attempts: i32,
    #[serde(with = "time::serde::rfc3339::option")]
    pub delivered_at: Option<OffsetDateTime>,
    pub last_error: Option<String>,
    /// When a person last resent it (a refused or failed delivery), and who.
    #[serde(with = "time::serde::rfc3339::option")]
    pub resent_at: Option<OffsetDateTime>,
    pub resent_by: Option<String>,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct DeliveryAttempt {
    pub delivery_id: Uuid,
    pub attempt: i32,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub http_status: Option<i32>,
    pub latency_ms: f64,
    pub error: Option<String>,
    /// The first line of the body of an answer other than 2xx, bounded.
    pub answer: Option<String>,
}

/// A delivery with its attempts, oldest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeliveryDetail {
    pub delivery: DeliveryRow,
    pub attempts: Vec<DeliveryAttempt>,
}

/// What became of a delivery attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AttemptOutcome {
    Delivered,
    RetryAt(OffsetDateTime),
    GaveUp,
    /// The target said no often enough in a row: not retried until a person resends it.
    Refused,
}
