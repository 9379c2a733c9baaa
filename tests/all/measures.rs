//! Measures kept apart: wall-time and instruction runs of one workload and version are two
//! series with two summaries, each fitted from its own values; a regression found on counted
//! instructions names that metric and leaves the wall series of the same workload alone; pages,
//! the API, exports, the postmortem and webhooks say which metric they show, and an export
//! carries the metric to another store. On Postgres and on SQLite.

use crate::builders::run_of;
use crate::helpers::{on_both_backends, TestApp, TestDb};
use serde_json::{json, Value};
use slopewatch::config::{AlertSettings, Config, Webhook, WebhookFormat};
use slopewatch::store::Store;

const LINEAGE: &str = "zig-cc-musl";
const WORKLOAD: &str = "strchr";
const VALGRIND: &str = "instructions-valgrind";

/// A config whose webhook nobody answers: deliveries stay in the outbox, to be read there.
fn config() -> Config {
    Config {
        alerts: AlertSettings {
            webhooks: vec![Webhook {
                name: "team".into(),
                url: "http://127.0.0.1:9/hook".parse().unwrap(),
                secret: "0123456789abcdef0123".into(),
                format: WebhookFormat::Json,
            }],
            ..AlertSettings::default()
        },
        ..Config::default()
    }
}

/// A run of `WORKLOAD` at six sizes doubling from 64 KiB, three repetitions each: times growing
/// as size^`time_slope`, and with `counter`, instruction counts growing as size^`count_slope`.
fn run(version: &str, time_slope: f64, counted: Option<(&str, f64)>) -> Value {
    let measurements: Vec<Value> = (0..6)
        .map(|i| {
            let size = 65536u64 << i;
            let ns: Vec<f64> = (0..3).map(|k| 0.5 * (size as f64).powf(time_slope) * (1.0 + 0.01 * k as f64)).collect();
            let mut m = json!({"size": size, "samples_ns": ns});
            if let Some((_, count_slope)) = counted {
                let counts: Vec<u64> = (0..3).map(|k| (3.0 * (size as f64).powf(count_slope)) as u64 + k).collect();
                m["instructions"] = json!(counts);
            }
            m
        })
        .collect();
    let workload =
        json!({"name": WORKLOAD, "size_unit": "bytes", "source_hash": "sha256:00", "measurements": measurements});
    let mut run = run_of(LINEAGE, version, "build-01", vec![workload]);
    if let Some((counter, _)) = counted {
        run["measure"] = "instructions".into();
        run["counter"] = counter.into();
    }
    run
}

/// Submits the history: at 0.15.2 both measures linear; at 0.16.0 wall time linear and Valgrind's
/// counts quadratic, while the counted run's own times stay linear. Answers the counted 0.16.0
/// run's id.
async fn fill(app: &TestApp) -> String {
    let counted_bad = run("0.16.0", 1.0, Some(("valgrind", 2.0)));
    for body in [run("0.15.2", 1.0, None), run("0.15.2", 1.0, Some(("valgrind", 1.0))), run("0.16.0", 1.0, None)] {
        let (status, answer) = app.submit(&body).await;
        assert_eq!(status, 201, "{answer}");
    }
    let (status, answer) = app.submit(&counted_bad).await;
    assert_eq!(status, 201, "{answer}");
    assert_eq!(answer["measure"], VALGRIND, "{answer}");
    let slope = answer["fits"][0]["slope"].as_f64().unwrap();
    assert!((slope - 2.0).abs() < 0.01, "fitted from the counts, not the times: {answer}");
    counted_bad["run_id"].as_str().unwrap().to_string()
}

