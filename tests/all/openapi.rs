//! The OpenAPI document against the server it describes: every documented operation is served at
//! its route and every API route is documented, bodies built from the wire types validate against
//! the request schema exactly when serde accepts them, real answers validate against their
//! response schemas, `docs/openapi.json` is the document served, and an independent validator
//! (`openapi-spec-validator`, as client generators use) accepts it.

use crate::builders::RunShape;
use crate::helpers::{on_both_backends, Backend, TestApp, TestDb};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use slopewatch::config::Config;
use slopewatch_core::wire::{Host, Measurement, RunSubmission, SizeUnit, Toolchain, VersionFrom, WorkloadRun};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use tower::ServiceExt;

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

async fn sqlite_app() -> TestApp {
    TestApp::new(TestDb::new(Backend::Sqlite).await).await
}

async fn served_document(app: &TestApp) -> Value {
    let (status, doc) = app.get("/api/v1/openapi.json").await;
    assert_eq!(status, StatusCode::OK, "{doc}");
    assert!(doc.is_object(), "the document is JSON: {doc}");
    doc
}

/// A validator for `schema`, a schema from the document whose `$ref`s point into its components.
fn validator(doc: &Value, schema: &Value) -> jsonschema::Validator {
    let root = json!({"components": doc["components"], "allOf": [schema]});
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&root)
        .unwrap_or_else(|e| panic!("not a JSON Schema 2020-12: {e}\n{schema}"))
}

/// Why `instance` does not fit `schema`, one line per error; empty when it fits.
fn violations(doc: &Value, schema: &Value, instance: &Value) -> Vec<String> {
    validator(doc, schema).iter_errors(instance).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

fn request_schema(doc: &Value) -> &Value {
    let schema = &doc["paths"]["/api/v1/runs"]["post"]["requestBody"]["content"]["application/json"]["schema"];
    assert!(schema.is_object(), "POST /api/v1/runs documents a JSON body");
    schema
}

/// A run as the agent builds it, from the wire types, with every optional part present.
fn submission() -> RunSubmission {
    let measurements = (0..4u32)
        .map(|i| {
            let size = 65536u64 << i;
            let ns = size as f64 * 0.5;
            Measurement {
                size,
                samples_ns: vec![ns, ns * 1.01, ns * 0.99],
                instructions: Some(vec![size * 3, size * 3 + 7, size * 3 - 5]),
            }
        })
        .collect();
    RunSubmission {
        run_id: uuid::Uuid::new_v4(),
        agent_version: "0.1.0".into(),
        started_at: time::OffsetDateTime::now_utc(),
        host: Host { name: "build-01".into(), cpu: "Test CPU".into(), kernel: "6.1.0".into(), arch: "x86_64".into() },
        toolchain: Toolchain {
            name: "musl-gcc".into(),
            version: "1.2.5".into(),
            libc: "musl 1.2.5".into(),
            target: "x86_64-linux-musl".into(),
            compiler: "musl-gcc".into(),
            flags: "-O2".into(),
            version_from: VersionFrom::Libc,
        },
        workloads: vec![WorkloadRun {
            metadata: [("sqlite_version".to_string(), "3.46.0".to_string())].into(),
            ..WorkloadRun::new("sqlite-insert".into(), SizeUnit::Records, "sha256:00".into(), measurements)
        }],
        measure: Default::default(),
        counter: None,
    }
}

#[tokio::test]
async fn the_document_is_openapi_3_1_with_the_bearer_scheme_and_the_error_body() {
    let app = sqlite_app().await;
    let doc = served_document(&app).await;
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], slopewatch::instance::VERSION);
    let bearer = &doc["components"]["securitySchemes"]["bearer"];
    assert_eq!((bearer["type"].as_str(), bearer["scheme"].as_str()), (Some("http"), Some("bearer")), "{bearer}");
    assert_eq!(doc["paths"]["/api/v1/runs"]["post"]["security"], json!([{"bearer": []}]));
    let read = json!([{}, {"bearer": []}, {"session": []}]);
    assert_eq!(doc["paths"]["/api/v1/hosts"]["get"]["security"], read, "reads: anyone, or a token or session");
    let session = &doc["components"]["securitySchemes"]["session"];
    assert_eq!((session["type"].as_str(), session["in"].as_str()), (Some("apiKey"), Some("cookie")), "{session}");
    assert_eq!(session["name"], "sw_session");
    let paths: BTreeSet<&str> = doc["paths"].as_object().unwrap().keys().map(String::as_str).collect();
    for path in [
        "/api/v1/runs",
        "/api/v1/runs/{id}",
        "/api/v1/workloads",
        "/api/v1/toolchains",
        "/api/v1/hosts",
        "/api/v1/series",
        "/api/v1/regressions",
        "/api/v1/regressions/{id}",
        "/api/v1/toolchains/{lineage}/{version}",
        "/api/v1/openapi.json",
        "/healthz",
        "/readyz",
        "/metrics",
    ] {
        assert!(paths.contains(path), "{path} is documented: {paths:?}");
    }
    // Every 4xx and 5xx answer of the API is the one error body; a probe answers with its own.
    for (path, item) in doc["paths"].as_object().unwrap().iter().filter(|(p, _)| p.starts_with("/api/")) {
        for (method, op) in item.as_object().unwrap() {
            for (status, response) in op["responses"].as_object().unwrap() {
                if status.starts_with('4') || status.starts_with('5') {
                    let schema = &response["content"]["application/json"]["schema"];
                    assert_eq!(schema["$ref"], "#/components/schemas/ErrorBody", "{method} {path} {status}");
                }
            }
        }
    }
    let error = &doc["components"]["schemas"]["ErrorDetail"];
    let required: BTreeSet<&str> = error["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(required, BTreeSet::from(["status", "code", "message"]), "{error}");
}

