//! The answer as SARIF 2.1.0, for code scanning (GitHub's, or any tool that reads SARIF): a result
//! per caller of a function the toolchain breaks, at the caller's line where the artifact's debug
//! information names a file under the source root, else on the artifact with the caller as a
//! logical location.

use super::report::{Reached, Scan, Status};
use crate::artifact::Caller;
use serde_json::{json, Value};
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// The schema the log declares: OASIS's, of the standard with its errata.
const SCHEMA: &str = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The base the URIs of files under the source root are relative to; the run gives its value.
const SRCROOT: &str = "%SRCROOT%";

/// One log, one run for every artifact scanned: its results are the exposed callers, its rules
/// the broken functions they reach, and its invocation says what could not be told and why, so
/// that a "cannot tell" reaches CI too.
pub(crate) fn sarif(scans: &[Scan], source_root: &Path) -> String {
    let root = normal(source_root);
    let mut rules: Vec<&str> = Vec::new();
    let mut results = Vec::new();
    for s in scans {
        let Some(j) = &s.judged_by else { continue };
        let toolchain = format!("{} {}", j.lineage, j.version);
        for f in s.functions.iter().filter(|f| f.fails()) {
            let rule = rules.iter().position(|r| *r == f.function).unwrap_or_else(|| {
                rules.push(&f.function);
                rules.len() - 1
            });
            let exposed = Exposed { scan: s, function: f, rule, toolchain: &toolchain };
            if f.callers.is_empty() {
                results.push(exposed.result(None, &root));
            }
            results.extend(f.callers.iter().map(|c| exposed.result(Some(c), &root)));
        }
    }
    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "slopewatch-agent",
                "version": crate::AGENT_VERSION,
                "rules": rules.iter().map(|f| rule(f)).collect::<Vec<_>>(),
            }},
            "originalUriBaseIds": { SRCROOT: { "uri": directory_uri(&root) } },
            "invocations": [invocation(scans, &root)],
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&log).expect("a SARIF log always serializes") + "\n"
}

/// A function one artifact reaches, that its toolchain breaks and nobody accepts.
struct Exposed<'a> {
    scan: &'a Scan,
    function: &'a Reached,
    /// Its rule's index in the driver's rules.
    rule: usize,
    /// "zig-cc-musl 0.16.0".
    toolchain: &'a str,
}

impl Exposed<'_> {
    /// The result for the calls from `caller`, or for the function itself when no caller is
    /// known (its address is taken).
    fn result(&self, caller: Option<&Caller>, root: &Path) -> Value {
        let (s, f) = (self.scan, self.function);
        let who = match caller {
            Some(c) => {
                let libc = if c.in_libc { " (the libc's own code)" } else { "" };
                format!("{}{libc} calls {} at {}", c.name, f.function, sites(c.sites))
            }
            None if f.referenced => format!("the address of {} is taken", f.function),
            None => format!("{} is called at {}", f.function, sites(f.call_sites)),
        };
        let expired = match &f.expired {
            Some(e) => format!(". Its acceptance expired {}: {}", e.until, e.reason),
            None => String::new(),
        };
        let text = format!(
            "In {}, {who}, and {} breaks {}: {}{expired}",
            s.artifact, self.toolchain, f.function, f.verdict.words
        );
        let mut location = match caller.filter(|c| !c.in_libc).and_then(|c| source_line(c.location.as_deref()?, root)) {
            Some((uri, line)) => json!({ "physicalLocation": {
                "artifactLocation": { "uri": uri, "uriBaseId": SRCROOT },
                "region": { "startLine": line },
            }}),
            None => json!({ "physicalLocation": { "artifactLocation": artifact_location(&s.path, root) } }),
        };
        if let Some(c) = caller {
            location["logicalLocations"] = json!([{ "name": c.name, "kind": "function" }]);
        }
        json!({
            "ruleId": rule_id(&f.function),
            "ruleIndex": self.rule,
            "level": "error",
            "message": { "text": text },
            "locations": [location],
            "properties": {
                "artifact": s.artifact,
                "function": f.function,
                "verdict": f.verdict.words,
                "breach": f.verdict.breach.map(|b| b.as_str()),
                "toolchain": self.toolchain,
                "caller": caller.map(|c| &c.name),
                "callSites": caller.map_or(f.call_sites, |c| c.sites),
                "inLibc": caller.is_some_and(|c| c.in_libc),
                "addressTaken": f.referenced,
            },
        })
    }
}

