//! The one way in for a run: fitted and stored whole here, then taken into its version's summaries
//! by a summary pass, whose decisions, like those on bisections and editors' edits, are written by
//! the files beside this one.
//!
//! Storing marks a run pending; after it commits, a pass takes it in, together with every other
//! run pending by then, one transaction for all their versions. One pass runs at a time. A run
//! stored while none is running starts one and is answered when it ends, so on an idle server the
//! answer comes with the summaries current. A run stored while a pass is under way is answered at
//! once and taken in by the next pass, which follows after a short pause for more runs to gather
//! (`GATHER`): under load, summaries trail by a fraction of a second, and each pass serves many
//! runs of a version with one summary update, so summary work grows with the number of versions,
//! not with the ingest rate. A pass that fails leaves its runs pending; the server sweeps what is
//! pending at start-up and every few seconds, so a run is taken in once even when the server dies
//! in between.

mod bisections;
mod control;
mod edits;
mod exposures;
mod lineage;
mod pass;
mod regressions;
mod upgrade;

pub use bisections::BisectionOutcome;
pub use edits::{add_regression_link, apply_regression_edit, set_regression_status, EditOutcome};
pub use exposures::ExposureOutcome;
pub use pass::SUMMARY_WINDOW;
pub use upgrade::{classify_unclassified, migrate, open_and_migrate};

use crate::analysis;
use crate::config::AlertSettings;
use crate::config::Config;
use crate::episodes::Episode;
use crate::metrics::Metrics;
use crate::model::{Medians, WorkloadFit, WorkloadSummary};
use crate::store::{Arrival, InsertOutcome, Store};
use slopewatch_core::wire::{FieldError, RunSubmission};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use time::OffsetDateTime;

/// How long passes after the first of a busy spell wait for runs to gather.
const GATHER: std::time::Duration = std::time::Duration::from_millis(200);

/// Stores runs and brings their versions' summaries and regressions up to date. Clones share
/// their turns at running passes.
#[derive(Clone, Debug)]
pub struct Intake {
    store: Store,
    settings: Arc<Settings>,
    turns: Arc<SummaryTurns>,
    /// Where the runs each pass took in are counted: the server's metrics, served at `/metrics`.
    metrics: Arc<Metrics>,
    /// Failing passes, logged once from the first failure to the next success.
    failures: Arc<Episode>,
}

/// What a summary pass needs of the server's configuration.
#[derive(Debug)]
struct Settings {
    alerts: AlertSettings,
    /// The server's public URL, for absolute links in webhooks.
    public_url: Option<String>,
    /// The control lineages, whose runs attribute a regression as it is announced.
    controls: Vec<String>,
}

