//! Exposure scans as the pages show them: the artifacts scanned at a toolchain version, worst first
//! (an exposure no one accepted before those a team accepts, before clean artifacts), each exposed
//! function with its breach, verdict, call sites and callers; and the artifacts a regression or
//! finding names because their latest scan reaches a function it names, through its contract
//! probes or the function its cost went to.

use crate::format;
use crate::links;
use crate::model::{ArtifactReach, ScannedArtifact};
use crate::store::StoredReach;
use slopewatch_core::exposure::{Breakage, ExposedFunction};
use std::cmp::Reverse;
use std::fmt::Write;

/// Most callers a row names; the rest are counted.
const CALLERS_SHOWN: usize = 3;

/// Hex digits of a digest a table shows.
const DIGEST_SHOWN: usize = 12;

/// How a function stands in a scan, for ordering: exposures no one accepted first, the worst
/// breach first, the most call sites first.
fn function_rank(f: &ExposedFunction) -> (bool, Breakage, Reverse<u32>) {
    (f.accepted.is_some(), f.breach, Reverse(f.call_sites))
}

/// Sorts `artifacts` worst first, and each one's exposures worst first: artifacts with an exposure
/// no one accepted (the worst breach first, then the most such functions), then those whose every
/// exposure is accepted, then clean ones; by name within each.
pub fn worst_first(artifacts: &mut [ScannedArtifact]) {
    for a in artifacts.iter_mut() {
        a.exposed.sort_by(|x, y| function_rank(x).cmp(&function_rank(y)).then_with(|| x.function.cmp(&y.function)));
    }
    let rank = |a: &ScannedArtifact| {
        let open: Vec<Breakage> = a.exposed.iter().filter(|f| f.accepted.is_none()).map(|f| f.breach).collect();
        let standing = if !open.is_empty() {
            0
        } else if a.exposed.is_empty() {
            2
        } else {
            1
        };
        (standing, open.iter().min().copied(), Reverse(open.len()))
    };
    artifacts.sort_by(|x, y| rank(x).cmp(&rank(y)).then_with(|| x.artifact.cmp(&y.artifact)));
}

/// A digest as a table shows it: its kind and first hex digits, `build-id:1a2b3c4d5e6f…`.
pub fn short_digest(digest: &str) -> String {
    match digest.split_once(':') {
        Some((kind, hex)) if hex.chars().count() > DIGEST_SHOWN => {
            format!("{kind}:{}…", hex.chars().take(DIGEST_SHOWN).collect::<String>())
        }
        _ => digest.to_string(),
    }
}

/// "4 call sites", "1 call site, its address taken", "its address taken".
fn sites(call_sites: u32, referenced: bool) -> String {
    let calls = match call_sites {
        0 => None,
        1 => Some("1 call site".to_string()),
        n => Some(format!("{n} call sites")),
    };
    match (calls, referenced) {
        (Some(calls), true) => format!("{calls}, its address taken"),
        (Some(calls), false) => calls,
        (None, _) => "its address taken".into(),
    }
}

/// The first callers and how many more: "a, b, c and 2 more".
fn callers(callers: &[String]) -> String {
    let mut text = callers.iter().take(CALLERS_SHOWN).map(String::as_str).collect::<Vec<_>>().join(", ");
    if callers.len() > CALLERS_SHOWN {
        let _ = write!(text, " and {} more", callers.len() - CALLERS_SHOWN);
    }
    text
}

/// One exposed function of an artifact, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct ExposureView {
    pub function: String,
    /// "over contract", "reads past its bound".
    pub breach: &'static str,
    /// The verdict as the scan gave it: "O(n) against its contract of O(1) (contract.strspn.set)".
    pub verdict: String,
    pub sites: String,
    /// "a, b, c and 2 more"; empty where the scan named none.
    pub callers: String,
    /// Why a team accepts it, where it does.
    pub accepted: Option<String>,
}

/// One artifact's latest scan at a version, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactView {
    pub artifact: String,
    pub digest: String,
    pub short_digest: String,
    /// "zig-musl, static".
    pub libc: String,
    pub scanned: String,
    /// `exposed`, `accepted` (every exposure is) or `clean`, also its CSS class.
    pub standing: &'static str,
    /// "Exposed: 2 functions", "Clean: reaches 14 functions of the catalogue, none broken here".
    pub summary: String,
    pub exposed: Vec<ExposureView>,
}

