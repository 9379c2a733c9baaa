//! The agent's gate and the server's alert rules reach the same verdict on the same evidence: the
//! labelled complexity corpus, the corpus held to contracts, and cases made to be unsure (too few
//! sizes, a disturbed size, growth hidden under a fixed cost). For every fit, the gate's decision
//! (`measure::judged` in the agent, from the run it would send) and the rules' (from the version
//! summary the server stored and serves) are equal under each alert rule (`slope`, `class`,
//! `either`) and under each contract, over / under / unsure, how far over and why unsure; and the
//! server, storing a clean version and then this one, opens one regression of exactly the
//! workloads the gate fails. (Wrong results are `ingest-agent/tests/agreement.rs`'s.)

// The corpus core's tests classify; this test uses part of it.
#[allow(dead_code)]
#[path = "../../core/tests/all/complexity_corpus/corpus.rs"]
mod corpus;

use self::corpus::{Shape, SEED};
use crate::builders::run_of;
use crate::helpers::{on_both_backends, TestApp, TestDb};
use serde_json::Value;
use slopewatch::config::{AlertRule, Rules};
use slopewatch::model::{SizeMedian, Slope};
use slopewatch::rules::evaluate::VersionFit;
use slopewatch_agent::measure::judged::Judged;
use slopewatch_core::complexity::{Class, Complexity};
use slopewatch_core::verdict::{Decision, Limits, Verdict};
use slopewatch_core::wire::{Contract, Measurement, Metric, SizeUnit, WorkloadRun};
use std::collections::BTreeSet;

const LINEAGE: &str = "zig-cc-musl";

/// One fit's evidence: a workload's per-size medians, and the contract it is held to.
struct Case {
    name: String,
    points: Vec<(f64, f64)>,
    contract: Option<Class>,
}

impl Case {
    fn new(name: String, points: Vec<(f64, f64)>, contract: Option<Class>) -> Case {
        Case { name, points, contract }
    }

    /// The workload as the agent sends it: one sample a size, the median itself.
    fn workload(&self, points: &[(f64, f64)]) -> WorkloadRun {
        let measurements = points
            .iter()
            .map(|&(n, t)| Measurement { size: n as u64, samples_ns: vec![t], instructions: None })
            .collect();
        WorkloadRun {
            contract: self.contract.map(Contract::expecting),
            ..WorkloadRun::new(self.name.clone(), SizeUnit::Bytes, "sha256:00".into(), measurements)
        }
    }

    /// Clean growth its limits hold: flat for an O(1) contract, else linear.
    fn held(&self) -> Vec<(f64, f64)> {
        (0..8)
            .map(|i| f64::from(1024 << i))
            .map(|n| (n, if self.contract == Some(Class::Constant) { 500.0 } else { 3.0 * n }))
            .collect()
    }
}

/// The corpus; its first eight series of each shape held to O(1), O(n) and O(n log n); and cases
/// made to be unsure.
fn cases() -> Vec<Case> {
    let corpus = corpus::corpus(SEED);
    let mut cases: Vec<Case> = corpus
        .iter()
        .enumerate()
        .map(|(i, s)| Case::new(format!("corpus-{}-{i}", slug(s.shape)), s.points.clone(), None))
        .collect();
    for expected in [Class::Constant, Class::Linear, Class::NLogN] {
        for shape in Shape::ALL {
            for (i, s) in corpus.iter().filter(|s| s.shape == shape).take(8).enumerate() {
                let name = format!("held-{}-{}-{i}", expected.as_str().replace(' ', ""), slug(shape));
                cases.push(Case::new(name, s.points.clone(), Some(expected)));
            }
        }
    }
    for (i, (flat, points)) in corpus::hidden_growth(SEED + 1, 24).into_iter().enumerate() {
        cases.push(Case::new(format!("hidden-{}-{i}", if flat { "flat" } else { "fixed" }), points, None));
    }
    for shape in Shape::ALL {
        for (i, s) in corpus.iter().filter(|s| s.shape == shape).take(4).enumerate() {
            let mut disturbed = s.points.clone();
            let middle = disturbed.len() / 2;
            disturbed[middle].1 *= 10.0;
            cases.push(Case::new(format!("disturbed-{}-{i}", slug(shape)), disturbed, None));
            let few: Vec<(f64, f64)> = s.points.iter().copied().step_by(2).take(3 + i % 2).collect();
            cases.push(Case::new(format!("few-{}-{i}", slug(shape)), few, Some(Class::Linear).filter(|_| i == 3)));
        }
    }
    cases
}

/// `shape3`: the shape's place in `Shape::ALL`, since names like `O(n²)` are no workload names.
fn slug(shape: Shape) -> String {
    format!("shape{}", Shape::ALL.iter().position(|&s| s == shape).unwrap())
}

