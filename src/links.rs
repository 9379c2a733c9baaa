//! The product's URLs, built in one place below the pages and the alert payloads that both link
//! to them: names from users are percent-encoded, so a workload called `a/b?c` still has its own
//! page, and a series of another metric than wall time says which (`?measure=`).

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use slopewatch_core::wire::Metric;
use url::form_urlencoded::Serializer;

/// Everything but unreserved characters is encoded in a path segment.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

fn segment(s: &str) -> String {
    // `.` and `..` alone would be read as relative path steps.
    match s {
        "." => "%2E".into(),
        ".." => "%2E%2E".into(),
        s => utf8_percent_encode(s, SEGMENT).to_string(),
    }
}

/// The query parameter that picks which metric a page shows: `?measure=instructions-valgrind`.
pub const MEASURE: &str = "measure";

/// The query of a link to a series of `metric`: none for wall time, which a series page shows
/// wherever the workload has it; `measure=…` for the others.
fn series_query(query: &mut Serializer<'_, String>, metric: Metric) {
    if metric != Metric::Wall {
        query.append_pair(MEASURE, metric.as_str());
    }
}

/// `path`, with `query` when it holds anything.
fn with_query(path: String, query: Serializer<'_, String>) -> String {
    let mut query = query;
    let query = query.finish();
    if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    }
}

/// A workload's series of `metric` in one lineage.
pub fn series(workload: &str, lineage: &str, metric: Metric) -> String {
    series_file(workload, lineage, metric, "")
}

/// A file of the series page (a chart, an export); the page itself for an empty `file`.
pub fn series_file(workload: &str, lineage: &str, metric: Metric, file: &str) -> String {
    loglog_at(workload, lineage, metric, file, &[])
}

pub fn loglog_svg(workload: &str, lineage: &str, metric: Metric, versions: &[String]) -> String {
    loglog_at(workload, lineage, metric, "loglog.svg", versions)
}

fn loglog_at(workload: &str, lineage: &str, metric: Metric, file: &str, versions: &[String]) -> String {
    let mut path = format!("/series/{}/{}", segment(workload), segment(lineage));
    if !file.is_empty() {
        path = format!("{path}/{file}");
    }
    let mut query = Serializer::new(String::new());
    series_query(&mut query, metric);
    for v in versions {
        query.append_pair("v", v);
    }
    with_query(path, query)
}

/// A page that shows many series (the overview, the contracts), with `measure` picked or, for
/// `None`, each series at its default.
pub fn measured(path: &str, measure: Option<Metric>) -> String {
    let mut query = Serializer::new(String::new());
    if let Some(m) = measure {
        query.append_pair(MEASURE, m.as_str());
    }
    with_query(path.to_string(), query)
}

/// A toolchain version as the compare page names it: `lineage@version`.
pub fn toolchain_version(lineage: &str, version: &str) -> String {
    format!("{lineage}@{version}")
}

/// The page of one toolchain version, `/toolchains/{lineage}/{version}`: what it changed against
/// the version before across every workload.
pub fn version_page(lineage: &str, version: &str) -> String {
    format!("/toolchains/{}/{}", segment(lineage), segment(version))
}

/// The same version as JSON (`/api/v1/toolchains/{lineage}/{version}`).
pub fn version_api(lineage: &str, version: &str) -> String {
    format!("/api/v1/toolchains/{}/{}", segment(lineage), segment(version))
}

/// The page of a toolchain version against another version of its lineage (`?against=`).
pub fn version_against(lineage: &str, version: &str, against: &str) -> String {
    let mut query = Serializer::new(String::new());
    query.append_pair("against", against);
    with_query(version_page(lineage, version), query)
}

/// The page of a toolchain version as a Markdown release note (`?format=md`), against `against`
/// where given.
pub fn version_markdown(lineage: &str, version: &str, against: Option<&str>) -> String {
    let mut query = Serializer::new(String::new());
    if let Some(against) = against {
        query.append_pair("against", against);
    }
    query.append_pair("format", "md");
    with_query(version_page(lineage, version), query)
}

/// The compare page with two toolchain versions across every workload (no `workload`).
pub fn compare_versions(a: (&str, &str), b: (&str, &str)) -> String {
    let mut query = Serializer::new(String::new());
    query.append_pair("a", &toolchain_version(a.0, a.1));
    query.append_pair("b", &toolchain_version(b.0, b.1));
    with_query("/compare".into(), query)
}

/// Every way to read `lineage@version` back into its parts, the version after the last `@`
/// first: lineages and versions may both hold `@`, so only the store can tell which reading names
/// a toolchain version it has.
pub fn toolchain_version_readings(s: &str) -> Vec<(&str, &str)> {
    s.match_indices('@')
        .rev()
        .map(|(at, _)| (&s[..at], &s[at + 1..]))
        .filter(|(l, v)| !l.is_empty() && !v.is_empty())
        .collect()
}

/// Two toolchain versions of a workload's series of one metric, each given as lineage and
/// version: what the compare page, its chart and its exports show.
#[derive(Debug, Clone, Copy)]
pub struct Comparison<'a> {
    pub workload: &'a str,
    pub metric: Metric,
    pub a: (&'a str, &'a str),
    pub b: (&'a str, &'a str),
}

/// The compare page, chart or export (`path`) of a comparison.
pub fn compare_at(path: &str, c: Comparison<'_>) -> String {
    let mut query = Serializer::new(String::new());
    query.append_pair("workload", c.workload);
    series_query(&mut query, c.metric);
    query.append_pair("a", &toolchain_version(c.a.0, c.a.1));
    query.append_pair("b", &toolchain_version(c.b.0, c.b.1));
    with_query(path.to_string(), query)
}

