//! The `[control]` section of the config file: the lineages kept as controls, a second
//! implementation whose runs tell whether a regression is the toolchain's, the code's or the
//! host's (docs/alerts.md, "Attribution").

use serde::Deserialize;

/// `[control]` as written in the config file.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields, default)]
pub struct ControlSection {
    /// The control lineages, in the order they are tried, e.g. `["musl-gcc"]`.
    pub lineages: Vec<String>,
}

impl ControlSection {
    /// The control lineages, checked: each named once, none empty.
    pub fn lineages(&self) -> anyhow::Result<Vec<String>> {
        let mut seen: Vec<String> = Vec::new();
        for name in &self.lineages {
            let name = name.trim();
            if name.is_empty() {
                anyhow::bail!("[control] lineages has an empty name");
            }
            if seen.iter().any(|s| s == name) {
                anyhow::bail!("[control] lineages names {name:?} twice");
            }
            seen.push(name.to_string());
        }
        Ok(seen)
    }
}