/// The API's series of `WORKLOAD`, by `measure` where given.
async fn series(app: &TestApp, measure: Option<&str>) -> Value {
    let query = measure.map(|m| format!("&measure={m}")).unwrap_or_default();
    let (status, body) = app.get(&format!("/api/v1/series?workload={WORKLOAD}&toolchain={LINEAGE}{query}")).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// Each version's slope in a series answer, in version order.
fn slopes(series: &Value) -> Vec<(String, f64)> {
    series["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["version"].as_str().unwrap().to_string(), v["slope"].as_f64().unwrap()))
        .collect()
}

fn near(slopes: &[(String, f64)], expected: &[(&str, f64)]) -> bool {
    slopes.len() == expected.len()
        && slopes.iter().zip(expected).all(|((v, k), (ev, ek))| v == ev && (k - ek).abs() < 0.02)
}

async fn page(app: &TestApp, uri: &str) -> String {
    let (status, body) = app.get(uri).await;
    assert_eq!(status, 200, "{uri}: {body}");
    body.as_str().unwrap().to_string()
}

/// The only regression, from the API.
async fn the_regression(app: &TestApp) -> Value {
    let (_, list) = app.get("/api/v1/regressions").await;
    let regressions = list["regressions"].as_array().unwrap();
    assert_eq!(regressions.len(), 1, "one regression, of the counted series: {list}");
    regressions[0].clone()
}

#[tokio::test]
async fn wall_and_instruction_runs_of_one_workload_are_two_series_and_alert_apart() {
    on_both_backends(|db: TestDb| async move {
        let app = TestApp::with_config(db, config()).await;
        let counted_run = fill(&app).await;

        // Two series of one workload and lineage, two summaries at each version, each fitted
        // from its own values: wall time stays linear, Valgrind's counts turn quadratic.
        let wall = series(&app, None).await;
        assert_eq!((wall["measure"].as_str(), &wall["measures"]), (Some("wall"), &json!(["wall", VALGRIND])), "{wall}");
        assert!(near(&slopes(&wall), &[("0.15.2", 1.0), ("0.16.0", 1.0)]), "{wall}");
        assert_eq!(series(&app, Some("wall")).await, wall);
        let counted = series(&app, Some(VALGRIND)).await;
        assert_eq!(counted["measure"], VALGRIND);
        assert!(near(&slopes(&counted), &[("0.15.2", 1.0), ("0.16.0", 2.0)]), "{counted}");
        let largest = &counted["versions"][1]["sizes"][5];
        assert_eq!(largest["median_ns"].as_f64(), Some((3.0 * (65536f64 * 32.0).powi(2)).floor() + 1.0), "{largest}");
        for v in counted["versions"].as_array().unwrap().iter().chain(wall["versions"].as_array().unwrap()) {
            assert_eq!(v["runs"], 1, "each summary counts its own metric's run only: {v}");
        }
        let (status, body) =
            app.get(&format!("/api/v1/series?workload={WORKLOAD}&toolchain={LINEAGE}&measure=cpu")).await;
        assert_eq!(status, 404, "{body}");
        let (status, body) =
            app.get(&format!("/api/v1/series?workload={WORKLOAD}&toolchain={LINEAGE}&measure=cycles")).await;
        assert_eq!(status, 400, "{body}");
        assert!(body["error"]["message"].as_str().unwrap().contains("\"cycles\""), "{body}");

        // One regression, at 0.16.0, holding the counted series only: no cross-talk from the
        // linear wall series of the same workload.
        let regression = the_regression(&app).await;
        assert_eq!(regression["regression"]["version"], "0.16.0", "{regression}");
        let members = regression["workloads"].as_array().unwrap();
        assert_eq!(members.len(), 1, "{regression}");
        assert_eq!((members[0]["workload"].as_str(), members[0]["measure"].as_str()), (Some(WORKLOAD), Some(VALGRIND)));
        let id = regression["regression"]["id"].as_i64().unwrap();
        let (_, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        assert_eq!(detail["workloads"][0]["measure"], VALGRIND, "{detail}");

        // The webhook says which metric the workload was found on, and links to that series.
        let bodies = app.db.texts("SELECT body FROM deliveries").await;
        assert_eq!(bodies.len(), 1, "{bodies:?}");
        let event: Value = serde_json::from_str(&bodies[0]).unwrap();
        assert_eq!(event["event"], "regression.opened");
        assert_eq!(event["workloads"][0]["measure"], VALGRIND, "{event}");
        assert!(event["workloads"][0]["series_url"].as_str().unwrap().ends_with("?measure=instructions-valgrind"));

        // The postmortem and the timeline name the metric.
        let md = page(&app, &format!("/regressions/{id}/postmortem.md")).await;
        let numbers = md.lines().find(|l| l.starts_with("| strchr |")).unwrap();
        assert!(numbers.ends_with("| instructions (Valgrind) |"), "{md}");
        assert!(md.contains("strchr \\[instructions (Valgrind)\\] crossed at 0.16.0"), "{md}");
        let regression_page = page(&app, &format!("/regressions/{id}")).await;
        assert!(regression_page.contains("<td class=\"measure\">instructions (Valgrind)</td>"), "{regression_page}");

        // The series pages: wall time by default, with a link to the counted series, whose values
        // are counts; the wall series has no regression to link to.
        let wall_page = page(&app, &format!("/series/{WORKLOAD}/{LINEAGE}")).await;
        assert!(wall_page.contains("measured by <strong class=\"measure\">wall time</strong>"), "{wall_page}");
        assert!(wall_page.contains("href=\"/series/strchr/zig-cc-musl?measure=instructions-valgrind\""), "{wall_page}");
        assert!(!wall_page.contains("series-regressions"), "the wall series is in no regression");
        let counted_page = page(&app, &format!("/series/{WORKLOAD}/{LINEAGE}?measure={VALGRIND}")).await;
        assert!(counted_page.contains("<strong class=\"measure\">instructions (Valgrind)</strong>"), "{counted_page}");
        assert!(counted_page.contains("series-regressions") && counted_page.contains("Regression #"), "{counted_page}");
        assert!(counted_page.contains("T instructions</td>"), "medians read as counts: {counted_page}");
        assert!(counted_page.contains("loglog.svg?measure=instructions-valgrind"), "{counted_page}");
        let (status, body) = app.get(&format!("/series/{WORKLOAD}/{LINEAGE}?measure=cycles")).await;
        assert_eq!(status, 400);
        assert!(body.as_str().unwrap().contains("unknown measure &#34;cycles&#34;"), "{body}");
        assert_eq!(app.get(&format!("/series/{WORKLOAD}/{LINEAGE}?measure=cpu")).await.0, 404);
        let svg = page(&app, &format!("/series/{WORKLOAD}/{LINEAGE}/loglog.svg?measure={VALGRIND}")).await;
        assert!(svg.contains("median instructions (Valgrind) (log scale)"), "{svg}");

        // The exports say which metric they hold.
        let csv = page(&app, &format!("/series/{WORKLOAD}/{LINEAGE}/data.csv?measure={VALGRIND}")).await;
        assert!(csv.lines().next().unwrap().ends_with(",failure_detail,measure"), "{csv}");
        let row: Vec<&str> = csv.lines().nth(2).unwrap().split(',').collect();
        assert_eq!((row[0], row[2], *row.last().unwrap()), ("strchr", "0.16.0", VALGRIND), "{csv}");
        assert!((row[3].parse::<f64>().unwrap() - 2.0).abs() < 0.02, "{csv}");
        let (_, json) = app.get(&format!("/series/{WORKLOAD}/{LINEAGE}/data.json?measure={VALGRIND}")).await;
        assert_eq!(json["measure"], VALGRIND, "{json}");
        let compare = format!("/compare/data.json?workload={WORKLOAD}&a={LINEAGE}%400.15.2&b={LINEAGE}%400.16.0");
        let (_, by_wall) = app.get(&compare).await;
        let (_, by_counts) = app.get(&format!("{compare}&measure={VALGRIND}")).await;
        assert_eq!((by_wall["measure"].as_str(), by_counts["measure"].as_str()), (Some("wall"), Some(VALGRIND)));
        assert!((by_wall["slope_delta"].as_f64().unwrap()).abs() < 0.02, "{by_wall}");
        assert!((by_counts["slope_delta"].as_f64().unwrap() - 1.0).abs() < 0.02, "{by_counts}");
        let compare_page = page(
            &app,
            &format!("/compare?workload={WORKLOAD}&a={LINEAGE}%400.15.2&b={LINEAGE}%400.16.0&measure={VALGRIND}"),
        )
        .await;
        assert!(
            compare_page.contains("counts ") && compare_page.contains("× more instructions than"),
            "{compare_page}"
        );
        let switch = compare_page.contains("<nav class=\"measures\"") && compare_page.contains(">wall time</a>");
        assert!(switch, "a link to the same comparison by wall time: {compare_page}");

        // The overview shows wall time where the workload has it, names each cell's metric, and
        // switches to the counts on request.
        let overview = page(&app, "/").await;
        assert!(overview.contains("<span class=\"metric\">wall time</span>"), "{overview}");
        assert!(overview.contains("href=\"/?measure=instructions-valgrind\""), "{overview}");
        let counted_overview = page(&app, &format!("/?measure={VALGRIND}")).await;
        assert!(
            counted_overview.contains("<span class=\"metric\">instructions (Valgrind)</span>"),
            "{counted_overview}"
        );
        assert!(counted_overview.contains("k 2.00"), "{counted_overview}");
        assert_eq!(app.get("/?measure=cycles").await.0, 400);

        // Runs and workloads say their metric; a counted run's medians are of its counts.
        let (_, detail) = app.get(&format!("/api/v1/runs/{counted_run}")).await;
        assert_eq!(detail["measure"], VALGRIND, "{detail}");
        let m = &detail["workloads"][0]["measurements"][0];
        assert_eq!(m["median_ns"].as_f64(), Some(m["instructions"][1].as_f64().unwrap()), "{m}");
        let (_, workloads) = app.get("/api/v1/workloads").await;
        let listed: Vec<(&str, &str)> = workloads["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| (w["name"].as_str().unwrap(), w["measure"].as_str().unwrap()))
            .collect();
        assert_eq!(listed, [(WORKLOAD, "wall"), (WORKLOAD, VALGRIND)]);
    })
    .await;
}

#[tokio::test]
async fn perf_s_and_valgrind_s_counts_never_share_a_series() {
    on_both_backends(|db: TestDb| async move {
        let app = TestApp::new(db).await;
        for body in [
            run("0.15.2", 1.0, Some(("perf", 1.0))),
            run("0.16.0", 1.0, Some(("perf", 1.0))),
            run("0.15.2", 1.0, Some(("valgrind", 1.0))),
            run("0.16.0", 1.0, Some(("valgrind", 2.0))),
        ] {
            assert_eq!(app.submit(&body).await.0, 201);
        }
        // No wall series: the default is the first metric there is.
        let default = series(&app, None).await;
        assert_eq!(default["measures"], json!(["instructions-perf", VALGRIND]), "{default}");
        assert_eq!(default["measure"], "instructions-perf");
        assert!(near(&slopes(&default), &[("0.15.2", 1.0), ("0.16.0", 1.0)]), "{default}");
        let members = the_regression(&app).await["workloads"].clone();
        assert_eq!(members.as_array().unwrap().len(), 1, "{members}");
        assert_eq!(members[0]["measure"], VALGRIND, "{members}");
    })
    .await;
}

/// Regression lines, series and run answers of a store, to compare across stores.
async fn history(store: &Store) -> Value {
    let mut series = Vec::new();
    for metric in [slopewatch_core::wire::Metric::Wall, slopewatch_core::wire::Metric::InstructionsValgrind] {
        for s in store.series(WORKLOAD, metric, LINEAGE).await.unwrap() {
            series.push(json!([s.metric, s.version, s.slope, s.runs, s.sizes]));
        }
    }
    let regressions: Vec<Value> = store
        .regressions(None)
        .await
        .unwrap()
        .into_iter()
        .map(|(r, members)| {
            let members: Vec<Value> = members.iter().map(|m| json!([m.workload, m.metric, m.slope])).collect();
            json!([r.version, r.previous_version, members])
        })
        .collect();
    json!({"series": series, "regressions": regressions})
}

#[tokio::test]
async fn an_export_carries_each_run_s_metric_to_another_store_pruned_or_not() {
    use slopewatch::transfer::{export, import};
    on_both_backends(|db: TestDb| async move {
        let app = TestApp::new(db).await;
        fill(&app).await;
        // The older runs' samples pruned, so both kinds of run record carry a metric.
        let cutoff = time::OffsetDateTime::now_utc();
        let newer = run("0.16.0", 1.0, Some(("valgrind", 2.0)));
        assert_eq!(app.submit(&newer).await.0, 201);
        let report = slopewatch::retention::prune_received_before(&app.db.store, cutoff, cutoff).await.unwrap();
        assert_eq!(report.runs, 4, "{report:?}");
        let mut file = Vec::new();
        let summary = export(&app.db.store, &mut file, |_| {}).await.unwrap();
        assert_eq!((summary.runs, summary.pruned_runs), (5, 4));
        let text = String::from_utf8(file.clone()).unwrap();
        assert_eq!(text.matches("\"measure\":\"instructions\",\"counter\":\"valgrind\"").count(), 3, "{text}");

        for backend in [crate::helpers::Backend::Postgres, crate::helpers::Backend::Sqlite] {
            let target = TestDb::new(backend).await;
            let imported =
                import(&target.store, &Config::default(), false, &mut file.as_slice(), |_| {}).await.unwrap();
            assert!(imported.complete && imported.rejected == 0, "{imported:?}");
            assert_eq!(imported.runs_imported, 5);
            assert_eq!(history(&target.store).await, history(&app.db.store).await, "on {backend:?}");
        }
    })
    .await;
}

/// glibc 2.36's `memcpy` counted under Valgrind, as the agent recorded it: vector loops below
/// 16 KiB, `rep movsb` above, each of whose repetitions Valgrind counts.
const GLIBC_MEMCPY: [(u64, u64); 11] = [
    (64, 581_347),
    (128, 618_133),
    (256, 600_066),
    (512, 744_471),
    (1024, 811_712),
    (2048, 903_147),
    (4096, 883_478),
    (8192, 947_805),
    (16384, 44_742_949),
    (32768, 85_108_183),
    (65536, 154_816_627),
];

#[tokio::test]
async fn a_count_that_changes_regime_holds_its_contract_and_the_series_says_where_it_jumps() {
    on_both_backends(|db: TestDb| async move {
        let app = TestApp::new(db).await;
        let measurements: Vec<Value> = GLIBC_MEMCPY
            .iter()
            .map(|&(size, count)| json!({"size": size, "samples_ns": [count as f64 / 3.0], "instructions": [count]}))
            .collect();
        let workload = json!({"name": "contract.memcpy.length", "size_unit": "bytes", "source_hash": "sha256:00",
            "measurements": measurements,
            "contract": {"expected": "n", "function": "memcpy", "axis": "length"}});
        let mut body = run_of("gcc-glibc", "12.2.0", "build-01", vec![workload]);
        body["measure"] = "instructions".into();
        body["counter"] = "valgrind".into();
        let (status, answer) = app.submit(&body).await;
        assert_eq!(status, 201, "{answer}");

        let (_, series) = app
            .get("/api/v1/series?workload=contract.memcpy.length&toolchain=gcc-glibc&measure=instructions-valgrind")
            .await;
        let complexity = &series["versions"][0]["complexity"];
        assert_eq!(complexity["class"], "n", "{series}");
        assert_eq!(complexity["step"]["at"], 16384.0, "{series}");
        let (_, list) = app.get("/api/v1/regressions").await;
        assert_eq!(list["regressions"].as_array().unwrap().len(), 0, "the contract held: {list}");
        let html = page(&app, "/series/contract.memcpy.length/gcc-glibc?measure=instructions-valgrind").await;
        assert!(html.contains("At 12.2.0 the cost jumps "), "{html}");
        assert!(html.contains("× at 16 KiB: a change of regime at one size"), "{html}");
    })
    .await;
}
