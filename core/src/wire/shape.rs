//! A run as one server accepts it: [`shape`] leaves out what the server's capabilities do not
//! take and says what it left out, or says why the run cannot be sent there at all.

use super::{Accepts, Capability, Metric, RunSubmission, VersionFrom, WorkloadRun};
use uuid::Uuid;

/// A run shaped for a server: what to send, and what had to be left out of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shaped {
    pub run: RunSubmission,
    /// Empty when the run goes as it is.
    pub dropped: Vec<Dropped>,
}

/// A part of a run left out for a server that does not accept it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dropped {
    /// The failed workloads, each as `name (kind)`: the run went without them, as agents sent runs
    /// before failures were data.
    Failures(Vec<String>),
    /// The probes went as plain workloads, without these, whose function the libc does not provide.
    Contracts { not_provided: Vec<String> },
    /// The workloads whose size of interest was left out.
    SizesOfInterest(Vec<String>),
}

/// Why a run cannot be sent to a server at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The server stores wall time only, and the run is of another metric: its values sent as
    /// times would join the wall-time series.
    Measure(Metric),
    /// The server knows only compiler versions, and the run's version is its libc's: sent without
    /// its axis, it would join a lineage of compiler versions.
    VersionAxis,
    /// The server keeps one series per lineage whatever the architecture, and the run was built
    /// for another than x86-64: it would join the x86-64 line.
    Architecture(String),
    /// Without what `capability` carries, no workload is left; `why` says which were left out.
    NothingLeft { capability: Capability, why: String },
}

/// `run` as a server that accepts `accepts` takes it, with what was left out; or why the server
/// cannot take it.
pub fn shape(run: &RunSubmission, accepts: &Accepts) -> Result<Shaped, Refusal> {
    if !accepts.contains(Capability::Measures) && !run.measure.is_wall() {
        return Err(Refusal::Measure(run.metric()));
    }
    if !accepts.contains(Capability::VersionAxes) && run.toolchain.version_from != VersionFrom::Compiler {
        return Err(Refusal::VersionAxis);
    }
    if !accepts.contains(Capability::Architectures) && run.arch() != crate::arch::DEFAULT {
        return Err(Refusal::Architecture(run.arch()));
    }
    let mut workloads = run.workloads.clone();
    let mut dropped = Vec::new();
    if !accepts.contains(Capability::Failures) {
        let failed: Vec<String> = run.failures().map(|(w, f)| format!("{} ({})", w.name, f.kind.label())).collect();
        if !failed.is_empty() {
            workloads.retain(|w| w.failure.is_none());
            if workloads.is_empty() {
                let why = format!("every workload of the run failed: {}", failed.join(", "));
                return Err(Refusal::NothingLeft { capability: Capability::Failures, why });
            }
            dropped.push(Dropped::Failures(failed));
        }
    }
    if !accepts.contains(Capability::Contracts) && workloads.iter().any(|w| w.contract.is_some() || w.not_provided) {
        let not_provided: Vec<String> = names(workloads.iter().filter(|w| w.not_provided));
        workloads.retain(|w| !w.not_provided);
        if workloads.is_empty() {
            let why = format!("the libc provides no function the run measured: {}", not_provided.join(", "));
            return Err(Refusal::NothingLeft { capability: Capability::Contracts, why });
        }
        workloads.iter_mut().for_each(|w| w.contract = None);
        dropped.push(Dropped::Contracts { not_provided });
    }
    if !accepts.contains(Capability::SizesOfInterest) {
        let with: Vec<String> = names(workloads.iter().filter(|w| w.size_of_interest.is_some()));
        if !with.is_empty() {
            workloads.iter_mut().for_each(|w| w.size_of_interest = None);
            dropped.push(Dropped::SizesOfInterest(with));
        }
    }
    // A fact a server has no capability for goes without a word: one without build hashes
    // cannot tell an unchanged build and judges the run as it always did; one without controls
    // gets the control's own run beside, as always.
    let unaccepted: Vec<&str> =
        Capability::ALL.into_iter().filter(|c| !accepts.contains(*c)).flat_map(|c| c.fields()).copied().collect();
    workloads = workloads
        .into_iter()
        .map(|w| {
            let facts = w.facts().without(&unaccepted);
            w.with_facts(facts)
        })
        .collect();
    // Nor one without profiles: the run's verdicts stand without them.
    if !accepts.contains(Capability::Profiles) {
        workloads.iter_mut().for_each(|w| w.profile = None);
    }
    Ok(Shaped { run: RunSubmission { workloads, ..run.clone() }, dropped })
}