impl ArtifactView {
    pub fn new(a: &ScannedArtifact) -> ArtifactView {
        let n = a.exposed.len();
        let functions = |n: usize| format!("{n} function{}", if n == 1 { "" } else { "s" });
        let (standing, summary) = if a.fails() {
            let open = a.exposed.iter().filter(|f| f.accepted.is_none()).count();
            let accepted = n - open;
            let also = if accepted > 0 { format!(", {accepted} more accepted") } else { String::new() };
            ("exposed", format!("Exposed: reaches {} this version breaks{also}", functions(open)))
        } else if n > 0 {
            ("accepted", format!("Accepted: reaches {} this version breaks, each accepted", functions(n)))
        } else {
            let reached = usize::try_from(a.reached).unwrap_or(0);
            ("clean", format!("Clean: reaches {} of the catalogue, none broken here", functions(reached)))
        };
        ArtifactView {
            artifact: a.artifact.clone(),
            digest: a.digest.clone(),
            short_digest: short_digest(&a.digest),
            libc: format!("{}, {}", a.libc, a.linkage.as_str()),
            scanned: format::timestamp(a.scanned_at),
            standing,
            summary,
            exposed: a
                .exposed
                .iter()
                .map(|f| ExposureView {
                    function: f.function.clone(),
                    breach: f.breach.label(),
                    verdict: f.verdict.clone(),
                    sites: sites(f.call_sites, f.referenced),
                    callers: callers(&f.callers),
                    accepted: f.accepted.clone(),
                })
                .collect(),
        }
    }
}

/// The version's Markdown note's section on its scanned artifacts; `text` escapes what it quotes.
pub fn markdown(artifacts: &[ScannedArtifact], text: impl Fn(&str) -> String) -> String {
    let mut md = String::from("\n## Artifacts scanned at this version\n\n");
    for a in artifacts {
        let view = ArtifactView::new(a);
        let _ = writeln!(
            md,
            "- **{}** (`{}`, {}, scanned {}): {}",
            text(&view.artifact),
            text(&view.short_digest),
            text(&view.libc),
            view.scanned,
            text(&view.summary)
        );
        for f in &view.exposed {
            let from = if f.callers.is_empty() { String::new() } else { format!(" from {}", f.callers) };
            let accepted = f.accepted.as_ref().map(|r| format!("; accepted: {r}")).unwrap_or_default();
            let line = format!("{} {}: {}; {}{from}{accepted}", f.function, f.breach, f.verdict, f.sites);
            let _ = writeln!(md, "  - {}", text(&line));
        }
    }
    md
}

/// The functions of the contract probes and loops among `workloads` and the functions
/// `cost_went_to`, each once, in order: what a regression names, however it is held.
pub fn functions_named<'a>(
    workloads: impl Iterator<Item = &'a str>,
    cost_went_to: impl Iterator<Item = &'a str>,
) -> Vec<String> {
    let probes = workloads.filter_map(slopewatch_core::workloads::function_of);
    let mut functions: Vec<String> = probes.chain(cost_went_to).filter(|f| !f.is_empty()).map(str::to_string).collect();
    functions.sort();
    functions.dedup();
    functions
}

/// Most artifacts a regression's page names (its webhook names fewer).
pub const REACHES_SHOWN: i64 = 100;

