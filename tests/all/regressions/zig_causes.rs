//! The Zig 0.15.2 → 0.16.0 story through the real agent: the built-ins, the catalogue's probes of
//! the functions the story turns on, and a team's tokenizer (a command workload whose cost lands
//! in strspn) measured once with each release, then submitted to a server on each backend. Its
//! regression's causes, as the JSON, the page (in Chromium) and the Slack message tell them.

use crate::helpers::chromium::{output_dir, Chromium};
use crate::helpers::process::agent_binary;
use crate::helpers::webhooks::{config, Receiver};
use crate::helpers::{on_both_backends, serve, TestApp};
use serde_json::Value;
use slopewatch::config::WebhookFormat;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The catalogue's probes the story needs: the functions the SQLite paths and the loops call,
/// and those 0.16.0 breaks by a wrong result or a read past a bound. The rest of the catalogue
/// adds minutes and no cause of another kind.
const PROBES: &str =
    "contract.strspn.*,contract.strcspn.*,contract.strchr.*,contract.memccpy.*,contract.strncmp.*,contract.memchr.*";

/// A team's tokenizer, the profile tests' own: SIZE bytes of words, each run of letters skipped
/// with `strspn`.
fn tokenizer() -> String {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("ingest-agent/tests/fixtures/stripped_strspn.c");
    std::fs::read_to_string(fixture).unwrap()
}

const TEAM: &str = "[[workloads]]\nname = \"tokens\"\nbuild = \"{cc} {cflags} -o {out} tokens.c\"\n\
                    command = \"{out} {size}\"\nsources = [\"tokens.c\"]\nunit = \"bytes\"\nstart = 4096\nmax = 32768\n";

struct Measured {
    dir: tempfile::TempDir,
    /// The run files, oldest release first: the built-ins and probes timed, the tokenizer counted.
    runs: Vec<PathBuf>,
}

/// Each release measured once for every backend; `None`, with a note, where a release or
/// Valgrind is not installed (`scripts/install-test-deps` installs them).
fn measured() -> Option<&'static Measured> {
    static MEASURED: OnceLock<Option<Measured>> = OnceLock::new();
    MEASURED
        .get_or_init(|| {
            let zig = |v: &str| PathBuf::from(format!("/opt/slopewatch-zig/{v}/ziglang/zig"));
            let valgrind = Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success());
            if !valgrind || !zig("0.15.2").is_file() || !zig("0.16.0").is_file() {
                eprintln!("note: Zig 0.15.2 and 0.16.0 under /opt/slopewatch-zig, or valgrind, are missing; skipped");
                return None;
            }
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("tokens.c"), tokenizer()).unwrap();
            std::fs::write(dir.path().join("team.toml"), TEAM).unwrap();
            // Shared with the other tests that build with the real toolchains.
            let cache = output_dir().parent().unwrap().join("agent-cache");
            let mut runs = Vec::new();
            for v in ["0.15.2", "0.16.0"] {
                let toolchain = format!("zig-cc-musl={} cc -target x86_64-linux-musl", zig(v).display());
                let all = dir.path().join(format!("all-{v}.json"));
                let workloads = format!("builtin,{PROBES}");
                measure(dir.path(), &cache, &["--toolchain", &toolchain, "--workloads", &workloads], &all);
                let team = dir.path().join(format!("team-{v}.json"));
                let counted = ["--measure", "instructions", "--counter", "valgrind", "--config", "team.toml"];
                measure(
                    dir.path(),
                    &cache,
                    &[&["--toolchain", &toolchain, "--workloads", "tokens"], &counted[..]].concat(),
                    &team,
                );
                runs.extend([all, team]);
            }
            Some(Measured { dir, runs })
        })
        .as_ref()
}

/// `slopewatch-agent measure ARGS --out OUT` in `dir`, which exits 0 or 1 (something over).
fn measure(dir: &Path, cache: &Path, args: &[&str], out: &Path) {
    let result = Command::new(agent_binary())
        .current_dir(dir)
        .arg("measure")
        .args(args)
        .arg("--cache-dir")
        .arg(cache)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&result.stdout), String::from_utf8_lossy(&result.stderr));
    assert!(result.status.code().is_some_and(|c| c <= 1), "measure {args:?}: {said}");
}

