//! Running what the host cannot: a toolchain that builds for another architecture (`zig cc -target
//! aarch64-linux-musl` on an x86-64 host) has its binaries run by an emulator, QEMU's user mode
//! (`qemu-aarch64 ./loop N`), which translates the target's instructions and passes its system
//! calls to the host's kernel. Growth survives the translation; absolute speed does not.
//!
//! The runner is the one named for the toolchain (`runner = "…"`, `--runner NAME=CMD`), else a
//! binfmt handler the kernel has registered for the architecture, else `qemu-ARCH` found on
//! `PATH`. A dynamically linked binary also needs the target's loader and libraries: QEMU is
//! pointed at the sysroot that holds them (`-L /usr/aarch64-linux-gnu`, Debian's cross packages).

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// How a toolchain's binaries are run when the host cannot run them itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runner {
    /// The command put before the binary and its arguments, e.g. `qemu-aarch64 -L /usr/aarch64-linux-gnu`;
    /// empty where a binfmt handler runs the binary as it is.
    pub argv: Vec<String>,
    /// Set for the binary: where the handler finds the target's libraries (`QEMU_LD_PREFIX`).
    pub env: Vec<(String, String)>,
    /// The architecture the binaries are built for, e.g. `aarch64`.
    pub arch: String,
    /// Where the runner came from.
    pub found: RunnerFrom,
}

/// Where a runner came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunnerFrom {
    /// Named for the toolchain, in the config file or with `--runner`.
    Given,
    /// The kernel's binfmt handler for the architecture.
    Binfmt,
    /// `qemu-ARCH` on `PATH`.
    OnPath,
}

impl Runner {
    /// A command that runs `binary` under the runner; its arguments follow.
    pub fn command(&self, binary: &Path) -> Command {
        let mut cmd = match self.argv.split_first() {
            Some((first, rest)) => {
                let mut cmd = Command::new(first);
                cmd.args(rest).arg(binary);
                cmd
            }
            None => Command::new(binary),
        };
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    /// `argv` with the runner put before it.
    pub fn wrap(&self, argv: &[String]) -> Vec<String> {
        self.argv.iter().chain(argv).cloned().collect()
    }

    /// Whether the binaries are emulated: built for another architecture than the host's.
    pub fn emulates(&self) -> bool {
        self.arch != host_arch()
    }

    /// For people: `qemu-aarch64 (found on PATH)`.
    pub fn describe(&self) -> String {
        let how = match self.found {
            RunnerFrom::Given => "as configured",
            RunnerFrom::Binfmt => "the kernel's binfmt handler",
            RunnerFrom::OnPath => "found on PATH",
        };
        match self.argv.is_empty() {
            true => format!("{} binaries run by {how}", self.arch),
            false => format!("{} ({how})", self.argv.join(" ")),
        }
    }
}

/// The host's architecture, in the spelling of [`slopewatch_core::arch::normalize`].
pub fn host_arch() -> String {
    let rust = std::env::consts::ARCH;
    let name = match rust {
        "powerpc64" if cfg!(target_endian = "little") => "ppc64le",
        other => other,
    };
    slopewatch_core::arch::normalize(name).map_or_else(|| rust.to_string(), str::to_string)
}

/// Whether the host runs binaries of `arch` itself.
pub fn host_runs(arch: &str) -> bool {
    slopewatch_core::arch::runs_natively(&host_arch(), arch)
}

/// What a built binary needs to run: its architecture and, when dynamically linked, its loader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needs {
    pub arch: String,
    /// The program interpreter (`PT_INTERP`), e.g. `/lib/ld-linux-aarch64.so.1`.
    pub interpreter: Option<String>,
}

/// Reads what the ELF binary at `path` needs to run.
pub fn needs(path: &Path) -> Result<Needs> {
    let (arch, interpreter) = crate::artifact::target(path)?;
    let arch = arch.with_context(|| format!("{}: an architecture this agent does not know", path.display()))?;
    Ok(Needs { arch: arch.to_string(), interpreter })
}

/// A command that runs `binary` through `runner`, or as it is without one; its arguments follow.
pub fn command(runner: Option<&Runner>, binary: &Path) -> Command {
    match runner {
        Some(r) => r.command(binary),
        None => Command::new(binary),
    }
}

