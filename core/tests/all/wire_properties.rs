//! Properties of the submission parser and validator over generated input: arbitrary JSON and
//! bytes, mutations of valid submissions, and valid submissions of every shape.
//!
//! Case counts are modest so the suite stays fast; `PROPTEST_CASES=5000` runs a deeper search.

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{json, Value};
use slopewatch_core::wire::{
    Failure, FailureKind, FieldError, Host, Measurement, RunSubmission, SizeUnit, Toolchain, VersionFrom, WorkloadRun,
    MAX_NAME_CHARS,
};
use std::collections::BTreeMap;

fn config(default_cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(default_cases);
    Config { cases, failure_persistence: None, ..Config::default() }
}

/// Keys the submission uses, so generated objects often reach deep into the parser.
const KEYS: &[&str] = &[
    "run_id",
    "agent_version",
    "started_at",
    "host",
    "toolchain",
    "workloads",
    "name",
    "cpu",
    "version",
    "size_unit",
    "measurements",
    "size",
    "samples_ns",
    "instructions",
    "metadata",
    "source_hash",
    "surprise",
];

fn any_string() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("bytes".to_string()),
        Just("0b8e6a52-6f7e-4b8e-9a39-0d3c7d1e9f10".to_string()),
        Just("2026-11-29T21:00:00Z".to_string()),
        Just("'; DROP TABLE runs; --".to_string()),
        "\\PC{0,12}",
        ".{0,12}",
        "x{129,140}",
    ]
}

fn any_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter_map("JSON has no NaN or infinity", |f| serde_json::Number::from_f64(f).map(Value::Number)),
        Just(json!(0)),
        Just(json!(-0.0)),
        Just(json!(1e300)),
    ]
}

/// Any JSON value, objects keyed mostly by the submission's own field names.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any_number(),
        any_string().prop_map(Value::String)
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..8)
                .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

fn name() -> impl Strategy<Value = String> {
    // Printable, not blank, within the limit; quotes, markup and SQL included.
    prop_oneof!["[a-zA-Z0-9._+-]{1,24}", "[^\\p{C}]{1,24}".prop_filter("not blank", |s| !s.trim().is_empty()),]
        .prop_map(|s| s.chars().take(MAX_NAME_CHARS).collect())
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[^\\p{C}]{0,40}"]
}

fn positive_ns() -> impl Strategy<Value = f64> {
    prop_oneof![1.0f64..1e12, Just(f64::MIN_POSITIVE), Just(1.0), Just(6.048e14)]
}

fn workload(index: usize) -> impl Strategy<Value = WorkloadRun> {
    let unit = prop::sample::select(vec![SizeUnit::Bytes, SizeUnit::Records, SizeUnit::Items, SizeUnit::Iterations]);
    let sizes = prop::collection::btree_set(1u64..(1 << 40), 3..8);
    let metadata = prop::collection::btree_map("[a-z_]{1,12}", text(), 0..3);
    let samples = prop::collection::vec(positive_ns(), 1..6);
    (name(), unit, text(), sizes, metadata, any::<bool>(), samples, prop::option::of(failure())).prop_map(
        move |(name, size_unit, source_hash, sizes, metadata, counted, samples, failure)| {
            let measurements = sizes
                .into_iter()
                .enumerate()
                .map(|(i, size)| {
                    let samples_ns: Vec<f64> =
                        samples.iter().map(|s| s * (i + 1) as f64).map(|s| s.min(6.048e14)).collect();
                    let instructions = counted.then(|| samples_ns.iter().map(|s| *s as u64).collect());
                    Measurement { size, samples_ns, instructions }
                })
                .collect();
            WorkloadRun {
                // A valid hash on some workloads, none on the rest.
                build_hash: counted.then(|| format!("sha256:{}", "0a".repeat(32))),
                metadata,
                failure,
                ..WorkloadRun::new(format!("{index}-{name}"), size_unit, source_hash, measurements)
            }
        },
    )
}

