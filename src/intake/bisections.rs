//! Recording a bisection an agent sent on its regression: checked against the regression, stored
//! with its steps once whatever the retries (and once whatever its id, when the regression holds
//! one of the same content), and announced by `regression.bisected` in the same transaction.

use super::Intake;
use crate::model::Bisection;
use crate::store::BisectionWrite;
use crate::webhooks::{self, bisected::BisectedEvent};
use sha2::{Digest, Sha256};
use slopewatch_core::bisection::BisectionSubmission;
use slopewatch_core::wire::FieldError;
use time::OffsetDateTime;
use uuid::Uuid;

/// What became of a submitted bisection.
#[derive(Debug)]
pub enum BisectionOutcome {
    /// Stored now, and announced.
    Created,
    /// Already stored with the same content on the same regression, under this id or another
    /// (the one stored, given here); nothing was written.
    Existing(Uuid),
    /// The id is taken by a different record.
    Conflict,
    /// There is no such regression.
    NoRegression,
    /// The record does not fit the regression.
    Invalid(FieldError),
}

/// Names the content of a record, so that a retry of it is told from another record under its id.
fn content_hash(b: &BisectionSubmission) -> String {
    let canonical = serde_json::to_vec(b).expect("a submission always serializes");
    format!("sha256:{}", hex::encode(Sha256::digest(canonical)))
}

impl Intake {
    /// Records a validated bisection on regression `regression_id`.
    pub async fn record_bisection(
        &self,
        regression_id: i64,
        b: &BisectionSubmission,
    ) -> Result<BisectionOutcome, sqlx::Error> {
        let Some(regression) = self.store.regression_row(regression_id).await? else {
            return Ok(BisectionOutcome::NoRegression);
        };
        if b.lineage != regression.lineage {
            let reason = format!("is {:?}, but regression #{regression_id} is of {:?}", b.lineage, regression.lineage);
            return Ok(BisectionOutcome::Invalid(FieldError { field: "lineage".into(), reason }));
        }
        let now = OffsetDateTime::now_utc();
        let hash = content_hash(b);
        let event = BisectedEvent::new(
            &Bisection::submitted(regression_id, b, now),
            &regression.version,
            regression.previous_version.as_deref(),
            self.settings.public_url.as_deref(),
        );
        let deliveries = webhooks::deliveries(std::slice::from_ref(&event), &self.settings.alerts.webhooks);
        Ok(match self.store.insert_bisection(regression_id, b, &hash, &b.content_key(), now, &deliveries).await? {
            BisectionWrite::Stored => BisectionOutcome::Created,
            BisectionWrite::AlreadyThere { regression_id: stored, content_hash } => {
                if stored == regression_id && content_hash == hash {
                    BisectionOutcome::Existing(b.bisection_id)
                } else {
                    BisectionOutcome::Conflict
                }
            }
            BisectionWrite::SameContent { bisection_id } => BisectionOutcome::Existing(bisection_id),
        })
    }
}
