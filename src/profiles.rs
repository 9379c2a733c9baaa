//! A regression's "where the cost went", worked out on read from the profiles its workloads'
//! runs carried (and, for a webhook, in the summary pass that opens it): the first bad version's
//! profile against the last good version's at the same size, else alone; and which functions have
//! a catalogue probe over its contract at the bad version, among them the one most of the cost
//! went to.

use crate::links;
use crate::model::{BrokenContract, RegressionRow, RegressionWorkload, WhereCostWent};
use crate::store::{ProbeAtVersion, StoredProfile};
use crate::views::exposures;
use slopewatch_core::profile::CostShift;
use slopewatch_core::verdict::{Decision, Limits};
use slopewatch_core::wire::SizeUnit;
use slopewatch_core::workloads::function_of;

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

/// Each function with a probe among `probes` over its contract at `version`, once, with its first
/// such probe, in words: "strspn broke its O(1) contract at 0.16.0".
fn broken(lineage: &str, version: &str, probes: &[ProbeAtVersion]) -> Vec<BrokenContract> {
    let mut out: Vec<BrokenContract> = Vec::new();
    for p in probes {
        let over = Limits::contract(p.expected).judge(None, p.complexity.as_ref());
        let Some(function) = function_of(&p.probe).filter(|_| matches!(over, Decision::Over(_))) else { continue };
        if out.iter().any(|b| b.function == function) {
            continue;
        }
        out.push(BrokenContract {
            function: function.to_string(),
            expected: p.expected.label().to_string(),
            probe: p.probe.clone(),
            sentence: format!("{function} broke its {} contract at {version}", p.expected.label()),
            series_url: links::series(&p.probe, lineage, p.metric),
        });
    }
    out
}

/// The workloads of a regression that may have profiles: each member's name and unit.
pub fn members(workloads: &[RegressionWorkload]) -> Vec<(&str, SizeUnit)> {
    workloads.iter().map(|w| (w.workload.as_str(), w.size_unit)).collect()
}

/// What a regression's profiles and probes say: each profiled workload's `shifts`, and the
/// functions with a probe over its contract at the bad version.
#[derive(Debug, Clone, Default)]
pub struct Traced {
    pub shifts: Vec<WhereCostWent>,
    pub broken: Vec<BrokenContract>,
    /// The stored artifacts that reach the functions it names, where the caller read them.
    pub reaches: Vec<crate::model::ArtifactReach>,
}

/// The shifts alone of `members` of the stored regression `r`, no probes read.
pub async fn shifts_of(
    store: &crate::store::Store,
    r: &RegressionRow,
    members: &[(&str, SizeUnit)],
) -> Result<Vec<WhereCostWent>, sqlx::Error> {
    let names: Vec<&str> = members.iter().map(|(n, _)| *n).collect();
    let previous = r.previous_version.as_deref();
    let versions: Vec<&str> = std::iter::once(r.version.as_str()).chain(previous).collect();
    let profiles = store.profiles_at(&r.lineage, &versions, &names).await?;
    Ok(shifts(&r.version, previous, members, &profiles))
}

/// The functions with a probe over its contract at `version` of `lineage`.
pub async fn broken_at(
    store: &crate::store::Store,
    lineage: &str,
    version: &str,
) -> Result<Vec<BrokenContract>, sqlx::Error> {
    Ok(broken(lineage, version, &store.probes_at(lineage, version).await?))
}

/// `Traced` for a stored regression, read from `store`.
pub async fn of(
    store: &crate::store::Store,
    r: &RegressionRow,
    workloads: &[RegressionWorkload],
) -> Result<Traced, sqlx::Error> {
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
    async fn probes(&mut self, lineage: &str, version: &str) -> Result<Vec<ProbeAtVersion>, sqlx::Error>;
    async fn artifacts(
        &mut self,
        lineage: &str,
        functions: &[&str],
        limit: i64,
    ) -> Result<Vec<crate::store::StoredReach>, sqlx::Error>;
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

    async fn probes(&mut self, lineage: &str, version: &str) -> Result<Vec<ProbeAtVersion>, sqlx::Error> {
        self.probes_at(lineage, version).await
    }

    async fn artifacts(
        &mut self,
        lineage: &str,
        functions: &[&str],
        limit: i64,
    ) -> Result<Vec<crate::store::StoredReach>, sqlx::Error> {
        self.artifacts_reaching(lineage, functions, limit).await
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

    async fn probes(&mut self, lineage: &str, version: &str) -> Result<Vec<ProbeAtVersion>, sqlx::Error> {
        self.probes_at(lineage, version).await
    }

    async fn artifacts(
        &mut self,
        lineage: &str,
        functions: &[&str],
        limit: i64,
    ) -> Result<Vec<crate::store::StoredReach>, sqlx::Error> {
        self.artifacts_reaching(lineage, functions, limit).await
    }
}

/// `Traced` of `members` at `version` of `lineage` against `previous`, read through `from`: two
/// queries, however many workloads.
pub(crate) async fn read(
    from: &mut impl Reads,
    lineage: &str,
    version: &str,
    previous: Option<&str>,
    members: &[(&str, SizeUnit)],
) -> Result<Traced, sqlx::Error> {
    let names: Vec<&str> = members.iter().map(|(n, _)| *n).collect();
    let versions: Vec<&str> = std::iter::once(version).chain(previous).collect();
    let profiles = from.profiles(lineage, &versions, &names).await?;
    let mut shifts = shifts(version, previous, members, &profiles);
    let broken = broken(lineage, version, &from.probes(lineage, version).await?);
    for w in &mut shifts {
        w.contract = broken.iter().find(|b| b.function == w.shift.function).cloned();
    }
    Ok(Traced { shifts, broken, reaches: Vec::new() })
}

/// The stored artifacts of `lineage` whose latest scan reaches a function a regression names (its
/// probes' and loops' among `workloads`, or one its cost went to in `shifts`), at most `limit`,
/// read through `from`.
pub(crate) async fn reaching<'a>(
    from: &mut impl Reads,
    lineage: &str,
    workloads: impl Iterator<Item = &'a str>,
    shifts: &'a [WhereCostWent],
    limit: i64,
) -> Result<Vec<crate::model::ArtifactReach>, sqlx::Error> {
    let functions = exposures::functions_named(workloads, shifts.iter().map(|w| w.shift.function.as_str()));
    let names: Vec<&str> = functions.iter().map(String::as_str).collect();
    Ok(exposures::reaches(lineage, from.artifacts(lineage, &names, limit).await?))
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