/// Failures of every kind, each with the fields its kind uses, details spanning lines and tabs.
fn failure() -> impl Strategy<Value = Failure> {
    let detail = prop::collection::vec(text(), 0..4).prop_map(|lines| lines.join("\n\t"));
    let kind = prop::sample::select(FailureKind::ALL.to_vec());
    (kind, 1u64..(1 << 40), detail, any::<i32>(), 1i32..=64, 1u64..1_000_000, name(), name()).prop_map(
        |(kind, size, detail, exit, signal, limit_ms, got, expected)| {
            let none = Failure {
                kind,
                size: None,
                detail,
                exit_status: None,
                signal: None,
                limit_ms: None,
                got: None,
                expected: None,
            };
            match kind {
                FailureKind::BuildFailed => Failure { exit_status: Some(exit), ..none },
                FailureKind::SetupFailed => none,
                FailureKind::Crashed => Failure { size: Some(size), signal: Some(signal), ..none },
                FailureKind::TimedOut => Failure { size: Some(size), limit_ms: Some(limit_ms), ..none },
                FailureKind::WrongResult => {
                    Failure { size: Some(size), got: Some(got), expected: Some(expected), ..none }
                }
            }
        },
    )
}

/// Valid submissions of every shape the rules allow, names and numbers drawn widely.
fn submission() -> impl Strategy<Value = RunSubmission> {
    let host = (name(), text(), text(), text()).prop_map(|(name, cpu, kernel, arch)| Host { name, cpu, kernel, arch });
    let toolchain = (name(), name(), text(), text(), text(), text(), any::<bool>()).prop_map(
        |(name, version, libc, target, compiler, flags, libc_axis)| {
            let version_from = if libc_axis { VersionFrom::Libc } else { VersionFrom::Compiler };
            Toolchain { name, version, libc, target, compiler, flags, version_from }
        },
    );
    let workloads = (1usize..4).prop_flat_map(|n| (0..n).map(workload).collect::<Vec<_>>());
    (any::<u128>(), name(), 0i64..4_000_000_000, host, toolchain, workloads).prop_map(
        |(id, agent_version, secs, host, toolchain, workloads)| RunSubmission {
            run_id: uuid::Uuid::from_u128(id),
            agent_version,
            started_at: time::OffsetDateTime::from_unix_timestamp(secs).unwrap(),
            host,
            toolchain,
            workloads,
            measure: Default::default(),
            counter: None,
        },
    )
}

/// One change to a valid body: a value replaced, a key removed or added, the bytes cut or flipped.
#[derive(Debug, Clone)]
enum Mutation {
    Replace(prop::sample::Index, Value),
    Remove(prop::sample::Index),
    AddKey(prop::sample::Index, Value),
    Truncate(prop::sample::Index),
    Flip(prop::sample::Index, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<prop::sample::Index>(), any_json()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        2 => any::<prop::sample::Index>().prop_map(Mutation::Remove),
        1 => (any::<prop::sample::Index>(), any_json()).prop_map(|(i, v)| Mutation::AddKey(i, v)),
        1 => any::<prop::sample::Index>().prop_map(Mutation::Truncate),
        1 => (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
    ]
}

/// JSON pointers of every value under `v`.
fn pointers(v: &Value, at: &str, out: &mut Vec<String>) {
    let children: Vec<(String, &Value)> = match v {
        // Keys escaped as JSON pointer tokens: a flipped byte can put `/` or `~` in a key.
        Value::Object(m) => {
            m.iter().map(|(k, c)| (format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), c)).collect()
        }
        Value::Array(a) => a.iter().enumerate().map(|(i, c)| (format!("{at}/{i}"), c)).collect(),
        _ => return,
    };
    for (p, c) in children {
        out.push(p.clone());
        pointers(c, &p, out);
    }
}

