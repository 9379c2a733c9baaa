//! Complexity classes as stored: a JSON column on each version summary, and the pass that
//! classifies the summaries stored without one (before classes, migration 0011, or before the
//! model last changed, 0012), from the medians they already hold, so history gains classes without
//! being measured again. A run's fits are classified where they are read (`analysis::classify`),
//! so storing a run does not pay for it.
//!
//! A NULL column has not been classified yet; the text `null` could not be (fewer than three
//! sizes or a time that is not positive, which an accepted run never has).

use super::db::sql;
use super::{decode_json, Store};
use crate::analysis;
use crate::model::{MetricColumn, SizeMedian};
use slopewatch_core::complexity::{Class, Complexity, UNSURE};
use slopewatch_core::wire::Metric;

/// How many rows one transaction of the pass classifies.
const CHUNK: i64 = 500;

/// The column's text for a complexity, `null` for none.
pub(super) fn encode_complexity(c: Option<&Complexity>) -> String {
    serde_json::to_string(&c).expect("complexity serializes")
}

/// A complexity column as read: `None` when unclassified or unclassifiable.
pub(super) fn decode_complexity(text: Option<&str>) -> Result<Option<Complexity>, sqlx::Error> {
    Ok(text.map(decode_json::<Option<Complexity>>).transpose()?.flatten())
}

/// The class alone of a complexity column, for reads of many summaries that show nothing else:
/// `None` unclassified, `Some(None)` unsure. The numbers are skipped, not parsed.
pub(super) fn decode_class(text: Option<&str>) -> Result<Option<Option<Class>>, sqlx::Error> {
    #[derive(serde::Deserialize)]
    struct ClassOnly<'a> {
        #[serde(borrow)]
        class: std::borrow::Cow<'a, str>,
    }
    let Some(only) = text.map(decode_json::<Option<ClassOnly>>).transpose()?.flatten() else { return Ok(None) };
    match only.class.as_ref() {
        UNSURE => Ok(Some(None)),
        class => Class::parse(class)
            .map(|c| Some(Some(c)))
            .ok_or_else(|| sqlx::Error::Decode(format!("unknown complexity class {class:?}").into())),
    }
}

#[derive(sqlx::FromRow)]
struct UnclassifiedSummary {
    workload_id: i64,
    lineage: String,
    version: String,
    sizes: String,
    metric: MetricColumn,
}

impl Store {
    /// Classifies every version summary that has no class yet, a chunk per transaction, and
    /// returns how many; summaries written meanwhile by this server already have theirs. Several
    /// servers may run it at once: each row gets the same class whoever writes it.
    pub async fn classify_unclassified(&self) -> Result<u64, sqlx::Error> {
        let mut done = 0;
        loop {
            let mut tx = self.begin_writing().await?;
            let q = sql("SELECT workload_id, lineage, version, sizes,
                        (SELECT metric FROM workloads WHERE id = workload_id) AS metric
                 FROM version_summaries WHERE complexity IS NULL LIMIT $1")
            .bind(CHUNK);
            let rows: Vec<UnclassifiedSummary> = tx.exec().all(&q).await?;
            if rows.is_empty() {
                break;
            }
            for row in &rows {
                let sizes: Vec<SizeMedian> = decode_json(&row.sizes)?;
                let medians: Vec<(u64, f64)> = sizes.iter().map(|s| (s.size, s.median_ns)).collect();
                let metric = Metric::try_from(row.metric.clone()).map_err(|e| sqlx::Error::Decode(e.into()))?;
                let text = encode_complexity(analysis::classify(&medians, metric).as_ref());
                let q = sql("UPDATE version_summaries SET complexity = $1
                     WHERE workload_id = $2 AND lineage = $3 AND version = $4 AND complexity IS NULL")
                .bind(text)
                .bind(row.workload_id)
                .bind(row.lineage.as_str())
                .bind(row.version.as_str());
                tx.exec().execute(&q).await?;
            }
            tx.commit().await?;
            done += rows.len() as u64;
        }
        Ok(done)
    }
}
