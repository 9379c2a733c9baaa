//! One wire between agents and servers of different releases, on both backends. The requests the
//! agent of the release before capabilities sent are stored by this server, whose answers keep
//! every field that agent read, and this agent reads that server's answers with core's types (both
//! recorded, `tests/fixtures/wire/`). This agent, through a proxy in front of a real server that
//! advertises fewer capabilities, or none while refusing unknown fields as older servers did, sends
//! what fits, says once what it left out, and keeps a run the server cannot store.

use crate::helpers::process::agent_binary;
use crate::helpers::{on_both_backends, serve, TestApp};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};
use slopewatch::config::Config;
use slopewatch_core::answers::reads::{RegressionAnswer, Series, ToolchainList};
use slopewatch_core::answers::{BisectionAccepted, Capabilities, ErrorBody, RunAccepted};
use slopewatch_core::wire::{Accepts, Capability, Metric};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wire")
}

/// One exchange recorded between the parent's agent and server (`parent/exchanges.json`).
#[derive(Debug, Deserialize)]
struct Exchange {
    step: String,
    method: String,
    path: String,
    query: String,
    status: u16,
    request: Option<String>,
    response: String,
}

fn exchanges() -> Vec<Exchange> {
    serde_json::from_slice(&std::fs::read(fixtures().join("parent/exchanges.json")).unwrap()).unwrap()
}

fn recorded(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join("parent").join(name)).unwrap()
}

fn recorded_json(name: &str) -> Value {
    serde_json::from_slice(&recorded(name)).unwrap()
}

/// The exchange of `step` by `method` to the route whose path starts with `path`.
fn exchange(step: &str, method: &str, path: &str) -> Exchange {
    exchanges().into_iter().find(|e| e.step == step && e.method == method && e.path.starts_with(path)).unwrap()
}

fn read<T: DeserializeOwned>(what: &str, answer: &Value) -> T {
    serde_json::from_value(answer.clone()).unwrap_or_else(|e| panic!("{what} does not read with core's type: {e}"))
}

/// Where `now` lacks a field `then` has, or has it as another JSON type (a null on either side
/// matches anything): objects field by field, arrays by their first elements.
fn lost_fields(then: &Value, now: &Value, at: &str, lost: &mut Vec<String>) {
    match (then, now) {
        (Value::Null, _) | (_, Value::Null) => {}
        (Value::Object(then), Value::Object(now)) => {
            for (k, v) in then {
                match now.get(k) {
                    Some(n) => lost_fields(v, n, &format!("{at}.{k}"), lost),
                    None => lost.push(format!("{at}.{k}")),
                }
            }
        }
        (Value::Array(then), Value::Array(now)) => {
            if let (Some(t), Some(n)) = (then.first(), now.first()) {
                lost_fields(t, n, &format!("{at}[0]"), lost);
            }
        }
        (Value::Number(_), Value::Number(_))
        | (Value::String(_), Value::String(_))
        | (Value::Bool(_), Value::Bool(_)) => {}
        (then, now) => lost.push(format!("{at}: {then} is now {now}")),
    }
}

fn assert_keeps_fields(step: &str, then: &Value, now: &Value) {
    let mut lost = Vec::new();
    lost_fields(then, now, "", &mut lost);
    assert!(lost.is_empty(), "{step}: today's answer lost what the parent's carried: {lost:?}\n{now}");
}

