//! `slopewatch import`: reads an export line by line and stores each run through the same
//! validation and the same `insert_run` as ingest, one transaction per run.

use super::pruned::pruned_run;
use super::records::{
    BisectionRecordIn, End, Envelope, ExposureRecordIn, FoundProbeRecord, Header, Kind, LinkRecord, NoteRecord,
    PrunedRunRecord, RunRecordIn, StatusRecord, TokenRecord, FORMAT,
};
use crate::config::Config;
use crate::intake::{self, EditOutcome, Intake};
use crate::store::{
    Arrival, BisectionWrite, EditChange, ExposureWrite, InsertOutcome, PrunedSamples, RegressionEdit, Scope, Store,
    StoredFoundProbe, StoredToken,
};
use crate::views::regression::edits;
use anyhow::Context;
use serde::de::DeserializeOwned;
use slopewatch_core::bisection::BisectionSubmission;
use slopewatch_core::exposure::ExposureSubmission;
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::wire::{FieldError, RunSubmission, MAX_NAME_CHARS};
use std::sync::Arc;
use time::{OffsetDateTime, UtcOffset};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Rejections kept with their reasons; past this many, only counted.
const REJECTIONS_KEPT: usize = 100;

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Lines read.
    pub lines: u64,
    /// Runs stored now, pruned ones included.
    pub runs_imported: u64,
    /// Of those, runs stored with medians only, their raw samples having been pruned before export.
    pub pruned_runs_imported: u64,
    /// Runs already stored with the same content.
    pub runs_skipped: u64,
    pub edits_applied: u64,
    /// Editors' changes already there.
    pub edits_skipped: u64,
    /// Bisections recorded now, and those already there.
    pub bisections_imported: u64,
    pub bisections_skipped: u64,
    /// Artifacts' exposure scans stored now, and those already there.
    pub exposures_imported: u64,
    pub exposures_skipped: u64,
    /// Probes a search found, stored now, and those already there (which keep their first finding).
    pub found_probes_imported: u64,
    pub found_probes_skipped: u64,
    pub tokens_added: u64,
    /// Tokens whose name or hash this store already has; the store's own are kept.
    pub tokens_skipped: u64,
    /// The export's tokens left out, as an import without `with_tokens` leaves them.
    pub tokens_left_out: u64,
    /// Lines not imported, with why: the first `REJECTIONS_KEPT`.
    pub rejections: Vec<Rejection>,
    pub rejected: u64,
    /// Whether the file ended with its closing line, and that line's counts matched.
    pub complete: bool,
}

/// A line that was not imported, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub line: u64,
    pub reason: String,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

/// Reads an export from `input` into `store`, alert rules from `config`; `progress` hears after
/// each line.
///
/// Each run goes through the same intake as at ingest: its summary pass evaluates regressions
/// and records them with their timelines, but no webhook delivery is written: the store the
/// history comes from has already announced them (or chose not to), and moving a database should
/// not page anyone about old news. Editors' changes are replayed at their place in history, as their editors.
///
/// A line that cannot be imported is reported and skipped; the rest goes on. Errors end the
/// import only when the input cannot be read, is not an export, or the database fails; what was
/// stored by then stays stored, and importing the file again resumes where it stopped.
pub async fn import<R: AsyncBufRead + Unpin>(
    store: &Store,
    config: &Config,
    with_tokens: bool,
    input: &mut R,
    mut progress: impl FnMut(&ImportSummary),
) -> anyhow::Result<ImportSummary> {
    let mut config = config.clone();
    config.alerts.webhooks.clear();
    // Nothing serves an import's metrics: what its summary passes count goes with it.
    let intake = Intake::new(store.clone(), &config, Arc::default());
    let mut summary = ImportSummary::default();
    let mut seen = Seen::default();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let read = input.read_until(b'\n', &mut buf).await.context("cannot read the export")?;
        if read == 0 {
            break;
        }
        summary.lines += 1;
        let n = summary.lines;
        let line = buf.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let kind = serde_json::from_slice::<Envelope>(line).map(|e| e.kind);
        if !seen.header {
            let header = kind.and_then(|_| serde_json::from_slice::<Header>(line));
            match header {
                Ok(h) if h.kind == Kind::SlopewatchExport => {
                    anyhow::ensure!(
                        h.format <= FORMAT,
                        "line {n}: the export is in format {}, newer than this slopewatch reads ({FORMAT}); \
                         import it with slopewatch {} or later",
                        h.format,
                        h.slopewatch
                    );
                    seen.header = true;
                    continue;
                }
                other => anyhow::bail!(
                    "line {n}: not a slopewatch export: the first line must be its header \
                     ({{\"kind\":\"slopewatch_export\",\"format\":{FORMAT},…}}){}",
                    other.err().map(|e| format!("; {}", json_error(&e))).unwrap_or_default()
                ),
            }
        }
        if !seen.end && !matches!(kind, Ok(Kind::End)) {
            seen.records += 1;
        }
        let outcome = match kind {
            Err(e) => Err(json_error(&e)),
            Ok(_) if seen.end => Err("comes after the export's closing line".to_string()),
            Ok(kind) => apply(&intake, kind, line, with_tokens, &mut summary, &mut seen)
                .await
                .with_context(|| format!("line {n}"))?,
        };
        if let Err(reason) = outcome {
            summary.rejected += 1;
            if summary.rejections.len() < REJECTIONS_KEPT {
                summary.rejections.push(Rejection { line: n, reason });
            }
        }
        progress(&summary);
    }
    anyhow::ensure!(seen.header, "the input is empty: no slopewatch export to import");
    summary.complete = seen.end && seen.counts_match;
    Ok(summary)
}