fn apply(base: &Value, m: &Mutation) -> Vec<u8> {
    let mut v = base.clone();
    let mut paths = Vec::new();
    pointers(&v, "", &mut paths);
    match m {
        Mutation::Replace(i, value) => *v.pointer_mut(i.get(&paths).as_str()).unwrap() = value.clone(),
        Mutation::Remove(i) => {
            let (parent, key) = i.get(&paths).rsplit_once('/').unwrap();
            match v.pointer_mut(parent).unwrap() {
                Value::Object(o) => {
                    o.remove(&key.replace("~1", "/").replace("~0", "~"));
                }
                Value::Array(a) => {
                    a.remove(key.parse::<usize>().unwrap());
                }
                _ => unreachable!("a parent is a container"),
            }
        }
        Mutation::AddKey(i, value) => {
            let objects: Vec<&String> =
                paths.iter().filter(|p| base.pointer(p).is_some_and(Value::is_object)).collect();
            let target = if objects.is_empty() { "" } else { i.get(&objects).as_str() };
            v.pointer_mut(target).unwrap()["surprise"] = value.clone();
        }
        Mutation::Truncate(i) => {
            let bytes = serde_json::to_vec(&v).unwrap();
            return bytes[..i.index(bytes.len())].to_vec();
        }
        Mutation::Flip(i, b) => {
            let mut bytes = serde_json::to_vec(&v).unwrap();
            let at = i.index(bytes.len());
            bytes[at] = *b;
            return bytes;
        }
    }
    serde_json::to_vec(&v).unwrap()
}

/// A field path as JSON pointer: `workloads[0].metadata["a.b"]` → `/workloads/0/metadata/a.b`.
/// `None` when the path is not well formed: plain words joined by dots, numeric indexes and
/// JSON-quoted keys in brackets.
fn to_pointer(field: &str) -> Option<String> {
    let escape = |key: &str| format!("/{}", key.replace('~', "~0").replace('/', "~1"));
    let mut pointer = String::new();
    let mut rest = field;
    let mut first = true;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            if inner.starts_with('"') {
                let mut stream = serde_json::Deserializer::from_str(inner).into_iter::<String>();
                let key = stream.next()?.ok()?;
                pointer += &escape(&key);
                rest = inner[stream.byte_offset()..].strip_prefix(']')?;
            } else {
                let (index, after) = inner.split_once(']')?;
                if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                pointer += &escape(index);
                rest = after;
            }
        } else {
            let word = if first { rest } else { rest.strip_prefix('.')? };
            let end = word.find(['.', '[']).unwrap_or(word.len());
            let key = &word[..end];
            if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return None;
            }
            pointer += &escape(key);
            rest = &word[end..];
        }
        first = false;
    }
    Some(pointer)
}

/// Every rejection names a field and a reason; when the body is JSON, the field is in it (or, for
/// a missing field, its parent is).
fn check_rejection(body: &[u8], e: &FieldError) -> Result<(), TestCaseError> {
    prop_assert!(!e.field.is_empty(), "a rejection without a field: {e:?}");
    prop_assert!(!e.reason.trim().is_empty(), "a rejection without a reason: {e:?}");
    let Ok(doc) = serde_json::from_slice::<Value>(body) else { return Ok(()) };
    if e.field == "." {
        return Ok(());
    }
    let Some(pointer) = to_pointer(&e.field) else {
        return Err(TestCaseError::fail(format!("{e:?}: the field is not a well-formed path")));
    };
    let parent = pointer.rsplit_once('/').map_or("", |(p, _)| p);
    prop_assert!(
        doc.pointer(&pointer).is_some() || doc.pointer(parent).is_some(),
        "{e:?} names no place in the body {}",
        String::from_utf8_lossy(body)
    );
    Ok(())
}

