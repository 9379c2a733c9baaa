//! What the soak prints: a row per sample, each figure's growth over the soak, and the targets.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use uuid::Uuid;

/// A memory or latency is flat when the median of its last samples is within this factor of the
/// median of its early ones.
const FLAT: f64 = 1.5;

/// One sample period's figures.
pub struct Sample {
    /// When the sample was taken, minutes into the soak.
    pub minute: f64,
    /// Each replica's resident memory, MiB.
    pub rss: Vec<f64>,
    /// The replicas' CPU over the period, summed, in percent of one core.
    pub cpu_percent: f64,
    /// Latencies of the runs stored in the period, and of the pages read.
    pub runs: Vec<Duration>,
    pub reads: Vec<Duration>,
    pub summary_lag: f64,
    pub outbox: f64,
    pub db_mib: f64,
    /// Runs pruned by retention so far, over both replicas.
    pub pruned: f64,
    /// Webhook requests received so far.
    pub hooks: usize,
}

fn percentile(xs: &[Duration], p: f64) -> f64 {
    let mut xs = xs.to_vec();
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort();
    xs[((xs.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e3
}

impl Sample {
    pub fn header() -> String {
        format!(
            "{:>6} {:>9} {:>9} {:>6} {:>5} {:>10} {:>10} {:>5} {:>9} {:>5} {:>6} {:>7} {:>6} {:>5}",
            "min",
            "rss1 MiB",
            "rss2 MiB",
            "cpu%",
            "runs",
            "ingest p50",
            "ingest p99",
            "reads",
            "read p99",
            "lag",
            "outbox",
            "db MiB",
            "pruned",
            "hooks"
        )
    }

    pub fn row(&self) -> String {
        format!(
            "{:>6.2} {:>9.1} {:>9.1} {:>6.0} {:>5} {:>10.1} {:>10.1} {:>5} {:>9.1} {:>5} {:>6} {:>7.1} {:>6} {:>5}",
            self.minute,
            self.rss[0],
            self.rss[1],
            self.cpu_percent,
            self.runs.len(),
            percentile(&self.runs, 0.5),
            percentile(&self.runs, 0.99),
            self.reads.len(),
            percentile(&self.reads, 0.99),
            self.summary_lag,
            self.outbox,
            self.db_mib,
            self.pruned,
            self.hooks
        )
    }
}

/// Each figure over the soak, against the minute it was sampled at.
pub struct Series {
    pub minutes: Vec<f64>,
    pub figures: Vec<(&'static str, Vec<f64>)>,
}

fn median(xs: &[f64]) -> f64 {
    let mut xs: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let mid = xs.len() / 2;
    if xs.len() % 2 == 0 {
        (xs[mid - 1] + xs[mid]) / 2.0
    } else {
        xs[mid]
    }
}

/// The least-squares slope of `ys` against `xs`, over the finite points.
fn slope(xs: &[f64], ys: &[f64]) -> f64 {
    let points: Vec<(f64, f64)> = xs.iter().zip(ys).map(|(x, y)| (*x, *y)).filter(|(_, y)| y.is_finite()).collect();
    let n = points.len() as f64;
    let (mx, my) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let sxy: f64 = points.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = points.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

impl Series {
    pub fn of(samples: &[Sample]) -> Series {
        fn col(samples: &[Sample], f: impl Fn(&Sample) -> f64) -> Vec<f64> {
            samples.iter().map(f).collect()
        }
        Series {
            minutes: col(samples, |s| s.minute),
            figures: vec![
                ("rss replica 1, MiB", col(samples, |s| s.rss[0])),
                ("rss replica 2, MiB", col(samples, |s| s.rss[1])),
                ("ingest p50, ms", col(samples, |s| percentile(&s.runs, 0.5))),
                ("ingest p99, ms", col(samples, |s| percentile(&s.runs, 0.99))),
                ("read p99, ms", col(samples, |s| percentile(&s.reads, 0.99))),
                ("summary lag, runs", col(samples, |s| s.summary_lag)),
                ("outbox depth", col(samples, |s| s.outbox)),
                ("database, MiB", col(samples, |s| s.db_mib)),
            ],
        }
    }

    fn figure(&self, name: &str) -> &[f64] {
        &self.figures.iter().find(|(n, _)| *n == name).unwrap().1
    }

    /// How many samples each of the two windows compared holds: five of twenty one-minute
    /// samples, scaled for a shorter soak.
    fn window(&self) -> usize {
        ((self.minutes.len() as f64 / 4.0).round() as usize).max(1)
    }

    pub fn print_growth(&self) {
        println!("\ngrowth over the soak (least-squares slope per minute; last sample against the first):");
        println!("{:<20} {:>12} {:>10} {:>10} {:>10}", "figure", "slope/min", "first", "last", "last/first");
        for (name, ys) in &self.figures {
            let (first, last) = (ys.first().copied().unwrap_or(f64::NAN), ys.last().copied().unwrap_or(f64::NAN));
            let ratio = if first > 0.0 { format!("{:.2}", last / first) } else { "-".to_string() };
            println!("{:<20} {:>12.3} {:>10.1} {:>10.1} {:>10}", name, slope(&self.minutes, ys), first, last, ratio);
        }
    }

    /// Whether `name` stayed flat: the median of the last window within `FLAT` times the median of
    /// the early window (samples 2 to window + 1: the first is warm-up).
    fn flat(&self, name: &str) -> (bool, String) {
        let ys = self.figure(name);
        let w = self.window();
        if ys.len() < w + 2 {
            return (false, format!("{} samples: too few to compare windows of {w}", ys.len()));
        }
        let (early, late) = (median(&ys[1..1 + w]), median(&ys[ys.len() - w..]));
        let ok = late <= FLAT * early;
        (ok, format!("median of the last {w} {late:.1} vs samples 2–{} {early:.1}: ×{:.2}", w + 1, late / early))
    }
}

/// One outbox row at the end of the soak.
#[derive(sqlx::FromRow)]
pub struct Delivery {
    pub id: String,
    pub status: String,
    pub event: String,
    /// Attempts recorded for it.
    pub attempts: i64,
}

/// What the soak left behind, to judge the targets on.
pub struct Outcome {
    pub sent: usize,
    pub resent: usize,
    pub wrong_answers: usize,
    pub ingest_errors: usize,
    pub read_errors: usize,
    /// Run ids the agents saw stored (201, or 200 on a resend or retry).
    pub stored_by_clients: BTreeSet<Uuid>,
    /// Run ids of the history imported.
    pub imported: BTreeSet<Uuid>,
    /// Every run id in the database.
    pub stored: Vec<Uuid>,
    /// Imported runs a retention pass has had the time to prune, and the runs pruned.
    pub due_for_pruning: BTreeSet<Uuid>,
    pub pruned: BTreeSet<Uuid>,
    pub passes: f64,
    /// Summaries pending when the load stopped, and how long they and the outbox took to drain.
    pub lag_after: f64,
    pub drained: Option<Duration>,
    pub max_lag_allowed: f64,
    pub deliveries: Vec<Delivery>,
    /// Requests received per delivery id.
    pub received: BTreeMap<String, u32>,
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "PASS"
    } else {
        "FAIL"
    }
}

impl Outcome {
    /// Prints each target with PASS or FAIL; answers whether the ones that must hold (every run
    /// stored once, every alert delivered once) did.
    pub fn print_targets(&self, series: &Series) -> bool {
        let w = series.window();
        println!(
            "\ntargets (flat: the median of the last {w} samples within {FLAT}× the median of samples 2–{}{}):",
            w + 1,
            if series.minutes.len() == 20 {
                ""
            } else {
                ", the windows of minutes 2–6 and the last five scaled to this run"
            }
        );
        for name in ["rss replica 1, MiB", "rss replica 2, MiB", "ingest p99, ms", "read p99, ms"] {
            let (ok, how) = series.flat(name);
            println!("  {} {name} flat: {how}", verdict(ok));
        }

        let max_lag = series.figure("summary lag, runs").iter().copied().fold(0.0, f64::max);
        let lag_ok = max_lag <= self.max_lag_allowed && self.drained.is_some();
        println!(
            "  {} summary lag bounded: at most {max_lag} pending (a minute of runs is {:.0}), {} when the load stopped, {}",
            verdict(lag_ok),
            self.max_lag_allowed,
            self.lag_after,
            match self.drained {
                Some(d) => format!("summaries and outbox drained {:.1} s after", d.as_secs_f64()),
                None => "not drained within a minute after".to_string(),
            }
        );

        let stored: BTreeSet<Uuid> = self.stored.iter().copied().collect();
        let expected: BTreeSet<Uuid> = self.stored_by_clients.union(&self.imported).copied().collect();
        let missing = expected.difference(&stored).count();
        let extra = stored.difference(&expected).count();
        let duplicates = self.stored.len() - stored.len();
        let stored_ok = missing == 0 && extra == 0 && duplicates == 0 && self.wrong_answers == 0;
        println!(
            "  {} every sent run stored once: {} sent ({} resent), {} imported, {} stored; {missing} missing, {extra} \
             unexpected, {duplicates} twice, {} answers not 201 first / 200 again; {} ingest errors retried, {} read errors",
            verdict(stored_ok),
            self.sent,
            self.resent,
            self.imported.len(),
            self.stored.len(),
            self.wrong_answers,
            self.ingest_errors,
            self.read_errors
        );

        let outbox: BTreeMap<&str, &Delivery> = self.deliveries.iter().map(|d| (d.id.as_str(), d)).collect();
        let undelivered = self.deliveries.iter().filter(|d| d.status != "delivered").count();
        let never_received = self.deliveries.iter().filter(|d| !self.received.contains_key(&d.id)).count();
        let unknown = self.received.keys().filter(|id| !outbox.contains_key(id.as_str())).count();
        let twice_unretried = self
            .received
            .iter()
            .filter(|(id, n)| outbox.get(id.as_str()).is_some_and(|d| i64::from(**n) > d.attempts.max(1)))
            .count();
        let mut events: BTreeMap<&str, usize> = BTreeMap::new();
        for d in &self.deliveries {
            *events.entry(d.event.as_str()).or_default() += 1;
        }
        let delivered_ok = !self.deliveries.is_empty()
            && undelivered == 0
            && never_received == 0
            && unknown == 0
            && twice_unretried == 0;
        println!(
            "  {} every alert delivered once: {} deliveries {events:?}, {} requests received; {undelivered} not \
             delivered, {never_received} never received, {unknown} unknown ids, {twice_unretried} received more often \
             than attempted",
            verdict(delivered_ok),
            self.deliveries.len(),
            self.received.values().sum::<u32>(),
        );

        let overdue = self.due_for_pruning.difference(&self.pruned).count();
        let wrongly = self.pruned.difference(&self.imported).count();
        let retention_ok = self.passes > 0.0 && overdue == 0 && wrongly == 0;
        println!(
            "  {} retention prunes: {} passes, {} runs pruned of {} imported ({} due), {overdue} due but not pruned, \
             {wrongly} recent runs pruned",
            verdict(retention_ok),
            self.passes,
            self.pruned.len(),
            self.imported.len(),
            self.due_for_pruning.len()
        );
        stored_ok && delivered_ok
    }
}
