//! Detection against the real compilers installed here; each absent one is skipped with a note.

mod common;
use common::*;

fn detect(toolchain: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = run(agent().args(["toolchains", "--toolchain", toolchain]).arg("--cache-dir").arg(dir.path()));
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8(out.stdout).unwrap()
}

fn field<'a>(report: &'a str, name: &str) -> &'a str {
    report.lines().find_map(|l| l.trim().strip_prefix(&format!("{name}:"))).unwrap().trim()
}

#[test]
fn gcc_reports_its_version_and_the_glibc_it_links() {
    let r = detect("gcc-glibc=gcc");
    assert_eq!(field(&r, "family"), "Gcc");
    assert!(field(&r, "version").starts_with(|c: char| c.is_ascii_digit()), "{r}");
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
        assert_eq!(field(&r, "version"), expected);
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
    assert_eq!(field(&r, "version"), "9.9.9");
    assert_eq!(field(&r, "libc"), "glibc (pinned)");
    assert_eq!(field(&r, "flags"), "-O1");
}
