//! `slopewatch export`: the whole history as JSON lines, read page by page.

use super::records::{
    BisectionRecordOut, End, ExposureRecordOut, FoundProbeRecord, Header, Kind, LinkRecord, Median, NoteRecord,
    PrunedRun, PrunedRunRecord, PrunedWorkload, RunRecordOut, StatusRecord, TokenRecord, FORMAT,
};
use crate::store::{EditChange, RegressionEdit, RunCursor, ScanCursor, Store, StoredRun};
use anyhow::Context;
use serde::Serialize;
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::wire::{Measurement, RunSubmission, WorkloadRun};
use std::collections::VecDeque;
use time::OffsetDateTime;
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// What an export wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// Runs written, pruned ones included.
    pub runs: u64,
    /// Runs written with medians only, their raw samples having been pruned.
    pub pruned_runs: u64,
    pub regression_edits: u64,
    pub tokens: u64,
    pub bisections: u64,
    /// Artifacts' exposure scans written.
    pub exposures: u64,
    /// Probes a search found, written.
    pub found_probes: u64,
}

/// Writes every token, run, editor's change, bisection, exposure scan and found probe in `store`
/// to `out`; `progress` hears after each page of runs. Runs stored while it reads may or may not be included: exporting and importing
/// again later carries them over, since an import skips what it already has.
pub async fn export<W: AsyncWrite + Unpin>(
    store: &Store,
    out: &mut W,
    mut progress: impl FnMut(&ExportSummary),
) -> anyhow::Result<ExportSummary> {
    let mut summary = ExportSummary::default();
    let header = Header {
        kind: Kind::SlopewatchExport,
        format: FORMAT,
        exported_at: OffsetDateTime::now_utc(),
        slopewatch: crate::instance::VERSION.to_string(),
        backend: store.backend_name().to_string(),
    };
    write_line(out, &header).await?;

    for t in store.stored_tokens().await? {
        let record = TokenRecord {
            kind: Kind::Token,
            name: t.name,
            scope: t.scope,
            prefix: t.prefix,
            hash: t.hash,
            created_at: t.created_at,
            last_used_at: t.last_used_at,
        };
        write_line(out, &record).await?;
        summary.tokens += 1;
    }

    // An edit goes after the run that opened its regression, even were a clock to disagree.
    let openings = store.regression_openings().await?;
    let mut edits: Vec<(OffsetDateTime, RegressionEdit)> = store
        .regression_edits()
        .await?
        .into_iter()
        .map(|e| {
            let opened = openings.get(&e.regression).copied().unwrap_or(e.at);
            (e.at.max(opened), e)
        })
        .collect();
    edits.sort_by_key(|(replay_at, _)| *replay_at);
    let mut edits = VecDeque::from(edits);

    let mut cursor = None;
    loop {
        let page = store.runs_page(cursor).await?;
        let Some(last) = page.last() else { break };
        cursor = Some(RunCursor { received_at: last.received_at, run_id: last.run_id });
        for run in page {
            // At equal times the run goes first: an edit needs what the run opens.
            while edits.front().is_some_and(|(replay_at, _)| *replay_at < run.received_at) {
                let (_, edit) = edits.pop_front().expect("checked above");
                write_edit(out, edit).await?;
                summary.regression_edits += 1;
            }
            let pruned = write_run(out, run).await?;
            summary.runs += 1;
            summary.pruned_runs += u64::from(pruned);
        }
        progress(&summary);
    }
    for (_, edit) in edits {
        write_edit(out, edit).await?;
        summary.regression_edits += 1;
    }
    for stored in store.stored_bisections().await? {
        let record = BisectionRecordOut {
            kind: Kind::Bisection,
            lineage: &stored.lineage,
            version: &stored.version,
            received_at: stored.bisection.received_at,
            content_hash: &stored.content_hash,
            bisection: &stored.bisection.submission(),
        };
        write_line(out, &record).await?;
        summary.bisections += 1;
    }
    let mut cursor = None;
    loop {
        let page = store.scans_page(cursor).await?;
        let Some(last) = page.last() else { break };
        cursor = Some(ScanCursor { received_at: last.received_at, scan_id: last.scan.scan_id });
        for stored in &page {
            let record = ExposureRecordOut {
                kind: Kind::Exposure,
                received_at: stored.received_at,
                content_hash: &stored.content_hash,
                scan: &stored.scan,
            };
            write_line(out, &record).await?;
            summary.exposures += 1;
        }
    }
    for stored in store.found_probes().await? {
        let record = FoundProbeRecord {
            kind: Kind::FoundProbe,
            received_at: stored.received_at,
            submitted_by: stored.submitted_by,
            probe: stored.probe,
        };
        write_line(out, &record).await?;
        summary.found_probes += 1;
    }
    let end = End {
        kind: Kind::End,
        runs: summary.runs,
        pruned_runs: summary.pruned_runs,
        regression_edits: summary.regression_edits,
        tokens: summary.tokens,
        bisections: summary.bisections,
        exposures: summary.exposures,
        found_probes: summary.found_probes,
    };
    write_line(out, &end).await?;
    out.flush().await.context("cannot write the export")?;
    Ok(summary)
}