fn valid_body() -> Value {
    json!({
        "run_id": "0b8e6a52-6f7e-4b8e-9a39-0d3c7d1e9f10",
        "agent_version": "0.1.0",
        "started_at": "2026-11-29T21:00:00Z",
        "host": {"name": "build-01", "cpu": "AMD EPYC 7B13", "kernel": "6.1.0", "arch": "x86_64"},
        "toolchain": {"name": "zig-cc-musl", "version": "0.16.0", "libc": "musl 1.2.5 (zig)",
                      "target": "x86_64-linux-musl", "compiler": "zig cc -target x86_64-linux-musl", "flags": "-O2"},
        "workloads": [
            {"name": "strchr", "size_unit": "bytes", "source_hash": "sha256:ab", "metadata": {"k": "v"},
             "measurements": [
                {"size": 65536, "samples_ns": [1000.0, 1100.0, 1050.0], "instructions": [10, 11, 12]},
                {"size": 131072, "samples_ns": [2000.0, 2100.0]},
                {"size": 262144, "samples_ns": [4000.0]}]},
            {"name": "sqlite-insert", "size_unit": "records",
             "measurements": [
                {"size": 5000, "samples_ns": [1e6]}, {"size": 10000, "samples_ns": [2e6]},
                {"size": 20000, "samples_ns": [4e6]}]}
        ]
    })
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn arbitrary_json_never_panics_and_every_rejection_says_where_and_why(v in any_json()) {
        let body = serde_json::to_vec(&v).unwrap();
        if let Err(e) = RunSubmission::from_json(&body) {
            check_rejection(&body, &e)?;
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(body in prop::collection::vec(any::<u8>(), 0..512)) {
        if let Err(e) = RunSubmission::from_json(&body) {
            check_rejection(&body, &e)?;
        }
    }

    #[test]
    fn mutated_submissions_are_stored_whole_or_refused_with_a_reason(muts in prop::collection::vec(mutation(), 1..4)) {
        let mut body = serde_json::to_vec(&valid_body()).unwrap();
        for m in &muts {
            match serde_json::from_slice::<Value>(&body) {
                Ok(v) => body = apply(&v, m),
                Err(_) => break,
            }
        }
        match RunSubmission::from_json(&body) {
            Ok(run) => {
                prop_assert!(run.validate().is_ok());
                let again = RunSubmission::from_json(&serde_json::to_vec(&run).unwrap()).unwrap();
                prop_assert_eq!(again.content_hash(), run.content_hash());
            }
            Err(e) => check_rejection(&body, &e)?,
        }
    }
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn a_valid_submission_roundtrips_and_its_hash_survives_reserialization(run in submission()) {
        prop_assert_eq!(run.validate(), Ok(()));
        let compact = serde_json::to_vec(&run).unwrap();
        let parsed = RunSubmission::from_json(&compact).unwrap();
        prop_assert_eq!(&parsed, &run);
        prop_assert_eq!(parsed.content_hash(), run.content_hash());

        // As the agent's spool writes it, and with the keys re-ordered by a JSON tool.
        let pretty = serde_json::to_vec_pretty(&run).unwrap();
        prop_assert_eq!(RunSubmission::from_json(&pretty).unwrap().content_hash(), run.content_hash());
        let reordered: BTreeMap<String, Value> = serde_json::from_slice(&compact).unwrap();
        let reordered = serde_json::to_vec(&reordered).unwrap();
        prop_assert_eq!(RunSubmission::from_json(&reordered).unwrap().content_hash(), run.content_hash());
    }

    #[test]
    fn any_change_to_a_sample_changes_the_hash(run in submission(), w in any::<prop::sample::Index>(), factor in 1.0001f64..2.0) {
        let mut changed = run.clone();
        let workload = w.get(&changed.workloads).name.clone();
        let m = &mut changed.workloads.iter_mut().find(|x| x.name == workload).unwrap().measurements[0];
        m.samples_ns[0] = (m.samples_ns[0] * factor).min(6.048e14) * 0.999;
        prop_assume!(changed != run);
        prop_assert_ne!(changed.content_hash(), run.content_hash());
    }
}

#[test]
fn field_paths_read_back_as_pointers() {
    assert_eq!(to_pointer("run_id").as_deref(), Some("/run_id"));
    assert_eq!(to_pointer("workloads[0].measurements[12].size").as_deref(), Some("/workloads/0/measurements/12/size"));
    assert_eq!(to_pointer(r#"host["k.rnel"]"#).as_deref(), Some("/host/k.rnel"));
    assert_eq!(to_pointer(r#"w[3].metadata["a/b~\"]"].x"#).as_deref(), Some("/w/3/metadata/a~1b~0\"]/x"));
    for malformed in ["host.k.r nel", "host..name", "w[x]", "w[]", r#"host["open"#, "host.", ".host"] {
        assert_eq!(to_pointer(malformed), None, "{malformed}");
    }
}

/// A byte flip that turned `kernel` into `k.rnel`: the unknown key must not read as `host.k.rnel`.
#[test]
fn an_unknown_key_with_a_dot_is_named_where_it_is() {
    let body = serde_json::to_string(&valid_body()).unwrap().replace("\"kernel\"", "\"k.rnel\"");
    let e = RunSubmission::from_json(body.as_bytes()).unwrap_err();
    assert_eq!(e.field, r#"host["k.rnel"]"#);
    check_rejection(body.as_bytes(), &e).unwrap();
}
