//! The JUnit XML of `check` with a real Zig 0.16.0: valid against the schemas CI systems read
//! (`tests/fixtures/junit/`, checked by xmllint), with the strchr family's loops failed over the
//! slope limit, strchr's probe over its contract, wcsncmp's read past its bound failed, and what
//! held passed.

use crate::helpers::*;
use std::path::Path;
use std::process::{Command, Output};

/// The vendored schemas, each of which the file must satisfy.
const SCHEMAS: [&str; 2] = ["junit/JUnit.xsd", "junit/junit-10.xsd"];

/// The loops Zig 0.16.0 makes quadratic: its `strchr` and its kin measure the rest of the string.
const STRCHR_FAMILY: [&str; 4] = ["strchr", "strcspn", "strpbrk", "strstr"];

fn xmllint(args: &[&str], file: &Path) -> Output {
    match Command::new("xmllint").args(args).arg(file).output() {
        Ok(out) => out,
        Err(e) => panic!("xmllint is needed (libxml2-utils): run scripts/install-test-deps ({e})"),
    }
}

/// What each schema finds wrong with `file`; empty when both accept it.
fn schema_errors(file: &Path) -> Vec<String> {
    SCHEMAS
        .iter()
        .filter_map(|schema| {
            let xsd = fixture(schema);
            let out = xmllint(&["--noout", "--schema", xsd.to_str().unwrap()], file);
            (!out.status.success()).then(|| format!("{schema}: {}", text(&out)))
        })
        .collect()
}

/// The string value of the XPath `expr` in `file` (xmllint ends it with a newline of its own).
fn xpath(file: &Path, expr: &str) -> String {
    let out = xmllint(&["--xpath", &format!("string({expr})")], file);
    let value = String::from_utf8(out.stdout).unwrap();
    value.strip_suffix('\n').map(str::to_string).unwrap_or(value)
}

#[test]
fn the_junit_xml_of_a_zig_0_16_0_check_fails_the_strchr_family_and_passes_both_schemas() {
    let Some(zig) = zigs().into_iter().find(|z| z.to_string_lossy().contains("0.16.0")) else {
        eprintln!("note: Zig 0.16.0 is not installed (scripts/install-test-deps); skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("slopewatch.xml");
    let workloads = format!("{},memchr,contract.strchr.remaining,contract.wcsncmp.bound", STRCHR_FAMILY.join(","));
    let out = run(agent()
        .args(["check", "--toolchain", &format!("zig-cc-musl={} cc -target x86_64-linux-musl", zig.display())])
        .args(["--workloads", &workloads, "--start-size", "4K", "--max-size", "128K"])
        .args(["--reps", "3", "--total-budget", "10s", "--cache-dir"])
        .arg(dir.path().join("cache"))
        .arg("--junit")
        .arg(&junit));
    assert_eq!(out.status.code(), Some(1), "the gate fails as it does without --junit: {}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("toolchain            workload"), "the table still shows");
    let xml = std::fs::read_to_string(&junit).unwrap();
    eprintln!("--- junit\n{xml}");
    let errors = schema_errors(&junit);
    assert!(errors.is_empty(), "{errors:#?}");
    // The validator is live: a suite without its host is refused by the Ant schema.
    let broken = dir.path().join("broken.xml");
    std::fs::write(&broken, xml.replacen(" hostname=\"", " host=\"", 1)).unwrap();
    assert!(schema_errors(&broken).iter().any(|e| e.starts_with("junit/JUnit.xsd")), "{xml}");

    assert_eq!(xpath(&junit, "count(//testsuite)"), "1", "{xml}");
    assert_eq!(xpath(&junit, "//testsuite/@name"), "zig-cc-musl 0.16.0", "{xml}");
    assert_eq!(xpath(&junit, "//testsuite/@tests"), "7", "{xml}");
    assert_eq!(xpath(&junit, "//properties/property[@name='version']/@value"), "0.16.0", "{xml}");
    for workload in STRCHR_FAMILY {
        let case = format!("//testcase[@name='{workload}']");
        assert_eq!(xpath(&junit, &format!("{case}/@classname")), "zig-cc-musl 0.16.0", "{xml}");
        assert_eq!(xpath(&junit, &format!("{case}/failure/@type")), "over_limit", "{workload}: {xml}");
        let message = xpath(&junit, &format!("{case}/failure/@message"));
        assert!(message.starts_with("slope ") && message.ends_with(" over the limit of 1.5"), "{message}");
        let body = xpath(&junit, &format!("{case}/failure"));
        assert!(body.contains(&format!("zig-cc-musl          {workload} ")) && body.contains("OVER 1.5"), "{body}");
        let seconds: f64 = xpath(&junit, &format!("{case}/@time")).parse().unwrap();
        assert!(seconds > 0.0, "the sweep's time: {xml}");
    }
    let strchr = "//testcase[@name='probe contract.strchr.remaining']/failure";
    assert_eq!(xpath(&junit, &format!("{strchr}/@type")), "over_contract", "{xml}");
    assert!(xpath(&junit, &format!("{strchr}/@message")).contains("over its contract of O(1): strchr "), "{xml}");
    let wcsncmp = "//testcase[@name='probe contract.wcsncmp.bound']/failure";
    assert_eq!(xpath(&junit, &format!("{wcsncmp}/@type")), "crashed", "{xml}");
    assert!(xpath(&junit, &format!("{wcsncmp}/@message")).contains("read past its bound of "), "{xml}");
    // memchr holds O(n): it passes, or on a host too busy to tell, is skipped as unsure.
    let memchr = "//testcase[@name='memchr']";
    let passed = xpath(&junit, &format!("count({memchr}/*)")) == "0";
    assert!(passed || xpath(&junit, &format!("{memchr}/skipped/@message")).starts_with("unsure"), "{xml}");
    let failures: usize = xpath(&junit, "//testsuite/@failures").parse().unwrap();
    assert_eq!(failures, STRCHR_FAMILY.len() + 2, "{xml}");
}

#[test]
fn junit_takes_a_file_not_stdout() {
    let out = run(agent().args(["check", "--toolchain", "a=gcc", "--junit", "-"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("the JUnit XML goes to a file, not stdout"), "{}", text(&out));
}