impl Intake {
    /// An intake over `store` that counts what its summary passes take in in `metrics`.
    pub fn new(store: Store, config: &Config, metrics: Arc<Metrics>) -> Intake {
        let settings = Settings {
            alerts: config.alerts.clone(),
            public_url: config.public_url.clone(),
            controls: config.controls.clone(),
        };
        let failures = Arc::new(Episode::new("summary passes"));
        Intake { store, settings: Arc::new(settings), turns: Arc::default(), metrics, failures }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Fits a validated run and stores it with its fits whole, or not at all; then its version's
    /// summaries take it in, with the regressions and alert deliveries it causes (before this
    /// returns when no summary pass was under way, by the next pass when one was). `arrival` says
    /// how it came: `Arrival::now()` at ingest, as first received for a run from another store's
    /// export.
    pub async fn insert_run(&self, run: &RunSubmission, arrival: &Arrival) -> Result<InsertOutcome, sqlx::Error> {
        self.insert_fitted(run, analysis::fit_run(run), arrival).await
    }

    /// `insert_run` for a run from an export whose raw samples were pruned: it is fitted from the
    /// medians its sizes kept, `medians[i]` those of `run.workloads[i]` (`analysis::fit_pruned_run`).
    pub async fn insert_pruned_run(
        &self,
        run: &RunSubmission,
        medians: &[Medians],
        arrival: &Arrival,
    ) -> Result<InsertOutcome, sqlx::Error> {
        self.insert_fitted(run, analysis::fit_pruned_run(run, medians), arrival).await
    }

    async fn insert_fitted(
        &self,
        run: &RunSubmission,
        fits: Result<Vec<WorkloadFit>, FieldError>,
        arrival: &Arrival,
    ) -> Result<InsertOutcome, sqlx::Error> {
        let fits = match fits {
            Ok(fits) => fits,
            Err(e) => return Ok(InsertOutcome::Invalid(e)),
        };
        let outcome = self.store.insert_run(run, &fits, arrival).await?;
        if let InsertOutcome::Created(_) = outcome {
            self.take_in_summaries().await;
        }
        Ok(outcome)
    }

    /// Takes every pending run into its version's summaries and alert rules; returns how many runs
    /// were taken in (`pass::summarize_pending`).
    pub async fn summarize_pending(&self) -> Result<usize, sqlx::Error> {
        let taken = pass::summarize_pending(&self.store, &self.settings, &self.metrics, &self.failures).await;
        self.failures.note(&taken);
        taken
    }

    /// Takes in the runs left pending, by a server that stopped between storing a run and updating
    /// its version's summaries or by a pass that failed (which `summarize_pending` logs).
    pub async fn catch_up(&self) {
        if let Ok(runs @ 1..) = self.summarize_pending().await {
            tracing::info!(runs, "took pending runs into their version summaries");
        }
    }

    /// `catch_up` every few seconds until `stop` turns true.
    pub async fn sweep(self, mut stop: tokio::sync::watch::Receiver<bool>) {
        const EVERY: std::time::Duration = std::time::Duration::from_secs(10);
        loop {
            tokio::select! {
                _ = tokio::time::sleep(EVERY) => {}
                _ = stop.changed() => {}
            }
            if *stop.borrow() {
                break;
            }
            self.catch_up().await;
        }
    }

    /// Takes a run just stored into its version's summaries: at once, when no pass is under way
    /// (the caller waits for it), or by the pass that follows the one under way (the caller goes
    /// on). Passes then continue in the background until no stored run is left out.
    async fn take_in_summaries(&self) {
        if self.turns.busy.swap(true, Ordering::SeqCst) {
            return;
        }
        // The passes run in a task of their own: a caller that goes away (a client hanging up
        // cancels its request) cannot leave a pass half run and the turn taken for good.
        let (first_done, first) = tokio::sync::oneshot::channel();
        let intake = self.clone();
        self.store.spawn_writing(async move {
            let mut turn = TurnGuard(Some(intake.turns.clone()));
            intake.summary_pass().await;
            let _ = first_done.send(());
            while intake.turns.release(&intake.store) {
                // Let the runs of a busy spell gather, so a version's summary is worked out once
                // for many of its runs.
                tokio::time::sleep(GATHER).await;
                intake.summary_pass().await;
            }
            turn.0 = None;
        });
        let _ = first.await;
    }

    /// One pass over everything pending. Every run counted before it starts has committed, so the
    /// pass covers it; a failed pass is logged (once an episode) and its runs stay pending for the
    /// sweep.
    async fn summary_pass(&self) {
        let upto = self.store.runs_stored();
        let _ = self.summarize_pending().await;
        self.turns.taken_in.fetch_max(upto, Ordering::SeqCst);
    }
}

/// A workload's new summary at a version, before it is written.
struct PassSummary {
    pub workload_id: i64,
    /// What the workload's series measures: a count's summary has a cost track of its own.
    pub metric: slopewatch_core::wire::Metric,
    pub summary: WorkloadSummary,
    pub host_ids: Vec<i64>,
    pub first_seen: OffsetDateTime,
    pub last_run_at: OffsetDateTime,
}

/// Who runs summary passes for the runs this process stores.
#[derive(Debug, Default)]
struct SummaryTurns {
    /// How many of the runs this process stored (`Store::runs_stored`) finished passes covered.
    taken_in: AtomicU64,
    /// Whether a pass (or a chain of them) is under way.
    busy: AtomicBool,
}

impl SummaryTurns {
    fn behind(&self, store: &Store) -> bool {
        store.runs_stored() > self.taken_in.load(Ordering::SeqCst)
    }

    /// Gives up running passes, unless runs came in that no pass covers and nobody else will
    /// start one: then returns true, still holding the turn.
    fn release(&self, store: &Store) -> bool {
        loop {
            if self.behind(store) {
                return true;
            }
            self.busy.store(false, Ordering::SeqCst);
            // A run that committed before the store above saw `busy` and left its run to us.
            if !self.behind(store) || self.busy.swap(true, Ordering::SeqCst) {
                return false;
            }
        }
    }
}

/// Gives the turn back if a pass panics, so the next run starts a pass again.
struct TurnGuard(Option<Arc<SummaryTurns>>);

impl Drop for TurnGuard {
    fn drop(&mut self) {
        if let Some(turns) = self.0.take() {
            turns.busy.store(false, Ordering::SeqCst);
        }
    }
}