fn cause<'a>(detail: &'a Value, function: &str) -> &'a Value {
    let causes = detail["root_causes"].as_array().unwrap();
    causes.iter().find(|c| c["function"] == function).unwrap_or_else(|| panic!("no cause {function}: {detail}"))
}

fn names(cause: &Value) -> Vec<&str> {
    cause["workloads"].as_array().unwrap().iter().map(|w| w["workload"].as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zig_0_16_0_s_regression_is_told_by_the_functions_it_broke() {
    let Some(measured) = tokio::task::spawn_blocking(measured).await.unwrap() else { return };
    on_both_backends(|db| async move {
        let formats = [WebhookFormat::Json, WebhookFormat::Slack];
        let app = TestApp::with_config(db, config(&Receiver::reserve(), &formats)).await;
        let base = serve(app.router.clone()).await;
        let (token, spool) =
            (app.ingest_token.clone(), measured.dir.path().join(format!("spool-{:?}", app.db.backend)));
        let mut submit = Command::new(agent_binary());
        submit
            .args(["submit", "--server", &base, "--token", &token])
            .args(&measured.runs)
            .arg("--spool-dir")
            .arg(&spool);
        let out = tokio::task::spawn_blocking(move || submit.output().unwrap()).await.unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

        let (_, list) = app.get("/api/v1/regressions").await;
        let found = list["regressions"].as_array().unwrap().iter().find(|r| r["regression"]["version"] == "0.16.0");
        let id = found.and_then(|r| r["regression"]["id"].as_i64()).unwrap_or_else(|| panic!("{list}"));
        let (_, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        let causes = detail["root_causes"].as_array().unwrap();
        let members = detail["workloads"].as_array().unwrap().len();
        assert!(causes.len() < members, "{} causes for {members} workloads: {detail}", causes.len());

        let strspn = cause(&detail, "strspn");
        assert_eq!(strspn["break"], "over_contract", "{strspn}");
        let under = names(strspn);
        assert_eq!(under[0], "tokens", "the team's own first: {strspn}");
        for w in [
            "sqlite-json-each.spaced",
            "sqlite-json-each.pretty",
            "sqlite-json-arrow.pretty",
            "sqlite-json-extract.spaced",
            "strspn",
            "contract.strspn.remaining",
        ] {
            assert!(under.contains(&w), "{w} under strspn: {strspn}");
        }
        assert_eq!(causes[0]["function"], "strspn", "it reaches the team's workload: first");
        assert!(names(cause(&detail, "strcspn")).contains(&"sqlite-like.long-text"), "{detail}");
        assert_eq!(cause(&detail, "memccpy")["break"], "wrong_result");
        for bound in ["strncmp", "memchr"] {
            assert_eq!(cause(&detail, bound)["break"], "read_past_bound", "{detail}");
        }

        // The page opens with them, in a real browser.
        if let Some(chromium) = Chromium::required() {
            let url = format!("{base}/regressions/{id}");
            let dom = tokio::task::spawn_blocking(move || chromium.dom(&url)).await.unwrap();
            let first_h2 = dom.find("<h2").unwrap();
            assert!(dom[first_h2..].starts_with("<h2 id=\"root-causes\">Root causes</h2>"), "{dom}");
            assert_eq!(dom.matches("<li class=\"sw-cause ").count(), causes.len());
        }

        // One Slack line per cause.
        let bodies = app.db.texts("SELECT body FROM deliveries").await;
        let slack: Vec<Value> = bodies.iter().map(|b| serde_json::from_str(b).unwrap()).collect();
        let text = slack
            .iter()
            .filter_map(|b| b["text"].as_str())
            .find(|t| t.contains("zig-cc-musl 0.16.0"))
            .unwrap_or_else(|| panic!("{bodies:?}"));
        for c in causes {
            let line = format!("• `{}` ", c["function"].as_str().unwrap());
            assert_eq!(text.lines().filter(|l| l.starts_with(&line)).count(), 1, "{line}: {text}");
        }
        eprintln!("{text}");
    })
    .await;
}
