//! `exposure` of stripped binaries, with real toolchains: the program of the exposure tests built
//! by Zig 0.16.0 and 0.15.2 and stripped (`-s`) is judged by its libc's code, recognised from the
//! toolchain's own fingerprints (exposed at 0.16.0, clean at 0.15.2); musl-gcc's static build
//! the same; a stripped dynamic gcc build by its imports; its unstripped twin names the callers;
//! a Rust release built by cargo-zigbuild with a default profile (no symbol table) is judged by
//! the Zig that linked it, and given both Zig releases the scan says whose libc it carries; plain
//! cargo's stripped build by Rust's bundled musl, judged by musl-gcc; a
//! static binary with no libc code of any toolchain here cannot be told.

use crate::exposure::{build, cargo_build, function, scan};
use crate::helpers::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Zig release `version` as a toolchain named `name`, where installed.
fn zig_toolchain(version: &str, name: &str) -> Option<(PathBuf, String)> {
    let zig = zigs().into_iter().find(|z| z.to_string_lossy().contains(version))?;
    let toolchain = format!("{name}={} cc -target x86_64-linux-musl", zig.display());
    Some((zig, toolchain))
}

/// The only artifact of `answer`.
fn artifact(answer: &Value) -> &Value {
    &answer["artifacts"][0]
}