pub fn compare(c: Comparison<'_>) -> String {
    compare_at("/compare", c)
}

/// The contracts page with exactly these toolchain versions as its columns, in this order (with
/// none, each lineage at its latest version), showing `measure` or each cell's default.
pub fn contracts(columns: &[slopewatch_core::lineage::LineageVersion], measure: Option<Metric>) -> String {
    let mut query = Serializer::new(String::new());
    if let Some(m) = measure {
        query.append_pair(MEASURE, m.as_str());
    }
    for c in columns {
        query.append_pair("v", &toolchain_version(&c.lineage, &c.version));
    }
    with_query("/contracts".into(), query)
}

pub fn run(id: &uuid::Uuid) -> String {
    format!("/runs/{id}")
}

pub fn regression(id: i64) -> String {
    format!("/regressions/{id}")
}

/// Absolute when the server knows its public URL, else relative to the dashboard.
pub fn absolute(public_url: Option<&str>, path_and_query: &str) -> String {
    format!("{}{path_and_query}", public_url.unwrap_or("").trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compared<'a>(workload: &'a str, a: (&'a str, &'a str), b: (&'a str, &'a str)) -> Comparison<'a> {
        Comparison { workload, metric: Metric::Wall, a, b }
    }

    #[test]
    fn names_are_encoded_into_single_path_segments() {
        assert_eq!(series("a/b?c", "zig cc", Metric::Wall), "/series/a%2Fb%3Fc/zig%20cc");
        assert_eq!(series("..", "x<y>", Metric::Wall), "/series/%2E%2E/x%3Cy%3E");
        assert_eq!(
            loglog_svg("w", "l", Metric::Wall, &["0.16.0+x".into(), "1".into()]),
            "/series/w/l/loglog.svg?v=0.16.0%2Bx&v=1"
        );
        assert_eq!(compare(compared("w&x", ("a", "1"), ("b@c", "2"))), "/compare?workload=w%26x&a=a%401&b=b%40c%402");
        assert_eq!(toolchain_version_readings("b@c@2"), vec![("b@c", "2"), ("b", "c@2")]);
        assert_eq!(toolchain_version_readings("gcc@1.0@rc1@"), vec![("gcc@1.0", "rc1@"), ("gcc", "1.0@rc1@")]);
        assert!(toolchain_version_readings("nope").is_empty());
        assert!(toolchain_version_readings("x@").is_empty());
        assert!(toolchain_version_readings("@1").is_empty());
        let columns = [
            slopewatch_core::lineage::LineageVersion::new("zig cc", "0.16.0+x"),
            slopewatch_core::lineage::LineageVersion::new("b@c", "2"),
        ];
        assert_eq!(contracts(&columns, None), "/contracts?v=zig+cc%400.16.0%2Bx&v=b%40c%402");
        assert_eq!(contracts(&[], None), "/contracts");
    }

    #[test]
    fn a_series_of_another_metric_than_wall_time_says_which() {
        let counted = Metric::InstructionsValgrind;
        assert_eq!(series("strchr", "gcc", counted), "/series/strchr/gcc?measure=instructions-valgrind");
        assert_eq!(series_file("strchr", "gcc", Metric::Cpu, "data.csv"), "/series/strchr/gcc/data.csv?measure=cpu");
        assert_eq!(
            loglog_svg("w", "l", counted, &["1".into()]),
            "/series/w/l/loglog.svg?measure=instructions-valgrind&v=1"
        );
        let c = Comparison { workload: "w", metric: counted, a: ("a", "1"), b: ("b", "2") };
        assert_eq!(
            compare_at("/compare/data.csv", c),
            "/compare/data.csv?workload=w&measure=instructions-valgrind&a=a%401&b=b%402"
        );
        assert_eq!(measured("/", None), "/");
        assert_eq!(measured("/", Some(Metric::Wall)), "/?measure=wall");
        assert_eq!(contracts(&[], Some(Metric::Cpu)), "/contracts?measure=cpu");
    }

    #[test]
    fn a_version_s_page_names_its_lineage_and_version_as_path_segments() {
        assert_eq!(version_page("zig cc", "0.16.0+x"), "/toolchains/zig%20cc/0.16.0%2Bx");
        assert_eq!(version_api("a/b", ".."), "/api/v1/toolchains/a%2Fb/%2E%2E");
        assert_eq!(version_against("zig", "0.16.0", "0.14.1"), "/toolchains/zig/0.16.0?against=0.14.1");
        assert_eq!(version_markdown("zig", "0.16.0", None), "/toolchains/zig/0.16.0?format=md");
        assert_eq!(version_markdown("zig", "0.16.0", Some("1&2")), "/toolchains/zig/0.16.0?against=1%262&format=md");
        assert_eq!(compare_versions(("musl-gcc", "1.2.5"), ("b@c", "2")), "/compare?a=musl-gcc%401.2.5&b=b%40c%402");
    }

    #[test]
    fn links_are_absolute_when_the_public_url_is_known() {
        assert_eq!(series("a b&c", "gcc", Metric::Wall), "/series/a%20b%26c/gcc");
        assert_eq!(absolute(Some("https://sw.example/"), &regression(1)), "https://sw.example/regressions/1");
        assert_eq!(absolute(None, &regression(1)), "/regressions/1");
    }
}