#[tokio::test]
async fn every_documented_operation_is_served_at_its_route() {
    let app = sqlite_app().await;
    let doc = served_document(&app).await;
    let mut operations = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in METHODS.iter().filter(|m| item.get(**m).is_some()) {
            operations.push((path.clone(), method.to_uppercase()));
        }
    }
    for (path, method) in &operations {
        let uri = path.replace("{id}", &uuid::Uuid::new_v4().to_string());
        let res = app
            .router
            .clone()
            .oneshot(Request::builder().method(method.as_str()).uri(uri).body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_ne!(res.status(), StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
    }
    // The request metrics label each request with the route the router matched.
    let (_, metrics) = app.get("/metrics").await;
    let metrics = metrics.as_str().unwrap();
    for (path, method) in &operations {
        let label = format!("slopewatch_http_requests_total{{route=\"{path}\",method=\"{method}\",");
        assert!(metrics.contains(&label), "{method} {path} is documented but the router does not serve it:\n{metrics}");
    }
}

/// String literals that follow `marker` in `source`, e.g. the paths of `.route(` calls.
fn literals_after<'a>(source: &'a str, marker: &str) -> Vec<&'a str> {
    source
        .match_indices(marker)
        .filter_map(|(at, _)| {
            let rest = source[at + marker.len()..].trim_start();
            let rest = rest.strip_prefix('"')?;
            Some(&rest[..rest.find('"')?])
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[tokio::test]
async fn every_api_route_in_the_server_is_documented() {
    let app = sqlite_app().await;
    let doc = served_document(&app).await;
    let documented: BTreeSet<&str> = doc["paths"].as_object().unwrap().keys().map(String::as_str).collect();
    let mut files = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    let mut annotated = BTreeSet::new();
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap();
        // A route added with axum's own `.route` would be served but left out of the document.
        for marker in [".route(", ".route_service(", ".nest(", ".nest_service("] {
            for path in literals_after(&source, marker) {
                let operational = ["/healthz", "/readyz", "/metrics"].contains(&path);
                assert!(
                    !path.starts_with("/api") && !operational,
                    "{}: {path} is registered with `{marker}`, so it is not in the OpenAPI document; \
                     give its handler a #[utoipa::path] and register it with utoipa_axum's routes!",
                    file.display()
                );
            }
        }
        for attribute in source.split("#[utoipa::path(").skip(1) {
            let path = literals_after(attribute, "path =").first().map(|p| p.to_string());
            let path = path.unwrap_or_else(|| panic!("{}: a #[utoipa::path] without a path", file.display()));
            assert!(
                documented.contains(path.as_str()),
                "{}: {path} has #[utoipa::path] but is not served",
                file.display()
            );
            annotated.insert(path);
        }
    }
    let documented: BTreeSet<String> = documented.into_iter().map(String::from).collect();
    assert_eq!(annotated, documented, "each documented path comes from a #[utoipa::path] in src/");
}

#[tokio::test]
async fn a_submission_built_from_the_wire_types_fits_the_request_schema_and_is_stored() {
    let app = sqlite_app().await;
    let doc = served_document(&app).await;
    let schema = request_schema(&doc);
    let full = serde_json::to_value(submission()).unwrap();
    assert_eq!(violations(&doc, schema, &full), Vec::<String>::new(), "{full}");
    let mut bare = submission();
    bare.workloads[0].metadata.clear();
    bare.workloads[0].measurements.iter_mut().for_each(|m| m.instructions = None);
    let bare = serde_json::to_value(bare).unwrap();
    assert_eq!(violations(&doc, schema, &bare), Vec::<String>::new(), "{bare}");
    let agent_shaped = RunShape::new("gcc-glibc", "14.2.0").host("build-02").workloads(3).sizes(5).samples(4).json();
    assert_eq!(violations(&doc, schema, &agent_shaped), Vec::<String>::new());
    for body in [full, bare, agent_shaped] {
        let (status, answer) = app.submit(&body).await;
        assert_eq!(status, StatusCode::CREATED, "{answer}");
    }
}

/// Every object in a submission, as a JSON pointer.
fn object_pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            out.push(at.clone());
            for (k, v) in map {
                object_pointers(v, format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) => {
            if let Some(first) = items.first() {
                object_pointers(first, format!("{at}/0"), out);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn the_request_schema_accepts_exactly_the_shapes_serde_accepts() {
    let app = sqlite_app().await;
    let doc = served_document(&app).await;
    let schema = request_schema(&doc);
    let valid = validator(&doc, schema);
    let serde_accepts = |v: &Value| serde_json::from_value::<RunSubmission>(v.clone()).is_ok();
    let full = serde_json::to_value(submission()).unwrap();
    let mut pointers = Vec::new();
    object_pointers(&full, String::new(), &mut pointers);
    let mut cases: Vec<(String, Value)> = Vec::new();
    for pointer in &pointers {
        let keys: Vec<String> = full.pointer(pointer).unwrap().as_object().unwrap().keys().cloned().collect();
        for key in keys {
            let mut without = full.clone();
            without.pointer_mut(pointer).unwrap().as_object_mut().unwrap().remove(&key);
            cases.push((format!("{pointer}/{key} left out"), without));
        }
        let mut extra = full.clone();
        extra.pointer_mut(pointer).unwrap().as_object_mut().unwrap().insert("colour".into(), json!("blue"));
        cases.push((format!("{pointer}/colour added"), extra));
    }
    let replaced = [
        ("/workloads/0/size_unit", json!("furlongs")),
        ("/workloads/0/measurements/0/size", json!(-1)),
        ("/workloads/0/measurements/0/size", json!(1.5)),
        ("/workloads/0/measurements/0/samples_ns/0", json!("fast")),
        ("/workloads/0/measurements/0/instructions", Value::Null),
        ("/workloads/0/metadata/sqlite_version", json!(3)),
        ("/run_id", json!("not-a-uuid")),
        ("/started_at", json!(5)),
        ("/started_at", json!("yesterday")),
        ("/host", json!("build-01")),
    ];
    for (pointer, value) in replaced {
        let mut changed = full.clone();
        *changed.pointer_mut(pointer).unwrap() = value.clone();
        cases.push((format!("{pointer} = {value}"), changed));
    }
    for (case, body) in &cases {
        assert_eq!(
            valid.is_valid(body),
            serde_accepts(body),
            "{case}: the schema and serde disagree (schema errors: {:?})",
            violations(&doc, schema, body)
        );
    }
    assert!(cases.len() > 30, "{} cases", cases.len());
    assert!(cases.iter().any(|(c, b)| c.ends_with("/name left out") && !serde_accepts(b)));
    assert!(cases.iter().any(|(c, b)| c.ends_with("/cpu left out") && serde_accepts(b)));
}

/// One documented response: path template, method, status.
type Exercised = BTreeSet<(String, String, String)>;

/// Sends `req`, checks that the answer's status is documented for `path` and `method`, that its
/// content type is the documented one and that a JSON body fits the documented schema.
async fn exercise(app: &TestApp, doc: &Value, seen: &mut Exercised, path: &str, req: Request<Body>) -> Value {
    let method = req.method().as_str().to_lowercase();
    let res = app.router.clone().oneshot(req).await.unwrap();
    let status = res.status().as_u16().to_string();
    let content_type = res.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let response = &doc["paths"][path][&method]["responses"][&status];
    assert!(response.is_object(), "{method} {path} answered {status}, which is not documented");
    seen.insert((path.to_string(), method.clone(), status.clone()));
    let Some(content) = response["content"].as_object() else {
        return Value::Null;
    };
    let (documented_type, media) = content.iter().next().unwrap();
    assert!(
        content_type.starts_with(documented_type.as_str()),
        "{method} {path} {status}: content type {content_type:?}, documented {documented_type:?}"
    );
    let body = if documented_type == "application/json" {
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        let errors = violations(doc, &media["schema"], &body);
        assert!(errors.is_empty(), "{method} {path} {status}: the body does not fit its schema: {errors:?}\n{body}");
        body
    } else {
        Value::String(String::from_utf8(bytes.to_vec()).unwrap())
    };
    body
}

fn get(uri: &str) -> Request<Body> {
    Request::get(uri).body(Body::empty()).unwrap()
}

fn post_run(token: Option<&str>, content_type: &str, body: Vec<u8>) -> Request<Body> {
    post_to("/api/v1/runs", token, content_type, body)
}

fn post_to(uri: &str, token: Option<&str>, content_type: &str, body: Vec<u8>) -> Request<Body> {
    let mut req = Request::post(uri).header("content-type", content_type);
    if let Some(token) = token {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    req.body(Body::from(body)).unwrap()
}

#[tokio::test]
async fn real_answers_fit_their_documented_schemas() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let doc = served_document(&app).await;
        let mut seen = Exercised::new();
        let runs = "/api/v1/runs";
        let run = serde_json::to_value(submission()).unwrap();
        let body = serde_json::to_vec(&run).unwrap();
        let token = app.ingest_token.clone();
        let created =
            exercise(&app, &doc, &mut seen, runs, post_run(Some(&token), "application/json", body.clone())).await;
        assert_eq!(created["created"], true);
        let again =
            exercise(&app, &doc, &mut seen, runs, post_run(Some(&token), "application/json", body.clone())).await;
        assert_eq!(again["created"], false);
        let mut changed = run.clone();
        changed["agent_version"] = json!("0.2.0");
        let changed = serde_json::to_vec(&changed).unwrap();
        exercise(&app, &doc, &mut seen, runs, post_run(Some(&token), "application/json", changed)).await;
        let mut invalid = run.clone();
        invalid["run_id"] = json!(uuid::Uuid::new_v4());
        invalid["workloads"][0]["measurements"][1]["samples_ns"][0] = json!(-1.0);
        let invalid = serde_json::to_vec(&invalid).unwrap();
        let rejected = exercise(&app, &doc, &mut seen, runs, post_run(Some(&token), "application/json", invalid)).await;
        assert_eq!(rejected["error"]["field"], "workloads[0].measurements[1].samples_ns[0]");
        exercise(&app, &doc, &mut seen, runs, post_run(None, "application/json", body.clone())).await;
        let editor = app.editor_token.clone();
        exercise(&app, &doc, &mut seen, runs, post_run(Some(&editor), "application/json", body.clone())).await;
        exercise(&app, &doc, &mut seen, runs, post_run(Some(&token), "text/plain", body.clone())).await;
        let not_json = post_run(Some(&token), "application/json", vec![0xff, 0xfe]);
        exercise(&app, &doc, &mut seen, runs, not_json).await;

        exercise(&app, &doc, &mut seen, runs, get("/api/v1/runs?limit=5")).await;
        exercise(&app, &doc, &mut seen, runs, get("/api/v1/runs?limit=0")).await;
        let one = "/api/v1/runs/{id}";
        let detail =
            exercise(&app, &doc, &mut seen, one, get(&format!("/api/v1/runs/{}", run["run_id"].as_str().unwrap())))
                .await;
        assert_eq!(detail["workloads"][0]["metadata"]["sqlite_version"], "3.46.0");
        exercise(&app, &doc, &mut seen, one, get("/api/v1/runs/not-a-uuid")).await;
        exercise(&app, &doc, &mut seen, one, get(&format!("/api/v1/runs/{}", uuid::Uuid::new_v4()))).await;
        exercise(&app, &doc, &mut seen, "/api/v1/workloads", get("/api/v1/workloads")).await;
        exercise(&app, &doc, &mut seen, "/api/v1/toolchains", get("/api/v1/toolchains")).await;
        exercise(&app, &doc, &mut seen, "/api/v1/hosts", get("/api/v1/hosts")).await;
        let series = "/api/v1/series";
        let found =
            exercise(&app, &doc, &mut seen, series, get("/api/v1/series?workload=sqlite-insert&toolchain=musl-gcc"))
                .await;
        assert_eq!(found["versions"][0]["version"], "1.2.5");
        exercise(&app, &doc, &mut seen, series, get("/api/v1/series?workload=sqlite-insert")).await;
        // The same run counted under Valgrind: a series of its own, asked for by its metric.
        let mut counted = run.clone();
        counted["run_id"] = json!(uuid::Uuid::new_v4());
        counted["measure"] = json!("instructions");
        counted["counter"] = json!("valgrind");
        let counted = serde_json::to_vec(&counted).unwrap();
        let answer = exercise(&app, &doc, &mut seen, runs, post_run(Some(&token), "application/json", counted)).await;
        assert_eq!(answer["measure"], "instructions-valgrind", "{answer}");
        let uri = "/api/v1/series?workload=sqlite-insert&toolchain=musl-gcc&measure=instructions-valgrind";
        let by_counts = exercise(&app, &doc, &mut seen, series, get(uri)).await;
        assert_eq!(by_counts["measures"], json!(["wall", "instructions-valgrind"]), "{by_counts}");
        let uri = "/api/v1/series?workload=sqlite-insert&toolchain=musl-gcc&measure=cycles";
        exercise(&app, &doc, &mut seen, series, get(uri)).await;

        // A run with failed workloads: one crashed after four sizes (a partial slope), one built
        // with errors; its answer and a series whose version every run failed fit their schemas.
        let mut failed = RunShape::new("musl-gcc", "1.2.6").workloads(3).json();
        failed["toolchain"]["version_from"] = json!("libc");
        failed["workloads"][1]["failure"] = json!({"kind": "crashed", "size": 1048576, "signal": 11, "detail": "boom"});
        failed["workloads"][2]["measurements"] = json!([]);
        failed["workloads"][2]["failure"] = json!({"kind": "build_failed", "exit_status": 1, "detail": "x.c: error"});
        let (status, answer) = app.submit(&failed).await;
        assert_eq!(status, StatusCode::CREATED, "{answer}");
        let uri = format!("/api/v1/runs/{}", failed["run_id"].as_str().unwrap());
        let detail = exercise(&app, &doc, &mut seen, "/api/v1/runs/{id}", get(&uri)).await;
        assert_eq!(detail["workloads"][1]["failure"]["kind"], "crashed");
        assert_eq!(detail["workloads"][1]["partial"], true);
        let uri = "/api/v1/series?workload=workload-2&toolchain=musl-gcc";
        let failed_series = exercise(&app, &doc, &mut seen, series, get(uri)).await;
        assert_eq!(failed_series["versions"][0]["failures"]["kind"], "build_failed");
        assert!(failed_series["versions"][0]["slope"].is_null());
        exercise(&app, &doc, &mut seen, series, get("/api/v1/series?workload=nothing&toolchain=musl-gcc")).await;

        for (version, slope) in [("0.15.0", 1.0), ("0.16.0", 2.0)] {
            let (status, answer) = app
                .submit(&RunShape::new("zig-cc-musl", version).slope(slope).workloads(3).sizes(6).samples(5).json())
                .await;
            assert_eq!(status, StatusCode::CREATED, "{answer}");
        }
        let list = "/api/v1/regressions";
        let listed = exercise(&app, &doc, &mut seen, list, get("/api/v1/regressions?status=open")).await;
        let id = listed["regressions"][0]["regression"]["id"].as_i64().expect("the quadratic version opened one");
        exercise(&app, &doc, &mut seen, list, get("/api/v1/regressions?status=sideways")).await;
        // A bisection recorded on it, with every answer its endpoint documents.
        let bisect = "/api/v1/regressions/{id}/bisections";
        let bisection = json!({
            "bisection_id": uuid::Uuid::new_v4(), "agent_version": "0.1.0", "started_at": "2026-11-30T08:00:00Z",
            "seconds": 12.5, "host": {"name": "build-01"}, "lineage": "zig-cc-musl", "workloads": ["workload-0"],
            "max_slope": 1.5, "good": "0.15.0", "bad": "0.16.0", "candidates": 3, "outcome": "found",
            "first_bad": "0.16.0", "last_good": "0.15.0",
            "steps": [{"version": "0.15.0", "verdict": "good", "slope": 1.0, "seconds": 5.0},
                      {"version": "0.16.0", "verdict": "bad", "slope": 2.0, "seconds": 6.0,
                       "run_id": uuid::Uuid::new_v4()},
                      {"version": "0.16.0-dev.3", "verdict": "skipped", "seconds": 1.0, "note": "did not build"}],
        });
        let uri = format!("/api/v1/regressions/{id}/bisections");
        let b = |value: &Value| serde_json::to_vec(value).unwrap();
        let token = app.ingest_token.clone();
        for _ in 0..2 {
            exercise(&app, &doc, &mut seen, bisect, post_to(&uri, Some(&token), "application/json", b(&bisection)))
                .await;
        }
        let mut changed = bisection.clone();
        changed["seconds"] = json!(13.0);
        exercise(&app, &doc, &mut seen, bisect, post_to(&uri, Some(&token), "application/json", b(&changed))).await;
        let mut other_lineage = bisection.clone();
        other_lineage["lineage"] = json!("gcc-glibc");
        let refused =
            exercise(&app, &doc, &mut seen, bisect, post_to(&uri, Some(&token), "application/json", b(&other_lineage)))
                .await;
        assert_eq!(refused["error"]["field"], "lineage");
        exercise(&app, &doc, &mut seen, bisect, post_to(&uri, None, "application/json", b(&bisection))).await;
        exercise(&app, &doc, &mut seen, bisect, post_to(&uri, Some(&token), "text/plain", b(&bisection))).await;
        let nowhere = "/api/v1/regressions/999999/bisections";
        exercise(&app, &doc, &mut seen, bisect, post_to(nowhere, Some(&token), "application/json", b(&bisection)))
            .await;
        // Past its quota of submissions, the token is refused for a while.
        for _ in 0..30 {
            let post = post_to(nowhere, Some(&token), "application/json", b(&bisection));
            if exercise(&app, &doc, &mut seen, bisect, post).await["error"]["code"] == "too_many_requests" {
                break;
            }
        }

        let one = "/api/v1/regressions/{id}";
        let regression = exercise(&app, &doc, &mut seen, one, get(&format!("/api/v1/regressions/{id}"))).await;
        assert_eq!(regression["regression"]["version"], "0.16.0");
        assert_eq!(regression["bisections"][0]["steps"].as_array().map(Vec::len), Some(3));
        exercise(&app, &doc, &mut seen, one, get("/api/v1/regressions/999999")).await;

        let version = "/api/v1/toolchains/{lineage}/{version}";
        let page = exercise(&app, &doc, &mut seen, version, get("/api/v1/toolchains/zig-cc-musl/0.16.0")).await;
        assert_eq!(page["against"], "0.15.0");
        assert_eq!(page["workloads"][0]["held_by"]["id"], id, "{page}");
        exercise(&app, &doc, &mut seen, version, get("/api/v1/toolchains/zig-cc-musl/0.16.0?against=9")).await;
        exercise(&app, &doc, &mut seen, version, get("/api/v1/toolchains/zig-cc-musl/9")).await;

        // An exposure scan judged by that version, with every answer its endpoint documents; the
        // version then lists it, and the catalogue's verdicts there read as documented.
        let exposures = "/api/v1/exposures";
        let scan = json!({
            "scan_id": uuid::Uuid::new_v4(), "agent_version": "0.1.0", "scanned_at": "2026-12-01T10:00:00Z",
            "artifact": "api-server", "digest": format!("sha256:{}", "ab".repeat(32)), "lineage": "zig-cc-musl",
            "version": "0.16.0", "libc": "zig-musl", "linkage": "static",
            "exposed": [{"function": "strspn", "breach": "over_contract", "call_sites": 4,
                         "verdict": "O(n) against its contract of O(1)", "callers": ["jsonTranslateTextToBlob"]}],
            "reaches": ["memcpy", "strspn"],
        });
        for created in [true, false] {
            let post = post_to(exposures, Some(&token), "application/json", b(&scan));
            assert_eq!(exercise(&app, &doc, &mut seen, exposures, post).await["created"], created);
        }
        let mut changed = scan.clone();
        changed["exposed"][0]["call_sites"] = json!(5);
        exercise(&app, &doc, &mut seen, exposures, post_to(exposures, Some(&token), "application/json", b(&changed)))
            .await;
        let mut invalid = scan.clone();
        invalid["digest"] = json!("md5:abc");
        let refused = exercise(
            &app,
            &doc,
            &mut seen,
            exposures,
            post_to(exposures, Some(&token), "application/json", b(&invalid)),
        )
        .await;
        assert_eq!(refused["error"]["field"], "digest");
        exercise(&app, &doc, &mut seen, exposures, post_to(exposures, None, "application/json", b(&scan))).await;
        let editor = app.editor_token.clone();
        exercise(&app, &doc, &mut seen, exposures, post_to(exposures, Some(&editor), "application/json", b(&scan)))
            .await;
        exercise(&app, &doc, &mut seen, exposures, post_to(exposures, Some(&token), "text/plain", b(&scan))).await;
        let page = exercise(&app, &doc, &mut seen, version, get("/api/v1/toolchains/zig-cc-musl/0.16.0")).await;
        assert_eq!(page["artifacts"][0]["exposed"][0]["function"], "strspn", "{page}");
        let contracts = "/api/v1/toolchains/{lineage}/{version}/contracts";
        let verdicts =
            exercise(&app, &doc, &mut seen, contracts, get("/api/v1/toolchains/zig-cc-musl/0.16.0/contracts")).await;
        assert_eq!(verdicts["version"], "0.16.0");
        exercise(&app, &doc, &mut seen, contracts, get("/api/v1/toolchains/zig-cc-musl/9/contracts")).await;

        // Probes a search found, with every answer their endpoints document.
        let found = "/api/v1/found-probes";
        let probe =
            crate::builders::found_probe("strstr", "needle", "alphabet=1", "zig-cc-musl", "2026-12-01T10:00:00Z");
        let probes = json!({"probes": [probe]});
        for stored in [json!({"stored": 1, "new": 1}), json!({"stored": 1, "new": 0})] {
            let post = post_to(found, Some(&token), "application/json", b(&probes));
            assert_eq!(exercise(&app, &doc, &mut seen, found, post).await, stored);
        }
        let mut invalid = probes.clone();
        invalid["probes"][0]["shape"] = json!("alphabet");
        let post = post_to(found, Some(&token), "application/json", b(&invalid));
        assert_eq!(exercise(&app, &doc, &mut seen, found, post).await["error"]["field"], "probes[0].shape");
        exercise(&app, &doc, &mut seen, found, post_to(found, None, "application/json", b(&probes))).await;
        exercise(&app, &doc, &mut seen, found, post_to(found, Some(&editor), "application/json", b(&probes))).await;
        exercise(&app, &doc, &mut seen, found, post_to(found, Some(&token), "text/plain", b(&probes))).await;
        let listed = exercise(&app, &doc, &mut seen, found, get(found)).await;
        assert_eq!(listed["probes"][0]["shape"], "alphabet=1", "{listed}");

        let capabilities = "/api/v1/capabilities";
        let accepts = exercise(&app, &doc, &mut seen, capabilities, get(capabilities)).await;
        assert_eq!(accepts["accepts"][0], "failures", "{accepts}");
        exercise(&app, &doc, &mut seen, "/healthz", get("/healthz")).await;
        exercise(&app, &doc, &mut seen, "/readyz", get("/readyz")).await;
        exercise(&app, &doc, &mut seen, "/metrics", get("/metrics")).await;
        exercise(&app, &doc, &mut seen, "/api/v1/openapi.json", get("/api/v1/openapi.json")).await;

        // A body over the limit needs a server with a small one.
        let small = Config { body_limit: 1024, ..Config::default() };
        let limited = TestApp::with_config(TestDb::new(Backend::Sqlite).await, small).await;
        let token = limited.ingest_token.clone();
        let large = serde_json::to_vec(
            &RunShape::new("gcc-glibc", "14.2.0").host("build-02").workloads(3).sizes(5).samples(4).json(),
        )
        .unwrap();
        assert!(large.len() > 1024);
        exercise(&limited, &doc, &mut seen, runs, post_run(Some(&token), "application/json", large.clone())).await;
        let post = post_to(exposures, Some(&token), "application/json", large.clone());
        exercise(&limited, &doc, &mut seen, exposures, post).await;
        exercise(&limited, &doc, &mut seen, found, post_to(found, Some(&token), "application/json", large.clone()))
            .await;
        let bisect_uri = "/api/v1/regressions/1/bisections";
        exercise(&limited, &doc, &mut seen, bisect, post_to(bisect_uri, Some(&token), "application/json", large)).await;

        // A body that stops arriving needs a server with a short read timeout.
        let mut hasty = Config::default();
        hasty.limits.body_read_timeout = std::time::Duration::from_millis(100);
        let hasty = TestApp::with_config(TestDb::new(Backend::Sqlite).await, hasty).await;
        let token = hasty.ingest_token.clone();
        for (path, uri) in [(runs, runs), (exposures, exposures), (found, found), (bisect, bisect_uri)] {
            let first = futures_util::stream::iter([Ok::<_, std::io::Error>(axum::body::Bytes::from_static(b"{"))]);
            let stalled = Body::from_stream(futures_util::StreamExt::chain(first, futures_util::stream::pending()));
            let req = Request::post(uri)
                .header("content-type", "application/json")
                .header("authorization", format!("Bearer {token}"))
                .body(stalled)
                .unwrap();
            exercise(&hasty, &doc, &mut seen, path, req).await;
        }

        // Every read without a session or a token, where the server requires a login to read.
        let mut private = Config::default();
        private.auth.require_login_to_read = true;
        let private = TestApp::with_config(TestDb::new(Backend::Sqlite).await, private).await;
        for (path, uri) in [
            (runs, "/api/v1/runs".to_string()),
            ("/api/v1/runs/{id}", format!("/api/v1/runs/{}", uuid::Uuid::new_v4())),
            ("/api/v1/workloads", "/api/v1/workloads".into()),
            ("/api/v1/toolchains", "/api/v1/toolchains".into()),
            ("/api/v1/hosts", "/api/v1/hosts".into()),
            (series, "/api/v1/series?workload=w&toolchain=t".into()),
            (list, "/api/v1/regressions".into()),
            (one, format!("/api/v1/regressions/{id}")),
            (version, "/api/v1/toolchains/zig-cc-musl/0.16.0".into()),
            (contracts, "/api/v1/toolchains/zig-cc-musl/0.16.0/contracts".into()),
            (capabilities, capabilities.into()),
            (found, found.into()),
        ] {
            exercise(&private, &doc, &mut seen, path, get(&uri)).await;
        }

        // Every documented answer was checked, except those of a database that is down.
        let mut untested = Vec::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                for status in op["responses"].as_object().unwrap().keys() {
                    let key = (path.clone(), method.clone(), status.clone());
                    if status != "503" && !seen.contains(&key) {
                        untested.push(key);
                    }
                }
            }
        }
        assert!(untested.is_empty(), "documented answers this test does not produce: {untested:?}");
    })
    .await;
}