async fn write_line<W: AsyncWrite + Unpin>(out: &mut W, record: &impl Serialize) -> anyhow::Result<()> {
    let mut line = serde_json::to_vec(record).context("cannot encode a record")?;
    line.push(b'\n');
    out.write_all(&line).await.context("cannot write the export")
}

async fn write_edit<W: AsyncWrite + Unpin>(out: &mut W, edit: RegressionEdit) -> anyhow::Result<()> {
    let RegressionEdit { regression: LineageVersion { lineage, version }, at, actor, change } = edit;
    match change {
        EditChange::Status(status) => {
            let kind = Kind::RegressionStatus;
            write_line(out, &StatusRecord { kind, lineage, version, at, actor, status }).await
        }
        EditChange::Note { body } => {
            let kind = Kind::RegressionNote;
            write_line(out, &NoteRecord { kind, lineage, version, at, author: actor, body }).await
        }
        EditChange::Link { title, url } => {
            let kind = Kind::RegressionLink;
            write_line(out, &LinkRecord { kind, lineage, version, at, author: actor, title, url }).await
        }
    }
}

/// Writes a run as submitted, or as medians when its raw samples were pruned; `true` for the latter.
async fn write_run<W: AsyncWrite + Unpin>(out: &mut W, run: StoredRun) -> anyhow::Result<bool> {
    let StoredRun {
        run_id,
        content_hash,
        agent_version,
        started_at,
        received_at,
        sample_count,
        samples_pruned_at,
        host,
        toolchain,
        metric,
        workloads,
    } = run;
    let (measure, counter) = (metric.measure(), metric.counter());
    if let Some(samples_pruned_at) = samples_pruned_at {
        let workloads = workloads
            .into_iter()
            .map(|w| {
                let medians = w
                    .measurements
                    .iter()
                    .map(|m| Median { size: m.size as u64, median_ns: m.median_ns, samples: m.samples as u32 })
                    .collect();
                PrunedWorkload {
                    profile: w.profile,
                    metadata: w.metadata,
                    failure: w.failure,
                    contract: w.contract,
                    not_provided: w.not_provided,
                    size_of_interest: w.size_of_interest,
                    ..PrunedWorkload::new(w.name, w.size_unit, w.source_hash, medians)
                }
                .with_facts(w.facts)
            })
            .collect();
        let record = PrunedRunRecord {
            kind: Kind::PrunedRun,
            received_at,
            content_hash,
            samples_pruned_at,
            sample_count: sample_count as u32,
            run: PrunedRun { run_id, agent_version, started_at, host, toolchain, workloads, measure, counter },
        };
        write_line(out, &record).await?;
        return Ok(true);
    }
    let workloads = workloads
        .into_iter()
        .map(|w| {
            let measurements = w
                .measurements
                .into_iter()
                .map(|m| Measurement {
                    size: m.size as u64,
                    // Counted for every repetition or for none, as the agent sends them.
                    instructions: m.instructions,
                    samples_ns: m.samples_ns,
                })
                .collect();
            WorkloadRun {
                profile: w.profile,
                metadata: w.metadata,
                failure: w.failure,
                contract: w.contract,
                not_provided: w.not_provided,
                size_of_interest: w.size_of_interest,
                ..WorkloadRun::new(w.name, w.size_unit, w.source_hash, measurements)
            }
            .with_facts(w.facts)
        })
        .collect();
    let submission = RunSubmission { run_id, agent_version, started_at, host, toolchain, workloads, measure, counter };
    let record = RunRecordOut { kind: Kind::Run, received_at, content_hash: &content_hash, run: &submission };
    write_line(out, &record).await?;
    Ok(false)
}