/// "1 call site", "3 call sites".
fn sites(n: u32) -> String {
    format!("{n} call site{}", if n == 1 { "" } else { "s" })
}

/// One rule per function: code scanning lists alerts by rule, and the function is what a team
/// looks for; the verdict, which depends on the toolchain, is in each result's message.
fn rule_id(function: &str) -> String {
    format!("slopewatch/{function}")
}

fn rule(function: &str) -> Value {
    json!({
        "id": rule_id(function),
        "shortDescription": { "text": format!("Reaches {function}, which the toolchain breaks") },
        "fullDescription": { "text": format!(
            "The artifact calls {function}, or takes its address, and the toolchain that built it breaks \
             {function} as the catalogue's probes measured it: over its contract, a read past its bound, a \
             wrong result or another failure. Each result names the verdict, the toolchain and the caller."
        )},
        "help": { "text": format!(
            "Keep the caller's input to {function} bounded or call another function, build with a toolchain \
             version that holds {function}, or accept the exposure with a reason and an expiry date in the \
             suppression file (slopewatch-agent exposure --suppressions FILE)."
        )},
        "defaultConfiguration": { "level": "error" },
    })
}

/// The invocation: it ran to its end whatever it found; what a reader should know of each
/// artifact (its notes, why it cannot be told, what stays unsure) as notifications, and each
/// artifact's status in its properties.
fn invocation(scans: &[Scan], root: &Path) -> Value {
    let mut notifications = Vec::new();
    for s in scans {
        let at = json!([{ "physicalLocation": { "artifactLocation": artifact_location(&s.path, root) } }]);
        let mut notify = |level: &str, text: String| {
            notifications.push(json!({
                "level": level,
                "message": { "text": format!("{}: {text}", s.artifact) },
                "locations": at,
            }));
        };
        for n in &s.notes {
            notify("note", n.clone());
        }
        match s.status {
            Status::CannotTell => notify("warning", format!("cannot tell: {}", s.cannot_tell.as_deref().unwrap_or(""))),
            Status::Unsure => {
                let unsure: Vec<&str> =
                    s.functions.iter().filter(|f| f.verdict.state == "unsure").map(|f| f.function.as_str()).collect();
                notify("warning", format!("unsure: the catalogue could not judge {} either way", unsure.join(", ")));
            }
            Status::Exposed | Status::Clean => {}
        }
    }
    let artifacts: Vec<Value> = scans
        .iter()
        .map(|s| {
            json!({
                "artifact": s.artifact,
                "path": s.path,
                "status": s.status,
                "judgedBy": s.judged_by.as_ref().map(|j| format!("{} {}", j.lineage, j.version)),
                "cannotTell": s.cannot_tell,
            })
        })
        .collect();
    json!({
        "executionSuccessful": true,
        "toolExecutionNotifications": notifications,
        "properties": { "artifacts": artifacts },
    })
}

/// The URI relative to the source root and the line of `at` ("/src/app/parse.c:123"), when its
/// file lies under the root and the line is known.
fn source_line(at: &str, root: &Path) -> Option<(String, u32)> {
    let (file, line) = at.rsplit_once(':')?;
    let line = line.parse().ok().filter(|&l| l > 0)?;
    Some((under(Path::new(file), root)?, line))
}

/// The artifact as the command line named it: relative to the source root when it lies under
/// it, else by its absolute file URI.
fn artifact_location(path: &str, root: &Path) -> Value {
    match under(Path::new(path), root) {
        Some(uri) => json!({ "uri": uri, "uriBaseId": SRCROOT }),
        None => json!({ "uri": format!("file:///{}", segments(&normal(Path::new(path))).join("/")) }),
    }
}