fn names<'a>(workloads: impl Iterator<Item = &'a WorkloadRun>) -> Vec<String> {
    workloads.map(|w| w.name.clone()).collect()
}

/// `s` after a count of one, else nothing.
fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

impl Dropped {
    /// What was left out of `run` for the server at `server`, in a sentence.
    pub fn message(&self, server: &str, run: &Uuid) -> String {
        let older = |what: &str| format!("the server at {server} does not accept {what} (it is older than this agent)");
        match self {
            Dropped::Failures(failed) => format!(
                "{}; sent run {run} without its {} failed workload{}: {}",
                older("failures"),
                failed.len(),
                plural(failed.len()),
                failed.join(", ")
            ),
            Dropped::Contracts { not_provided } => {
                let without = match not_provided.len() {
                    0 => String::new(),
                    n => format!(
                        ", without the {n} whose function the libc does not provide: {}",
                        not_provided.join(", ")
                    ),
                };
                format!("{}; sent run {run} with its probes as plain workloads{without}", older("contracts"))
            }
            Dropped::SizesOfInterest(workloads) => format!(
                "{}; sent run {run} without the size{s} of interest of {} workload{s}: {}",
                older("sizes of interest"),
                workloads.len(),
                workloads.join(", "),
                s = plural(workloads.len())
            ),
        }
    }
}

impl Refusal {
    /// Why `run` could not be stored at the server at `server`, and what the user can do.
    pub fn message(&self, server: &str, run: &Uuid) -> String {
        let why = match self {
            Refusal::Measure(metric) => format!(
                "the server is older than this agent and takes wall time only: it cannot take a run of another \
                 measure ({metric}); upgrade it, or measure with --measure wall"
            ),
            Refusal::VersionAxis => "the server is older than this agent and knows only compiler versions; upgrade \
                                     it, or set version_from = \"compiler\" for this toolchain to send the compiler's \
                                     version under this lineage"
                .to_string(),
            Refusal::Architecture(arch) => format!(
                "the server is older than this agent and keeps one series per lineage whatever the architecture: \
                 this run, built for {arch}, would join the lineage's x86_64 series; upgrade it to store the run"
            ),
            Refusal::NothingLeft { capability, why } => {
                let what = capability.as_str().replace('_', " ");
                format!("the server does not accept {what} (it is older than this agent) and {why}; upgrade it to store the run")
            }
        };
        format!("run {run} could not be stored at {server}: {why}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::tests::sample_json;
    use serde_json::{json, Value};

    /// A run using every capability but the measure and the axis: a probe, a function not
    /// provided, a failed workload, sizes of interest, a build hash and a control beside.
    fn full() -> Value {
        let mut v = sample_json();
        let plain = v["workloads"][0].clone();
        let mut probe = plain.clone();
        probe["name"] = json!("contract.strchr.remaining");
        probe["contract"] = json!({"expected": "1", "function": "strchr", "axis": "remaining"});
        probe["size_of_interest"] = json!(4 << 20);
        let absent = json!({"name": "contract.strlcpy.length", "size_unit": "bytes", "measurements": [],
                            "contract": {"expected": "n"}, "not_provided": true});
        let mut failed = plain.clone();
        failed["name"] = json!("strtol");
        failed["measurements"] = json!([]);
        failed["failure"] = json!({"kind": "wrong_result", "size": 65536, "got": "-1", "expected": "9362"});
        let mut plain = plain;
        plain["size_of_interest"] = json!(4 << 20);
        plain["build_hash"] = json!(format!("sha256:{}", "0a".repeat(32)));
        plain["control"] = json!({"lineage": "musl-gcc", "version": "1.2.3",
                                  "medians": [{"size": 65536, "median": 1000.0}]});
        plain["profile"] = json!({"size": 65536, "total": 1000, "functions": [
            {"name": "strchr", "own": 900, "inclusive": 900, "callers": [{"name": "sw_run", "calls": 4, "inclusive": 900}]}]});
        v["workloads"] = json!([plain, probe, absent, failed]);
        v
    }

    fn run(v: &Value) -> RunSubmission {
        RunSubmission::from_json(&serde_json::to_vec(v).unwrap()).unwrap()
    }

    fn without(c: Capability) -> Accepts {
        Capability::ALL.into_iter().filter(|&a| a != c).collect()
    }

    /// Every key anywhere in `v`.
    fn keys(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => m.iter().for_each(|(k, v)| {
                out.push(k.clone());
                keys(v, out)
            }),
            Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
            _ => {}
        }
    }

    #[test]
    fn a_server_that_accepts_everything_is_sent_the_run_as_it_is() {
        let mut v = full();
        v["measure"] = json!("cpu");
        v["toolchain"]["version_from"] = json!("libc");
        let r = run(&v);
        assert_eq!(shape(&r, &Accepts::everything()), Ok(Shaped { run: r.clone(), dropped: vec![] }));
        // A server that advertises nothing predates build hashes: the run goes without them, and
        // nothing else changes, with no word (the server judges as it always did).
        let mut unhashed = r.clone();
        unhashed.workloads.iter_mut().for_each(|w| (w.build_hash, w.control, w.profile) = (None, None, None));
        assert_eq!(shape(&r, &Accepts::unadvertised()), Ok(Shaped { run: unhashed, dropped: vec![] }));
    }

    #[test]
    fn a_capability_left_out_leaves_none_of_its_fields_in_the_run() {
        let all = run(&full());
        let mut found = Vec::new();
        let mut with_axes = full();
        with_axes["measure"] = json!("instructions");
        with_axes["counter"] = json!("valgrind");
        with_axes["toolchain"]["version_from"] = json!("libc");
        for w in with_axes["workloads"].as_array_mut().unwrap() {
            for m in w["measurements"].as_array_mut().unwrap() {
                m["instructions"] = json!(vec![1000; m["samples_ns"].as_array().unwrap().len()]);
            }
        }
        keys(&serde_json::to_value(run(&with_axes)).unwrap(), &mut found);
        for c in Capability::ALL {
            assert!(c.fields().iter().all(|f| found.contains(&f.to_string())), "{c}: its fields are the run's");
            let shaped = shape(&all, &without(c)).unwrap();
            let mut left = Vec::new();
            keys(&serde_json::to_value(&shaped.run).unwrap(), &mut left);
            assert!(c.fields().iter().all(|f| !left.contains(&f.to_string())), "{c}: {left:?}");
        }
    }

    #[test]
    fn without_failures_the_failed_workloads_are_left_out_and_named() {
        let r = run(&full());
        let shaped = shape(&r, &without(Capability::Failures)).unwrap();
        let names: Vec<&str> = shaped.run.workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["strchr", "contract.strchr.remaining", "contract.strlcpy.length"]);
        assert_eq!(shaped.dropped, [Dropped::Failures(vec!["strtol (wrong result)".into()])]);
        assert_eq!(shaped.run.run_id, r.run_id, "the same run, so a server never stores it twice");
        assert_eq!(
            shaped.dropped[0].message("http://old:3000", &r.run_id),
            format!(
                "the server at http://old:3000 does not accept failures (it is older than this agent); sent run {} \
                 without its 1 failed workload: strtol (wrong result)",
                r.run_id
            )
        );
    }