/// What the lines read so far have shown.
#[derive(Default)]
struct Seen {
    header: bool,
    /// The closing line was read.
    end: bool,
    /// Its counts matched the lines before it.
    counts_match: bool,
    /// Lines between the header and the closing line, read or not.
    records: u64,
}

/// Imports one record (a token only `with_tokens`): `Ok(Err(reason))` rejects the line, `Err`
/// ends the import.
async fn apply(
    intake: &Intake,
    kind: Kind,
    line: &[u8],
    with_tokens: bool,
    summary: &mut ImportSummary,
    seen: &mut Seen,
) -> anyhow::Result<Result<(), String>> {
    match kind {
        Kind::SlopewatchExport => Ok(Err("a second header: files cannot be concatenated".into())),
        Kind::Run => {
            let record: RunRecordIn = match serde_json::from_slice(line) {
                Ok(r) => r,
                Err(e) => return Ok(Err(json_error(&e))),
            };
            let run = match RunSubmission::from_json(record.run.get().as_bytes()) {
                Ok(run) => run,
                Err(e) => return Ok(Err(format!("invalid run: {}", at_field("run", e)))),
            };
            let arrival = match arrival(&record.content_hash, record.received_at, None) {
                Ok(a) => a,
                Err(reason) => return Ok(Err(reason)),
            };
            let outcome = intake.insert_run(&run, &arrival).await?;
            Ok(count_run(&run, outcome, summary).map(drop))
        }
        Kind::PrunedRun => {
            let record: PrunedRunRecord = match parse(line) {
                Ok(r) => r,
                Err(reason) => return Ok(Err(reason)),
            };
            let (run, medians) = match pruned_run(&record) {
                Ok(parts) => parts,
                Err(e) => return Ok(Err(format!("invalid run: {}", at_field("run", e)))),
            };
            let pruned = PrunedSamples { at: utc(record.samples_pruned_at), count: record.sample_count as i32 };
            let arrival = match arrival(&record.content_hash, record.received_at, Some(pruned)) {
                Ok(a) => a,
                Err(reason) => return Ok(Err(reason)),
            };
            let outcome = intake.insert_pruned_run(&run, &medians, &arrival).await?;
            Ok(count_run(&run, outcome, summary).map(|created| summary.pruned_runs_imported += u64::from(created)))
        }
        Kind::RegressionStatus | Kind::RegressionNote | Kind::RegressionLink => {
            let edit = match edit(kind, line) {
                Ok(edit) => edit,
                Err(reason) => return Ok(Err(reason)),
            };
            Ok(match intake::apply_regression_edit(intake.store(), &edit).await? {
                EditOutcome::Applied => {
                    summary.edits_applied += 1;
                    Ok(())
                }
                EditOutcome::AlreadyThere => {
                    summary.edits_skipped += 1;
                    Ok(())
                }
                EditOutcome::NoRegression => Err(format!(
                    "no regression of {} {} here to apply this to: its runs were not imported, or this \
                     store's alert rules did not open it",
                    edit.regression.lineage, edit.regression.version
                )),
            })
        }
        Kind::Bisection => {
            let record: BisectionRecordIn = match serde_json::from_slice(line) {
                Ok(r) => r,
                Err(e) => return Ok(Err(json_error(&e))),
            };
            let b = match BisectionSubmission::from_json(record.bisection.get().as_bytes()) {
                Ok(b) => b,
                Err(e) => return Ok(Err(format!("invalid bisection: {}", at_field("bisection", e)))),
            };
            let store = intake.store();
            let Some(id) = store.regression_at(&record.lineage, &record.version).await? else {
                return Ok(Err(format!(
                    "no regression of {} {} here to record this bisection on",
                    record.lineage, record.version
                )));
            };
            let received_at = utc(record.received_at);
            // As for runs, no webhook: the store the history comes from announced it.
            let key = b.content_key();
            Ok(match store.insert_bisection(id, &b, &record.content_hash, &key, received_at, &[]).await? {
                BisectionWrite::Stored => {
                    summary.bisections_imported += 1;
                    Ok(())
                }
                BisectionWrite::AlreadyThere { regression_id, content_hash }
                    if regression_id == id && content_hash == record.content_hash =>
                {
                    summary.bisections_skipped += 1;
                    Ok(())
                }
                BisectionWrite::AlreadyThere { .. } => {
                    Err(format!("bisection {} is already stored with different content", b.bisection_id))
                }
                // The same search, stored under another id: the same bisection.
                BisectionWrite::SameContent { .. } => {
                    summary.bisections_skipped += 1;
                    Ok(())
                }
            })
        }
        Kind::Exposure => {
            let record: ExposureRecordIn = match serde_json::from_slice(line) {
                Ok(r) => r,
                Err(e) => return Ok(Err(json_error(&e))),
            };
            let scan = match ExposureSubmission::from_json(record.scan.get().as_bytes()) {
                Ok(s) => s,
                Err(e) => return Ok(Err(format!("invalid scan: {}", at_field("scan", e)))),
            };
            if let Err(reason) = check_digest(&record.content_hash) {
                return Ok(Err(reason));
            }
            // Dated ahead of when it was received, it would hide every later scan of its artifact.
            if let Err(e) = scan.check_scanned_at(utc(record.received_at)) {
                return Ok(Err(format!("invalid scan: {}", at_field("scan", e))));
            }
            let store = intake.store();
            Ok(match store.insert_exposure(&scan, &record.content_hash, utc(record.received_at)).await? {
                ExposureWrite::Stored => {
                    summary.exposures_imported += 1;
                    Ok(())
                }
                ExposureWrite::AlreadyThere { content_hash } if content_hash == record.content_hash => {
                    summary.exposures_skipped += 1;
                    Ok(())
                }
                ExposureWrite::AlreadyThere { .. } => {
                    Err(format!("scan {} is already stored here with different content", scan.scan_id))
                }
            })
        }
        Kind::FoundProbe => {
            let found = match found_probe(line) {
                Ok(found) => found,
                Err(reason) => return Ok(Err(reason)),
            };
            let new = intake.store().insert_found_probes(&[found]).await?;
            summary.found_probes_imported += new;
            summary.found_probes_skipped += 1 - new;
            Ok(Ok(()))
        }
        Kind::Token => {
            let token = match token(line) {
                Ok(t) => t,
                Err(reason) => return Ok(Err(reason)),
            };
            if !with_tokens {
                summary.tokens_left_out += 1;
            } else if intake.store().add_stored_token(&token).await? {
                summary.tokens_added += 1;
            } else {
                summary.tokens_skipped += 1;
            }
            Ok(Ok(()))
        }
        Kind::End => {
            let end: End = match parse(line) {
                Ok(e) => e,
                Err(reason) => return Ok(Err(reason)),
            };
            let declared =
                end.runs + end.regression_edits + end.tokens + end.bisections + end.exposures + end.found_probes;
            seen.end = true;
            seen.counts_match = declared == seen.records;
            Ok(if seen.counts_match {
                Ok(())
            } else {
                Err(format!(
                    "the export says it holds {declared} lines of runs, regression edits, tokens, bisections, \
                     scans and found probes, but {} came before this closing line: lines are missing",
                    seen.records
                ))
            })
        }
    }
}