/// What the gate is given for an alert rule: the limits `check` takes from its flags.
fn gate_limits(rule: AlertRule) -> Limits {
    let slope = matches!(rule, AlertRule::Slope | AlertRule::Either).then_some(1.5);
    let class = matches!(rule, AlertRule::Class | AlertRule::Either).then_some(Class::NLogN);
    Limits { max_slope: slope, max_class: class, ..Limits::default() }
}

/// The gate's decision on a case: the agent's judged record of the workload it would send.
fn gate(case: &Case, rule: AlertRule) -> Decision {
    Judged::new(LINEAGE, Metric::Wall, &case.workload(&case.points), &gate_limits(rule)).decision
}

/// The rules' decision on a case: its version summary as the server serves it, judged.
fn rules(summary: &Value, case: &Case, rule: AlertRule) -> Decision {
    let number = |k: &str| summary[k].as_f64().unwrap_or_else(|| panic!("{}: no {k} in {summary}", case.name));
    let slope =
        Slope { slope: number("slope"), ci_low: number("ci_low"), ci_high: number("ci_high"), r2: number("r2") };
    let sizes: Vec<SizeMedian> = serde_json::from_value(summary["sizes"].clone()).unwrap();
    let complexity: Option<Complexity> = serde_json::from_value(summary["complexity"].clone()).unwrap();
    let fit = VersionFit::new(slope, sizes, complexity).held_to(case.contract);
    Rules { rule, ..Rules::default() }.decide(&case.name, &fit)
}

/// Stores the cases as version `version` of the lineage, in runs of at most 200 workloads.
async fn store(app: &TestApp, version: &str, cases: &[Case], points: impl Fn(&Case) -> Vec<(f64, f64)>) {
    for chunk in cases.chunks(200) {
        let workloads: Vec<Value> =
            chunk.iter().map(|c| serde_json::to_value(c.workload(&points(c))).unwrap()).collect();
        let (status, body) = app.submit(&run_of(LINEAGE, version, "build-01", workloads)).await;
        assert_eq!(status, 201, "{body}");
    }
    app.intake.summarize_pending().await.unwrap();
}

#[tokio::test]
async fn the_gate_and_the_rules_reach_the_same_verdict_on_every_fit() {
    let cases = cases();
    on_both_backends(|db: TestDb| async {
        let app = TestApp::new(db).await;
        store(&app, "1.0.0", &cases, Case::held).await;
        store(&app, "2.0.0", &cases, |c| c.points.clone()).await;
        let mut tally = [[0usize; 3]; 3];
        for case in &cases {
            let uri = format!("/api/v1/series?workload={}&toolchain={LINEAGE}", case.name);
            let (status, series) = app.get(&uri).await;
            assert_eq!(status, 200, "{series}");
            let summary = series["versions"].as_array().unwrap().iter().find(|v| v["version"] == "2.0.0").unwrap();
            for (r, rule) in [AlertRule::Slope, AlertRule::Class, AlertRule::Either].into_iter().enumerate() {
                let (gate, rules) = (gate(case, rule), rules(summary, case, rule));
                assert_eq!(gate, rules, "{} under rule {rule:?}", case.name);
                tally[r][gate.verdict() as usize] += 1;
            }
        }
        eprintln!("over / under / unsure by rule (slope, class, either): {tally:?}");
        // The evidence reaches every decision, or the comparison proves little.
        for (r, counts) in tally.iter().enumerate() {
            assert!(counts.iter().all(|&n| n >= 10), "rule {r}: {counts:?}");
        }
        let contracts_broken = cases.iter().filter(|c| c.contract.is_some()).map(|c| gate(c, AlertRule::Slope));
        let degrees: BTreeSet<u8> = contracts_broken.map(|d| d.degrees()).collect();
        assert!(degrees.is_superset(&BTreeSet::from([0, 1, 2])), "contracts broken by {degrees:?}");

        // The regression the server opened at 2.0.0 holds exactly the workloads the gate fails.
        let failed: BTreeSet<&str> = cases
            .iter()
            .filter(|c| gate(c, AlertRule::Slope).verdict() == Verdict::Over)
            .map(|c| c.name.as_str())
            .collect();
        let (status, list) = app.get("/api/v1/regressions").await;
        assert_eq!(status, 200, "{list}");
        let regressions = list["regressions"].as_array().unwrap();
        assert_eq!(regressions.len(), 1, "{list}");
        let id = regressions[0]["regression"]["id"].as_i64().unwrap();
        let (_, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        assert_eq!(detail["regression"]["version"], "2.0.0");
        let opened: BTreeSet<&str> =
            detail["workloads"].as_array().unwrap().iter().map(|w| w["workload"].as_str().unwrap()).collect();
        assert_eq!(opened, failed);
    })
    .await;
}
