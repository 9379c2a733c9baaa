//! The product's URLs, built in one place below the pages and the alert payloads that both link
//! to them: names from users are percent-encoded, so a workload called `a/b?c` still has its own
//! page.

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
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

pub fn series(workload: &str, lineage: &str) -> String {
    format!("/series/{}/{}", segment(workload), segment(lineage))
}

pub fn series_file(workload: &str, lineage: &str, file: &str) -> String {
    format!("{}/{file}", series(workload, lineage))
}

pub fn loglog_svg(workload: &str, lineage: &str, versions: &[String]) -> String {
    with_versions(series_file(workload, lineage, "loglog.svg"), versions)
}

fn with_versions(path: String, versions: &[String]) -> String {
    if versions.is_empty() {
        return path;
    }
    let mut query = Serializer::new(String::new());
    for v in versions {
        query.append_pair("v", v);
    }
    format!("{path}?{}", query.finish())
}

/// A toolchain version as the compare page names it: `lineage@version`.
pub fn toolchain_version(lineage: &str, version: &str) -> String {
    format!("{lineage}@{version}")
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

/// The compare page, chart or export (`path`) for two toolchain versions of a workload, each
/// given as lineage and version.
pub fn compare_at(
    path: &str,
    workload: &str,
    a_lineage: &str,
    a_version: &str,
    b_lineage: &str,
    b_version: &str,
) -> String {
    let query = Serializer::new(String::new())
        .append_pair("workload", workload)
        .append_pair("a", &toolchain_version(a_lineage, a_version))
        .append_pair("b", &toolchain_version(b_lineage, b_version))
        .finish();
    format!("{path}?{query}")
}

pub fn compare(workload: &str, a_lineage: &str, a_version: &str, b_lineage: &str, b_version: &str) -> String {
    compare_at("/compare", workload, a_lineage, a_version, b_lineage, b_version)
}

/// The contracts page with exactly these toolchain versions as its columns, in this order; with
/// none, each lineage at its latest version.
pub fn contracts(columns: &[slopewatch_core::lineage::LineageVersion]) -> String {
    let values: Vec<String> = columns.iter().map(|c| toolchain_version(&c.lineage, &c.version)).collect();
    with_versions("/contracts".into(), &values)
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

    #[test]
    fn names_are_encoded_into_single_path_segments() {
        assert_eq!(series("a/b?c", "zig cc"), "/series/a%2Fb%3Fc/zig%20cc");
        assert_eq!(series("..", "x<y>"), "/series/%2E%2E/x%3Cy%3E");
        assert_eq!(loglog_svg("w", "l", &["0.16.0+x".into(), "1".into()]), "/series/w/l/loglog.svg?v=0.16.0%2Bx&v=1");
        assert_eq!(compare("w&x", "a", "1", "b@c", "2"), "/compare?workload=w%26x&a=a%401&b=b%40c%402");
        assert_eq!(toolchain_version_readings("b@c@2"), vec![("b@c", "2"), ("b", "c@2")]);
        assert_eq!(toolchain_version_readings("gcc@1.0@rc1@"), vec![("gcc@1.0", "rc1@"), ("gcc", "1.0@rc1@")]);
        assert!(toolchain_version_readings("nope").is_empty());
        assert!(toolchain_version_readings("x@").is_empty());
        assert!(toolchain_version_readings("@1").is_empty());
        let columns = [
            slopewatch_core::lineage::LineageVersion::new("zig cc", "0.16.0+x"),
            slopewatch_core::lineage::LineageVersion::new("b@c", "2"),
        ];
        assert_eq!(contracts(&columns), "/contracts?v=zig+cc%400.16.0%2Bx&v=b%40c%402");
        assert_eq!(contracts(&[]), "/contracts");
    }

    #[test]
    fn links_are_absolute_when_the_public_url_is_known() {
        assert_eq!(series("a b&c", "gcc"), "/series/a%20b%26c/gcc");
        assert_eq!(absolute(Some("https://sw.example/"), &regression(1)), "https://sw.example/regressions/1");
        assert_eq!(absolute(None, &regression(1)), "/regressions/1");
    }
}
