//! The search itself: for one function on one toolchain, each axis its contract bounds climbed
//! from the simplest shape toward the shape whose growth exceeds the contract most, within a
//! budget; a break found is reduced to its simplest shape that still breaks.
//!
//! A shape is measured as a probe is, by the sweep (`measure::measure`): counted instructions
//! where they can be had (no noise, one repetition a size), wall time otherwise. Its score is its
//! growth at the two largest sizes measured less the growth its contract allows, so that a
//! function that changes algorithm past a work bound (glibc's `strstr` after so many comparisons)
//! is judged by what it does there. A read past a bound or a wrong result ends the climb.

use crate::builds::toolchain::DetectedToolchain;
use crate::builds::workloads;
use crate::measure::judged::Judged;
use crate::measure::process::Exe;
use crate::measure::{self, side_by_side, Budget, Watch};
use crate::search::space::{axes, Shape};
use slopewatch_core::complexity::Class;
use slopewatch_core::verdict::{Decision, Limits};
use slopewatch_core::wire::{BreakKind, FailureKind, Metric, WorkloadRun};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// How far past the contract's growth a shape's top growth must be to count as a break: half an
/// order, as the gate's default slope limit (1.5) is half an order past linear.
pub const BREAK_MARGIN: f64 = 0.5;
/// The least a step must gain for the climb to take it.
const STEP: f64 = 0.05;
/// What a reduction may give up of a break's growth for a simpler shape.
const REDUCE_SLACK: f64 = 0.25;

/// What measuring one shape showed.
#[derive(Debug, Clone)]
pub enum Showed {
    /// Its growth at the top, less the contract's, and the class named (a growth break when
    /// `over`: judged over the contract and over by more than [`BREAK_MARGIN`] at the top).
    Grows { excess: f64, class: Option<Class>, over: bool, unsure: bool },
    /// It read past its bound: the crash's message.
    Bound(String),
    /// It returned a wrong result: what was expected and got.
    Wrong(String),
    /// The libc lacks the function.
    NotProvided,
    /// It could not be measured (set-up failed, timed out, crashed otherwise): why.
    Failed(String),
}

impl Showed {
    /// How far over its contract it is, for the climb: a bound or wrong result beats any growth.
    pub fn score(&self) -> f64 {
        match self {
            Showed::Grows { excess, .. } => *excess,
            Showed::Bound(_) | Showed::Wrong(_) => 100.0,
            Showed::NotProvided | Showed::Failed(_) => f64::NEG_INFINITY,
        }
    }

    /// The kind of break it is, if it is one.
    pub fn kind(&self) -> Option<BreakKind> {
        match self {
            Showed::Grows { over: true, .. } => Some(BreakKind::Growth),
            Showed::Bound(_) => Some(BreakKind::Bound),
            Showed::Wrong(_) => Some(BreakKind::Wrong),
            _ => None,
        }
    }
}

/// A shape measured.
#[derive(Debug, Clone)]
pub struct Evaluated {
    pub shape: Shape,
    pub outcome: Showed,
    /// Its growth between the two largest sizes measured.
    pub top: Option<f64>,
    /// The sizes measured, smallest and largest.
    pub sizes: Option<(u64, u64)>,
}

/// What searching one function's axis found.
#[derive(Debug, Clone)]
pub struct AxisResult {
    pub axis: String,
    /// The break found, reduced, if any.
    pub found: Option<Evaluated>,
    /// The shape that looked over its contract but was not confirmed, if no break was found.
    pub doubtful: Option<Evaluated>,
    pub evaluated: usize,
    /// The base shape said the libc lacks the function.
    pub not_provided: bool,
}

/// What searching one function found.
#[derive(Debug, Clone)]
pub struct FunctionResult {
    pub function: String,
    pub axes: Vec<AxisResult>,
    pub not_provided: bool,
    pub elapsed: Duration,
}

/// The shapes binary built with one toolchain, and how to measure with it.
pub struct Searcher<'a> {
    pub tc: &'a DetectedToolchain,
    pub binary: &'a Path,
    pub metric: Metric,
    pub jobs: usize,
    pub watch: &'a (dyn Watch + Sync),
}

