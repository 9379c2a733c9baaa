//! A regression's "where the cost went", worked out on read from the profiles its workloads'
//! runs carried (and, for a webhook, in the summary pass that opens it): the first bad version's
//! profile against the last good version's at the same size, else alone; and whether the function
//! most of the cost went to has a catalogue probe over its contract at the bad version.

use crate::links;
use crate::model::{BrokenContract, RegressionRow, RegressionWorkload, WhereCostWent};
use crate::store::{ProbeAtVersion, StoredProfile};
use slopewatch_core::profile::CostShift;
use slopewatch_core::verdict::{Decision, Limits};
use slopewatch_core::wire::SizeUnit;

/// Each workload of `members` (once per name) with a profile at `version` among `profiles`,
/// against its profile at `previous`; the contract is the caller's to find.
pub fn shifts(
    version: &str,
    previous: Option<&str>,
    members: &[(&str, SizeUnit)],
    profiles: &[StoredProfile],
) -> Vec<WhereCostWent> {
    let at = |workload: &str, v: &str| {
        profiles.iter().find(|p| p.workload == workload && p.version == v).map(|p| &p.profile)
    };
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for &(workload, unit) in members {
        if seen.contains(&workload) {
            continue;
        }
        seen.push(workload);
        let Some(bad) = at(workload, version) else { continue };
        let good = previous.and_then(|p| at(workload, p));
        let Some(shift) = CostShift::of(good, bad, unit) else { continue };
        let compared = shift.before.is_some();
        out.push(WhereCostWent {
            workload: workload.to_string(),
            bad_version: version.to_string(),
            good_version: previous.filter(|_| compared).map(str::to_string),
            shift,
            contract: None,
        });
    }
    out
}

/// The first of `probes` over its contract, in words: "strspn broke its O(1) contract at 0.16.0".
fn broken(lineage: &str, version: &str, probes: &[ProbeAtVersion]) -> Option<BrokenContract> {
    let p = probes
        .iter()
        .find(|p| matches!(Limits::contract(p.expected).judge(None, p.complexity.as_ref()), Decision::Over(_)))?;
    let function = p.probe.split('.').nth(1).unwrap_or(&p.probe);
    Some(BrokenContract {
        probe: p.probe.clone(),
        sentence: format!("{function} broke its {} contract at {version}", p.expected.label()),
        series_url: links::series(&p.probe, lineage, p.metric),
    })
}

/// The workloads of a regression that may have profiles: each member's name and unit.
pub fn members(workloads: &[RegressionWorkload]) -> Vec<(&str, SizeUnit)> {
    workloads.iter().map(|w| (w.workload.as_str(), w.size_unit)).collect()
}

/// `shifts` for a stored regression, read from `store`.
pub async fn of(
    store: &crate::store::Store,
    r: &RegressionRow,
    workloads: &[RegressionWorkload],
) -> Result<Vec<WhereCostWent>, sqlx::Error> {
    read(&mut &*store, &r.lineage, &r.version, r.previous_version.as_deref(), &members(workloads)).await
}

/// Where profiles and probes are read from: the store for a page, the summary pass's transaction
/// for the webhook of a regression it opens.
pub(crate) trait Reads {
    async fn profiles(
        &mut self,
        lineage: &str,
        versions: &[&str],
        workloads: &[&str],
    ) -> Result<Vec<StoredProfile>, sqlx::Error>;
    async fn probes(
        &mut self,
        lineage: &str,
        version: &str,
        function: &str,
    ) -> Result<Vec<ProbeAtVersion>, sqlx::Error>;
}

impl Reads for &crate::store::Store {
    async fn profiles(
        &mut self,
        lineage: &str,
        versions: &[&str],
        workloads: &[&str],
    ) -> Result<Vec<StoredProfile>, sqlx::Error> {
        self.profiles_at(lineage, versions, workloads).await
    }

    async fn probes(
        &mut self,
        lineage: &str,
        version: &str,
        function: &str,
    ) -> Result<Vec<ProbeAtVersion>, sqlx::Error> {
        self.probes_at(lineage, version, function).await
    }
}

impl Reads for crate::store::Tx<'_> {
    async fn profiles(
        &mut self,
        lineage: &str,
        versions: &[&str],
        workloads: &[&str],
    ) -> Result<Vec<StoredProfile>, sqlx::Error> {
        self.profiles_at(lineage, versions, workloads).await
    }

    async fn probes(
        &mut self,
        lineage: &str,
        version: &str,
        function: &str,
    ) -> Result<Vec<ProbeAtVersion>, sqlx::Error> {
        self.probes_at(lineage, version, function).await
    }
}

/// `shifts` of `members` at `version` of `lineage` against `previous`, read through `from`.
pub(crate) async fn read(
    from: &mut impl Reads,
    lineage: &str,
    version: &str,
    previous: Option<&str>,
    members: &[(&str, SizeUnit)],
) -> Result<Vec<WhereCostWent>, sqlx::Error> {
    let names: Vec<&str> = members.iter().map(|(n, _)| *n).collect();
    let versions: Vec<&str> = std::iter::once(version).chain(previous).collect();
    let profiles = from.profiles(lineage, &versions, &names).await?;
    let mut shifts = shifts(version, previous, members, &profiles);
    for w in &mut shifts {
        let probes = from.probes(lineage, version, &w.shift.function).await?;
        w.contract = broken(lineage, version, &probes);
    }
    Ok(shifts)
}

/// Most functions the series page follows across versions: each version's top three.
const TOP_PER_VERSION: usize = 3;

/// How the top functions' shares of a workload's instructions moved across its versions, as the
/// series page tables them.
#[derive(Debug, Clone, PartialEq)]
pub struct SharesAcross {
    /// The versions with a profile, in the series' order.
    pub versions: Vec<String>,
    /// Per function, its share at each of `versions` ("97.6 %"), or "–" where it is not among
    /// that profile's functions.
    pub rows: Vec<(String, Vec<String>)>,
}

/// The shares of each version's top functions across `versions` (in order) of one workload's
/// `profiles`; `None` when no version has one.
pub fn shares_across(versions: &[&str], profiles: &[StoredProfile]) -> Option<SharesAcross> {
    let at: Vec<(&str, &slopewatch_core::profile::Profile)> =
        versions.iter().filter_map(|v| profiles.iter().find(|p| p.version == *v).map(|p| (*v, &p.profile))).collect();
    if at.is_empty() {
        return None;
    }
    let mut names: Vec<&str> = Vec::new();
    for (_, p) in &at {
        for f in p.functions.iter().take(TOP_PER_VERSION) {
            if !names.contains(&f.name.as_str()) {
                names.push(&f.name);
            }
        }
    }
    let rows = names
        .into_iter()
        .map(|name| {
            let cells = at
                .iter()
                .map(|(_, p)| {
                    p.functions.iter().find(|f| f.name == name).map_or_else(
                        || "–".to_string(),
                        |f| format!("{:.1} %", f.own as f64 * 100.0 / p.total.max(1) as f64),
                    )
                })
                .collect();
            (name.to_string(), cells)
        })
        .collect();
    Some(SharesAcross { versions: at.iter().map(|(v, _)| v.to_string()).collect(), rows })
}
