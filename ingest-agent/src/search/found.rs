//! The team's found probes: the breaks searches found, kept as data in a JSON file beside the
//! agent's config (a file a team commits), `{"probes": [...]}` as `POST /api/v1/found-probes`
//! takes them, and measured by `check`, `run` and `exposure` as the catalogue's probes are.

use crate::builds::workloads;
use crate::builds::workloads::Workload;
use crate::search::space::Shape;
use crate::server::client::Client;
use anyhow::{Context, Result};
use slopewatch_core::wire::{FoundProbe, FoundProbes};
use std::path::{Path, PathBuf};

/// The file's name beside a config file, and under the user's config directory without one.
pub const FILE_NAME: &str = "slopewatch-probes.json";

/// Where the found probes are kept: `explicit` (`--probes`, `SLOPEWATCH_PROBES`), else beside the
/// config file, else `$XDG_CONFIG_HOME/slopewatch/slopewatch-probes.json`.
pub fn path(explicit: Option<&Path>, config: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(dir) = config.and_then(Path::parent) {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        return Ok(dir.join(FILE_NAME));
    }
    Ok(crate::config::user_dir("XDG_CONFIG_HOME", ".config")?.join("slopewatch").join(FILE_NAME))
}

/// The probes in `file`: none when it does not exist; an error naming the file and the field
/// when it cannot be read.
pub fn load(file: &Path) -> Result<Vec<FoundProbe>> {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read found probes {}", file.display())),
    };
    let found = FoundProbes::parse(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    Ok(found.probes)
}

/// Adds `new` to the probes in `file`, a probe already there kept as it was (its first finding),
/// and writes the file whole (through a temporary file, so a crash leaves the old one). Returns
/// how many were new.
pub fn save(file: &Path, new: &[FoundProbe]) -> Result<usize> {
    let mut probes = load(file)?;
    let before = probes.len();
    merge(&mut probes, new.iter().cloned());
    let added = probes.len() - before;
    if added == 0 && file.exists() {
        return Ok(0);
    }
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let body = serde_json::to_vec_pretty(&FoundProbes { probes })?;
    let tmp = file.with_extension("json.tmp");
    std::fs::write(&tmp, body).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, file).with_context(|| format!("cannot write {}", file.display()))?;
    Ok(added)
}

/// Adds each of `more` whose name `probes` lacks, keeping them sorted by name.
pub fn merge(probes: &mut Vec<FoundProbe>, more: impl IntoIterator<Item = FoundProbe>) {
    for p in more {
        if !probes.iter().any(|q| q.name() == p.name()) {
            probes.push(p);
        }
    }
    probes.sort_by_key(FoundProbe::name);
}

/// The workloads of `probes`, each measured at its axis's sizes and held to its contract; a
/// probe whose shape this agent cannot build (a newer agent's) is left out with a warning.
pub fn workloads(probes: &[FoundProbe]) -> Vec<Workload> {
    probes
        .iter()
        .filter_map(|p| match Shape::of(&p.function, &p.axis, &p.shape) {
            Ok(shape) => {
                let axis = shape.axis();
                Some(workloads::found(shape.name(), p.contract.clone(), axis.start, axis.max))
            }
            Err(why) => {
                eprintln!("warning: found probe {} left out: {why}", p.name());
                None
            }
        })
        .collect()
}

/// The team's found probes `client`'s server serves (`GET /api/v1/found-probes`): none, with a
/// warning, when it cannot be asked or is of a release before them, so that a gate never fails
/// for a server out of reach (the probes of the file still run).
pub fn served(client: &Client) -> Vec<FoundProbe> {
    let warn = |why: String| {
        eprintln!("warning: {}'s found probes are left out: {why}", client.server());
        Vec::new()
    };
    match client.get("/api/v1/found-probes", &[]) {
        Ok(a) if a.status == 200 => match serde_json::from_str::<FoundProbes>(&a.body) {
            Ok(found) => found.probes,
            Err(e) => warn(format!("unreadable answer: {e}")),
        },
        Ok(a) if a.status == 404 => warn("the server is of a release before found probes".to_string()),
        Ok(a) => warn(format!("HTTP {}", a.status)),
        Err(e) => warn(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::words;
    use slopewatch_core::complexity::Class;
    use slopewatch_core::wire::BreakKind;

    fn probe(shape: &str) -> FoundProbe {
        let s = Shape::of("strcasestr", "needle", shape).unwrap();
        FoundProbe {
            function: s.function.clone(),
            axis: s.axis.clone(),
            shape: s.text(),
            described: words::describe(&s),
            contract: s.contract(),
            kind: BreakKind::Growth,
            class: Some(Class::Quadratic),
            toolchain: "musl-gcc".into(),
            version: Some("1.2.3".into()),
            found_at: time::OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn saving_keeps_the_first_finding_and_the_file_reads_back_as_workloads() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("team").join(FILE_NAME);
        assert!(load(&file).unwrap().is_empty(), "no file, no probes");
        assert_eq!(save(&file, &[probe("alphabet=1")]).unwrap(), 1);
        let mut again = probe("alphabet=1");
        again.toolchain = "zig-cc-musl".into();
        assert_eq!(save(&file, &[again, probe("alphabet=2")]).unwrap(), 1);
        let kept = load(&file).unwrap();
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].toolchain, "musl-gcc", "the first finding stays");
        let ws = workloads(&kept);
        assert_eq!(ws[0].name, "contract.strcasestr.needle~alphabet=1,mismatch=last,found=no,high=no,case=lower");
        assert!(ws.iter().all(|w| w.is_probe() && w.contract.is_some()));
    }

    #[test]
    fn a_file_that_cannot_be_read_is_an_error_naming_it_and_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE_NAME);
        std::fs::write(&file, r#"{"probes":[{"function":"strstr"}]}"#).unwrap();
        let e = load(&file).unwrap_err().to_string();
        assert!(e.contains(FILE_NAME) && e.contains("probes[0]"), "{e}");
    }

    #[test]
    fn the_file_goes_beside_the_config_unless_named() {
        assert_eq!(path(Some(Path::new("/x/p.json")), None).unwrap(), PathBuf::from("/x/p.json"));
        assert_eq!(
            path(None, Some(Path::new("/team/slopewatch.toml"))).unwrap(),
            PathBuf::from("/team").join(FILE_NAME)
        );
        assert_eq!(path(None, Some(Path::new("slopewatch.toml"))).unwrap(), PathBuf::from(".").join(FILE_NAME));
    }
}