/// `path` as a URI relative to `root`, when it lies under it.
fn under(path: &Path, root: &Path) -> Option<String> {
    let relative = match normal(path).strip_prefix(root) {
        Ok(relative) => relative.to_path_buf(),
        // A compiler records the directory it ran in as the shell named it ($PWD), through a
        // symlink the root may have been given without, or the other way round.
        Err(_) => path.canonicalize().ok()?.strip_prefix(root.canonicalize().ok()?).ok()?.to_path_buf(),
    };
    let parts = segments(&relative);
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// `path` made absolute against the current directory, with `.` and `..` resolved by its text:
/// DWARF's paths and the root are compared as written before any symlink is followed.
fn normal(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in absolute.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The root's file URI, ending in `/` as a base URI must.
fn directory_uri(root: &Path) -> String {
    format!("file:///{}", segments(root).iter().map(|s| format!("{s}/")).collect::<String>())
}

/// The names of `path`'s parts, each percent-encoded for a URI.
fn segments(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(encode(part)),
            _ => None,
        })
        .collect()
}

/// A path segment's bytes as a URI's: unreserved characters and sub-delimiters as they are, every
/// other byte (`:` too, which would read as a scheme in a first segment) as `%XX`.
fn encode(part: &OsStr) -> String {
    let mut out = String::new();
    for &b in part.as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::report::{AcceptedUntil, JudgedBy, Libc, Verdict};
    use super::*;
    use slopewatch_core::exposure::{Breakage, Linkage};

    fn caller(name: &str, sites: u32, location: Option<&str>, in_libc: bool) -> Caller {
        Caller { name: name.into(), sites, location: location.map(Into::into), in_libc }
    }

    fn broken(function: &str, callers: Vec<Caller>) -> Reached {
        Reached {
            function: function.into(),
            aliases: vec![function.into()],
            verdict: Verdict {
                state: "breaks",
                breach: Some(Breakage::OverContract),
                words: format!("O(n) against its contract of O(1) (contract.{function}.remaining)"),
            },
            call_sites: callers.iter().map(|c| c.sites).sum(),
            referenced: false,
            callers,
            found_by: crate::artifact::FoundBy::Symbol,
            accepted: None,
            expired: None,
        }
    }

    /// `tokenizer`, built under /work/app by zig-cc-musl 0.16.0: strspn called from a function of
    /// the project's sources, from one without a name, and from the libc; strchr broken but
    /// accepted; strlen's address taken; memcpy held.
    fn tokenizer() -> Scan {
        let strspn = broken(
            "strspn",
            vec![
                caller("count_blanks", 3, Some("/work/app/src/../src/parse.c:14"), false),
                caller("0x401a20", 1, None, false),
                caller("getenv", 1, Some("/home/ci/zig/lib/libc/musl/src/env/getenv.c:10"), true),
            ],
        );
        let mut strchr = broken("strchr", vec![caller("split", 2, Some("/work/app/src/split.c:5"), false)]);
        strchr.accepted = Some(AcceptedUntil { reason: "short lines".into(), until: "2999-01-01".into() });
        let mut strlen = broken("strlen", Vec::new());
        strlen.referenced = true;
        let mut memcpy = broken("memcpy", vec![caller("copy_text", 1, Some("/work/app/src/copy.c:3"), false)]);
        memcpy.verdict = Verdict { state: "held", breach: None, words: "held".into() };
        Scan {
            artifact: "tokenizer".into(),
            path: "/work/app/build/tokenizer".into(),
            digest: "sha256:00".into(),
            arch: "x86_64".into(),
            linkage: Linkage::Static,
            libc: Libc { name: "zig".into(), evidence: "c.string.strspn".into() },
            judged_by: Some(JudgedBy {
                lineage: "zig-cc-musl".into(),
                version: "0.16.0".into(),
                libc: "zig".into(),
                verdicts_from: vec!["measured here".into()],
            }),
            status: Status::Exposed,
            cannot_tell: None,
            notes: Vec::new(),
            functions: vec![strspn, strchr, strlen, memcpy],
            unused: Vec::new(),
        }
    }

    fn log(scans: &[Scan]) -> Value {
        serde_json::from_str(&sarif(scans, Path::new("/work/app/"))).unwrap()
    }

    fn location(result: &Value) -> &Value {
        &result["locations"][0]
    }

    #[test]
    fn a_caller_in_the_sources_gets_its_file_and_line_and_one_without_gets_the_artifact_and_its_name() {
        let log = log(&[tokenizer()]);
        let run = &log["runs"][0];
        assert_eq!(run["originalUriBaseIds"]["%SRCROOT%"]["uri"], "file:///work/app/", "{run:#}");
        let results = run["results"].as_array().unwrap();
        let rules: Vec<&Value> = results.iter().map(|r| &r["ruleId"]).collect();
        assert_eq!(rules, ["slopewatch/strspn", "slopewatch/strspn", "slopewatch/strspn", "slopewatch/strlen"]);

        let [in_sources, unnamed, in_libc, address] = [&results[0], &results[1], &results[2], &results[3]];
        let at = &location(in_sources)["physicalLocation"];
        assert_eq!(at["artifactLocation"], json!({ "uri": "src/parse.c", "uriBaseId": "%SRCROOT%" }), "{in_sources:#}");
        assert_eq!(at["region"]["startLine"], 14, "{in_sources:#}");
        let text = in_sources["message"]["text"].as_str().unwrap();
        for word in ["count_blanks", "strspn", "3 call sites", "zig-cc-musl 0.16.0", "O(n) against its contract"] {
            assert!(text.contains(word), "{word}: {text}");
        }
        assert_eq!((in_sources["level"].as_str(), &in_sources["properties"]["callSites"]), (Some("error"), &json!(3)));

        for (result, name) in [(unnamed, "0x401a20"), (in_libc, "getenv")] {
            let at = location(result);
            assert_eq!(at["physicalLocation"]["artifactLocation"]["uri"], "build/tokenizer", "{result:#}");
            assert!(at["physicalLocation"].get("region").is_none(), "{result:#}");
            assert_eq!(at["logicalLocations"], json!([{ "name": name, "kind": "function" }]), "{result:#}");
        }
        assert!(in_libc["message"]["text"].as_str().unwrap().contains("the libc's own code"), "{in_libc:#}");

        assert!(location(address).get("logicalLocations").is_none(), "{address:#}");
        assert!(address["message"]["text"].as_str().unwrap().contains("address of strlen is taken"), "{address:#}");
        let driver = &run["tool"]["driver"];
        assert_eq!(driver["rules"][address["ruleIndex"].as_u64().unwrap() as usize]["id"], "slopewatch/strlen");
        assert_eq!(driver["rules"].as_array().unwrap().len(), 2, "{driver:#}");
    }

    #[test]
    fn an_accepted_function_yields_no_result_and_an_expired_one_says_so() {
        let mut scan = tokenizer();
        scan.functions.retain(|f| f.function == "strchr");
        assert!(log(std::slice::from_ref(&scan))["runs"][0]["results"].as_array().unwrap().is_empty());
        let strchr = &mut scan.functions[0];
        strchr.expired = strchr.accepted.take();
        let log = log(&[scan]);
        let results = log["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 1, "{log:#}");
        assert!(results[0]["message"]["text"].as_str().unwrap().contains("acceptance expired 2999-01-01"));
    }

    #[test]
    fn an_artifact_that_cannot_be_told_is_a_warning_of_the_invocation() {
        let mut scan = tokenizer();
        scan.path = "/srv/out/api server".into();
        scan.functions.clear();
        scan.judged_by = None;
        scan.status = Status::CannotTell;
        scan.cannot_tell = Some("it is a static binary without a symbol table".into());
        let log = log(&[scan]);
        let invocation = &log["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], true);
        let warning = &invocation["toolExecutionNotifications"][0];
        assert_eq!(warning["level"], "warning", "{invocation:#}");
        assert!(warning["message"]["text"].as_str().unwrap().contains("without a symbol table"), "{warning:#}");
        let uri = &warning["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
        assert_eq!(uri, "file:///srv/out/api%20server", "outside the root: {warning:#}");
        assert_eq!(invocation["properties"]["artifacts"][0]["status"], "cannot_tell");
    }

    #[test]
    fn a_file_named_through_a_symlink_to_the_root_lies_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("checkout");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/parse.c"), "").unwrap();
        std::os::unix::fs::symlink(&root, dir.path().join("link")).unwrap();
        let at = format!("{}/src/parse.c:7", dir.path().join("link").display());
        assert_eq!(source_line(&at, &normal(&root)), Some(("src/parse.c".into(), 7)));
        assert_eq!(source_line(&format!("{}/src/parse.c:0", root.display()), &normal(&root)), None);
    }
}
