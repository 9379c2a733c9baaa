//! What a run measured: wall time, CPU time or instructions counted, and which counter counted.
//!
//! A run has one measure. Its series, summaries, fits and regressions are kept apart from every
//! other measure's, and from the other counter's: perf's and Valgrind's counts are close, but not
//! the same counter.

use super::{err, FieldError, Measurement};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What each repetition of a run reports, and what its slopes are fitted from.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// Wall time of the measured loop (`samples_ns`): what users wait for, and what a busy host
    /// moves.
    #[default]
    Wall,
    /// CPU time of the measured thread (`samples_ns`), or a command workload's child CPU time:
    /// immune to being descheduled, not to a shared cache.
    Cpu,
    /// Instructions retired in the measured loop (`instructions`), counted by `counter`; the same
    /// on every run of one binary, blind to cache misses.
    Instructions,
}

/// Which counter counted an `instructions` run.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Counter {
    /// The CPU's own counter, read through `perf_event_open`.
    Perf,
    /// Valgrind's count of the instructions it executed (callgrind's `Ir`).
    Valgrind,
}

/// A run's measure with its counter: what keeps series apart. Stored and shown as
/// [`Metric::as_str`].
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Metric {
    #[default]
    #[serde(rename = "wall")]
    Wall,
    #[serde(rename = "cpu")]
    Cpu,
    #[serde(rename = "instructions-perf")]
    InstructionsPerf,
    #[serde(rename = "instructions-valgrind")]
    InstructionsValgrind,
}

impl Measure {
    pub const ALL: [Measure; 3] = [Measure::Wall, Measure::Cpu, Measure::Instructions];

    pub fn as_str(self) -> &'static str {
        match self {
            Measure::Wall => "wall",
            Measure::Cpu => "cpu",
            Measure::Instructions => "instructions",
        }
    }

    pub fn parse(s: &str) -> Option<Measure> {
        Measure::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// Whether this is the default, left out of the JSON so older servers and old hashes agree.
    pub fn is_wall(&self) -> bool {
        *self == Measure::Wall
    }
}

impl fmt::Display for Measure {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Counter {
    pub fn as_str(self) -> &'static str {
        match self {
            Counter::Perf => "perf",
            Counter::Valgrind => "valgrind",
        }
    }
}

impl Metric {
    pub const ALL: [Metric; 4] = [Metric::Wall, Metric::Cpu, Metric::InstructionsPerf, Metric::InstructionsValgrind];

    /// The metric of a run measured by `measure`, counted by `counter` where it counted.
    pub fn of(measure: Measure, counter: Option<Counter>) -> Metric {
        match (measure, counter) {
            (Measure::Wall, _) => Metric::Wall,
            (Measure::Cpu, _) => Metric::Cpu,
            (Measure::Instructions, Some(Counter::Perf)) => Metric::InstructionsPerf,
            (Measure::Instructions, _) => Metric::InstructionsValgrind,
        }
    }

