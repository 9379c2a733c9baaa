//! Detection against the real compilers installed here; each absent one is skipped with a note.

use crate::helpers::*;
use std::path::Path;

fn detect(toolchain: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = run(agent().args(["toolchains", "--toolchain", toolchain]).arg("--cache-dir").arg(dir.path()));
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8(out.stdout).unwrap()
}

fn field<'a>(report: &'a str, name: &str) -> &'a str {
    report.lines().find_map(|l| l.trim().strip_prefix(&format!("{name}:"))).unwrap().trim()
}

/// The version line split into the version and where it comes from: `("1.2.3", "libc musl")`.
fn version(report: &str) -> (&str, &str) {
    let line = field(report, "version");
    let (version, source) = line.split_once(" (").unwrap_or_else(|| panic!("no source in {line:?}"));
    (version, source.strip_suffix(')').unwrap())
}

/// What `toolchains` says about the toolchains of a config file.
fn detect_configured(toml: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("agent.toml");
    std::fs::write(&config, toml).unwrap();
    let out = run(agent().args(["toolchains", "--config"]).arg(&config).arg("--cache-dir").arg(dir.path()));
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// The version this machine's gcc reports for itself.
fn gcc_version() -> String {
    let out = std::process::Command::new("gcc").arg("-dumpfullversion").output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn have_musl_gcc() -> bool {
    let found = which("musl-gcc").is_some();
    if !found {
        eprintln!("note: musl-gcc is not installed (apt-get install musl-tools); skipped");
    }
    found
}

#[test]
fn gcc_reports_its_version_and_the_glibc_it_links() {
    let r = detect("gcc-glibc=gcc");
    assert_eq!(field(&r, "family"), "Gcc");
    assert_eq!(version(&r), (gcc_version().as_str(), "compiler gcc"), "{r}");
    assert!(field(&r, "libc").starts_with("glibc 2."), "{r}");
    assert!(field(&r, "target").contains("linux-gnu"), "{r}");
}

#[test]
fn musl_gcc_reports_musl_and_its_version() {
    if which("musl-gcc").is_none() {
        eprintln!("note: musl-gcc is not installed (apt-get install musl-tools); skipped");
        return;
    }
    let r = detect("musl-gcc=musl-gcc");
    assert!(field(&r, "libc").starts_with("musl 1."), "{r}");
    assert!(field(&r, "target").ends_with("-musl"), "{r}");
}

#[test]
fn clang_is_told_apart_from_gcc() {
    if which("clang").is_none() {
        eprintln!("note: clang is not installed; skipped");
        return;
    }
    let r = detect("clang=clang");
    assert_eq!(field(&r, "family"), "Clang");
    assert!(field(&r, "libc").starts_with("glibc"), "{r}");
}

#[test]
fn each_zig_release_reports_its_version_and_the_musl_it_ships() {
    let zigs = zigs();
    if zigs.is_empty() {
        eprintln!("note: no Zig under /opt/slopewatch-zig and SLOPEWATCH_TEST_ZIG unset; skipped");
        return;
    }
    for zig in zigs {
        let expected = std::process::Command::new(&zig).arg("version").output().unwrap();
        let expected = String::from_utf8(expected.stdout).unwrap().trim().to_string();
        let r = detect(&format!("zig-cc-musl={} cc -target x86_64-linux-musl", zig.display()));
        assert_eq!(field(&r, "family"), "Zig");
        assert_eq!(version(&r), (expected.as_str(), "compiler zig"), "zig cc keeps Zig's version: {r}");
        assert_eq!(field(&r, "target"), "x86_64-linux-musl");
        let libc = field(&r, "libc");
        assert!(libc.starts_with("musl 1.") && libc.ends_with(&format!("(zig {expected})")), "{r}");
    }
}

#[test]
fn config_overrides_win_over_detection() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("agent.toml");
    std::fs::write(&config, "[[toolchains]]\nname = \"pinned\"\ncc = \"gcc\"\nflags = \"-O1\"\nversion = \"9.9.9\"\nlibc = \"glibc (pinned)\"\n").unwrap();
    let out = run(agent().args(["toolchains", "--config"]).arg(&config).arg("--cache-dir").arg(dir.path()));
    assert!(out.status.success(), "{}", text(&out));
    let r = String::from_utf8(out.stdout).unwrap();
    assert_eq!(version(&r), ("9.9.9", "compiler gcc"));
    assert_eq!(field(&r, "libc"), "glibc (pinned)");
    assert_eq!(field(&r, "flags"), "-O1");
}

#[test]
fn musl_gcc_is_versioned_by_the_musl_it_links() {
    if !have_musl_gcc() {
        return;
    }
    let r = detect("musl-gcc=musl-gcc");
    let musl = field(&r, "libc").strip_prefix("musl ").unwrap();
    assert!(musl.starts_with("1."), "{r}");
    assert_eq!(version(&r), (musl, "libc musl"), "{r}");
    assert_ne!(version(&r).0, gcc_version(), "not the wrapped gcc's");
}

#[test]
fn version_from_compiler_gives_musl_gcc_the_version_of_its_gcc() {
    if !have_musl_gcc() {
        return;
    }
    let r = detect_configured("[[toolchains]]\nname = 'musl-gcc'\ncc = 'musl-gcc'\nversion_from = 'compiler'\n");
    assert_eq!(version(&r), (gcc_version().as_str(), "compiler gcc"), "{r}");
    let dir = tempfile::tempdir().unwrap();
    let out = run(agent()
        .args(["toolchains", "--toolchain", "musl-gcc=musl-gcc", "--version-from", "musl-gcc=compiler"])
        .arg("--cache-dir")
        .arg(dir.path()));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(version(&String::from_utf8(out.stdout).unwrap()).0, gcc_version());
}

#[test]
fn an_explicit_version_wins_over_the_axis() {
    if !have_musl_gcc() {
        return;
    }
    let r = detect_configured("[[toolchains]]\nname = 'musl-gcc'\ncc = 'musl-gcc'\nversion = '1.2.3-local'\n");
    assert_eq!(version(&r), ("1.2.3-local", "libc musl"), "{r}");
}

#[test]
fn gcc_versioned_by_its_libc_reports_glibc_s_version() {
    let r = detect_configured("[[toolchains]]\nname = 'glibc'\ncc = 'gcc'\nversion_from = 'libc'\n");
    let glibc = field(&r, "libc").strip_prefix("glibc ").unwrap();
    assert!(glibc.starts_with("2."), "{r}");
    assert_eq!(version(&r), (glibc, "libc glibc"), "{r}");
}

#[test]
fn a_libc_whose_version_cannot_be_told_is_an_error_not_unknown() {
    if !have_musl_gcc() {
        return;
    }
    // Linked statically from a copy of musl's archive that no package installed and no loader
    // sits beside, musl has no way left to say its version.
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("musl");
    std::fs::create_dir_all(&lib).unwrap();
    let musl = Path::new("/usr/lib/x86_64-linux-musl");
    for f in ["libc.a", "Scrt1.o", "crt1.o", "crti.o", "crtn.o", "rcrt1.o"] {
        std::fs::copy(musl.join(f), lib.join(f)).unwrap();
    }
    let specs = std::fs::read_to_string(musl.join("musl-gcc.specs")).unwrap();
    std::fs::write(lib.join("musl-gcc.specs"), specs.replace("/usr/lib/x86_64-linux-musl", &lib.display().to_string()))
        .unwrap();
    let toolchain = format!("static=gcc -specs {} -static", lib.join("musl-gcc.specs").display());
    let out = run(agent().args(["toolchains", "--toolchain", &toolchain]).arg("--cache-dir").arg(dir.path()));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("could not be detected") && said.contains("--version-from static=compiler"), "{said}");
    assert!(!said.contains("version:"), "nothing is reported as if it were known: {said}");
}