/// Counts a run the intake stored as at ingest; `Ok(true)` when it was not there yet.
fn count_run(run: &RunSubmission, outcome: InsertOutcome, summary: &mut ImportSummary) -> Result<bool, String> {
    match outcome {
        InsertOutcome::Created(_) => {
            summary.runs_imported += 1;
            Ok(true)
        }
        InsertOutcome::Existing(_) => {
            summary.runs_skipped += 1;
            Ok(false)
        }
        InsertOutcome::Conflict => Err(format!("run {} is already stored here with different content", run.run_id)),
        InsertOutcome::Invalid(e) => Err(format!("run {}: {}", run.run_id, at_field("run", e))),
    }
}

/// How a carried-over run arrives: as of its original receipt, with its original digest.
fn arrival(content_hash: &str, received_at: OffsetDateTime, pruned: Option<PrunedSamples>) -> Result<Arrival, String> {
    check_digest(content_hash)?;
    Ok(Arrival { received_at: utc(received_at), content_hash: Some(content_hash.to_string()), pruned })
}

/// A digest a run or scan was submitted with: `sha256:` and 64 lowercase hex digits.
fn check_digest(content_hash: &str) -> Result<(), String> {
    let digest = content_hash.strip_prefix("sha256:").unwrap_or_default();
    if digest.len() != 64 || !digest.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(format!("content_hash {content_hash:?} is not a sha256:<64 hex digits> digest"));
    }
    Ok(())
}

