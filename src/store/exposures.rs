//! Exposure scans of built artifacts: each stored whole with the functions it reaches, in one
//! transaction, or not at all, with the latest scan of each artifact at each toolchain version kept
//! up to date beside them; and read back for a version's page and for a regression, one row per
//! artifact, never every scan of it.

use super::db::{sql, Exec};
use super::{decode_json, Store, Tx};
use crate::model::ScannedArtifact;
use slopewatch_core::exposure::{Breakage, ExposedFunction, ExposureSubmission, Linkage};
use std::collections::{BTreeSet, HashMap};
use time::{OffsetDateTime, UtcOffset};
use uuid::Uuid;

/// What storing a scan did.
#[derive(Debug, PartialEq, Eq)]
pub enum ExposureWrite {
    /// Stored now, with its functions.
    Stored,
    /// Its id was already stored, with this content hash; nothing was written.
    AlreadyThere { content_hash: String },
}

/// A stored scan, whole, as an export carries it: the submission as the store keeps it (`reaches`
/// by name, `exposed` worst first, `scanned_at` in UTC), with its digest and receipt time.
#[derive(Debug, Clone)]
pub struct StoredScan {
    pub scan: ExposureSubmission,
    /// The digest it was submitted with: the order of `exposed` and the offset of `scanned_at`
    /// are not stored, so it cannot be recomputed from the stored scan.
    pub content_hash: String,
    pub received_at: OffsetDateTime,
}

/// Where the previous page of scans ended: its last scan's receipt time and id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanCursor {
    pub received_at: OffsetDateTime,
    pub scan_id: Uuid,
}

/// Scans read per page, at most (each reaches at most 512 functions).
const SCANS_PER_PAGE: i64 = 256;

/// One function the latest scan of an artifact reaches, as a regression names the artifact.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredReach {
    pub artifact: String,
    pub digest: String,
    /// The toolchain version the scan was judged by.
    pub version: String,
    pub scanned_at: OffsetDateTime,
    pub function: String,
    /// How the scan's toolchain broke the function, where it did; `None` where it merely reached it.
    pub breach: Option<Breakage>,
    /// Known where the function was exposed: a scan lists call sites and callers of those only.
    pub call_sites: Option<u32>,
    pub referenced: bool,
    pub callers: Vec<String>,
    pub accepted: Option<String>,
}

#[derive(sqlx::FromRow)]
struct ScanRecord {
    scan_id: Uuid,
    artifact: String,
    digest: String,
    libc: String,
    linkage: String,
    agent_version: String,
    scanned_at: OffsetDateTime,
    reached: i64,
}

#[derive(sqlx::FromRow)]
struct ScanHead {
    scan_id: Uuid,
    content_hash: String,
    artifact: String,
    digest: String,
    lineage: String,
    version: String,
    libc: String,
    linkage: String,
    agent_version: String,
    scanned_at: OffsetDateTime,
    received_at: OffsetDateTime,
}

#[derive(sqlx::FromRow)]
struct ReachedFunction {
    scan_id: Uuid,
    function: String,
}

#[derive(sqlx::FromRow)]
struct ExposedRecord {
    scan_id: Uuid,
    function: String,
    breach: String,
    verdict: String,
    call_sites: i64,
    referenced: bool,
    callers: String,
    accepted: Option<String>,
}

#[derive(sqlx::FromRow)]
struct ReachRecord {
    artifact: String,
    digest: String,
    version: String,
    scanned_at: OffsetDateTime,
    function: String,
    breach: Option<String>,
    call_sites: Option<i64>,
    referenced: Option<bool>,
    callers: Option<String>,
    accepted: Option<String>,
}

fn unknown(what: &str, value: &str) -> sqlx::Error {
    sqlx::Error::Decode(format!("unknown exposure {what} {value:?}").into())
}

fn breach(text: &str) -> Result<Breakage, sqlx::Error> {
    Breakage::parse(text).ok_or_else(|| unknown("breach", text))
}

