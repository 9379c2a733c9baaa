//! The contracts page's list of the team's found probes: each one's name, its shape in words, how
//! it broke, the contract it broke and the search that found it, linked to its series where the
//! matrix shows runs of it.

use super::contracts::ContractsView;
use crate::format;
use crate::store::StoredFoundProbe;
use slopewatch_core::wire::BreakKind;

/// One found probe as the page lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundProbeRow {
    /// `contract.FUNCTION.AXIS~SHAPE`.
    pub name: String,
    pub function: String,
    pub axis: String,
    /// The shape in words, as the search described it.
    pub described: String,
    /// How it broke when it was found: `grew as O(n²)`, `read past its bound`,
    /// `returned a wrong result`.
    pub broke: String,
    /// The class its contract allows: `O(n)`.
    pub contract: &'static str,
    /// What a break means, after the function's name; empty where the contract does not say.
    pub broken: String,
    /// The search that found it first: the toolchain, with its version where it was given.
    pub toolchain: String,
    /// When it was found, to the minute in UTC.
    pub found_at: String,
    /// Its series in a column of the matrix where that column measured it (the one of the
    /// toolchain that found it, else the first); `None` where no column has.
    pub href: Option<String>,
}

/// How a probe broke, in words.
fn broke(kind: BreakKind, class: Option<slopewatch_core::complexity::Class>) -> String {
    match (kind, class) {
        (BreakKind::Growth, Some(c)) => format!("grew as {}", c.label()),
        (BreakKind::Growth, None) => "grew faster than its contract allows".into(),
        (BreakKind::Bound, _) => "read past its bound".into(),
        (BreakKind::Wrong, _) => "returned a wrong result".into(),
    }
}

/// The rows of `found`, in the store's order, each linked from what `matrix` shows of it.
pub fn rows(found: &[StoredFoundProbe], matrix: &ContractsView) -> Vec<FoundProbeRow> {
    found
        .iter()
        .map(|s| {
            let p = &s.probe;
            let name = p.name();
            let toolchain = match &p.version {
                Some(v) => format!("{} {v}", p.toolchain),
                None => p.toolchain.clone(),
            };
            FoundProbeRow {
                href: series_href(matrix, &name, &p.toolchain),
                broke: broke(p.kind, p.class),
                contract: p.contract.expected.label(),
                broken: p.contract.broken.clone(),
                found_at: format::timestamp(p.found_at),
                function: p.function.clone(),
                axis: p.axis.clone(),
                described: p.described.clone(),
                toolchain,
                name,
            }
        })
        .collect()
}

/// The link of `name`'s cell in the matrix: in the column of `lineage` where it has one, else the
/// first cell that links anywhere.
fn series_href(matrix: &ContractsView, name: &str, lineage: &str) -> Option<String> {
    let row = matrix.functions.iter().flat_map(|f| &f.probes).find(|p| p.name == name)?;
    let cells = || row.cells.iter().zip(&matrix.columns);
    let own = cells().find(|(cell, column)| column.lineage == lineage && cell.href.is_some());
    own.or_else(|| cells().find(|(cell, _)| cell.href.is_some())).and_then(|(cell, _)| cell.href.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use slopewatch_core::complexity::Class;

    #[test]
    fn each_kind_of_break_is_said_in_words() {
        assert_eq!(broke(BreakKind::Growth, Some(Class::Quadratic)), "grew as O(n²)");
        assert_eq!(broke(BreakKind::Bound, None), "read past its bound");
        assert_eq!(broke(BreakKind::Wrong, None), "returned a wrong result");
    }
}
