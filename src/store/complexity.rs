//! Complexity classes as stored: a JSON column on each fit and each version summary, and the pass
//! that classifies the rows stored before there were classes (migration 0011), from the medians
//! they already hold, so history gains classes without being measured again.
//!
//! A NULL column has not been classified yet; the text `null` could not be (fewer than three
//! sizes or a time that is not positive, which an accepted run never has).

use super::db::sql;
use super::{decode_json, Store};
use crate::analysis;
use crate::model::SizeMedian;
use slopewatch_core::complexity::{Class, Complexity, UNSURE};
use uuid::Uuid;

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
struct UnclassifiedFit {
    run_id: Uuid,
    workload_id: i64,
    medians: String,
}

#[derive(sqlx::FromRow)]
struct UnclassifiedSummary {
    workload_id: i64,
    lineage: String,
    version: String,
    sizes: String,
}

/// How many rows a pass classified.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Classified {
    pub fits: u64,
    pub summaries: u64,
}

impl Store {
    /// Classifies every fit and version summary that has no class yet, a chunk per transaction;
    /// rows written meanwhile by this server already have theirs. Several servers may run it at
    /// once: each row gets the same class whoever writes it.
    pub async fn classify_unclassified(&self) -> Result<Classified, sqlx::Error> {
        let mut done = Classified::default();
        loop {
            let mut tx = self.begin_writing().await?;
            let q = sql("SELECT run_id, workload_id, medians FROM fits WHERE complexity IS NULL LIMIT $1").bind(CHUNK);
            let rows: Vec<UnclassifiedFit> = tx.exec().all(&q).await?;
            if rows.is_empty() {
                break;
            }
            for row in &rows {
                let medians: Vec<(u64, f64)> = decode_json(&row.medians)?;
                let text = encode_complexity(analysis::classify(&medians).as_ref());
                let q = sql(
                    "UPDATE fits SET complexity = $1 WHERE run_id = $2 AND workload_id = $3 AND complexity IS NULL",
                )
                .bind(text)
                .bind(row.run_id)
                .bind(row.workload_id);
                tx.exec().execute(&q).await?;
            }
            tx.commit().await?;
            done.fits += rows.len() as u64;
        }
        loop {
            let mut tx = self.begin_writing().await?;
            let q = sql(
                "SELECT workload_id, lineage, version, sizes FROM version_summaries WHERE complexity IS NULL LIMIT $1",
            )
            .bind(CHUNK);
            let rows: Vec<UnclassifiedSummary> = tx.exec().all(&q).await?;
            if rows.is_empty() {
                break;
            }
            for row in &rows {
                let sizes: Vec<SizeMedian> = decode_json(&row.sizes)?;
                let medians: Vec<(u64, f64)> = sizes.iter().map(|s| (s.size, s.median_ns)).collect();
                let text = encode_complexity(analysis::classify(&medians).as_ref());
                let q = sql("UPDATE version_summaries SET complexity = $1
                     WHERE workload_id = $2 AND lineage = $3 AND version = $4 AND complexity IS NULL")
                .bind(text)
                .bind(row.workload_id)
                .bind(row.lineage.as_str())
                .bind(row.version.as_str());
                tx.exec().execute(&q).await?;
            }
            tx.commit().await?;
            done.summaries += rows.len() as u64;
        }
        Ok(done)
    }
}