/// How the binaries of toolchain `name` are run, judged from what the probe it built `needs`:
/// by `given` when named; by nothing when the host runs them; else by the architecture's binfmt
/// handler or `qemu-ARCH` on `PATH`. `triple` is the toolchain's target, for the sysroot of a
/// dynamically linked binary. An error says what to install or name when nothing can run them;
/// the caller names the toolchain.
pub fn resolve(
    name: &str,
    given: &[String],
    needs: Needs,
    triple: &str,
    sysroot: Option<&Path>,
) -> Result<Option<Runner>> {
    if !given.is_empty() {
        return Ok(Some(Runner { argv: given.to_vec(), env: Vec::new(), arch: needs.arch, found: RunnerFrom::Given }));
    }
    if host_runs(&needs.arch) {
        return Ok(None);
    }
    let libraries = match &needs.interpreter {
        Some(interp) if !Path::new(interp).exists() => {
            Some(target_root(interp, triple, sysroot).with_context(|| {
                format!(
                    "it builds for {} and links dynamically against {interp}, which is not on this host \
                 nor in a sysroot found for {triple}; give QEMU the sysroot that holds it: \
                 --runner {name}='qemu-{} -L /path/to/sysroot'",
                    needs.arch, needs.arch
                )
            })?)
        }
        _ => None,
    };
    if binfmt_enabled(&needs.arch) {
        let env = libraries.iter().map(|l| ("QEMU_LD_PREFIX".to_string(), l.display().to_string())).collect();
        return Ok(Some(Runner { argv: Vec::new(), env, arch: needs.arch, found: RunnerFrom::Binfmt }));
    }
    let Some(qemu) = on_path(&needs.arch) else {
        bail!(
            "it builds for {} ({}), which this {} host cannot run, and no runner was found: install \
             QEMU's user-mode emulator (Debian and Ubuntu: apt-get install qemu-user, which gives qemu-{}), or name \
             one with --runner {name}=qemu-{} (runner = \"qemu-{}\" in the config file)",
            needs.arch,
            if triple.is_empty() { "its target" } else { triple },
            host_arch(),
            needs.arch,
            needs.arch,
            needs.arch
        );
    };
    let mut argv = vec![qemu.display().to_string()];
    if let Some(l) = libraries {
        argv.extend(["-L".to_string(), l.display().to_string()]);
    }
    Ok(Some(Runner { argv, env: Vec::new(), arch: needs.arch, found: RunnerFrom::OnPath }))
}

/// Whether the kernel runs binaries of `arch` through a registered, enabled binfmt handler.
fn binfmt_enabled(arch: &str) -> bool {
    std::fs::read_to_string(format!("/proc/sys/fs/binfmt_misc/qemu-{arch}"))
        .is_ok_and(|s| s.lines().next().is_some_and(|l| l.trim() == "enabled"))
}

/// `qemu-ARCH` (or Debian's `qemu-ARCH-static`) on `PATH`.
fn on_path(arch: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    [format!("qemu-{arch}"), format!("qemu-{arch}-static")]
        .iter()
        .find_map(|n| std::env::split_paths(&path).map(|d| d.join(n)).find(|p| p.is_file()))
}

/// The directory whose copy of `interp` (the target's loader) QEMU should load: the compiler's
/// sysroot, else where Debian's cross packages put a target's libraries (`/usr/TRIPLE`).
fn target_root(interp: &str, triple: &str, sysroot: Option<&Path>) -> Option<PathBuf> {
    let relative = interp.trim_start_matches('/');
    let mut candidates: Vec<PathBuf> = sysroot.into_iter().map(Path::to_path_buf).collect();
    if !triple.is_empty() {
        candidates.push(Path::new("/usr").join(triple));
        // Zig and clang write `aarch64-linux-gnu`, Debian `aarch64-linux-gnu` too; others put the
        // vendor in (`aarch64-unknown-linux-gnu`).
        let parts: Vec<&str> = triple.split('-').collect();
        if parts.len() == 4 {
            candidates.push(Path::new("/usr").join(format!("{}-{}-{}", parts[0], parts[2], parts[3])));
        }
    }
    candidates.into_iter().find(|c| c.join(relative).exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_runs_its_own_architecture_and_its_32_bit_one() {
        assert_eq!(host_arch(), slopewatch_core::arch::normalize(std::env::consts::ARCH).unwrap());
        assert!(host_runs(&host_arch()));
        if host_arch() == "x86_64" {
            assert!(host_runs("i386"));
            assert!(!host_runs("aarch64"));
        }
    }

    #[test]
    fn a_runner_goes_before_the_binary_and_its_arguments() {
        let r = Runner {
            argv: vec!["qemu-aarch64".into(), "-L".into(), "/usr/aarch64-linux-gnu".into()],
            env: Vec::new(),
            arch: "aarch64".into(),
            found: RunnerFrom::OnPath,
        };
        let cmd = r.command(Path::new("/tmp/loop"));
        assert_eq!(cmd.get_program(), "qemu-aarch64");
        let args: Vec<_> = cmd.get_args().collect();
        assert_eq!(args, ["-L", "/usr/aarch64-linux-gnu", "/tmp/loop"]);
        assert_eq!(
            r.wrap(&["./loop".into(), "10".into()]),
            ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", "./loop", "10"]
        );
        assert_eq!(r.describe(), "qemu-aarch64 -L /usr/aarch64-linux-gnu (found on PATH)");
        let binfmt = Runner { argv: Vec::new(), found: RunnerFrom::Binfmt, ..r };
        assert_eq!(binfmt.command(Path::new("/tmp/loop")).get_program(), "/tmp/loop");
    }

    #[test]
    fn the_agents_own_binary_needs_nothing_but_its_host() {
        let me = std::env::current_exe().unwrap();
        let needs = needs(&me).unwrap();
        assert_eq!(needs.arch, host_arch());
        assert!(resolve("self", &[], needs.clone(), "", None).unwrap().is_none());
        let given = resolve("self", &["taskset".into(), "-c".into(), "0".into()], needs, "", None).unwrap().unwrap();
        assert_eq!((given.found, given.emulates()), (RunnerFrom::Given, false));
    }
}
