//! A toolchain version across every workload, read as a request names it: for its page and
//! Markdown release note (`/toolchains/{lineage}/{version}`, in the dashboard), as JSON here
//! (`/api/v1/toolchains/{lineage}/{version}`), and two versions of any lineages for `/compare`
//! without a workload. Every read is of version summaries and failures, never of runs, and of the
//! latest exposure scan of each artifact judged by the version.

use super::error::ErrorBody;
use super::extract::{AppPath, AppQuery};
use super::{AppState, Error};
use crate::config::Rules;
use crate::links;
use crate::model::{Architecture, RegressionRow, RegressionWorkload, ScannedArtifact};
use crate::store::{SlopeRow, VersionChoice, VersionSummary, WorkloadFailures, WorkloadRow};
use crate::views::{ChangeRow, Changes, ControlLine, VersionAt, VersionRegression, VersionView};
use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use slopewatch_core::lineage::LineageVersion;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(super) fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_version))
}

/// Most versions an error message lists.
const LISTED: usize = 20;

/// A name from a request as an error message quotes it: its first 64 characters.
fn quoted(s: &str) -> String {
    let shown: String = s.chars().take(64).collect();
    format!("{shown:?}")
}

/// The versions of `lineage` that reported, in version order, of every lineage's `all`.
fn versions_of(all: &[VersionChoice], lineage: &str) -> Vec<String> {
    all.iter().filter(|c| c.lineage == lineage).map(|c| c.version.clone()).collect()
}

/// "0.14.1, 0.15.2, 0.16.0", at most `LISTED` of them.
fn listed(versions: &[String]) -> String {
    let mut text = versions.iter().take(LISTED).map(String::as_str).collect::<Vec<_>>().join(", ");
    if versions.len() > LISTED {
        text.push_str(&format!(" and {} more", versions.len() - LISTED));
    }
    text
}

/// What two or more toolchain versions are compared by.
struct Read {
    summaries: Vec<VersionSummary>,
    failures: Vec<WorkloadFailures>,
    /// The later version's lineage's slopes, for the trends.
    history: Vec<SlopeRow>,
    /// Opened or fixed at the later version, and the lineage's findings still open.
    regressions: Vec<(RegressionRow, Vec<RegressionWorkload>)>,
    workloads: Vec<WorkloadRow>,
    /// The configured alert rules the changes are judged by.
    rules: Rules,
}

impl Read {
    /// The summaries and failures at `columns`, and what `at`, the later version, is shown with.
    async fn of(state: &AppState, columns: &[LineageVersion], at: &VersionAt) -> Result<Read, Error> {
        let store = &state.store;
        let (summaries, failures, history, regressions, workloads) = tokio::try_join!(
            store.summaries_at(columns),
            store.failures_at(columns),
            store.lineage_slope_history(&at.lineage),
            store.version_regressions(&at.lineage, &at.version),
            store.workloads(),
        )?;
        let rules = state.config.alerts.rules.clone();
        Ok(Read { summaries, failures, history, regressions, workloads, rules })
    }

    /// `at` against `before`; where `versions` (the later version's lineage's) are given, with
    /// each workload's trend across them and the regression that holds it: the comparison a page
    /// is about, not a control's.
    fn changes(&self, before: Option<&VersionAt>, at: &VersionAt, versions: Option<&[String]>) -> Changes {
        let mut changes = Changes::new((before, at), &self.summaries, &self.failures, &self.workloads, &self.rules);
        if self.rules.skip_unchanged_builds {
            changes.unchanged_builds();
        }
        if let Some(versions) = versions {
            changes.hold(&self.regressions);
            changes.trends(&self.history, versions);
        }
        changes
    }
}

/// Most artifacts a version's page and JSON list, those with an exposure no one accepted first.
const ARTIFACTS_SHOWN: i64 = 200;

/// The versions of `lineage` among `all`, and where `version` is among them; 404 for a lineage or
/// version that has not reported, naming the versions there are.
pub(super) fn reported(all: &[VersionChoice], lineage: &str, version: &str) -> Result<(Vec<String>, usize), Error> {
    let versions = versions_of(all, lineage);
    if versions.is_empty() {
        return Err(Error::NotFound(format!("no toolchain lineage named {} has reported", quoted(lineage))));
    }
    let Some(i) = versions.iter().position(|v| v == version) else {
        return Err(Error::NotFound(format!(
            "{lineage} has no version {} that reported; its versions are {}",
            quoted(version),
            listed(&versions)
        )));
    };
    Ok((versions, i))
}