#[tokio::test]
async fn the_parent_agents_requests_are_stored_and_this_servers_answers_keep_every_field_it_read() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let token = app.ingest_token.clone();
        for e in exchanges().iter().filter(|e| e.method == "POST" && e.path == "/api/v1/runs") {
            let (status, answer) = app.submit_raw(&token, recorded(e.request.as_ref().unwrap())).await;
            assert_eq!(status.as_u16(), e.status, "{}: {answer}", e.step);
            let then = recorded_json(&e.response);
            if e.status == 422 {
                // Refused as before; the list of fields it expected grows with each field added.
                assert_eq!(
                    without_expected(&answer),
                    without_expected(&then),
                    "{}: an unknown field is refused as before",
                    e.step
                );
                assert!(read::<ErrorBody>(&e.step, &answer)
                    .error
                    .message
                    .contains("unknown field `capabilities_test`"));
                continue;
            }
            assert_keeps_fields(&e.step, &then, &answer);
            let accepted: RunAccepted = read(&e.step, &answer);
            assert_eq!(accepted.run_id, read::<RunAccepted>(&e.step, &then).run_id);
            assert_eq!(accepted.created, e.status == 201);
        }

        let (_, list) = app.get("/api/v1/regressions").await;
        let id = list["regressions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| &r["regression"])
            .find(|r| r["lineage"] == "bisect-libc");
        let id =
            id.and_then(|r| r["id"].as_i64()).expect("the quadratic version opened a regression, as on the parent");
        let b = exchange("bisect", "POST", "/api/v1/regressions/");
        let bisection = app
            .send(
                Request::post(format!("/api/v1/regressions/{id}/bisections"))
                    .header("content-type", "application/json")
                    .header("authorization", format!("Bearer {token}"))
                    .body(Body::from(recorded(b.request.as_ref().unwrap())))
                    .unwrap(),
            )
            .await;
        assert_eq!(bisection.0, StatusCode::CREATED, "{}", bisection.1);
        assert_keeps_fields("bisection", &recorded_json(&b.response), &bisection.1);
        assert_eq!(read::<BisectionAccepted>("bisection", &bisection.1).regression_id, id);

        for (step, path, uri) in [
            ("baseline", "/api/v1/toolchains", "/api/v1/toolchains".to_string()),
            (
                "baseline",
                "/api/v1/series",
                format!("/api/v1/series?{}", exchange("baseline", "GET", "/api/v1/series").query),
            ),
            ("bisect", "/api/v1/regressions/", format!("/api/v1/regressions/{id}")),
        ] {
            let e = exchange(step, "GET", path);
            let (status, now) = app.get_with(&uri, Some(&token)).await;
            assert_eq!(status.as_u16(), e.status, "{uri}: {now}");
            assert_keeps_fields(&uri, &recorded_json(&e.response), &now);
        }
        let (_, toolchains) = app.get("/api/v1/toolchains").await;
        let listed = read::<ToolchainList>("toolchains", &toolchains).toolchains;
        assert!(
            listed.iter().any(|t| (t.name.as_str(), t.version.as_str()) == ("bisect-libc", "0.16.0")),
            "{listed:?}"
        );
        let (_, series) = app.get("/api/v1/series?workload=strchr&toolchain=bisect-libc").await;
        let versions = read::<Series>("series", &series).versions;
        assert!(versions[0].slope.is_some() && versions[0].complexity.is_some(), "{versions:?}");
        let (_, regression) = app.get(&format!("/api/v1/regressions/{id}")).await;
        let regression: RegressionAnswer = read("regression", &regression);
        assert_eq!(regression.regression.previous_version.as_deref(), Some("0.15.2"));

        // The parent had no capabilities: an agent took its 404 for the wire it accepted.
        assert_eq!(exchange("capabilities", "GET", "/api/v1/capabilities").status, 404);
        let (status, capabilities) = app.get("/api/v1/capabilities").await;
        assert_eq!(status, StatusCode::OK, "{capabilities}");
        let capabilities: Capabilities = read("capabilities", &capabilities);
        assert_eq!(capabilities.accepted(), Accepts::everything());
        assert_eq!(capabilities.version, env!("CARGO_PKG_VERSION"));
    })
    .await;
}