fn call_sites(n: i64) -> Result<u32, sqlx::Error> {
    u32::try_from(n).map_err(|_| unknown("call site count", &n.to_string()))
}

/// Whether `(scanned_at, scan_id)` of the row aliased `a` is later than that of `b`: the order the
/// latest scan is chosen by.
fn later(a: &str, b: &str) -> String {
    format!("({a}.scanned_at > {b}.scanned_at OR ({a}.scanned_at = {b}.scanned_at AND {a}.scan_id > {b}.scan_id))")
}

impl Store {
    /// Stores a validated scan with a row per function it reaches, unless its id is already
    /// stored: then nothing is written, and the stored scan's content hash is answered for the
    /// caller to compare. The scan becomes its artifact's latest at its version if it was scanned
    /// after the one there, each scan's time capped at its arrival (`received_at`).
    pub async fn insert_exposure(
        &self,
        s: &ExposureSubmission,
        content_hash: &str,
        received_at: OffsetDateTime,
    ) -> Result<ExposureWrite, sqlx::Error> {
        // Kept in UTC, so that on SQLite, where times are text, they order as times.
        let scanned_at = s.scanned_at.to_offset(UtcOffset::UTC);
        let mut tx = self.begin_writing().await?;
        let q =
            sql("INSERT INTO exposure_scans (scan_id, content_hash, artifact, digest, lineage, version, libc, linkage,
                agent_version, scanned_at, received_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
             ON CONFLICT (scan_id) DO NOTHING")
            .bind(s.scan_id)
            .bind(content_hash)
            .bind(&s.artifact)
            .bind(&s.digest)
            .bind(&s.lineage)
            .bind(&s.version)
            .bind(&s.libc)
            .bind(s.linkage.as_str())
            .bind(&s.agent_version)
            .bind(scanned_at)
            .bind(received_at.to_offset(UtcOffset::UTC));
        if tx.exec().execute(&q).await? == 0 {
            let q = sql("SELECT content_hash FROM exposure_scans WHERE scan_id = $1").bind(s.scan_id);
            let content_hash: String = tx.exec().value(&q).await?.ok_or(sqlx::Error::RowNotFound)?;
            return Ok(ExposureWrite::AlreadyThere { content_hash });
        }
        // `reaches` holds every exposed function (validation sees to it); a name listed twice is
        // one row.
        let reached: BTreeSet<&str> = s.reaches.iter().map(String::as_str).collect();
        let exposed: HashMap<&str, &ExposedFunction> = s.exposed.iter().map(|f| (f.function.as_str(), f)).collect();
        if !reached.is_empty() {
            let mut q =
                sql("INSERT INTO exposure_functions (scan_id, function, breach, verdict, call_sites, referenced,
                    callers, accepted) ");
            q.push_values(reached, |row, function| {
                let f = exposed.get(function);
                row.bind(s.scan_id)
                    .bind(function)
                    .bind(f.map(|f| f.breach.as_str()))
                    .bind(f.map(|f| f.verdict.as_str()))
                    .bind(f.map(|f| i64::from(f.call_sites)))
                    .bind(f.map(|f| f.referenced))
                    .bind(f.map(|f| serde_json::to_string(&f.callers).expect("names serialize")))
                    .bind(f.and_then(|f| f.accepted.as_deref()));
            });
            tx.exec().execute(&q).await?;
        }
        // The time that decides the latest scan is its own, capped at its arrival: a clock ahead
        // cannot pin a scan as latest, and a scan spooled while the server was down keeps its
        // earlier time.
        let decides = scanned_at.min(received_at.to_offset(UtcOffset::UTC));
        let mut q = sql("INSERT INTO exposure_latest (lineage, version, artifact, scan_id, scanned_at)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (lineage, version, artifact)
             DO UPDATE SET scan_id = excluded.scan_id, scanned_at = excluded.scanned_at WHERE ")
        .bind(&s.lineage)
        .bind(&s.version)
        .bind(&s.artifact)
        .bind(s.scan_id)
        .bind(decides);
        q.push(later("excluded", "exposure_latest"));
        tx.exec().execute(&q).await?;
        tx.commit().await?;
        Ok(ExposureWrite::Stored)
    }

    /// The next scans after `after` (from the first when `None`) by receipt time, whole, read in
    /// one snapshot; empty when there are no more.
    pub async fn scans_page(&self, after: Option<ScanCursor>) -> Result<Vec<StoredScan>, sqlx::Error> {
        let mut tx = self.pool.begin_snapshot().await?;
        let mut q =
            sql("SELECT scan_id, content_hash, artifact, digest, lineage, version, libc, linkage, agent_version,
                scanned_at, received_at FROM exposure_scans");
        if let Some(c) = after {
            q.push(" WHERE received_at > ").push_bind(c.received_at);
            q.push(" OR (received_at = ").push_bind(c.received_at);
            q.push(" AND scan_id > ").push_bind(c.scan_id).push(")");
        }
        q.push(" ORDER BY received_at, scan_id LIMIT ").push_bind(SCANS_PER_PAGE);
        let heads: Vec<ScanHead> = tx.exec().all(&q).await?;
        if heads.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = sql("SELECT scan_id, function FROM exposure_functions WHERE scan_id IN ");
        q.push_tuple(heads.iter().map(|h| h.scan_id)).push(" ORDER BY scan_id, function");
        let mut reaches: HashMap<Uuid, Vec<String>> = HashMap::new();
        for r in tx.exec().all::<ReachedFunction>(&q).await? {
            reaches.entry(r.scan_id).or_default().push(r.function);
        }
        let mut exposed = exposed_of(tx.exec(), heads.iter().map(|h| h.scan_id)).await?;
        tx.commit().await?;
        heads
            .into_iter()
            .map(|h| {
                let mut exposed = exposed.remove(&h.scan_id).unwrap_or_default();
                exposed.sort_by(|a, b| (a.breach, &a.function).cmp(&(b.breach, &b.function)));
                let scan = ExposureSubmission {
                    linkage: Linkage::parse(&h.linkage).ok_or_else(|| unknown("linkage", &h.linkage))?,
                    reaches: reaches.remove(&h.scan_id).unwrap_or_default(),
                    exposed,
                    scan_id: h.scan_id,
                    agent_version: h.agent_version,
                    scanned_at: h.scanned_at,
                    artifact: h.artifact,
                    digest: h.digest,
                    lineage: h.lineage,
                    version: h.version,
                    libc: h.libc,
                };
                Ok(StoredScan { scan, content_hash: h.content_hash, received_at: h.received_at })
            })
            .collect()
    }

    /// The latest scan of each artifact at `version` of `lineage`, at most `limit`: those with an
    /// exposure not accepted first, then by name. Each carries its exposures; the order within
    /// them is the caller's to choose.
    pub async fn version_exposures(
        &self,
        lineage: &str,
        version: &str,
        limit: i64,
    ) -> Result<Vec<ScannedArtifact>, sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        let q = sql("SELECT s.scan_id, s.artifact, s.digest, s.libc, s.linkage, s.agent_version, s.scanned_at,
                (SELECT COUNT(*) FROM exposure_functions c WHERE c.scan_id = s.scan_id) AS reached
             FROM exposure_latest l JOIN exposure_scans s ON s.scan_id = l.scan_id
             WHERE l.lineage = $1 AND l.version = $2
             ORDER BY (SELECT COUNT(*) FROM exposure_functions e
                       WHERE e.scan_id = s.scan_id AND e.breach IS NOT NULL AND e.accepted IS NULL) DESC, s.artifact
             LIMIT $3")
        .bind(lineage)
        .bind(version)
        .bind(limit);
        let scans: Vec<ScanRecord> = conn.exec().all(&q).await?;
        let mut exposed = exposed_of(conn.exec(), scans.iter().map(|s| s.scan_id)).await?;
        scans
            .into_iter()
            .map(|r| {
                Ok(ScannedArtifact {
                    linkage: Linkage::parse(&r.linkage).ok_or_else(|| unknown("linkage", &r.linkage))?,
                    exposed: exposed.remove(&r.scan_id).unwrap_or_default(),
                    scan_id: r.scan_id,
                    artifact: r.artifact,
                    digest: r.digest,
                    libc: r.libc,
                    agent_version: r.agent_version,
                    scanned_at: r.scanned_at,
                    reached: r.reached,
                })
            })
            .collect()
    }

    /// Of the latest scan of each artifact of `lineage`, at whichever of its versions the artifact
    /// was scanned last, the functions among `functions` it reaches, by artifact and function; at
    /// most `limit` rows.
    pub async fn artifacts_reaching(
        &self,
        lineage: &str,
        functions: &[&str],
        limit: i64,
    ) -> Result<Vec<StoredReach>, sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        artifacts_reaching(conn.exec(), lineage, functions, limit).await
    }
}

impl Tx<'_> {
    /// `Store::artifacts_reaching`, within the transaction (a regression it is opening, whose
    /// webhook names them).
    pub async fn artifacts_reaching(
        &mut self,
        lineage: &str,
        functions: &[&str],
        limit: i64,
    ) -> Result<Vec<StoredReach>, sqlx::Error> {
        artifacts_reaching(self.exec(), lineage, functions, limit).await
    }
}

async fn artifacts_reaching(
    exec: Exec<'_>,
    lineage: &str,
    functions: &[&str],
    limit: i64,
) -> Result<Vec<StoredReach>, sqlx::Error> {
    if functions.is_empty() {
        return Ok(Vec::new());
    }
    let mut q = sql("SELECT s.artifact, s.digest, s.version, s.scanned_at, f.function, f.breach, f.call_sites,
            f.referenced, f.callers, f.accepted
         FROM exposure_latest l JOIN exposure_scans s ON s.scan_id = l.scan_id
         JOIN exposure_functions f ON f.scan_id = l.scan_id
         WHERE l.lineage = ");
    q.push_bind(lineage).push(" AND f.function IN ").push_tuple(functions.iter().copied());
    q.push(
        " AND NOT EXISTS (SELECT 1 FROM exposure_latest n WHERE n.lineage = l.lineage AND n.artifact = l.artifact AND ",
    );
    q.push(later("n", "l")).push(") ORDER BY s.artifact, f.function LIMIT ").push_bind(limit);
    let rows: Vec<ReachRecord> = exec.all(&q).await?;
    rows.into_iter()
        .map(|r| {
            Ok(StoredReach {
                breach: r.breach.as_deref().map(breach).transpose()?,
                call_sites: r.call_sites.map(call_sites).transpose()?,
                referenced: r.referenced.unwrap_or(false),
                callers: r.callers.as_deref().map(decode_json).transpose()?.unwrap_or_default(),
                artifact: r.artifact,
                digest: r.digest,
                version: r.version,
                scanned_at: r.scanned_at,
                function: r.function,
                accepted: r.accepted,
            })
        })
        .collect()
}

/// The exposed functions of each of `scans`, in no particular order.
async fn exposed_of(
    exec: Exec<'_>,
    scans: impl IntoIterator<Item = Uuid>,
) -> Result<HashMap<Uuid, Vec<ExposedFunction>>, sqlx::Error> {
    let scans: Vec<Uuid> = scans.into_iter().collect();
    let mut out: HashMap<Uuid, Vec<ExposedFunction>> = HashMap::new();
    if scans.is_empty() {
        return Ok(out);
    }
    let mut q = sql("SELECT scan_id, function, breach, verdict, call_sites, referenced, callers, accepted
         FROM exposure_functions WHERE breach IS NOT NULL AND scan_id IN ");
    q.push_tuple(scans);
    for r in exec.all::<ExposedRecord>(&q).await? {
        out.entry(r.scan_id).or_default().push(ExposedFunction {
            breach: breach(&r.breach)?,
            call_sites: call_sites(r.call_sites)?,
            callers: decode_json(&r.callers)?,
            function: r.function,
            verdict: r.verdict,
            referenced: r.referenced,
            accepted: r.accepted,
        });
    }
    Ok(out)
}