/// The page of `lineage` at `version` against `against` (by default the version before it in
/// version order) and against each control lineage at its latest version; 404 for a lineage or
/// version that has not reported, 400 for an `against` that names no other version of the lineage.
pub(super) async fn load(
    state: &AppState,
    lineage: &str,
    version: &str,
    against: Option<&str>,
) -> Result<VersionView, Error> {
    let all = state.store.toolchain_versions().await?;
    let (versions, i) = reported(&all, lineage, version)?;
    let against = against.filter(|a| !a.is_empty());
    let before = match against {
        Some(a) if a == version => {
            let others: Vec<String> = versions.iter().filter(|v| *v != version).cloned().collect();
            return Err(Error::BadRequest(format!(
                "against names the page's own version {version}; name another version of {lineage}: {}",
                listed(&others)
            )));
        }
        Some(a) if !versions.iter().any(|v| v == a) => {
            return Err(Error::BadRequest(format!(
                "against names no version of {lineage} that reported: {}; its versions are {}",
                quoted(a),
                listed(&versions)
            )))
        }
        Some(a) => Some(VersionAt::new(lineage, a)),
        None => i.checked_sub(1).map(|j| VersionAt::new(lineage, &versions[j])),
    };
    let at = VersionAt::new(lineage, version);
    let controls: Vec<VersionAt> = state
        .config
        .controls
        .iter()
        .filter(|c| c.as_str() != lineage)
        .filter_map(|c| versions_of(&all, c).pop().map(|v| VersionAt::new(c, &v)))
        .collect();
    let columns: Vec<LineageVersion> = std::iter::once(&at)
        .chain(&before)
        .chain(&controls)
        .map(|v| LineageVersion::new(&v.lineage, &v.version))
        .collect();
    let shown: Vec<&str> = std::iter::once(&at).chain(&before).map(|v| v.version.as_str()).collect();
    let measured_on = async { state.store.versions_measured_on(lineage, &shown).await.map_err(Error::from) };
    let (read, artifacts, hosts) =
        tokio::try_join!(Read::of(state, &columns, &at), scanned(state, lineage, version), measured_on)?;
    let controls = controls
        .into_iter()
        .map(|c| ControlLine {
            headline: read.changes(Some(&c), &at, None).headline(),
            compare_url: links::compare_versions((&c.lineage, &c.version), (lineage, version)),
            control: c,
        })
        .collect();
    let mut regressions = Vec::new();
    for (r, m) in
        read.regressions.iter().filter(|(r, _)| r.version == version || r.fixed_version.as_deref() == Some(version))
    {
        let causes = crate::causes::read(&state.store, r, m, Some(crate::views::exposures::REACHES_SHOWN)).await?;
        regressions.push(VersionRegression::new(r, m, version, causes));
    }
    Ok(VersionView {
        changes: read.changes(before.as_ref(), &at, Some(&versions)),
        versions,
        against_asked: against.is_some(),
        controls,
        regressions,
        artifacts,
        arch: Architecture::of(lineage, &hosts),
    })
}

/// The latest scan of each artifact judged by `version` of `lineage`.
/// The latest scan of each artifact judged by `lineage` `version`, worst first.
pub(super) async fn scanned(state: &AppState, lineage: &str, version: &str) -> Result<Vec<ScannedArtifact>, Error> {
    let mut artifacts = state.store.version_exposures(lineage, version, ARTIFACTS_SHOWN).await?;
    crate::views::exposures::worst_first(&mut artifacts);
    Ok(artifacts)
}

/// The toolchain version a `/compare` side names (`LINEAGE@VERSION`), read the way the store has
/// it, among `all` that reported.
fn side(all: &[VersionChoice], name: &str, value: &str) -> Result<VersionAt, Error> {
    let readings = crate::links::toolchain_version_readings(value);
    if readings.is_empty() {
        return Err(Error::BadRequest(format!(
            "{name} must be a toolchain version as LINEAGE@VERSION, e.g. musl-gcc@1.2.5"
        )));
    }
    readings
        .iter()
        .find(|(l, v)| all.iter().any(|c| c.lineage == *l && c.version == *v))
        .map(|(l, v)| VersionAt::new(l, v))
        .ok_or_else(|| Error::NotFound(format!("no toolchain version {} has reported", quoted(value))))
}

