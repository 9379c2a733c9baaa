//! `exposure --format sarif`: the program calling `strspn` built with Zig 0.16.0, scanned, and
//! its log checked against the SARIF 2.1.0 schema and for a result at `strspn`'s caller's line.
//!
//! `tests/fixtures/sarif-schema-2.1.0.json` is the OASIS SARIF TC's schema, copied unchanged from
//! github.com/oasis-tcs/sarif-spec, `sarif-2.1/schema/sarif-schema-2.1.0.json` at commit e058381
//! (under that repository's LICENSE.md, the OASIS IPR Policy).

use crate::helpers::*;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// Where `scripts/install-test-deps` puts openapi-spec-validator, whose dependency `jsonschema`
/// validates the log (`SLOPEWATCH_OPENAPI_VALIDATOR_PATH` points elsewhere), as the server's
/// OpenAPI test finds it.
const VALIDATOR_ROOT: &str = "/opt/slopewatch-openapi-spec-validator";

/// Validates `log` against the vendored schema, whose `$schema` names draft 4: what the
/// validator says is wrong, or None when nothing is.
fn schema_errors(log: &Value, dir: &Path) -> Option<String> {
    let file = dir.join("log.sarif");
    std::fs::write(&file, serde_json::to_vec(log).unwrap()).unwrap();
    let root = std::env::var("SLOPEWATCH_OPENAPI_VALIDATOR_PATH").unwrap_or_else(|_| VALIDATOR_ROOT.into());
    let python_path = match std::env::var("PYTHONPATH") {
        Ok(existing) if !existing.is_empty() => format!("{root}:{existing}"),
        _ => root,
    };
    let check = "import json, sys, jsonschema
schema, log = (json.load(open(p)) for p in sys.argv[1:])
assert schema['$schema'] == 'http://json-schema.org/draft-04/schema#', schema['$schema']
errors = list(jsonschema.Draft4Validator(schema).iter_errors(log))
for e in errors[:10]: print(list(e.absolute_path), e.message[:300])
sys.exit(1 if errors else 0)";
    let out = Command::new("python3")
        .args(["-c", check])
        .arg(fixture("sarif-schema-2.1.0.json"))
        .arg(&file)
        .env("PYTHONPATH", python_path)
        .output()
        .expect("python3 runs");
    let said = text(&out);
    assert!(!said.contains("No module named 'jsonschema'"), "jsonschema is needed: run scripts/install-test-deps");
    assert!(matches!(out.status.code(), Some(0 | 1)), "the validator failed: {said}");
    (!out.status.success()).then_some(said)
}

#[test]
fn zig_0_16_0_s_strspn_is_a_schema_valid_sarif_result_at_its_caller_s_line() {
    let Some(zig) = zigs().into_iter().find(|z| z.to_string_lossy().contains("0.16.0")) else {
        eprintln!("note: Zig 0.16.0 is not installed (scripts/install-test-deps); skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let zig = zig.to_str().unwrap();
    let binary = dir.path().join("tokenizer");
    let built = run(Command::new(zig)
        .args(["cc", "-target", "x86_64-linux-musl", "-O2", "-g"])
        .arg(fixture("exposed.c"))
        .arg("-o")
        .arg(&binary));
    assert!(built.status.success(), "{}", text(&built));
    let toolchain = format!("zig-cc-musl={zig} cc -target x86_64-linux-musl");
    let out = run(agent()
        .arg("exposure")
        .arg(&binary)
        .args(["--toolchain", &toolchain, "--measure", "instructions", "--format", "sarif", "--source-root"])
        .arg(fixture(""))
        .arg("--cache-dir")
        .arg(dir.path().join("cache")));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let log: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));

    assert_eq!(schema_errors(&log, dir.path()), None, "{log:#}");
    let mut broken = log.clone();
    broken["runs"][0]["results"][0]["level"] = json!("severe");
    assert!(schema_errors(&broken, dir.path()).is_some(), "the validator rejects a level SARIF has not");

    let run = &log["runs"][0];
    let root = format!("file://{}/", fixture("").display().to_string().trim_end_matches('/'));
    assert_eq!(run["originalUriBaseIds"]["%SRCROOT%"]["uri"], json!(root), "{run:#}");
    let results = run["results"].as_array().unwrap();
    let strspn = results
        .iter()
        .find(|r| r["ruleId"] == "slopewatch/strspn" && r["properties"]["caller"] == "count_blanks")
        .unwrap_or_else(|| panic!("no result for strspn from count_blanks: {log:#}"));
    let at = &strspn["locations"][0]["physicalLocation"];
    assert_eq!(at["artifactLocation"], json!({ "uri": "exposed.c", "uriBaseId": "%SRCROOT%" }), "{strspn:#}");
    assert!(at["region"]["startLine"].as_u64().is_some_and(|l| l > 0), "{strspn:#}");
    let message = strspn["message"]["text"].as_str().unwrap();
    assert!(message.contains("strspn") && message.contains("0.16.0"), "{message}");
    assert_eq!(run["invocations"][0]["properties"]["artifacts"][0]["status"], "exposed", "{run:#}");
}