impl Searcher<'_> {
    /// Measures `shape` within `limit`.
    pub fn evaluate(&self, shape: &Shape, limit: Duration) -> Evaluated {
        let axis = shape.axis();
        let w = workloads::found(shape.name(), shape.contract(), axis.start, axis.max);
        let budget = Budget {
            reps: if self.metric.is_exact() { 1 } else { 5 },
            per_size: Duration::from_millis(500),
            total: limit.max(Duration::from_secs(2)),
            // The sweep rises from a sixty-fourth of the axis's largest size to it (unless the
            // growth is steep enough to stop it first), so that a shape is judged where a work
            // bound has switched the algorithm.
            start: Some(axis.max / 16),
            max: None,
        };
        let limits = Limits::default();
        let m = measure::measure(Exe::of(self.binary, self.tc), &w, &budget, &limits, self.metric, self.watch);
        judge(shape, &m.run, self.metric, &limits)
    }

    /// Each of `shapes` measured, up to `jobs` at once.
    fn evaluate_all(&self, shapes: &[Shape], limit: Duration) -> Vec<Evaluated> {
        side_by_side::each(shapes, self.jobs, |s| self.evaluate(s, limit))
    }

    /// Searches every axis of `function` within `budget`.
    pub fn function(&self, function: &str, budget: Duration) -> FunctionResult {
        let began = Instant::now();
        let axes = axes(function);
        let mut results = Vec::new();
        for (i, axis) in axes.iter().enumerate() {
            let left = budget.saturating_sub(began.elapsed());
            let share = left / (axes.len() - i) as u32;
            let r = self.axis(function, axis.name, share);
            let missing = r.not_provided;
            results.push(r);
            if missing {
                return FunctionResult {
                    function: function.to_string(),
                    axes: results,
                    not_provided: true,
                    elapsed: began.elapsed(),
                };
            }
        }
        FunctionResult { function: function.to_string(), axes: results, not_provided: false, elapsed: began.elapsed() }
    }

    /// Climbs one axis within `budget`: the base shape, then the best of its neighbours while one
    /// gains, then the break found reduced.
    pub fn axis(&self, function: &str, axis: &str, budget: Duration) -> AxisResult {
        let began = Instant::now();
        let left = || budget.saturating_sub(began.elapsed());
        let mut seen: BTreeMap<Shape, Evaluated> = BTreeMap::new();
        let base = Shape::base(function, axis);
        let first = self.evaluate(&base, left());
        let not_provided = matches!(first.outcome, Showed::NotProvided);
        seen.insert(base, first.clone());
        let mut best = first;
        while !not_provided && best.outcome.kind().is_none_or(|k| k == BreakKind::Growth) {
            let next: Vec<Shape> = best.shape.neighbours().into_iter().filter(|s| !seen.contains_key(s)).collect();
            if next.is_empty() || left().is_zero() {
                break;
            }
            // In rounds of `jobs`, so the budget is looked at between them.
            let mut stepped = false;
            for round in next.chunks(self.jobs.max(1)) {
                if left().is_zero() {
                    break;
                }
                for e in self.evaluate_all(round, left()) {
                    seen.insert(e.shape.clone(), e.clone());
                    if e.outcome.score() > best.outcome.score() + STEP {
                        best = e;
                        stepped = true;
                    }
                }
                if best.outcome.kind().is_some_and(|k| k != BreakKind::Growth) {
                    break;
                }
            }
            if !stepped {
                break;
            }
        }
        let found = best.outcome.kind().map(|_| self.reduce(best.clone(), &mut seen, &left));
        let doubtful = match (&found, &best.outcome) {
            (None, Showed::Grows { excess, unsure: true, .. }) if *excess > BREAK_MARGIN => Some(best.clone()),
            _ => None,
        };
        AxisResult { axis: axis.to_string(), found, doubtful, evaluated: seen.len(), not_provided }
    }

    /// The simplest shape that still breaks as `found` does: each parameter returned to its
    /// simplest value while the break holds (a growth break within [`REDUCE_SLACK`] of its own).
    fn reduce(
        &self,
        mut found: Evaluated,
        seen: &mut BTreeMap<Shape, Evaluated>,
        left: &dyn Fn() -> Duration,
    ) -> Evaluated {
        let holds = |e: &Evaluated, than: &Evaluated| {
            e.outcome.kind() == than.outcome.kind()
                && (than.outcome.kind() != Some(BreakKind::Growth)
                    || e.outcome.score() >= than.outcome.score() - REDUCE_SLACK)
        };
        'simpler: loop {
            for s in found.shape.simpler() {
                if left().is_zero() {
                    break 'simpler;
                }
                let e = match seen.get(&s) {
                    Some(e) => e.clone(),
                    None => {
                        let e = self.evaluate(&s, left());
                        seen.insert(s, e.clone());
                        e
                    }
                };
                if holds(&e, &found) {
                    found = e;
                    continue 'simpler;
                }
            }
            break;
        }
        found
    }
}

/// What a shape's run shows against its contract.
pub fn judge(shape: &Shape, run: &WorkloadRun, metric: Metric, limits: &Limits) -> Evaluated {
    let mut sizes: Vec<(u64, f64)> = run.measurements.iter().map(|m| (m.size, metric.median(m))).collect();
    sizes.sort_by_key(|(s, _)| *s);
    let top = match sizes.as_slice() {
        [.., (s1, t1), (s2, t2)] if *t1 > 0.0 && *t2 > 0.0 && s2 > s1 => {
            Some((t2 / t1).ln() / (*s2 as f64 / *s1 as f64).ln())
        }
        _ => None,
    };
    let range = sizes.first().zip(sizes.last()).map(|(a, b)| (a.0, b.0));
    let outcome = if run.not_provided {
        Showed::NotProvided
    } else if let Some(f) = &run.failure {
        let detail = f.detail.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
        match f.kind {
            FailureKind::Crashed if f.detail.contains("read past its bound") => Showed::Bound(detail),
            FailureKind::WrongResult => Showed::Wrong(detail),
            _ => Showed::Failed(format!("{}: {detail}", f.kind.label())),
        }
    } else {
        let j = Judged::new("search", metric, run, limits);
        let allowed = exponent(shape.axis().expected);
        let excess = top.map_or(f64::NEG_INFINITY, |t| t - allowed);
        let class = j.class();
        match j.decision {
            Decision::Over(b) if b.contract.is_some() => {
                Showed::Grows { excess, class, over: excess > BREAK_MARGIN, unsure: excess <= BREAK_MARGIN }
            }
            Decision::Unsure(_) => Showed::Grows { excess, class, over: false, unsure: true },
            _ => Showed::Grows { excess, class, over: false, unsure: false },
        }
    };
    Evaluated { shape: shape.clone(), outcome, top, sizes: range }
}

/// The growth exponent a class allows: 0 for O(1), 1 for O(n) and O(n log n)'s first order, …
pub fn exponent(class: Class) -> f64 {
    match class {
        Class::Constant | Class::Log => 0.0,
        Class::Linear | Class::NLogN => 1.0,
        Class::Quadratic => 2.0,
        Class::Cubic => 3.0,
    }
}