/// The names of the callers of `f`.
fn callers(f: &Value) -> Vec<String> {
    f["callers"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn stripped_zig_builds_are_judged_by_their_libc_s_code_and_the_twin_names_the_callers() {
    let (Some((zig16, tc16)), Some((zig15, tc15))) =
        (zig_toolchain("0.16.0", "zig-cc-musl"), zig_toolchain("0.15.2", "zig-cc-musl"))
    else {
        eprintln!("note: Zig 0.15.2 and 0.16.0 are not installed (scripts/install-test-deps); skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let target = ["cc", "-target", "x86_64-linux-musl"];
    fn cc<'a>(zig: &'a Path, target: &[&'a str]) -> Vec<&'a str> {
        [vec![zig.to_str().unwrap()], target.to_vec()].concat()
    }

    // 0.16.0: exposed, strspn recognised by its code, with its call site given by address.
    let stripped = build(&cc(&zig16, &target), &["-s"], dir.path(), "tokenizer-0.16.0");
    let (status, answer, said) = scan(&stripped, &tc16, &cache, &[]);
    assert_eq!(status, Some(1), "{said}");
    let a = artifact(&answer);
    assert_eq!((a["status"].as_str(), a["libc"]["name"].as_str()), (Some("exposed"), Some("zig")), "{a:#}");
    assert!(a["libc"]["evidence"].as_str().unwrap().contains("its code:"), "{a:#}");
    let strspn = function(&answer, "strspn");
    assert_eq!(
        (strspn["found_by"].as_str(), strspn["verdict"]["breach"].as_str()),
        (Some("code"), Some("over_contract"))
    );
    assert!(strspn["call_sites"].as_u64().unwrap() >= 1, "{strspn:#}");
    assert!(
        callers(strspn).iter().any(|c| c.starts_with("0x")),
        "a caller no symbol names, by its address: {strspn:#}"
    );

    // 0.15.2: the same program, its musl strspn held.
    let clean = build(&cc(&zig15, &target), &["-s"], dir.path(), "tokenizer-0.15.2");
    let (status, answer, said) = scan(&clean, &tc15, &cache, &[]);
    assert_eq!(status, Some(0), "{said}");
    let strspn = function(&answer, "strspn");
    assert_eq!((strspn["found_by"].as_str(), strspn["verdict"]["state"].as_str()), (Some("code"), Some("held")));

    // The unstripped twin (stripped afterwards, as a release is) names the callers, with lines.
    let twin = build(&cc(&zig16, &target), &[], dir.path(), "tokenizer-twin");
    let shipped = dir.path().join("tokenizer-shipped");
    let out = run(Command::new("strip").arg("-o").arg(&shipped).arg(&twin));
    assert!(out.status.success(), "{}", text(&out));
    let (status, answer, said) = scan(&shipped, &tc16, &cache, &["--symbols", twin.to_str().unwrap()]);
    assert_eq!(status, Some(1), "{said}");
    let strspn = function(&answer, "strspn");
    let count_blanks = strspn["callers"].as_array().unwrap().iter().find(|c| c["name"] == "count_blanks");
    let location = count_blanks.and_then(|c| c["location"].as_str()).unwrap_or_else(|| panic!("{strspn:#}"));
    assert!(location.contains("exposed.c:"), "{location}");

    // A separate debug file, named by the .gnu_debuglink of the shipped binary, found by itself.
    let split = dir.path().join("split");
    std::fs::create_dir_all(split.join(".debug")).unwrap();
    let (debug, linked) = (split.join(".debug/tokenizer.debug"), split.join("tokenizer"));
    let objcopy = |args: &[&std::ffi::OsStr]| {
        let out = run(Command::new("objcopy").args(args));
        assert!(out.status.success(), "{}", text(&out));
    };
    objcopy(&["--only-keep-debug".as_ref(), twin.as_os_str(), debug.as_os_str()]);
    let add_link = format!("--add-gnu-debuglink={}", debug.display());
    objcopy(&[add_link.as_ref(), shipped.as_os_str(), linked.as_os_str()]);
    let (status, answer, said) = scan(&linked, &tc16, &cache, &[]);
    assert_eq!(status, Some(1), "{said}");
    assert!(artifact(&answer)["notes"].to_string().contains(".gnu_debuglink"), "{answer:#}");
    assert!(callers(function(&answer, "strspn")).contains(&"count_blanks".to_string()), "{answer:#}");

    // A file of another build is refused, not trusted.
    let other = build(&cc(&zig15, &target), &[], dir.path(), "other-build");
    let out = run(agent()
        .arg("exposure")
        .arg(&shipped)
        .args(["--toolchain", &tc16, "--symbols", other.to_str().unwrap(), "--cache-dir"])
        .arg(&cache));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("another build"), "{}", text(&out));
}

#[test]
fn musl_gcc_static_by_its_code_gcc_dynamic_by_its_imports_and_no_libc_cannot_be_told() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    if which("musl-gcc").is_some() {
        let binary = build(&["musl-gcc"], &["-static", "-s"], dir.path(), "musl-stripped");
        let (status, answer, said) = scan(&binary, "musl-gcc=musl-gcc", &cache, &[]);
        assert_eq!(status, Some(0), "{said}");
        assert_eq!(artifact(&answer)["libc"]["name"], "musl", "{answer:#}");
        let strspn = function(&answer, "strspn");
        assert_eq!((strspn["found_by"].as_str(), strspn["verdict"]["state"].as_str()), (Some("code"), Some("held")));
    } else {
        eprintln!("note: musl-gcc is not installed; its case is skipped");
    }

    let dynamic = build(&["gcc"], &["-s"], dir.path(), "gcc-stripped");
    let (status, answer, said) = scan(&dynamic, "gcc-glibc=gcc", &cache, &[]);
    assert_eq!(status, Some(0), "{said}");
    assert_eq!(function(&answer, "strspn")["found_by"], "import", "{answer:#}");

    // No libc at all: nothing any toolchain here builds is in it.
    let bare = dir.path().join("bare.c");
    std::fs::write(&bare, "void _start(void) { for (;;) __asm__ volatile(\"\" ::: \"memory\"); }\n").unwrap();
    let binary = dir.path().join("bare");
    let out = run(Command::new("gcc").args(["-O2", "-static", "-nostdlib", "-s"]).arg(&bare).arg("-o").arg(&binary));
    assert!(out.status.success(), "{}", text(&out));
    let (status, answer, said) = scan(&binary, "gcc-glibc=gcc", &cache, &[]);
    assert_eq!(status, Some(3), "{said}");
    let why = artifact(&answer)["cannot_tell"].as_str().unwrap_or_default();
    assert!(why.contains("Name the toolchain that built it") && why.contains("--symbols"), "{why}");
}

#[test]
fn a_rust_release_built_by_cargo_zigbuild_is_judged_by_the_zig_whose_libc_it_carries() {
    let zigbuild = Path::new("/opt/slopewatch-cargo-zigbuild/bin/cargo-zigbuild");
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output().ok();
    let has_target =
        installed.is_some_and(|o| String::from_utf8_lossy(&o.stdout).contains("x86_64-unknown-linux-musl"));
    let (Some((zig16, tc16)), Some((zig15, tc15)), true, true) =
        (zig_toolchain("0.16.0", "zig-0.16.0"), zig_toolchain("0.15.2", "zig-0.15.2"), zigbuild.is_file(), has_target)
    else {
        eprintln!("note: needs Zig 0.15.2 and 0.16.0, cargo-zigbuild and Rust's musl target (scripts/install-test-deps); skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    // A default release profile: the fixture's line tables off again.
    let default_profile = [("CARGO_PROFILE_RELEASE_DEBUG", "false")];
    let built = |zig: &Path, version: &str| {
        let at = dir.path().join(version);
        std::fs::create_dir_all(&at).unwrap();
        cargo_build(&at, zigbuild, &["zigbuild"], zig.parent(), &default_profile)
    };
    let (bin16, bin15) = (built(&zig16, "0.16.0"), built(&zig15, "0.15.2"));
    let nm = run(Command::new("nm").arg(&bin16));
    assert!(!nm.status.success() || text(&nm).contains("no symbols"), "a default profile keeps no symbol table here");

    let (status, answer, said) = scan(&bin16, &tc16, &cache, &[]);
    assert_eq!(status, Some(1), "{said}");
    let strspn = function(&answer, "strspn");
    assert_eq!(
        (strspn["found_by"].as_str(), strspn["verdict"]["breach"].as_str()),
        (Some("code"), Some("over_contract"))
    );
    let (status, _, said) = scan(&bin15, &tc15, &cache, &[]);
    assert_eq!(status, Some(0), "{said}");

    // Given both releases, the code says whose libc each carries, and that one judges it.
    for (binary, version, exit) in [(&bin16, "0.16.0", 1), (&bin15, "0.15.2", 0)] {
        let (status, answer, said) = scan(binary, &tc16, &cache, &["--toolchain", &tc15]);
        assert_eq!(status, Some(exit), "{said}");
        let a = artifact(&answer);
        assert_eq!(a["judged_by"]["version"], version, "{a:#}");
        let evidence = a["libc"]["evidence"].as_str().unwrap();
        assert!(evidence.contains(&format!("match zig-{version} {version}'s build")), "{evidence}");
    }

    // Plain cargo links Rust's own bundled musl, stripped here: recognised from that musl's code.
    if which("musl-gcc").is_none() {
        eprintln!("note: musl-gcc is not installed: Rust's bundled musl has no judge here; that case is skipped");
        return;
    }
    let stripped = [("CARGO_PROFILE_RELEASE_DEBUG", "false"), ("CARGO_PROFILE_RELEASE_STRIP", "true")];
    let plain = cargo_build(dir.path(), Path::new("cargo"), &["build"], None, &stripped);
    let (status, answer, said) = scan(&plain, &tc16, &cache, &[]);
    assert_eq!(status, Some(0), "musl's strspn holds: {said}");
    let a = artifact(&answer);
    assert!(a["libc"]["evidence"].as_str().unwrap().contains("match Rust's bundled musl"), "{a:#}");
    assert_eq!(a["judged_by"]["lineage"], "musl-gcc", "{a:#}");
    assert_eq!(function(&answer, "strspn")["found_by"], "code", "{a:#}");
}
