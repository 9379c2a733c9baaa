//! The verdicts of `check` and `run` as JUnit XML, for the test report of a CI system: a test suite
//! per toolchain and measure, a test case per workload or probe. A case fails when it is over its
//! limit or contract or failed (a wrong result, a crash, a read past its bound, …), is skipped when
//! its libc lacks the function, the measure could not count it or its verdict is unsure, and
//! passes otherwise. The file is valid against both the Apache Ant JUnit schema and the one
//! Jenkins' xUnit plugin reads, so it is read wherever JUnit XML is.

use crate::measure::judged::Judged;
use crate::output::{contracts, markdown, table};
use slopewatch_core::format;
use slopewatch_core::verdict::{Breach, Decision, Limits};
use slopewatch_core::wire::RunSubmission;
use std::collections::BTreeMap;
use std::time::Duration;

/// Everything the JUnit XML shows; rendering it does no I/O.
pub struct TestReport<'a> {
    /// The command that measured: `check` or `run`.
    pub command: &'a str,
    /// The runs measured, one per toolchain and measure: each names a suite.
    pub runs: &'a [RunSubmission],
    pub rows: &'a [Judged],
    /// The limits the rows were judged by.
    pub limits: &'a Limits,
    /// How long each (toolchain label, workload) took to sweep, where known.
    pub elapsed: &'a BTreeMap<(String, String), Duration>,
}

/// What one row's test case says.
#[derive(Debug, PartialEq)]
enum CaseVerdict {
    Passed,
    /// Over a limit or contract, or failed; `kind` is the failure's `type`.
    Failed {
        kind: &'static str,
        message: String,
    },
    Skipped {
        message: String,
    },
}

/// The test case of `r`: failed, skipped or passed, with the sentence that says why.
fn verdict_of(r: &Judged) -> CaseVerdict {
    if let Some(f) = &r.failure {
        let mut message = format::failure(f, r.unit);
        if let Some(line) = table::first_line(f) {
            message.push_str(&format!(" — {line}"));
        }
        return CaseVerdict::Failed { kind: f.kind.as_str(), message };
    }
    if r.not_provided {
        return CaseVerdict::Skipped { message: format!("{}: the libc lacks the function", table::NOT_PROVIDED) };
    }
    if let Some(why) = &r.unmeasurable {
        let message = format!("{} by {}: {why}", table::UNMEASURABLE, r.metric.measure());
        return CaseVerdict::Skipped { message };
    }
    match &r.decision {
        Decision::Under => CaseVerdict::Passed,
        Decision::Over(breach) => CaseVerdict::Failed {
            kind: if breach.contract.is_some() { "over_contract" } else { "over_limit" },
            message: over(r, breach),
        },
        Decision::Unsure(_) => {
            let again = if r.remeasured.is_some() { "; measured twice" } else { "" };
            CaseVerdict::Skipped { message: format!("unsure: no verdict either way ({}{again})", r.decision.doubts()) }
        }
    }
}

/// What `r` is over and by how much: `slope 2.16 (95% CI [2.10, 2.22]) over the limit of 1.5`,
/// `class O(n²) over the limit of O(n)`, or `class O(n) over its contract of O(1): strchr reads
/// the whole remaining string.`, `; `-separated.
fn over(r: &Judged, breach: &Breach) -> String {
    let class = r.complexity.as_ref().and_then(|c| c.class).map_or("unknown", |c| c.label());
    let mut parts = Vec::new();
    if let Some(max) = breach.slope {
        let slope = match &r.fit {
            Ok(f) => format!("slope {:.2} (95% CI [{:.2}, {:.2}])", f.slope, f.ci_low, f.ci_high),
            Err(_) => "slope".to_string(),
        };
        parts.push(format!("{slope} over the limit of {max}"));
    }
    if let Some(max) = breach.class {
        parts.push(format!("class {class} over the limit of {}", max.label()));
    }
    if let Some(expected) = breach.contract {
        let mut said = format!("class {class} over its contract of {}", expected.label());
        if let Some(c) = r.contract.as_ref() {
            let broken = [c.function.as_str(), c.broken.as_str()].join(" ");
            let why: Vec<&str> = [broken.trim(), c.consequence.trim()].into_iter().filter(|s| !s.is_empty()).collect();
            if !why.is_empty() {
                said.push_str(&format!(": {}", why.join(". ")));
            }
        }
        parts.push(said);
    }
    parts.join("; ")
}

