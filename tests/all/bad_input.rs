//! Thousands of malformed, truncated, oversized, wrongly typed and hostile bodies through HTTP:
//! every one gets a 4xx with a reason or is stored whole, none gets a 5xx, nothing partial stays.

use crate::builders::RunShape;
use crate::helpers::{on_both_backends, TestApp};
use axum::http::StatusCode;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

/// Values of every JSON type, including hostile strings and extreme numbers.
fn hostile_value(rng: &mut StdRng) -> Value {
    let choices: [Value; 18] = [
        json!(null),
        json!(true),
        json!(0),
        json!(-1),
        json!(1e308),
        json!(-1e308),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(0.5),
        json!(""),
        json!("'; DROP TABLE runs; --"),
        json!("<script>alert(1)</script>"),
        json!("\u{0}\u{1b}[31m"),
        json!("x".repeat(5000)),
        json!([]),
        json!([1, "two", null]),
        json!({}),
        json!({"nested": {"deeper": [1, 2, 3]}}),
    ];
    choices[rng.gen_range(0..choices.len())].clone()
}

/// Every path to a scalar or container in `v`, as JSON pointers.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let p = format!("{at}/{k}");
                out.push(p.clone());
                pointers(child, p, out);
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(child, p, out);
            }
        }
        _ => {}
    }
}

fn mutate(rng: &mut StdRng, base: &Value) -> Vec<u8> {
    let mut v = base.clone();
    v["run_id"] = json!(uuid::Uuid::new_v4());
    let mut paths = Vec::new();
    pointers(&v, String::new(), &mut paths);
    match rng.gen_range(0..6) {
        // Replace one field with a value of any type.
        0 | 1 => {
            let p = &paths[rng.gen_range(0..paths.len())];
            *v.pointer_mut(p).unwrap() = hostile_value(rng);
        }
        // Remove one field.
        2 => {
            let p = &paths[rng.gen_range(0..paths.len())];
            let (parent, key) = p.rsplit_once('/').unwrap();
            match v.pointer_mut(if parent.is_empty() { "" } else { parent }).unwrap() {
                Value::Object(m) => {
                    m.remove(key);
                }
                Value::Array(a) => {
                    a.remove(key.parse::<usize>().unwrap());
                }
                _ => {}
            }
        }
        // Add an unknown field somewhere.
        3 => {
            let objects: Vec<&String> = paths.iter().filter(|p| v.pointer(p).is_some_and(Value::is_object)).collect();
            if let Some(p) = objects.get(rng.gen_range(0..objects.len().max(1))) {
                let p = (*p).clone();
                v.pointer_mut(&p).unwrap()["surprise"] = hostile_value(rng);
            }
        }
        // Truncate the serialized body anywhere.
        4 => {
            let bytes = serde_json::to_vec(&v).unwrap();
            let cut = rng.gen_range(0..bytes.len());
            return bytes[..cut].to_vec();
        }
        // Flip bytes in the serialized body.
        _ => {
            let mut bytes = serde_json::to_vec(&v).unwrap();
            for _ in 0..rng.gen_range(1..8) {
                let i = rng.gen_range(0..bytes.len());
                bytes[i] = rng.gen();
            }
            return bytes;
        }
    }
    serde_json::to_vec(&v).unwrap()
}

#[tokio::test]
async fn ten_thousand_bad_bodies_get_clear_4xx_answers_and_never_a_5xx() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let base = RunShape::new("gcc-glibc", "12.2.0").host("fuzz-host").workloads(2).json();
        let mut rng = StdRng::seed_from_u64(0x5107e);
        let (mut created, mut refused) = (0, 0);
        for i in 0..5_000 {
            let body = mutate(&mut rng, &base);
            let (status, answer) = app.submit_raw(&app.ingest_token.clone(), body.clone()).await;
            assert!(!status.is_server_error(), "body {i} got {status}: {}", String::from_utf8_lossy(&body));
            if status == StatusCode::CREATED {
                created += 1;
            } else {
                assert!(status.is_client_error(), "body {i}: {status}");
                let message = answer["error"]["message"].as_str().unwrap_or_default();
                assert!(!message.is_empty(), "body {i}: {status} without a reason: {answer}");
                refused += 1;
            }
        }
        eprintln!("{created} mutated bodies were still valid and stored, {refused} refused");
        assert!(refused > 4_000, "the mutations should mostly break the body: {refused}");
        // Every stored run is whole: its fits and measurements are all there.
        let (_, runs) = app.get("/api/v1/runs?limit=1000").await;
        for run in runs["runs"].as_array().unwrap() {
            let (status, detail) = app.get(&format!("/api/v1/runs/{}", run["id"].as_str().unwrap())).await;
            assert_eq!(status, StatusCode::OK);
            for w in detail["workloads"].as_array().unwrap() {
                assert!(w["measurements"].as_array().unwrap().len() >= 3, "{w}");
                assert!(w["slope"].as_f64().unwrap().is_finite());
            }
        }
        assert_eq!(app.get("/healthz").await.0, StatusCode::OK);
    })
    .await;
}