/// An editor's change from its line, checked by the rules its page applies.
fn edit(kind: Kind, line: &[u8]) -> Result<RegressionEdit, String> {
    let (lineage, version, at, actor, change) = match kind {
        Kind::RegressionStatus => {
            let r: StatusRecord = parse(line)?;
            (r.lineage, r.version, r.at, r.actor, EditChange::Status(r.status))
        }
        Kind::RegressionNote => {
            let r: NoteRecord = parse(line)?;
            let body = edits::note(&r.body)?.to_string();
            (r.lineage, r.version, r.at, r.author, EditChange::Note { body })
        }
        _ => {
            let r: LinkRecord = parse(line)?;
            let (title, url) = edits::link(&r.title, &r.url)?;
            let change = EditChange::Link { title: title.to_string(), url: url.to_string() };
            (r.lineage, r.version, r.at, r.author, change)
        }
    };
    check_token_name(&actor)?;
    Ok(RegressionEdit { regression: LineageVersion::new(lineage, version), at: utc(at), actor, change })
}

/// A found probe from its line, checked as ingest checks it.
fn found_probe(line: &[u8]) -> Result<StoredFoundProbe, String> {
    let r: FoundProbeRecord = parse(line)?;
    r.probe.validate("probe").map_err(|e| format!("invalid found probe: {}: {}", e.field, e.reason))?;
    check_token_name(&r.submitted_by)?;
    Ok(StoredFoundProbe { probe: r.probe, submitted_by: r.submitted_by, received_at: utc(r.received_at) })
}

fn token(line: &[u8]) -> Result<StoredToken, String> {
    let t: TokenRecord = parse(line)?;
    check_token_name(&t.name)?;
    if Scope::parse(&t.scope).is_none() {
        return Err(format!("unknown token scope {:?}", t.scope));
    }
    let hex = |s: &str, len: usize| s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit());
    if !hex(&t.hash, 64) || !hex(&t.prefix, 12) {
        return Err(format!("token {:?} has no valid hash and prefix", t.name));
    }
    Ok(StoredToken {
        name: t.name,
        scope: t.scope,
        prefix: t.prefix,
        hash: t.hash,
        created_at: utc(t.created_at),
        last_used_at: t.last_used_at.map(utc),
    })
}

/// Token names, which are also editors' names: 1 to 128 printable characters.
fn check_token_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() || name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(format!("{name:?} is not a token name: 1 to {MAX_NAME_CHARS} printable characters"));
    }
    Ok(())
}

fn parse<T: DeserializeOwned>(line: &[u8]) -> Result<T, String> {
    serde_json::from_slice(line).map_err(|e| json_error(&e))
}

/// A JSON error without serde's "line 1": the position is a column of the file's line.
fn json_error(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let message = message.split(" at line ").next().unwrap_or(&message);
    if e.is_eof() {
        format!("the line is cut short ({message}, at column {})", e.column())
    } else if e.is_syntax() {
        format!("not valid JSON ({message}, at column {})", e.column())
    } else {
        format!("{message} (at column {})", e.column())
    }
}

/// `field: reason`, with the field path inside the record's `prefix` object.
fn at_field(prefix: &str, e: FieldError) -> String {
    if e.field.is_empty() {
        format!("{prefix}: {}", e.reason)
    } else {
        format!("{prefix}.{}: {}", e.field, e.reason)
    }
}

fn utc(t: OffsetDateTime) -> OffsetDateTime {
    t.to_offset(UtcOffset::UTC)
}