/// The artifacts a regression of `lineage` names, each with its sentence: those whose scan found
/// the function broken and not accepted first, then by artifact and function.
pub fn reaches(lineage: &str, rows: Vec<StoredReach>) -> Vec<ArtifactReach> {
    let mut out: Vec<ArtifactReach> = rows
        .into_iter()
        .map(|r| {
            let how = match (r.call_sites, r.callers.is_empty()) {
                (Some(n), false) if n > 0 => format!(" ({}: {})", sites(n, r.referenced), callers(&r.callers)),
                (Some(n), _) => format!(" ({})", sites(n, r.referenced)),
                (None, _) => String::new(),
            };
            let sentence = format!("{} reaches {}{how}, scanned at {}", r.artifact, r.function, r.version);
            ArtifactReach {
                version_url: links::version_page(lineage, &r.version),
                sentence,
                artifact: r.artifact,
                digest: r.digest,
                function: r.function,
                version: r.version,
                scanned_at: r.scanned_at,
                breach: r.breach,
                call_sites: r.call_sites,
                referenced: r.referenced,
                callers: r.callers,
                accepted: r.accepted,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        let rank = |r: &ArtifactReach| (r.breach.is_none() || r.accepted.is_some(), r.breach);
        rank(a).cmp(&rank(b)).then_with(|| (&a.artifact, &a.function).cmp(&(&b.artifact, &b.function)))
    });
    out
}

/// A regression's postmortem section on the artifacts it names; `text` escapes what it quotes.
pub fn reaches_markdown(reaches: &[ArtifactReach], text: impl Fn(&str) -> String) -> String {
    let mut md = String::from("## Artifacts that reach it\n\n");
    for r in reaches {
        let breach = r.breach.map(|b| format!(" ({} there)", b.label())).unwrap_or_default();
        let accepted = r.accepted.as_ref().map(|a| format!("; accepted: {a}")).unwrap_or_default();
        let _ = writeln!(md, "- {}", text(&format!("{}{breach}{accepted}", r.sentence)));
    }
    md.push('\n');
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use slopewatch_core::exposure::Linkage;
    use time::OffsetDateTime;

    fn exposed(function: &str, breach: Breakage, call_sites: u32, accepted: Option<&str>) -> ExposedFunction {
        ExposedFunction {
            function: function.into(),
            breach,
            verdict: format!("{} ({function})", breach.label()),
            call_sites,
            referenced: call_sites == 0,
            callers: (0..5).map(|i| format!("caller{i}")).collect(),
            accepted: accepted.map(str::to_string),
        }
    }

    fn artifact(name: &str, exposed: Vec<ExposedFunction>) -> ScannedArtifact {
        ScannedArtifact {
            scan_id: uuid::Uuid::nil(),
            artifact: name.into(),
            digest: format!("build-id:{}", "ab".repeat(10)),
            libc: "zig-musl".into(),
            linkage: Linkage::Static,
            agent_version: "0.1.0".into(),
            scanned_at: OffsetDateTime::UNIX_EPOCH,
            reached: 14,
            exposed,
        }
    }

    #[test]
    fn artifacts_and_their_exposures_read_worst_first() {
        let mut artifacts = vec![
            artifact("clean", vec![]),
            artifact("accepted", vec![exposed("strspn", Breakage::OverContract, 4, Some("trusted input"))]),
            artifact("over", vec![exposed("strspn", Breakage::OverContract, 4, None)]),
            artifact(
                "reads",
                vec![
                    exposed("strspn", Breakage::OverContract, 9, None),
                    exposed("memchr", Breakage::ReadsPastBound, 1, Some("bounded elsewhere")),
                    exposed("strchr", Breakage::ReadsPastBound, 2, None),
                ],
            ),
        ];
        worst_first(&mut artifacts);
        let names: Vec<&str> = artifacts.iter().map(|a| a.artifact.as_str()).collect();
        assert_eq!(names, ["reads", "over", "accepted", "clean"]);
        let order: Vec<&str> = artifacts[0].exposed.iter().map(|f| f.function.as_str()).collect();
        assert_eq!(order, ["strchr", "strspn", "memchr"], "open exposures first, the worst breach first");

        let views: Vec<ArtifactView> = artifacts.iter().map(ArtifactView::new).collect();
        assert_eq!(views[0].summary, "Exposed: reaches 2 functions this version breaks, 1 more accepted");
        assert_eq!(views[2].standing, "accepted");
        assert_eq!(views[3].summary, "Clean: reaches 14 functions of the catalogue, none broken here");
        assert_eq!(views[0].short_digest, "build-id:abababababab…");
        assert_eq!(views[0].libc, "zig-musl, static");
        let f = &views[1].exposed[0];
        assert_eq!((f.sites.as_str(), f.callers.as_str()), ("4 call sites", "caller0, caller1, caller2 and 2 more"));
        let md = markdown(&artifacts[2..3], |s| s.replace('*', "\\*"));
        assert!(md.contains("- **accepted** (`build-id:abababababab…`, zig-musl, static"), "{md}");
        assert!(md.contains("  - strspn over contract: over contract (strspn); 4 call sites from"), "{md}");
        assert!(md.contains("; accepted: trusted input"), "{md}");
    }

    #[test]
    fn call_sites_read_in_words() {
        assert_eq!(sites(1, false), "1 call site");
        assert_eq!(sites(3, true), "3 call sites, its address taken");
        assert_eq!(sites(0, true), "its address taken");
        assert_eq!(callers(&["a".into(), "b".into()]), "a, b");
        assert_eq!(short_digest("sha256:abc"), "sha256:abc");
    }

    fn reach(artifact: &str, version: &str, breach: Option<Breakage>, call_sites: Option<u32>) -> StoredReach {
        StoredReach {
            artifact: artifact.into(),
            digest: "sha256:00".into(),
            version: version.into(),
            scanned_at: OffsetDateTime::UNIX_EPOCH,
            function: "strspn".into(),
            breach,
            call_sites,
            referenced: false,
            callers: if call_sites.is_some() {
                vec!["jsonTranslateTextToBlob".into(), "sqlite3DecOrHexToI64".into()]
            } else {
                Vec::new()
            },
            accepted: None,
        }
    }

    #[test]
    fn a_regression_names_the_artifacts_that_reach_its_functions() {
        let rows = vec![
            reach("worker", "0.15.2", None, None),
            reach("api-server", "0.16.0", Some(Breakage::OverContract), Some(4)),
        ];
        let named = reaches("zig-cc-musl", rows);
        assert_eq!(
            named[0].sentence,
            "api-server reaches strspn (4 call sites: jsonTranslateTextToBlob, sqlite3DecOrHexToI64), scanned at 0.16.0"
        );
        assert_eq!(named[0].version_url, "/toolchains/zig-cc-musl/0.16.0");
        assert_eq!(named[1].sentence, "worker reaches strspn, scanned at 0.15.2");
        let md = reaches_markdown(&named, str::to_string);
        assert!(md.contains("scanned at 0.16.0 (over contract there)"), "{md}");
    }
}