#[test]
fn this_agent_reads_the_parent_servers_recorded_answers_with_cores_types() {
    for e in exchanges() {
        let answer = recorded(&e.response);
        let what = format!("{} {} {}", e.step, e.method, e.path);
        match (e.method.as_str(), e.path.as_str(), e.status) {
            ("POST", "/api/v1/runs", 200 | 201) => {
                let a: RunAccepted = serde_json::from_slice(&answer).expect(&what);
                let sent = recorded_json(e.request.as_ref().unwrap());
                assert_eq!(
                    (a.run_id.to_string(), a.created),
                    (sent["run_id"].as_str().unwrap().into(), e.status == 201)
                );
                assert_eq!(a.url, format!("/runs/{}", a.run_id));
                let metric = match (sent["measure"].as_str(), sent["counter"].as_str()) {
                    (Some("cpu"), _) => Metric::Cpu,
                    (Some("instructions"), Some("valgrind")) => Metric::InstructionsValgrind,
                    _ => Metric::Wall,
                };
                assert_eq!(a.measure, metric, "{what}");
                assert!(!a.fits.is_empty(), "{what}");
            }
            ("POST", "/api/v1/runs", 422) => {
                let body: ErrorBody = serde_json::from_slice(&answer).expect(&what);
                assert!(body.error.message.contains("unknown field `capabilities_test`"), "{what}");
                assert_eq!(Capability::of_refusal(&body.error.message), None, "no capability of this release's");
            }
            ("POST", _, 201) => {
                let a: BisectionAccepted = serde_json::from_slice(&answer).expect(&what);
                let sent = recorded_json(e.request.as_ref().unwrap());
                assert_eq!(
                    a.url,
                    format!("/regressions/{}#bisection-{}", a.regression_id, sent["bisection_id"].as_str().unwrap())
                );
            }
            ("GET", "/api/v1/toolchains", 200) => {
                let list: ToolchainList = serde_json::from_slice(&answer).expect(&what);
                let bisect: Vec<&str> =
                    list.toolchains.iter().filter(|t| t.name == "bisect-libc").map(|t| t.version.as_str()).collect();
                assert_eq!(bisect, ["0.15.2", "0.16.0"], "{what}");
            }
            ("GET", "/api/v1/series", 200) => {
                let series: Series = serde_json::from_slice(&answer).expect(&what);
                let first = &series.versions[0];
                assert_eq!(first.version, "0.15.2");
                assert!((first.slope.unwrap() - 1.0).abs() < 0.2, "{first:?}");
                assert_eq!(first.complexity.as_ref().and_then(|c| c.class).map(|c| c.as_str()), Some("n"));
            }
            ("GET", _, 200) => {
                let r: RegressionAnswer = serde_json::from_slice(&answer).expect(&what);
                let row = &r.regression;
                assert_eq!((row.lineage.as_str(), row.version.as_str()), ("bisect-libc", "0.16.0"));
                assert_eq!(row.previous_version.as_deref(), Some("0.15.2"));
                assert_eq!(r.workloads.iter().map(|w| w.workload.as_str()).collect::<Vec<_>>(), ["strchr"]);
            }
            ("GET", "/api/v1/capabilities", 404) => {
                assert!(serde_json::from_slice::<Capabilities>(&answer).is_err(), "a 404 advertises nothing");
            }
            _ => panic!("an exchange this test does not read: {what}"),
        }
    }
    // Servers older than the parent refused each later field by name, in the same error body.
    let older: Value = serde_json::from_slice(&std::fs::read(fixtures().join("older/refusals.json")).unwrap()).unwrap();
    for (field, refusal) in older.as_object().unwrap() {
        let body: ErrorBody = read(field, &refusal["body"]);
        assert_eq!(Capability::of_refusal(&body.error.message), Capability::of_field(field), "{field}");
        assert!(Capability::of_field(field).is_some(), "{field}");
    }
}

/// What the proxy in front of a real server saw: each request, what it answered.
#[derive(Debug, Clone)]
struct Seen {
    method: Method,
    path: String,
    status: u16,
    body: Vec<u8>,
}

