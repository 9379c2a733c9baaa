//! What a series measures (the wire's `Metric`: wall time, CPU time, or instructions counted by
//! perf or by Valgrind) as the store's columns and the pages' words name it.

use slopewatch_core::wire::Metric;

/// A metric as a database column spells it (`Metric::as_str`), for rows that read one: a
/// column holding anything else is a decode error.
#[derive(Debug, Clone, sqlx::Type)]
#[sqlx(transparent)]
pub struct MetricColumn(String);

impl TryFrom<MetricColumn> for Metric {
    type Error = String;

    fn try_from(column: MetricColumn) -> Result<Metric, String> {
        Metric::parse(&column.0).ok_or_else(|| format!("{:?} is not a metric", column.0))
    }
}

/// A workload with the metric of its series, as a timeline or a message names it among others:
/// the name alone for wall time, the default, else `strchr [instructions (Valgrind)]`.
pub fn workload_label(name: &str, metric: Metric) -> String {
    match metric {
        Metric::Wall => name.to_string(),
        other => format!("{name} [{}]", other.label()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slopewatch_core::wire::Measure;

    #[test]
    fn every_metric_reads_back_from_its_column_with_the_counter_its_run_declared() {
        for m in Metric::ALL {
            assert_eq!(Metric::try_from(MetricColumn(m.as_str().into())), Ok(m));
            assert_eq!(Metric::of(m.measure(), m.counter()), m);
        }
        assert!(Metric::try_from(MetricColumn("cycles".into())).unwrap_err().contains("\"cycles\""));
        assert_eq!(Metric::of(Measure::Instructions, Metric::InstructionsPerf.counter()), Metric::InstructionsPerf);
        assert_eq!(workload_label("strchr", Metric::Wall), "strchr");
        assert_eq!(workload_label("strchr", Metric::InstructionsValgrind), "strchr [instructions (Valgrind)]");
    }
}
