//! One version of one toolchain lineage (`zig-cc-musl` at `0.16.0`): what summaries, regressions,
//! claims and baselines are keyed by.

use std::fmt;

/// A lineage's name and one of its versions. Ordered by lineage, then by the version's text (not by
/// version order: that is [`crate::version::compare`]'s), so that maps keyed by it iterate as
/// tuples of the two strings would.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineageVersion {
    pub lineage: String,
    pub version: String,
}

impl LineageVersion {
    pub fn new(lineage: impl Into<String>, version: impl Into<String>) -> LineageVersion {
        LineageVersion { lineage: lineage.into(), version: version.into() }
    }
}

/// `lineage@version`, as the agent's `--baseline` and the server's logs write it.
impl fmt::Display for LineageVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.lineage, self.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_as_the_pair_of_strings_and_reads_as_name_at_version() {
        let mut keys = [
            LineageVersion::new("zig-cc-musl", "0.16.0"),
            LineageVersion::new("gcc-glibc", "12.2.0"),
            LineageVersion::new("zig-cc-musl", "0.15.2"),
        ];
        keys.sort();
        let pairs: Vec<(&str, &str)> = keys.iter().map(|k| (k.lineage.as_str(), k.version.as_str())).collect();
        assert_eq!(pairs, [("gcc-glibc", "12.2.0"), ("zig-cc-musl", "0.15.2"), ("zig-cc-musl", "0.16.0")]);
        assert_eq!(keys[2].to_string(), "zig-cc-musl@0.16.0");
    }
}