    /// How it is stored, and written in URLs and exports.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Wall => "wall",
            Metric::Cpu => "cpu",
            Metric::InstructionsPerf => "instructions-perf",
            Metric::InstructionsValgrind => "instructions-valgrind",
        }
    }

    pub fn parse(s: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// How a person reads it: "wall time", "CPU time", "instructions (perf)".
    pub fn label(self) -> &'static str {
        match self {
            Metric::Wall => "wall time",
            Metric::Cpu => "CPU time",
            Metric::InstructionsPerf => "instructions (perf)",
            Metric::InstructionsValgrind => "instructions (Valgrind)",
        }
    }

    /// The counter of an instructions metric.
    pub fn counter(self) -> Option<Counter> {
        match self {
            Metric::InstructionsPerf => Some(Counter::Perf),
            Metric::InstructionsValgrind => Some(Counter::Valgrind),
            Metric::Wall | Metric::Cpu => None,
        }
    }

    pub fn measure(self) -> Measure {
        match self {
            Metric::Wall => Measure::Wall,
            Metric::Cpu => Measure::Cpu,
            Metric::InstructionsPerf | Metric::InstructionsValgrind => Measure::Instructions,
        }
    }

    /// Whether its values are counts (formatted as numbers) rather than nanoseconds.
    pub fn is_count(self) -> bool {
        self.measure() == Measure::Instructions
    }

    /// Whether one binary gives the same value on every run: Valgrind's counts do.
    pub fn is_exact(self) -> bool {
        self == Metric::InstructionsValgrind
    }

    /// How much noise its values carry, for `classify_with`: none in Valgrind's counts.
    pub fn noise(self) -> crate::complexity::Noise {
        if self.is_exact() {
            crate::complexity::Noise::Exact
        } else {
            crate::complexity::Noise::Measured
        }
    }

    /// The values of one measurement by this metric: counts for instructions, else nanoseconds.
    /// A measurement of an instructions run always has its counts (the wire checks it).
    pub fn values(self, m: &Measurement) -> Vec<f64> {
        match (self.is_count(), &m.instructions) {
            (true, Some(counts)) => counts.iter().map(|&c| c as f64).collect(),
            _ => m.samples_ns.clone(),
        }
    }

    /// The median of one measurement's values by this metric.
    pub fn median(self, m: &Measurement) -> f64 {
        crate::fit::median(&self.values(m))
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Checks a run's measure against its counter: an `instructions` run names its counter, no other
/// run does.
pub(super) fn validate(measure: Measure, counter: Option<Counter>) -> Result<(), FieldError> {
    match (measure, counter) {
        (Measure::Instructions, None) => Err(err("counter", "an instructions run names its counter: perf or valgrind")),
        (Measure::Wall | Measure::Cpu, Some(_)) => {
            Err(err("counter", format!("only an instructions run has a counter; this one measured {measure}")))
        }
        _ => Ok(()),
    }
}

/// Checks that a measurement of an instructions run counted every repetition, with counts above 0.
pub(super) fn validate_counts(at: &str, m: &Measurement) -> Result<(), FieldError> {
    match &m.instructions {
        None => Err(err(format!("{at}.instructions"), "an instructions run gives one count per sample")),
        Some(counts) => match counts.iter().position(|&c| c == 0) {
            Some(k) => Err(err(format!("{at}.instructions[{k}]"), "must be positive")),
            None => Ok(()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::sample_json;
    use super::super::RunSubmission;
    use super::*;

    fn parse(v: &serde_json::Value) -> Result<RunSubmission, FieldError> {
        RunSubmission::from_json(&serde_json::to_vec(v).unwrap())
    }

    fn counted(v: &mut serde_json::Value) {
        for m in v["workloads"][0]["measurements"].as_array_mut().unwrap() {
            let n = m["samples_ns"].as_array().unwrap().len();
            m["instructions"] = serde_json::json!(vec![1000u64; n]);
        }
    }

    #[test]
    fn a_wall_run_leaves_the_measure_out_so_older_servers_and_hashes_agree() {
        let run = parse(&sample_json()).unwrap();
        assert_eq!((run.measure, run.counter, run.metric()), (Measure::Wall, None, Metric::Wall));
        let written = serde_json::to_value(&run).unwrap();
        assert!(written.get("measure").is_none() && written.get("counter").is_none(), "{written}");
        let mut explicit = sample_json();
        explicit["measure"] = "wall".into();
        assert_eq!(parse(&explicit).unwrap().content_hash(), run.content_hash());
    }

    #[test]
    fn an_instructions_run_names_its_counter_and_counts_every_repetition() {
        let mut v = sample_json();
        v["measure"] = "instructions".into();
        counted(&mut v);
        assert_eq!(parse(&v).unwrap_err().field, "counter");
        v["counter"] = "valgrind".into();
        let run = parse(&v).unwrap();
        assert_eq!(run.metric(), Metric::InstructionsValgrind);
        assert_eq!(run.metric().median(&run.workloads[0].measurements[0]), 1000.0);
        v["workloads"][0]["measurements"][1].as_object_mut().unwrap().remove("instructions");
        let e = parse(&v).unwrap_err();
        assert_eq!(e.field, "workloads[0].measurements[1].instructions", "{e:?}");
        counted(&mut v);
        v["workloads"][0]["measurements"][2]["instructions"][0] = 0.into();
        assert_eq!(parse(&v).unwrap_err().field, "workloads[0].measurements[2].instructions[0]");
    }

    #[test]
    fn only_an_instructions_run_has_a_counter_and_measures_are_named() {
        let mut v = sample_json();
        v["measure"] = "cpu".into();
        assert_eq!(parse(&v).unwrap().metric(), Metric::Cpu);
        v["counter"] = "perf".into();
        assert!(parse(&v).unwrap_err().reason.contains("only an instructions run"));
        v["measure"] = "cycles".into();
        assert_eq!(parse(&v).unwrap_err().field, "measure");
        for m in Metric::ALL {
            assert_eq!(Metric::parse(m.as_str()), Some(m));
        }
    }
}
