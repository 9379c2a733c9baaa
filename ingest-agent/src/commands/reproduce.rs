//! `reproduce`: one self-contained C file that shows a probe's break standalone, built and run
//! once with the toolchain so that its head comment says what it measured there.

use crate::builds::toolchain;
use crate::cli::ReproduceArgs;
use crate::config;
use crate::exit::ExitStatus;
use crate::search::found;
use crate::search::reproduce::{self, Heading};
use anyhow::{bail, Context, Result};

/// Writes the reproducer of `args.probe`; exits 0 once written (2 for a probe it has no
/// generator for), whether or not the break showed here, which it says on stderr.
pub fn reproduce(args: &ReproduceArgs) -> Result<ExitStatus> {
    let shape = reproduce::shape_of(&args.probe).map_err(anyhow::Error::msg)?;
    let root = config::cache_root(args.cache_dir.clone())?;
    let specs = args.toolchains.specs(&root)?;
    let [spec] = specs.as_slice() else { bail!("reproduce takes one toolchain (--toolchain NAME=COMMAND)") };
    let tc = toolchain::detect(spec, &root.join("probe")).with_context(|| format!("toolchain {}", spec.name))?;
    let probes = found::load(&found::path(args.probes.as_deref(), args.toolchains.config_file())?)?;
    let build = [spec.command.clone(), spec.flags.clone(), words(&["-fno-builtin", "-o", "repro", "repro.c", "-lm"])]
        .concat()
        .join(" ");
    let mut heading = Heading {
        toolchain: format!("{} (version {}, {})", spec.name, tc.version, tc.libc),
        build,
        found: probes.into_iter().find(|p| p.name() == shape.name() || p.name() == args.probe),
        measured: Vec::new(),
    };
    // Built and run once here, so the file says what it showed with this toolchain.
    let dir = tempfile::tempdir()?;
    let src = dir.path().join("repro.c");
    std::fs::write(&src, reproduce::file(&args.probe, &shape, &heading))?;
    let bin = dir.path().join("repro");
    let flags = words(&["-fno-builtin", "-lm"]);
    match tc.compile(std::slice::from_ref(&src), dir.path(), &flags, &bin) {
        Err(e) => bail!("the reproducer does not build with {}: {e}", spec.name),
        Ok(()) => {
            let out = crate::builds::runner::command(tc.runner.as_ref(), &bin).output()?;
            let mut said: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
            said.extend(String::from_utf8_lossy(&out.stderr).lines().map(str::to_string));
            said.push(exit_of(&out.status));
            eprintln!("{}", said.join("\n"));
            heading.measured = said;
        }
    }
    let text = reproduce::file(&args.probe, &shape, &heading);
    match &args.output {
        Some(path) => {
            std::fs::write(path, &text).with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(ExitStatus::Ok)
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

/// How the program ended, in words.
fn exit_of(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => format!("killed by signal {s} ({})", slopewatch_core::wire::signal_name(s)),
        _ => "ended".to_string(),
    }
}
