//! Retention: raw samples older than the configured number of days are removed at start-up and
//! every period (`[retention] every_secs`, an hour by default), in short batches; runs, fits,
//! per-size medians and version summaries stay. Servers sharing a database (replicas on one
//! Postgres) claim each period's pass, so one of them runs it.

use crate::episodes::Episode;
use crate::metrics::Metrics;
use crate::store::{PruneReport, Store};
use std::sync::Arc;
use std::time::Duration;
use time::OffsetDateTime;
use tokio::sync::watch;

/// How often a server looks whether the pass is due: the server that ran the last one may be gone.
const CHECK_EVERY: Duration = Duration::from_secs(300);
/// The name of the pass's claims (`Store::claim_task`).
const TASK: &str = "retention";
/// The pause between two batches, so writers waiting for the lock (SQLite has one) get it.
const PAUSE: Duration = Duration::from_millis(20);

/// Removes the raw samples of every run received more than `days` days ago.
pub async fn prune_older_than(store: &Store, days: u32) -> Result<PruneReport, sqlx::Error> {
    let now = OffsetDateTime::now_utc();
    prune_received_before(store, cutoff(now, days), now).await
}

/// When a run must have been received to lose its samples, `days` days before `now`.
pub fn cutoff(now: OffsetDateTime, days: u32) -> OffsetDateTime {
    now - time::Duration::days(days.into())
}

/// Removes the raw samples of every run received before `received_before`, batch by batch.
pub async fn prune_received_before(
    store: &Store,
    received_before: OffsetDateTime,
    now: OffsetDateTime,
) -> Result<PruneReport, sqlx::Error> {
    let mut total = PruneReport::default();
    loop {
        let batch = store.prune_samples_batch(received_before, now).await?;
        if batch.runs == 0 {
            return Ok(total);
        }
        total += batch;
        tokio::time::sleep(PAUSE).await;
    }
}

/// Prunes at once and then every `every` until `stop` turns true: at start-up and every few
/// minutes the server claims the pass, which succeeds when no server sharing the database ran it in
/// the last `every`. Passes run are counted in `metrics`. A pass cut short (the server stopped or
/// killed) leaves the rest to the next period's: each batch is whole or rolled back.
pub async fn run(store: Store, days: u32, every: Duration, metrics: Arc<Metrics>, mut stop: watch::Receiver<bool>) {
    tracing::info!(samples_days = days, "retention started: raw samples are kept for {days} days");
    let holder = crate::instance::name();
    let period = time::Duration::try_from(every).unwrap_or(time::Duration::HOUR);
    // A failing claim or pass (a full disk) is logged once, until one succeeds.
    let failures = Episode::new("retention passes");
    while !*stop.borrow() {
        let now = OffsetDateTime::now_utc();
        let claimed = store.claim_task(TASK, &holder, now, now - period).await;
        store.note_write(&claimed);
        match claimed {
            Ok(true) => tokio::select! {
                pruned = prune_older_than(&store, days) => {
                    store.note_write(&pruned);
                    failures.note(&pruned);
                    if let Ok(r) = pruned {
                        metrics.record_retention_pass(r.runs);
                        tracing::info!(runs = r.runs, samples = r.samples, "retention pass: pruned raw samples older than {days} days");
                    }
                },
                // An unfinished batch is rolled back: nothing is half pruned.
                _ = stop.changed() => break,
            },
            Ok(false) => {
                failures.succeeded();
                tracing::debug!("retention pass skipped: a server sharing the database ran it within the period")
            }
            Err(e) => failures.failed(&e),
        }
        tokio::select! {
            _ = tokio::time::sleep(every.min(CHECK_EVERY)) => {}
            _ = stop.changed() => {}
        }
    }
}
