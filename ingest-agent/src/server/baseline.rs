//! The stored slopes a report compares against: one version of one lineage, read from a server's
//! read API (`/api/v1/toolchains` to check that the version exists, `/api/v1/series` per workload).

use crate::config::check_lineage_name;
use crate::server::client::{error_message, Answer, Client};
use anyhow::{bail, Context, Result};
use serde::de::DeserializeOwned;
use slopewatch_core::answers::reads::{Series, ToolchainList};
use slopewatch_core::complexity::Class;
use slopewatch_core::lineage::LineageVersion;
use std::collections::BTreeMap;

/// Reads a baseline, `NAME@VERSION` (`gcc-glibc@12.2.0`): the lineage and the version of it to
/// compare against. The name follows the rules of a toolchain's name, with the architecture of a
/// series other than x86-64's after it (`zig-cc-musl (aarch64)@0.15.2`); the version is one word
/// of printable characters.
pub fn parse_spec(s: &str) -> Result<LineageVersion> {
    let Some((lineage, version)) = s.split_once('@') else {
        bail!("baseline {s:?} must look like NAME@VERSION, e.g. gcc-glibc@12.2.0");
    };
    check_lineage_name(slopewatch_core::arch::split_lineage(lineage).0).with_context(|| format!("baseline {s:?}"))?;
    if version.is_empty() || version.len() > 128 {
        bail!("baseline {s:?}: the version must be 1 to 128 characters");
    }
    if version.chars().any(|c| c.is_whitespace() || c.is_control() || c == '@') {
        bail!("baseline {s:?}: the version may not hold spaces, control characters or a second '@'");
    }
    Ok(LineageVersion::new(lineage, version))
}

/// What the server holds for the baseline version: each workload's slope, where it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    pub spec: LineageVersion,
    /// The workloads the version has a slope for; one missing here has no baseline (never run
    /// with the lineage, not at this version, or every run at it failed).
    pub slopes: BTreeMap<String, Stored>,
}

/// One workload's stored summary at the baseline version.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    pub slope: f64,
    /// The class the server named; `None` when unsure or not yet classified.
    pub class: Option<Class>,
}

/// Reads the baseline of `workloads` from the server of `client` (a token of any scope is only
/// needed where the server requires a login to read). An unreachable server, a refused token, a
/// lineage or version the server does not have, or an answer it cannot read is an error that says
/// which; a workload without a slope at the version is only absent from the result.
pub fn fetch(client: &Client, spec: &LineageVersion, workloads: &[String]) -> Result<Baseline> {
    let server = client.server();
    let get = |path: &str, query: &[(&str, &str)]| -> Result<Option<String>> {
        let Answer { status, body } =
            client.get(path, query).with_context(|| format!("cannot reach the baseline server {server}"))?;
        match status {
            200 => Ok(Some(body)),
            404 => Ok(None),
            401 | 403 if client.has_token() => {
                bail!("the baseline server {server} refused the token (HTTP {status}: {})", error_message(&body))
            }
            401 | 403 => bail!(
                "the baseline server {server} requires a token to read (HTTP {status}); give --token, \
                 SLOPEWATCH_TOKEN or --token-file"
            ),
            _ => bail!("the baseline server {server} answered {path} with HTTP {status}: {}", error_message(&body)),
        }
    };
    let list: ToolchainList = parse(get("/api/v1/toolchains", &[])?, server, "/api/v1/toolchains")?;
    let versions: Vec<&str> =
        list.toolchains.iter().filter(|t| t.name == spec.lineage).map(|t| t.version.as_str()).collect();
    if versions.is_empty() {
        let mut lineages: Vec<&str> = list.toolchains.iter().map(|t| t.name.as_str()).collect();
        lineages.dedup();
        bail!(
            "the baseline server {server} has no runs of lineage {} (it has: {})",
            spec.lineage,
            if lineages.is_empty() { "none".to_string() } else { lineages.join(", ") }
        );
    }
    if !versions.contains(&spec.version.as_str()) {
        bail!(
            "the baseline server {server} has no version {} of lineage {} (it has: {})",
            spec.version,
            spec.lineage,
            versions.join(", ")
        );
    }
    let mut slopes = BTreeMap::new();
    for w in workloads {
        let query = [("workload", w.as_str()), ("toolchain", spec.lineage.as_str())];
        let Some(body) = get("/api/v1/series", &query)? else { continue };
        let series: Series = parse(Some(body), server, "/api/v1/series")?;
        let at = series.versions.into_iter().find(|v| v.version == spec.version);
        if let Some((slope, complexity)) = at.and_then(|v| Some((v.slope?, v.complexity))) {
            slopes.insert(w.clone(), Stored { slope, class: complexity.and_then(|c| c.class) });
        }
    }
    Ok(Baseline { spec: spec.clone(), slopes })
}

fn parse<T: DeserializeOwned>(body: Option<String>, server: &str, path: &str) -> Result<T> {
    let body =
        body.with_context(|| format!("the baseline server {server} has no {path} (HTTP 404): is it slopewatch?"))?;
    serde_json::from_str(&body).with_context(|| format!("the baseline server {server} answered {path} unreadably"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_baseline_is_a_lineage_name_and_a_version() {
        let spec = parse_spec("zig-cc-musl@0.15.2").unwrap();
        assert_eq!((spec.lineage.as_str(), spec.version.as_str()), ("zig-cc-musl", "0.15.2"));
        let a64 = parse_spec("zig-cc-musl (aarch64)@0.15.2").unwrap();
        assert_eq!(a64.lineage, "zig-cc-musl (aarch64)");
        assert!(parse_spec("zig cc (aarch64)@0.15.2").is_err(), "the name's own rules still hold");
        assert_eq!(spec.to_string(), "zig-cc-musl@0.15.2");
        for (bad, why) in [
            ("gcc-glibc", "NAME@VERSION"),
            ("@12.2.0", "1 to 64 characters"),
            ("gcc glibc@12.2.0", "may only contain"),
            ("gcc-glibc@", "1 to 128 characters"),
            ("gcc-glibc@12 2", "may not hold spaces"),
            ("gcc-glibc@1@2", "second '@'"),
        ] {
            let e = format!("{:#}", parse_spec(bad).unwrap_err());
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