/// A server of another release, made of a real one: it advertises `advertised` (or answers 404
/// for the capabilities, as a server before them), refuses a run carrying a field of a capability
/// it does not `understand` with the 422 such a server gave, and forwards everything else.
#[derive(Clone)]
struct Proxy {
    upstream: String,
    advertised: Option<Vec<Capability>>,
    understands: Accepts,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Proxy {
    async fn start(upstream: &str, advertised: Option<Vec<Capability>>, understands: Accepts) -> (String, Proxy) {
        let proxy = Proxy { upstream: upstream.to_string(), advertised, understands, seen: Arc::default() };
        let base = serve(Router::new().fallback(relay).with_state(proxy.clone())).await;
        (base, proxy)
    }

    fn seen(&self, method: Method, path: &str) -> Vec<Seen> {
        self.seen.lock().unwrap().iter().filter(|s| s.method == method && s.path == path).cloned().collect()
    }

    fn runs(&self) -> Vec<Seen> {
        self.seen(Method::POST, "/api/v1/runs")
    }

    /// The first field of `run` this server does not understand, with its path: the first a strict
    /// parser meets, in the order the agent writes a run's fields.
    fn first_unknown(&self, run: &Value) -> Option<(String, &'static str)> {
        let lacks = |field: &str| Capability::of_field(field).is_some_and(|c| !self.understands.contains(c));
        if run["toolchain"].get("version_from").is_some() && lacks("version_from") {
            return Some(("toolchain.version_from".into(), "version_from"));
        }
        for (i, w) in run["workloads"].as_array()?.iter().enumerate() {
            for field in ["failure", "contract", "not_provided", "size_of_interest"] {
                if w.get(field).is_some() && lacks(field) {
                    return Some((format!("workloads[{i}].{field}"), field));
                }
            }
        }
        ["measure", "counter"].into_iter().find(|f| run.get(*f).is_some() && lacks(f)).map(|f| (f.to_string(), f))
    }
}

/// The 422 a server from before `field` answered a run carrying it at `path` (`older/`).
fn older_refusal(field: &str, path: &str) -> String {
    let older: Value = serde_json::from_slice(&std::fs::read(fixtures().join("older/refusals.json")).unwrap()).unwrap();
    older[field]["body"].to_string().replace(&format!("workloads[0].{field}"), path)
}

async fn relay(State(p): State<Proxy>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let path = parts.uri.path().to_string();
    let is = |method: Method, route: &str| parts.method == method && path == route;
    let unknown = is(Method::POST, "/api/v1/runs")
        .then(|| serde_json::from_slice::<Value>(&body).ok())
        .flatten()
        .and_then(|run| p.first_unknown(&run));
    let (status, answer) = if is(Method::GET, "/api/v1/capabilities") {
        match &p.advertised {
            Some(list) => (200, json!({"accepts": list, "version": "0.0.9"}).to_string()),
            None => (404, String::new()),
        }
    } else if let Some((at, field)) = unknown {
        (422, older_refusal(field, &at))
    } else {
        let url = format!("{}{}", p.upstream, parts.uri.path_and_query().map_or("", |q| q.as_str()));
        let mut forward = reqwest::Client::new().request(parts.method.clone(), url).body(body.clone());
        for name in ["authorization", "content-type"] {
            if let Some(v) = parts.headers.get(name) {
                forward = forward.header(name, v);
            }
        }
        let answer = forward.send().await.unwrap();
        (answer.status().as_u16(), answer.text().await.unwrap())
    };
    p.seen.lock().unwrap().push(Seen { method: parts.method, path, status, body: body.to_vec() });
    (StatusCode::from_u16(status).unwrap(), [(CONTENT_TYPE, "application/json")], answer).into_response()
}

/// The parent agent's run of `step` (`failures`, `contracts`, `cpu`, `libc-axis`) written under
/// `dir` with a run id of its own, so each case stores a run of its own: its path and id.
fn run_file(dir: &Path, step: &str) -> (PathBuf, String) {
    let mut run = recorded_json(&format!("{step}-created.run.request.json"));
    let id = uuid::Uuid::new_v4().to_string();
    run["run_id"] = json!(id);
    let path = dir.join(format!("{step}-{id}.json"));
    std::fs::write(&path, serde_json::to_vec_pretty(&run).unwrap()).unwrap();
    (path, id)
}

/// What `slopewatch-agent submit` did with `files` at `server`: its exit code, and stdout with stderr.
async fn submit(server: &str, token: &str, files: &[&Path], spool: &Path) -> (Option<i32>, String) {
    let mut cmd = std::process::Command::new(agent_binary());
    cmd.args(["submit", "--server", server, "--token", token, "--retry-base", "10ms", "--attempts", "2"])
        .args(files)
        .arg("--spool-dir")
        .arg(spool)
        .env_remove("SLOPEWATCH_CONFIG");
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprintln!("--- submit\n{said}");
    (out.status.code(), said)
}

/// The app over `db` served on loopback: the app, its URL, an ingest token, a scratch directory.
async fn served(db: crate::helpers::TestDb) -> (TestApp, String, String, tempfile::TempDir) {
    let app = TestApp::new(db).await;
    let (base, token) = (serve(app.router.clone()).await, app.ingest_token.clone());
    (app, base, token, tempfile::tempdir().unwrap())
}

fn sent(seen: &Seen) -> Value {
    serde_json::from_slice(&seen.body).unwrap()
}

fn names(run: &Value) -> Vec<String> {
    run["workloads"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap().to_string()).collect()
}

fn lacking(c: Capability) -> Vec<Capability> {
    Capability::ALL.into_iter().filter(|&a| a != c).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_advertises_less_is_sent_what_it_accepts_and_the_agent_says_once_what_it_left_out() {
    on_both_backends(|db| async move {
        let (app, base, token, dir) = served(db).await;

        // Without failures and sizes of interest: two runs, one read of the capabilities.
        let advertised = vec![Capability::Contracts, Capability::Measures, Capability::VersionAxes];
        let (url, proxy) = Proxy::start(&base, Some(advertised.clone()), advertised.into_iter().collect()).await;
        let (failures, failures_id) = run_file(dir.path(), "failures");
        let (contracts, _) = run_file(dir.path(), "contracts");
        let (code, said) = submit(&url, &token, &[&failures, &contracts], &dir.path().join("spool")).await;
        assert_eq!(code, Some(0), "{said}");
        assert_eq!(proxy.seen(Method::GET, "/api/v1/capabilities").len(), 1, "read once per invocation");
        let runs = proxy.runs();
        assert_eq!(runs.iter().map(|s| s.status).collect::<Vec<_>>(), [201, 201], "sent once each, never refused");
        let first = sent(&runs[0]);
        assert_eq!(names(&first), ["memchr"], "{first}");
        assert!(!runs[0].body.windows(7).any(|w| w == b"failure") && first["workloads"][0].get("size_of_interest").is_none());
        let contracts_json: Value = serde_json::from_slice(&std::fs::read(&contracts).unwrap()).unwrap();
        assert_eq!(sent(&runs[1]), contracts_json, "a run using nothing the server lacks goes as it is");
        assert_eq!(said.matches("does not accept failures").count(), 1, "{said}");
        assert_eq!(said.matches("does not accept sizes of interest").count(), 1, "{said}");
        assert!(!said.contains("does not accept contracts"), "{said}");
        assert!(said.contains(&format!(
            "the server at {url} does not accept failures (it is older than this agent); sent run {failures_id} without \
             its 2 failed workloads: strchr (crashed), strtol (wrong result)"
        )), "{said}");
        let (status, stored) = app.get(&format!("/api/v1/runs/{failures_id}")).await;
        assert_eq!(status, StatusCode::OK, "{stored}");
        assert_eq!(names(&stored), ["memchr"]);
        assert!(stored["workloads"][0]["size_of_interest"].is_null(), "{stored}");

        // Without contracts: the probes as plain workloads, without the one the libc lacks.
        let advertised = lacking(Capability::Contracts);
        let (url, proxy) = Proxy::start(&base, Some(advertised.clone()), advertised.into_iter().collect()).await;
        let (contracts, contracts_id) = run_file(dir.path(), "contracts");
        let (code, said) = submit(&url, &token, &[&contracts], &dir.path().join("spool")).await;
        assert_eq!(code, Some(0), "{said}");
        let runs = proxy.runs();
        assert_eq!(runs.len(), 1, "{said}");
        let probes = sent(&runs[0]);
        assert_eq!(names(&probes), ["contract.strchr.remaining", "contract.strchr.distance"]);
        let workloads = probes["workloads"].as_array().unwrap();
        assert!(workloads.iter().all(|w| w.get("contract").is_none() && w.get("not_provided").is_none()), "{probes}");
        assert_eq!(said.matches("does not accept contracts").count(), 1, "{said}");
        assert!(said.contains("without the 1 whose function the libc does not provide: contract.strlcpy.length"));
        let (status, stored) = app.get(&format!("/api/v1/runs/{contracts_id}")).await;
        assert_eq!((status, names(&stored).len()), (StatusCode::OK, 2), "{stored}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_a_server_cannot_store_rightly_is_kept_and_the_agent_says_why_and_what_to_do() {
    on_both_backends(|db| async move {
        let (app, base, token, dir) = served(db).await;
        for (lacks, step, says) in [
            (Capability::Measures, "cpu", ["takes wall time only", "--measure wall"]),
            (Capability::VersionAxes, "libc-axis", ["knows only compiler versions", "version_from = \"compiler\""]),
        ] {
            let advertised = lacking(lacks);
            let (url, proxy) = Proxy::start(&base, Some(advertised.clone()), advertised.into_iter().collect()).await;
            let (file, id) = run_file(dir.path(), step);
            let spool = dir.path().join(format!("spool-{step}"));
            let (code, said) = submit(&url, &token, &[&file], &spool).await;
            assert_eq!(code, Some(1), "{said}");
            assert!(said.contains(&format!("run {id} could not be stored at {url}: ")), "{said}");
            assert!(says.iter().all(|s| said.contains(s)) && said.contains("upgrade it"), "{said}");
            assert!(proxy.runs().is_empty(), "not sent: {said}");
            let kept = spool.join("rejected").join(format!("{id}.json"));
            assert_eq!(
                std::fs::read(&kept).map(|b| serde_json::from_slice::<Value>(&b).unwrap()).unwrap()["run_id"],
                id
            );
            let why = std::fs::read_to_string(kept.with_extension("error.txt")).unwrap();
            assert!(why.contains(says[0]), "{why}");
            assert_eq!(app.get(&format!("/api/v1/runs/{id}")).await.0, StatusCode::NOT_FOUND);
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_advertises_nothing_is_sent_the_parents_wire_and_an_older_one_corrects_it_by_its_refusals() {
    on_both_backends(|db| async move {
        let (app, base, token, dir) = served(db).await;

        // The parent: a 404 for the capabilities, and the run sent as the parent's agent sent it.
        let (url, proxy) = Proxy::start(&base, None, Accepts::everything()).await;
        let (cpu, cpu_id) = run_file(dir.path(), "cpu");
        let (code, said) = submit(&url, &token, &[&cpu], &dir.path().join("spool")).await;
        assert_eq!(code, Some(0), "{said}");
        let runs = proxy.runs();
        let file: Value = serde_json::from_slice(&std::fs::read(&cpu).unwrap()).unwrap();
        assert_eq!((runs.len(), runs[0].status), (1, 201));
        assert_eq!(sent(&runs[0]), file, "today's wire, unchanged");
        assert!(!said.contains("does not accept"), "{said}");
        assert_eq!(app.get(&format!("/api/v1/runs/{cpu_id}")).await.0, StatusCode::OK);

        // A server before failures: each field it refuses by name is left out from then on, for
        // the runs after it too.
        let (url, proxy) = Proxy::start(&base, None, std::iter::empty().collect()).await;
        let (failures, failures_id) = run_file(dir.path(), "failures");
        let (again, again_id) = run_file(dir.path(), "failures");
        let (contracts, contracts_id) = run_file(dir.path(), "contracts");
        let (code, said) = submit(&url, &token, &[&failures, &again, &contracts], &dir.path().join("spool")).await;
        assert_eq!(code, Some(0), "{said}");
        assert_eq!(proxy.seen(Method::GET, "/api/v1/capabilities").len(), 1);
        let runs = proxy.runs();
        let statuses: Vec<u16> = runs.iter().map(|s| s.status).collect();
        assert_eq!(statuses, [422, 422, 201, 201, 422, 201], "failure, then size_of_interest; contract: {said}");
        for run in [&runs[2], &runs[3]] {
            assert_eq!(names(&sent(run)), ["memchr"]);
            assert!(sent(run)["workloads"][0].get("size_of_interest").is_none());
        }
        assert_eq!(said.matches("does not accept failures").count(), 2, "once for each run: {said}");
        assert_eq!(said.matches("does not accept sizes of interest").count(), 2, "{said}");
        assert_eq!(said.matches("does not accept contracts").count(), 1, "{said}");
        for id in [failures_id, again_id, contracts_id] {
            assert_eq!(app.get(&format!("/api/v1/runs/{id}")).await.0, StatusCode::OK);
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_token_reads_the_capabilities_where_reading_needs_a_login() {
    on_both_backends(|db| async move {
        let mut config = Config::default();
        config.auth.require_login_to_read = true;
        let app = TestApp::with_config(db, config).await;
        assert_eq!(app.get("/api/v1/capabilities").await.0, StatusCode::UNAUTHORIZED);
        let (status, answer) = app.get_with("/api/v1/capabilities", Some(&app.ingest_token)).await;
        assert_eq!(status, StatusCode::OK, "{answer}");

        let base = serve(app.router.clone()).await;
        let dir = tempfile::tempdir().unwrap();
        let (failures, id) = run_file(dir.path(), "failures");
        let (code, said) = submit(&base, &app.ingest_token, &[&failures], &dir.path().join("spool")).await;
        assert_eq!(code, Some(0), "{said}");
        assert!(said.contains("(2 of 3 workloads failed)") && !said.contains("does not accept"), "{said}");
        // Read twice with the token, once above and once by the agent; never refused.
        let metrics = app.metrics().await;
        let read = r#"slopewatch_http_requests_total{route="/api/v1/capabilities",method="GET",status="200"} 2"#;
        let refused = r#"slopewatch_http_requests_total{route="/api/v1/capabilities",method="GET",status="401"} 1"#;
        assert!(metrics.contains(read) && metrics.contains(refused), "{metrics}");
        let (status, stored) = app.get_with(&format!("/api/v1/runs/{id}"), Some(&app.ingest_token)).await;
        assert_eq!((status, names(&stored).len()), (StatusCode::OK, 3), "{stored}");
    })
    .await;
}

/// An error answer without serde's ", expected one of …" tail on its message and reason.
fn without_expected(answer: &serde_json::Value) -> serde_json::Value {
    let mut answer = answer.clone();
    for key in ["message", "reason"] {
        if let Some(text) = answer["error"][key].as_str() {
            let cut = text.split(", expected one of").next().unwrap_or(text).to_string();
            answer["error"][key] = serde_json::Value::String(cut);
        }
    }
    answer
}
