//! Recording an exposure scan an agent sent: stored with its functions once whatever the retries,
//! and told apart from a different scan sent under the same id.

use super::Intake;
use crate::store::ExposureWrite;
use sha2::{Digest, Sha256};
use slopewatch_core::exposure::ExposureSubmission;
use time::OffsetDateTime;

/// What became of a submitted scan.
#[derive(Debug, PartialEq, Eq)]
pub enum ExposureOutcome {
    /// Stored now.
    Created,
    /// Already stored with the same content; nothing was written.
    Existing,
    /// The id is taken by a different scan.
    Conflict,
}

/// Names the content of a scan, so that a retry of it is told from another scan under its id.
fn content_hash(s: &ExposureSubmission) -> String {
    let canonical = serde_json::to_vec(s).expect("a submission always serializes");
    format!("sha256:{}", hex::encode(Sha256::digest(canonical)))
}

impl Intake {
    /// Records a validated scan.
    pub async fn record_exposure(&self, s: &ExposureSubmission) -> Result<ExposureOutcome, sqlx::Error> {
        let hash = content_hash(s);
        Ok(match self.store.insert_exposure(s, &hash, OffsetDateTime::now_utc()).await? {
            ExposureWrite::Stored => ExposureOutcome::Created,
            ExposureWrite::AlreadyThere { content_hash } if content_hash == hash => ExposureOutcome::Existing,
            ExposureWrite::AlreadyThere { .. } => ExposureOutcome::Conflict,
        })
    }
}
