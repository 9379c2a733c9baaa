//! Retention: raw samples older than the configured number of days are removed at start-up and
//! every hour, in short batches; runs, fits, per-size medians and version summaries stay.

use crate::store::{PruneReport, Store};
use std::time::Duration;
use time::OffsetDateTime;
use tokio::sync::watch;

/// How often the server prunes.
pub const PRUNE_EVERY: Duration = Duration::from_secs(3600);
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

/// Prunes at once and then every `every` until `stop` turns true.
pub async fn run(store: Store, days: u32, every: Duration, mut stop: watch::Receiver<bool>) {
    tracing::info!(samples_days = days, "retention started: raw samples are kept for {days} days");
    while !*stop.borrow() {
        tokio::select! {
            pruned = prune_older_than(&store, days) => match pruned {
                Ok(r) if r.runs > 0 => {
                    tracing::info!(runs = r.runs, samples = r.samples, "pruned raw samples older than {days} days")
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "cannot prune raw samples; will try again"),
            },
            // An unfinished batch is rolled back: nothing is half pruned.
            _ = stop.changed() => break,
        }
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stop.changed() => {}
        }
    }
}
