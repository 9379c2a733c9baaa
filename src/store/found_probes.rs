//! Probes a search found: stored by function, axis and shape, a submission whole in one
//! transaction, a probe already there kept as first found; and read back, all of them, for agents,
//! the contracts page and an export.

use super::db::sql;
use super::Store;
use slopewatch_core::complexity::Class;
use slopewatch_core::wire::{BreakKind, Contract, FoundProbe};
use time::{OffsetDateTime, UtcOffset};

/// A stored found probe, with who submitted it first and when that arrived.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredFoundProbe {
    /// The probe as first submitted (`found_at` in UTC).
    pub probe: FoundProbe,
    /// The name of the token that submitted it first.
    pub submitted_by: String,
    pub received_at: OffsetDateTime,
}

#[derive(sqlx::FromRow)]
struct FoundProbeTableRow {
    function: String,
    axis: String,
    shape: String,
    described: String,
    expected: String,
    broken: String,
    consequence: String,
    kind: String,
    class: Option<String>,
    toolchain: String,
    version: Option<String>,
    found_at: OffsetDateTime,
    submitted_by: String,
    received_at: OffsetDateTime,
}

fn unknown(what: &str, value: &str) -> sqlx::Error {
    sqlx::Error::Decode(format!("unknown found probe {what} {value:?}").into())
}

fn class(text: &str) -> Result<Class, sqlx::Error> {
    Class::parse(text).ok_or_else(|| unknown("class", text))
}

fn kind(text: &str) -> Result<BreakKind, sqlx::Error> {
    [BreakKind::Growth, BreakKind::Bound, BreakKind::Wrong]
        .into_iter()
        .find(|k| k.as_str() == text)
        .ok_or_else(|| unknown("kind", text))
}

impl FoundProbeTableRow {
    fn decode(self) -> Result<StoredFoundProbe, sqlx::Error> {
        let contract = Contract {
            expected: class(&self.expected)?,
            function: self.function.clone(),
            axis: self.axis.clone(),
            broken: self.broken,
            consequence: self.consequence,
        };
        let probe = FoundProbe {
            kind: kind(&self.kind)?,
            class: self.class.as_deref().map(class).transpose()?,
            function: self.function,
            axis: self.axis,
            shape: self.shape,
            described: self.described,
            contract,
            toolchain: self.toolchain,
            version: self.version,
            found_at: self.found_at,
        };
        Ok(StoredFoundProbe { probe, submitted_by: self.submitted_by, received_at: self.received_at })
    }
}

impl Store {
    /// Stores validated found probes, each with who sent it and when, in one statement: all or
    /// none. One whose function, axis and shape are stored already is left as it is, so it keeps
    /// its first finding. Answers how many were not there yet.
    pub async fn insert_found_probes(&self, probes: &[StoredFoundProbe]) -> Result<u64, sqlx::Error> {
        if probes.is_empty() {
            return Ok(0);
        }
        let mut tx = self.begin_writing().await?;
        let mut q = sql("INSERT INTO found_probes (function, axis, shape, described, expected, broken, consequence,
                kind, class, toolchain, version, found_at, submitted_by, received_at) ");
        q.push_values(probes, |row, s| {
            let p = &s.probe;
            row.bind(&p.function)
                .bind(&p.axis)
                .bind(&p.shape)
                .bind(&p.described)
                .bind(p.contract.expected.as_str())
                .bind(&p.contract.broken)
                .bind(&p.contract.consequence)
                .bind(p.kind.as_str())
                .bind(p.class.map(Class::as_str))
                .bind(&p.toolchain)
                .bind(p.version.as_deref())
                // Kept in UTC, so that on SQLite, where times are text, they read back alike.
                .bind(p.found_at.to_offset(UtcOffset::UTC))
                .bind(&s.submitted_by)
                .bind(s.received_at.to_offset(UtcOffset::UTC));
        });
        q.push(" ON CONFLICT (function, axis, shape) DO NOTHING");
        let new = tx.exec().execute(&q).await?;
        tx.commit().await?;
        Ok(new)
    }

    /// Every found probe, by function, axis and shape (in byte order on both backends).
    pub async fn found_probes(&self) -> Result<Vec<StoredFoundProbe>, sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        let q = sql("SELECT function, axis, shape, described, expected, broken, consequence, kind, class, toolchain,
                version, found_at, submitted_by, received_at FROM found_probes");
        let rows: Vec<FoundProbeTableRow> = conn.exec().all(&q).await?;
        let mut found = rows.into_iter().map(FoundProbeTableRow::decode).collect::<Result<Vec<_>, _>>()?;
        // Postgres orders text by its collation, SQLite by bytes: sorted here, both read alike.
        found.sort_by(|a, b| {
            let (a, b) = (&a.probe, &b.probe);
            (&a.function, &a.axis, &a.shape).cmp(&(&b.function, &b.axis, &b.shape))
        });
        Ok(found)
    }
}