#[test]
fn a_server_refuses_libc_versions_for_a_lineage_of_compiler_versions_and_the_agent_says_what_to_do() {
    if !have_musl_gcc() {
        return;
    }
    let Some(bin) = server_binary() else {
        eprintln!("note: the slopewatch server binary is not built (or set SLOPEWATCH_SERVER_BIN); skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("axis.db").display());
    let token = ingest_token(&bin, &db);
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let url = format!("http://{addr}");
    let _server = start_server(&bin, &addr, &db);
    let spool = dir.path().join("spool");
    let measure = |toolchain: &str, extra: &[&str]| {
        run(agent()
            .args(["run", "--toolchain", toolchain])
            .args(extra)
            .args(["--workloads", "strchr", "--max-size", "256K", "--reps", "2", "--size-budget", "100ms"])
            .args(["--server", &url, "--token", &token, "--attempts", "1"])
            .arg("--cache-dir")
            .arg(dir.path().join("cache"))
            .arg("--spool-dir")
            .arg(&spool))
    };

    // The history as agents made it before: musl-gcc versioned by gcc.
    let out = measure("musl-gcc=musl-gcc", &["--version-from", "musl-gcc=compiler"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    let out = measure("musl-gcc=musl-gcc", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    for advice in ["HTTP 422", "toolchain.version_from", "\"musl-gcc-libc\"", "--version-from musl-gcc=compiler"] {
        assert!(said.contains(advice), "{advice} in {said}");
    }
    assert!(spooled(&spool).is_empty(), "a refused run is not kept for another try");
    assert_eq!(spooled(&spool.join("rejected")).len(), 1, "it is set aside with the reason");

    let out = measure("musl-gcc-libc=musl-gcc", &[]);
    assert_eq!(out.status.code(), Some(0), "a new lineage takes musl's versions: {}", text(&out));
}