    #[test]
    fn without_contracts_the_probes_go_as_plain_workloads_without_those_not_provided() {
        let r = run(&full());
        let shaped = shape(&r, &without(Capability::Contracts)).unwrap();
        let names: Vec<&str> = shaped.run.workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["strchr", "contract.strchr.remaining", "strtol"]);
        assert!(shaped.run.workloads.iter().all(|w| w.contract.is_none() && !w.not_provided));
        assert_eq!(shaped.dropped, [Dropped::Contracts { not_provided: vec!["contract.strlcpy.length".into()] }]);
        let said = shaped.dropped[0].message("http://old:3000", &r.run_id);
        assert!(said.ends_with("with its probes as plain workloads, without the 1 whose function the libc does not provide: contract.strlcpy.length"), "{said}");
        // A run without probes has nothing to leave out.
        let plain = run(&sample_json());
        assert_eq!(shape(&plain, &without(Capability::Contracts)).unwrap().dropped, []);
    }

    #[test]
    fn without_sizes_of_interest_they_are_left_out_and_named() {
        let r = run(&full());
        let shaped = shape(&r, &without(Capability::SizesOfInterest)).unwrap();
        assert!(shaped.run.workloads.iter().all(|w| w.size_of_interest.is_none()));
        assert_eq!(shaped.run.workloads.len(), 4);
        let named = vec!["strchr".to_string(), "contract.strchr.remaining".into()];
        assert_eq!(shaped.dropped, [Dropped::SizesOfInterest(named)]);
        let said = shaped.dropped[0].message("http://old:3000", &r.run_id);
        assert!(
            said.contains("does not accept sizes of interest")
                && said.ends_with("without the sizes of interest of 2 workloads: strchr, contract.strchr.remaining"),
            "{said}"
        );
    }

    #[test]
    fn a_server_missing_several_capabilities_gets_all_of_them_left_out_once() {
        let r = run(&full());
        let shaped = shape(&r, &Accepts::from_iter([Capability::Measures])).unwrap();
        assert_eq!(shaped.dropped.len(), 3, "{:?}", shaped.dropped);
        let names: Vec<&str> = shaped.run.workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["strchr", "contract.strchr.remaining"]);
    }

    #[test]
    fn a_measure_or_an_axis_the_server_cannot_store_is_refused_with_what_to_do() {
        let mut v = full();
        v["measure"] = json!("cpu");
        let cpu = run(&v);
        let refusal = shape(&cpu, &without(Capability::Measures)).unwrap_err();
        assert_eq!(refusal, Refusal::Measure(Metric::Cpu));
        let said = refusal.message("http://old:3000", &cpu.run_id);
        assert!(said.starts_with(&format!("run {} could not be stored at http://old:3000: ", cpu.run_id)), "{said}");
        assert!(said.contains("takes wall time only") && said.contains("(cpu)") && said.contains("--measure wall"));
        assert!(shape(&run(&full()), &without(Capability::Measures)).is_ok(), "a wall run carries no measure");

        let mut v = sample_json();
        v["toolchain"]["version_from"] = json!("libc");
        let libc = run(&v);
        let refusal = shape(&libc, &without(Capability::VersionAxes)).unwrap_err();
        assert_eq!(refusal, Refusal::VersionAxis);
        let said = refusal.message("http://old:3000", &libc.run_id);
        assert!(
            said.contains("knows only compiler versions") && said.contains("version_from = \"compiler\""),
            "{said}"
        );
        assert!(shape(&run(&full()), &without(Capability::VersionAxes)).is_ok(), "the compiler axis is the default");

        let mut v = sample_json();
        v["toolchain"]["target"] = json!("aarch64-linux-musl");
        let a64 = run(&v);
        let refusal = shape(&a64, &without(Capability::Architectures)).unwrap_err();
        assert_eq!(refusal, Refusal::Architecture("aarch64".into()));
        let said = refusal.message("http://old:3000", &a64.run_id);
        assert!(said.contains("built for aarch64") && said.contains("x86_64 series"), "{said}");
        assert!(shape(&run(&full()), &without(Capability::Architectures)).is_ok(), "x86-64 is every server's");
        assert!(shape(&a64, &Accepts::everything()).is_ok());
    }

    #[test]
    fn every_message_reads_as_one_sentence_with_single_spaces() {
        let id = Uuid::nil();
        let dropped = [
            Dropped::Failures(vec!["a (crashed)".into(), "b (wrong result)".into()]),
            Dropped::Contracts { not_provided: vec![] },
            Dropped::Contracts { not_provided: vec!["contract.strlcpy.length".into()] },
            Dropped::SizesOfInterest(vec!["strchr".into()]),
        ];
        let refusals = [
            Refusal::Measure(Metric::InstructionsValgrind),
            Refusal::VersionAxis,
            Refusal::Architecture("aarch64".into()),
            Refusal::NothingLeft { capability: Capability::SizesOfInterest, why: "x".into() },
        ];
        let said = dropped
            .iter()
            .map(|d| d.message("http://s", &id))
            .chain(refusals.iter().map(|r| r.message("http://s", &id)));
        for said in said {
            assert!(!said.contains("  ") && !said.contains('\n') && said.contains("http://s"), "{said:?}");
        }
    }

    #[test]
    fn a_run_with_nothing_left_is_refused_and_says_what_was_left_out() {
        let mut v = full();
        v["workloads"] = json!([v["workloads"][3].clone()]);
        let failed = run(&v);
        let refusal = shape(&failed, &without(Capability::Failures)).unwrap_err();
        let why = "every workload of the run failed: strtol (wrong result)".to_string();
        assert_eq!(refusal, Refusal::NothingLeft { capability: Capability::Failures, why });
        let said = refusal.message("http://old:3000", &failed.run_id);
        assert!(said.contains("does not accept failures (it is older than this agent) and every workload"), "{said}");

        let mut v = full();
        v["workloads"] = json!([v["workloads"][2].clone()]);
        let absent = run(&v);
        let refusal = shape(&absent, &without(Capability::Contracts)).unwrap_err();
        let why = "the libc provides no function the run measured: contract.strlcpy.length".to_string();
        assert_eq!(refusal, Refusal::NothingLeft { capability: Capability::Contracts, why });
    }
}