#[tokio::test]
async fn docs_openapi_json_is_the_served_document() {
    let app = sqlite_app().await;
    let served = served_document(&app).await;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/openapi.json");
    let pretty = serde_json::to_string_pretty(&served).unwrap() + "\n";
    if std::env::var_os("SLOPEWATCH_UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &pretty).unwrap();
        eprintln!("wrote {}", path.display());
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != pretty {
        let first = committed.lines().zip(pretty.lines()).position(|(a, b)| a != b);
        let line = first.unwrap_or_else(|| committed.lines().count().min(pretty.lines().count()));
        panic!(
            "docs/openapi.json differs from the document the server serves (from line {}: {:?} is now {:?}).\n\
             Regenerate it with `SLOPEWATCH_UPDATE_OPENAPI=1 cargo test -p slopewatch --test all openapi::docs_openapi_json` and commit it.",
            line + 1,
            committed.lines().nth(line).unwrap_or("<end of file>"),
            pretty.lines().nth(line).unwrap_or("<end of file>"),
        );
    }
}

/// Where `scripts/install-test-deps` puts the validator (`SLOPEWATCH_OPENAPI_VALIDATOR_PATH`
/// points elsewhere); a validator installed in Python's own paths is found too.
const VALIDATOR_ROOT: &str = "/opt/slopewatch-openapi-spec-validator";

#[tokio::test]
async fn the_served_document_passes_an_independent_openapi_validator() {
    let app = sqlite_app().await;
    let served = served_document(&app).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("openapi.json");
    std::fs::write(&file, serde_json::to_vec_pretty(&served).unwrap()).unwrap();
    let root = std::env::var("SLOPEWATCH_OPENAPI_VALIDATOR_PATH").unwrap_or_else(|_| VALIDATOR_ROOT.into());
    let python_path = match std::env::var("PYTHONPATH") {
        Ok(existing) if !existing.is_empty() => format!("{root}:{existing}"),
        _ => root,
    };
    let out = Command::new("python3")
        .args(["-m", "openapi_spec_validator", "--schema", "3.1", "--validation-errors", "all"])
        .arg(&file)
        .env("PYTHONPATH", python_path)
        .output()
        .expect("python3 runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(
        !text.contains("No module named openapi_spec_validator"),
        "openapi-spec-validator is needed: run scripts/install-test-deps"
    );
    // The validator repeats the whole document after each error; the start says what is wrong.
    let text: String = text.chars().take(3000).collect();
    assert!(out.status.success(), "openapi-spec-validator rejects the served document:\n{text}");
}