/// The text of a failed or skipped case: the row as the terminal's table shows it (the contract
/// table's for a probe), where its instructions went, and the failure's full detail.
fn body(r: &Judged) -> String {
    let one = std::slice::from_ref(r);
    let mut out = if r.is_probe() { contracts::table(one) } else { table::table(one) };
    let profiles = table::profiles(one);
    if !profiles.is_empty() {
        out.push_str(&format!("where the instructions went:\n{profiles}"));
    }
    if let Some(f) = r.failure.as_ref().filter(|f| !f.detail.trim().is_empty()) {
        out.push_str("detail:\n");
        for line in f.detail.lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}

/// A suite: the run it is of, where a run was measured, its name and its cases.
struct Suite<'a> {
    run: Option<&'a RunSubmission>,
    name: String,
    cases: Vec<&'a Judged>,
}

/// The rows grouped by toolchain and measure, in the order of the runs.
fn suites<'a>(runs: &'a [RunSubmission], rows: &'a [Judged]) -> Vec<Suite<'a>> {
    let label = |run: &RunSubmission| crate::measure::judged::toolchain_label(&run.toolchain.name, run.metric());
    let mut suites: Vec<(String, Suite)> = runs
        .iter()
        .map(|run| {
            let name = classname(&run.toolchain.name, &run.toolchain.version, &label(run));
            (label(run), Suite { run: Some(run), name, cases: Vec::new() })
        })
        .collect();
    for r in rows {
        let label = r.label();
        match suites.iter_mut().find(|(l, _)| *l == label) {
            Some((_, s)) => s.cases.push(r),
            None => {
                let name = label.clone();
                suites.push((label, Suite { run: None, name, cases: vec![r] }));
            }
        }
    }
    suites.into_iter().map(|(_, s)| s).filter(|s| !s.cases.is_empty()).collect()
}

/// `zig-cc-musl 0.16.0`, or `zig-cc-musl 0.16.0 [instructions]` for a measure other than wall time:
/// the toolchain's name and version, then the measure where its label has one.
fn classname(name: &str, version: &str, label: &str) -> String {
    let measure = label.strip_prefix(name).unwrap_or_default();
    format!("{name} {version}{measure}")
}

/// The test case's name: the workload's, or `probe contract.strchr.remaining` for a probe.
fn case_name(r: &Judged) -> String {
    if r.is_probe() {
        format!("probe {}", r.workload)
    } else {
        r.workload.clone()
    }
}

/// Seconds with three decimals, as both schemas read a time.
fn seconds(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64())
}