/// Two toolchain versions, of one lineage or two, across every workload: `b` against `a`, with
/// `b`'s lineage's trends and the regressions opened at `b`.
pub(super) async fn load_pair(state: &AppState, a: &str, b: &str) -> Result<Changes, Error> {
    let all = state.store.toolchain_versions().await?;
    let (a, b) = (side(&all, "a", a)?, side(&all, "b", b)?);
    let versions = versions_of(&all, &b.lineage);
    let columns: Vec<LineageVersion> =
        [&a, &b].into_iter().map(|v| LineageVersion::new(&v.lineage, &v.version)).collect();
    let read = Read::of(state, &columns, &b).await?;
    Ok(read.changes(Some(&a), &b, Some(&versions)))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct VersionQuery {
    /// Another version of the lineage to compare against; by default the version before in
    /// version order.
    pub(super) against: Option<String>,
}

/// A toolchain version against the version before it (or `against`) and against the control
/// lineages, across every workload.
#[derive(Debug, Serialize, ToSchema)]
pub struct VersionAnswer {
    lineage: String,
    version: String,
    /// The lineage's architecture, and the hosts that measured the two versions under emulation.
    #[serde(flatten)]
    arch: Architecture,
    /// The version compared against; null for the lineage's first version.
    against: Option<String>,
    /// The lineage's versions that reported, in version order.
    versions: Vec<String>,
    /// "zig-cc-musl 0.16.0 against 0.15.2: 6 workloads went O(n) → O(n²), 1 gives a wrong result,
    /// 5 unchanged."
    headline: String,
    /// The version against each control lineage (`[control] lineages`) at its latest version.
    controls: Vec<ControlLine>,
    /// The regressions and findings opened at the version or fixed by it.
    regressions: Vec<VersionRegression>,
    /// Every workload's series at both versions, grouped (built-in, the team's, contract probes),
    /// worst change first within each group.
    workloads: Vec<ChangeRow>,
    /// The latest exposure scan of each artifact judged by this version, worst first: those that
    /// reach a function it breaks and no one accepted, then those whose every exposure is accepted,
    /// then clean ones.
    artifacts: Vec<ScannedArtifact>,
    /// The page, and the same as a Markdown release note, on the dashboard.
    url: String,
    markdown_url: String,
}

impl VersionAnswer {
    fn new(view: VersionView) -> VersionAnswer {
        let at = view.at().clone();
        let against = view.changes.before.as_ref().map(|b| b.version.clone());
        let asked = against.as_deref().filter(|_| view.against_asked);
        VersionAnswer {
            url: match asked {
                Some(a) => links::version_against(&at.lineage, &at.version, a),
                None => links::version_page(&at.lineage, &at.version),
            },
            markdown_url: links::version_markdown(&at.lineage, &at.version, asked),
            headline: view.changes.headline(),
            against,
            versions: view.versions,
            controls: view.controls,
            regressions: view.regressions,
            workloads: view.changes.rows,
            artifacts: view.artifacts,
            arch: view.arch,
            lineage: at.lineage,
            version: at.version,
        }
    }
}

/// A toolchain version across every workload
///
/// What the version changed against the version before it in version order (or `against`), and
/// against each control lineage: the headline, the regressions and findings opened or fixed
/// there, and each workload's class and slope at both versions, the change, the ratio at the
/// largest size both measured (predicted where they share none), the cost at its size of
/// interest and its slope across the lineage's versions. Read from version summaries only.
#[utoipa::path(
    get,
    path = "/api/v1/toolchains/{lineage}/{version}",
    tag = "reads",
    params(
        ("lineage" = String, Path, description = "The toolchain lineage, e.g. `zig-cc-musl`"),
        ("version" = String, Path, description = "One of its versions that reported, e.g. `0.16.0`"),
        VersionQuery,
    ),
    responses(
        (status = 200, description = "The version against the one before (or `against`) and the controls", body = VersionAnswer),
        (status = 400, description = "`against` names no other version of the lineage that reported", body = ErrorBody),
        (status = 404, description = "No such lineage, or no such version of it, has reported", body = ErrorBody),
        (status = 503, description = "The database is unavailable; retry", body = ErrorBody),
    )
)]
async fn get_version(
    State(state): State<AppState>,
    AppPath((lineage, version)): AppPath<(String, String)>,
    AppQuery(q): AppQuery<VersionQuery>,
) -> Result<Json<VersionAnswer>, Error> {
    let view = load(&state, &lineage, &version, q.against.as_deref()).await?;
    Ok(Json(VersionAnswer::new(view)))
}