/// The JUnit XML of `r`: `<testsuites>` with a `<testsuite>` per toolchain and measure.
pub fn render(r: &TestReport) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for (id, suite) in suites(r.runs, r.rows).iter().enumerate() {
        let verdicts: Vec<CaseVerdict> = suite.cases.iter().map(|c| verdict_of(c)).collect();
        let took = |c: &Judged| r.elapsed.get(&(c.label(), c.workload.clone())).copied().unwrap_or_default();
        let total: Duration = suite.cases.iter().map(|c| took(c)).sum();
        let failures = verdicts.iter().filter(|v| matches!(v, CaseVerdict::Failed { .. })).count();
        let skipped = verdicts.iter().filter(|v| matches!(v, CaseVerdict::Skipped { .. })).count();
        let host = suite.run.map(|run| run.host.name.trim()).filter(|h| !h.is_empty()).unwrap_or("localhost");
        let started = suite.run.map_or_else(time::OffsetDateTime::now_utc, |run| run.started_at);
        out.push_str(&format!(
            "  <testsuite name=\"{}\" package=\"slopewatch {}\" id=\"{id}\" hostname=\"{}\" timestamp=\"{}\" \
             tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{}\">\n",
            attribute(&suite.name),
            attribute(r.command),
            attribute(host),
            timestamp(started),
            suite.cases.len(),
            seconds(total)
        ));
        out.push_str("    <properties>\n");
        for (name, value) in properties(r, suite) {
            out.push_str(&format!("      <property name=\"{name}\" value=\"{}\"/>\n", attribute(&value)));
        }
        out.push_str("    </properties>\n");
        for (case, verdict) in suite.cases.iter().zip(&verdicts) {
            let open = format!(
                "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
                attribute(&case_name(case)),
                attribute(&suite.name),
                seconds(took(case))
            );
            match verdict {
                CaseVerdict::Passed => out.push_str(&format!("{open}/>\n")),
                CaseVerdict::Failed { kind, message } => out.push_str(&format!(
                    "{open}>\n      <failure message=\"{}\" type=\"{kind}\">{}</failure>\n    </testcase>\n",
                    attribute(message),
                    text(&body(case))
                )),
                CaseVerdict::Skipped { message } => out.push_str(&format!(
                    "{open}>\n      <skipped message=\"{}\">{}</skipped>\n    </testcase>\n",
                    attribute(message),
                    text(&body(case))
                )),
            }
        }
        out.push_str("    <system-out></system-out>\n    <system-err></system-err>\n  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// What a suite was measured with: the command, the toolchain as its run records it, the measure
/// and the limits; a value the run leaves empty is left out.
fn properties(r: &TestReport, suite: &Suite) -> Vec<(&'static str, String)> {
    let mut p = vec![("command", r.command.to_string())];
    if let Some(run) = suite.run {
        let t = &run.toolchain;
        p.extend([
            ("toolchain", t.name.clone()),
            ("version", t.version.clone()),
            ("libc", t.libc.clone()),
            ("target", t.target.clone()),
            ("compiler", t.compiler.clone()),
            ("flags", t.flags.clone()),
            ("measure", run.metric().label().to_string()),
            ("agent_version", run.agent_version.clone()),
        ]);
    }
    p.push(("limits", markdown::limits_said(r.limits)));
    p.retain(|(_, v)| !v.is_empty());
    p
}

/// `2026-01-31T12:00:00`: UTC, to the second and without a zone, as the Ant schema requires.
fn timestamp(at: time::OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    )
}

/// `s` as an attribute's value between double quotes: markup and quotes become entities, and so do
/// tabs and line breaks, which a parser would otherwise read as spaces.
pub fn attribute(s: &str) -> String {
    escape(s, true)
}

/// `s` as an element's text: markup becomes entities; tabs and newlines stay as they are.
pub fn text(s: &str) -> String {
    escape(s, false)
}

/// XML 1.0 allows no C0 control but tab, line feed and carriage return, not even as a character
/// reference, and neither U+FFFE nor U+FFFF: each C0 control becomes its Unicode control picture
/// (ESC is `␛`), the two non-characters U+FFFD, so what a compiler printed stays readable.
fn escape(s: &str, in_attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if in_attribute => out.push_str("&quot;"),
            '\'' if in_attribute => out.push_str("&apos;"),
            '\t' | '\n' if in_attribute => out.push_str(&format!("&#{};", u32::from(c))),
            '\r' => out.push_str("&#13;"),
            '\t' | '\n' => out.push(c),
            c if c < ' ' => out.push(char::from_u32(0x2400 + u32::from(c)).unwrap_or('\u{FFFD}')),
            '\u{FFFE}' | '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builds::contracts::catalogue;
    use crate::measure::judged::tests::{judged, judged_as, points};
    use slopewatch_core::wire::{Counter, Failure, FailureKind, Host, Measure, Metric, Toolchain, VersionFrom};

    fn run(name: &str, version: &str, measure: Measure, counter: Option<Counter>) -> RunSubmission {
        RunSubmission {
            run_id: uuid::Uuid::nil(),
            agent_version: "0.1.0".into(),
            started_at: time::macros::datetime!(2026-01-31 12:00:00.75 +02:00),
            host: Host { name: "build-01".into(), cpu: String::new(), kernel: String::new(), arch: String::new() },
            toolchain: Toolchain {
                name: name.into(),
                version: version.into(),
                libc: "glibc 2.36".into(),
                target: String::new(),
                compiler: "gcc".into(),
                flags: String::new(),
                version_from: VersionFrom::Compiler,
            },
            workloads: Vec::new(),
            measure,
            counter,
        }
    }

    fn failure(kind: FailureKind, detail: &str) -> Failure {
        Failure {
            kind,
            size: Some(32 << 10),
            detail: detail.into(),
            exit_status: None,
            signal: (kind == FailureKind::Crashed).then_some(11),
            limit_ms: None,
            got: (kind == FailureKind::WrongResult).then(|| "-1".into()),
            expected: (kind == FailureKind::WrongResult).then(|| "4681".into()),
        }
    }

    /// A probe of the catalogue, held to its contract, measured with `toolchain` at `p`.
    fn probe(workload: &str, toolchain: &str, metric: Metric, p: Vec<(f64, f64)>) -> Judged {
        let expected = catalogue().iter().find(|c| c.name() == workload).unwrap().contract();
        Judged { toolchain: toolchain.into(), metric, ..judged_as(workload, p, Some(expected), &Limits::default()) }
    }

    /// One row of each kind with gcc, and a probe over its contract and one that crashed counted
    /// with Zig.
    fn rows() -> Vec<Judged> {
        let mut disturbed = points(|n| 3.0 * n);
        disturbed[3].1 *= 10.0;
        let zig = Metric::InstructionsValgrind;
        let crashed = Judged {
            failure: Some(failure(FailureKind::Crashed, "read past its bound of 4096 bytes")),
            ..probe("contract.wcsncmp.bound", "zig-cc-musl", zig, points(|n| n))
        };
        vec![
            judged("memchr", points(|n| 3.0 * n)),
            judged("strchr", points(|n| n * n)),
            Judged {
                failure: Some(failure(FailureKind::WrongResult, "wrong result: -1, expected 4681")),
                ..judged("strtol", points(|n| n))
            },
            Judged { not_provided: true, ..judged("strlcpy", Vec::new()) },
            Judged { remeasured: Some("R² 0.41".into()), ..judged("erratic", disturbed) },
            Judged {
                unmeasurable: Some("wrong result under Valgrind at 4 KiB".into()),
                ..judged("strtod", points(|n| n))
            },
            probe("contract.strchr.remaining", "zig-cc-musl", zig, points(|n| 900.0 + 2.0 * n)),
            crashed,
        ]
    }

    fn rendered(rows: &[Judged]) -> String {
        let runs = [
            run("gcc-glibc", "12.2.0", Measure::Wall, None),
            run("zig-cc-musl", "0.16.0", Measure::Instructions, Some(Counter::Valgrind)),
        ];
        let elapsed = BTreeMap::from([
            (("gcc-glibc".to_string(), "strchr".to_string()), Duration::from_millis(1500)),
            (("gcc-glibc".to_string(), "memchr".to_string()), Duration::from_micros(250)),
        ]);
        let limits = Limits::default();
        render(&TestReport { command: "check", runs: &runs, rows, limits: &limits, elapsed: &elapsed })
    }

    /// The `<testcase …>` of `name`, up to its end.
    fn case<'a>(xml: &'a str, name: &str) -> &'a str {
        let at = xml.find(&format!("<testcase name=\"{name}\"")).unwrap_or_else(|| panic!("no {name}: {xml}"));
        let rest = &xml[at..];
        let line = &rest[..rest.find('\n').unwrap() + 1];
        if line.ends_with("/>\n") {
            line
        } else {
            &rest[..rest.find("</testcase>\n").unwrap() + 12]
        }
    }

    #[test]
    fn markup_quotes_and_line_breaks_are_entities_in_attributes_and_markup_alone_in_text() {
        assert_eq!(attribute("a<b>&\"c\" 'd'"), "a&lt;b&gt;&amp;&quot;c&quot; &apos;d&apos;");
        assert_eq!(attribute("one\ttwo\nthree\r\n"), "one&#9;two&#10;three&#13;&#10;");
        assert_eq!(text("a<b>&\"c\" 'd'"), "a&lt;b&gt;&amp;\"c\" 'd'");
        assert_eq!(text("one\ttwo\nthree\r\n"), "one\ttwo\nthree&#13;\n");
        assert_eq!(text("]]>"), "]]&gt;", "no CDATA end in text");
        assert_eq!(text("&amp;"), "&amp;amp;");
    }

    #[test]
    fn controls_xml_1_0_forbids_become_their_pictures_and_non_characters_a_replacement() {
        assert_eq!(text("\x1b[31merror\x1b[0m"), "␛[31merror␛[0m");
        assert_eq!(attribute("nul\0bell\x07vt\x0bff\x0c"), "nul␀bell␇vt␋ff␌");
        assert_eq!(text("\u{FFFE}\u{FFFF}"), "\u{FFFD}\u{FFFD}");
        // DEL, the C1 controls and what lies past the BMP are XML 1.0 characters, kept as they are.
        assert_eq!(text("\x7f\u{85}\u{1F600}"), "\x7f\u{85}\u{1F600}");
        let every: String = (0..0x20u8).map(char::from).chain(['\u{FFFE}', '\u{FFFF}']).collect();
        for escaped in [attribute(&every), text(&every)] {
            let forbidden: Vec<char> = escaped
                .chars()
                .filter(|&c| (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{FFFE}' | '\u{FFFF}'))
                .collect();
            assert!(forbidden.is_empty(), "{forbidden:?} in {escaped:?}");
        }
    }

    #[test]
    fn a_suite_per_toolchain_and_measure_named_by_version_with_the_counts_and_the_measured_time() {
        let xml = rendered(&rows());
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"), "{xml}");
        assert!(xml.ends_with("</testsuites>\n"), "{xml}");
        assert!(
            xml.contains(
                "  <testsuite name=\"gcc-glibc 12.2.0\" package=\"slopewatch check\" id=\"0\" hostname=\"build-01\" \
             timestamp=\"2026-01-31T10:00:00\" tests=\"6\" failures=\"2\" errors=\"0\" skipped=\"3\" time=\"1.500\">\n"
            ),
            "{xml}"
        );
        assert!(
            xml.contains(
                "  <testsuite name=\"zig-cc-musl 0.16.0 [instructions]\" package=\"slopewatch check\" id=\"1\" \
             hostname=\"build-01\" timestamp=\"2026-01-31T10:00:00\" tests=\"2\" failures=\"2\" errors=\"0\" \
             skipped=\"0\" time=\"0.000\">\n"
            ),
            "{xml}"
        );
        assert_eq!(case(&xml, "memchr"), "<testcase name=\"memchr\" classname=\"gcc-glibc 12.2.0\" time=\"0.000\"/>\n");
        assert!(case(&xml, "strchr").contains("classname=\"gcc-glibc 12.2.0\" time=\"1.500\">"), "{xml}");
        assert!(xml.contains("      <property name=\"libc\" value=\"glibc 2.36\"/>\n"), "{xml}");
        assert!(xml.contains("      <property name=\"measure\" value=\"instructions (Valgrind)\"/>\n"), "{xml}");
        assert!(xml.contains("      <property name=\"limits\" value=\"slope 1.5\"/>\n"), "{xml}");
        assert!(!xml.contains("name=\"flags\""), "an empty value is left out: {xml}");
        assert_eq!(xml.matches("<properties>").count(), 2);
        assert_eq!(xml.matches("<system-out></system-out>\n    <system-err></system-err>\n  </testsuite>").count(), 2);
    }

    #[test]
    fn over_a_limit_or_a_contract_wrong_crashed_fail_with_the_sentence_the_row_and_the_detail() {
        let xml = rendered(&rows());
        let strchr = case(&xml, "strchr");
        assert!(
            strchr.contains(
                "<failure message=\"slope 2.00 (95% CI [2.00, 2.00]) over the limit of 1.5\" type=\"over_limit\">"
            ),
            "{strchr}"
        );
        assert!(strchr.contains("toolchain "), "the table's header: {strchr}");
        assert!(strchr.contains("\ngcc-glibc            strchr            O(n²)  "), "the row: {strchr}");
        assert!(strchr.contains("OVER 1.5\n</failure>"), "{strchr}");
        let strtol = case(&xml, "strtol");
        assert!(
            strtol
                .contains("<failure message=\"wrong result at 32 KiB: got -1, expected 4681\" type=\"wrong_result\">"),
            "{strtol}"
        );
        assert!(strtol.contains("detail:\n  wrong result: -1, expected 4681\n</failure>"), "{strtol}");
        let contract = case(&xml, "probe contract.strchr.remaining");
        assert!(contract.contains("classname=\"zig-cc-musl 0.16.0 [instructions]\""), "{contract}");
        assert!(
            contract
                .contains("message=\"class O(n) over its contract of O(1): strchr reads the whole remaining string"),
            "{contract}"
        );
        assert!(contract.contains("type=\"over_contract\">header "), "the contract table's row: {contract}");
        let crashed = case(&xml, "probe contract.wcsncmp.bound");
        let message = "crashed at 32 KiB: signal 11 (SIGSEGV) — read past its bound of 4096 bytes";
        assert!(crashed.contains(&format!("message=\"{message}\" type=\"crashed\">")), "{crashed}");
        assert!(crashed.contains("✗ crashed"), "{crashed}");
    }

    #[test]
    fn not_provided_not_measurable_and_unsure_are_skipped_and_say_so() {
        let xml = rendered(&rows());
        assert!(
            case(&xml, "strlcpy").contains("<skipped message=\"not provided: the libc lacks the function\">"),
            "{xml}"
        );
        let unsure = case(&xml, "erratic");
        assert!(unsure.contains("<skipped message=\"unsure: no verdict either way (R² 0."), "{unsure}");
        assert!(unsure.contains("; measured twice)\">"), "{unsure}");
        assert!(unsure.contains("unsure\n</skipped>"), "the row: {unsure}");
        let strtod = case(&xml, "strtod");
        assert!(
            strtod.contains("<skipped message=\"not measurable by wall: wrong result under Valgrind at 4 KiB\">"),
            "{strtod}"
        );
    }

    #[test]
    fn names_and_failure_details_from_users_and_compilers_cannot_break_the_document() {
        let hostile = Judged {
            failure: Some(failure(FailureKind::Crashed, "</failure></testcase>]]>\x1b[31m\"x\"\x00")),
            ..judged("a\"b<c>&'d", points(|n| n))
        };
        let xml = rendered(&[hostile]);
        assert!(xml.contains("<testcase name=\"a&quot;b&lt;c&gt;&amp;&apos;d\""), "{xml}");
        assert_eq!(xml.matches("</failure>").count(), 1, "{xml}");
        assert_eq!(xml.matches("</testcase>").count(), 1, "{xml}");
        assert!(xml.contains("&lt;/failure&gt;&lt;/testcase&gt;]]&gt;␛[31m\"x\"␀"), "{xml}");
        assert!(!xml.chars().any(|c| c < ' ' && c != '\n'), "{xml:?}");
    }

    #[test]
    fn a_row_without_a_run_still_has_a_suite_and_a_time_is_utc_to_the_second() {
        let limits = Limits::default();
        let rows = [Judged { toolchain: "clang".into(), ..judged("memchr", points(|n| n)) }];
        let xml =
            render(&TestReport { command: "run", runs: &[], rows: &rows, limits: &limits, elapsed: &BTreeMap::new() });
        assert!(
            xml.contains("<testsuite name=\"clang\" package=\"slopewatch run\" id=\"0\" hostname=\"localhost\""),
            "{xml}"
        );
        assert!(xml.contains("<testcase name=\"memchr\" classname=\"clang\" time=\"0.000\"/>"), "{xml}");
        assert_eq!(timestamp(time::macros::datetime!(2026-12-31 23:30:59.999 -01:00)), "2027-01-01T00:30:59");
        assert_eq!(seconds(Duration::from_nanos(1_234_567_891)), "1.235");
    }
}
