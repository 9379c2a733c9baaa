//! Bisections on a regression: `POST /api/v1/regressions/{id}/bisections`, where an agent records
//! the first bad toolchain build it found, and what the regression's page and JSON show of them:
//! each bisection with its steps, and the command that would run one.

use super::api::read_json_body;
use super::auth::BisectionSubmitter;
use super::error::ErrorBody;
use super::extract::RegressionId;
use super::throttle::{BISECTIONS_PER_TOKEN, BISECTION_WINDOW};
use super::{AppState, Error};
use crate::config::Rules;
use crate::format;
use crate::intake::BisectionOutcome;
use crate::model::{Bisection, RegressionDetail, RegressionKind, RegressionWorkload};
use axum::extract::{Request, State};
use axum::http::header::HOST;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use serde::Serialize;
use slopewatch_core::answers::BisectionAccepted;
use slopewatch_core::bisection::BisectionSubmission;
use slopewatch_core::wire::Measure;
use std::time::Instant;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub(super) fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(submit_bisection))
}

/// Records a bisection on a regression
///
/// The bisection and its steps are stored in one transaction, or not at all, and announced by the
/// `regression.bisected` webhook. Resubmitting a bisection id with the same content stores and
/// sends nothing and answers 200; so does a new id whose content, ids and timings aside, equals a
/// bisection the regression holds, answering that one's id. Needs a `bisect`, `editor` or `admin`
/// token; an `ingest` token is accepted for this release with a `warning` in the answer. Each
/// token may submit 30 bisections in 10 minutes.
#[utoipa::path(
    post,
    path = "/api/v1/regressions/{id}/bisections",
    tag = "regressions",
    params(("id" = i64, Path, description = "The regression's number")),
    request_body(content = BisectionSubmission, content_type = "application/json"),
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Stored", body = BisectionAccepted),
        (status = 200, description = "Already stored with the same content; nothing was written", body = BisectionAccepted),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 404, description = "No such regression", body = ErrorBody),
        (status = 409, description = "The bisection id was already submitted with different content", body = ErrorBody),
        (status = 429, description = "The token submitted its 30 bisections of the last 10 minutes; `Retry-After` says when the next is taken", body = ErrorBody),
        (status = 408, description = "The body arrived slower than the server's minimum rate (`body_too_slow`)", body = ErrorBody),
        (status = 413, description = "The body is over the server's limit", body = ErrorBody),
        (status = 415, description = "The body is not `application/json`", body = ErrorBody),
        (status = 422, description = "Invalid content, or a lineage other than the regression's: `field` names the path, `reason` the rule", body = ErrorBody),
        (status = 503, description = "The database is unavailable; retry", body = ErrorBody),
    )
)]
async fn submit_bisection(
    State(state): State<AppState>,
    submitter: Result<BisectionSubmitter, Error>,
    RegressionId(id): RegressionId,
    request: Request,
) -> Result<(StatusCode, Json<BisectionAccepted>), Error> {
    // As for runs, the token is checked before the body is read; so is its quota, which only a
    // valid token spends.
    let BisectionSubmitter { token, deprecated } = submitter?;
    if let Err(wait) = state.bisection_quota.take(token.id, Instant::now()) {
        let retry_after = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        return Err(Error::TooManyRequests {
            message: format!(
                "token {:?} submitted {BISECTIONS_PER_TOKEN} bisections in the last {} minutes, its limit; \
                 try again in {retry_after} s",
                token.name,
                BISECTION_WINDOW.as_secs() / 60
            ),
            retry_after,
        });
    }
    let warning = deprecated.then(|| {
        tracing::warn!(token = %token.name, regression = id,
            "an ingest token recorded a bisection; a later release refuses it: give the agent a bisect token");
        INGEST_DEPRECATED.to_string()
    });
    let body = read_json_body(&state, request).await?;
    let b = BisectionSubmission::from_json(&body).map_err(Error::Invalid)?;
    let (status, bisection_id) = match state.intake.record_bisection(id, &b).await? {
        BisectionOutcome::Created => (StatusCode::CREATED, b.bisection_id),
        BisectionOutcome::Existing(stored) => (StatusCode::OK, stored),
        BisectionOutcome::Conflict => {
            return Err(Error::Conflict(format!(
                "bisection {} was already submitted with different content",
                b.bisection_id
            )))
        }
        BisectionOutcome::NoRegression => return Err(Error::NotFound(format!("no regression #{id}"))),
        BisectionOutcome::Invalid(e) => return Err(Error::Invalid(e)),
    };
    if status == StatusCode::CREATED {
        tracing::info!(bisection_id = %b.bisection_id, regression = id, outcome = b.outcome.as_str(),
            steps = b.steps.len(), "bisection stored");
    }
    let url = format!("{}#{}", crate::links::regression(id), anchor(&bisection_id));
    Ok((status, Json(BisectionAccepted { bisection_id, regression_id: id, url, warning })))
}

/// What an ingest token recording a bisection is told, for as long as it still may.
const INGEST_DEPRECATED: &str = "ingest tokens may record bisections only until the next release: \
    create a token of scope bisect (`slopewatch token create --name NAME --scope bisect`), which submits runs too, \
    and give it to the agent that bisects";

/// The id of a bisection's section on its regression's page.
fn anchor(id: &Uuid) -> String {
    format!("bisection-{id}")
}

/// The server's address as an agent on a build host would use it: the configured public URL, else
/// the address this request came to.
pub(super) fn server_url(state: &AppState, headers: &HeaderMap) -> String {
    if let Some(url) = &state.config.public_url {
        return url.trim_end_matches('/').to_string();
    }
    let host = headers.get(HOST).and_then(|h| h.to_str().ok()).filter(|h| !h.is_empty());
    format!("http://{}", host.unwrap_or("localhost:8080"))
}

/// A word as a POSIX shell reads it back unchanged: left bare when it holds nothing the shell
/// treats specially, else single-quoted.
fn shell_word(s: &str) -> String {
    let bare = |c: char| c.is_ascii_alphanumeric() || "-_.,:/@%+=".contains(c);
    if !s.is_empty() && s.chars().all(bare) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The commands that would bisect a regression on a build host.
pub(super) struct BisectCommands {
    /// Taking the lineage, versions, workloads and threshold from the stored regression.
    pub from_regression: String,
    /// The same range given explicitly; none while the regression has no last good version.
    pub explicit: Option<String>,
}

/// The bisect commands for regression `d` on the server at `server`: its slope workloads (or all,
/// when it is only failures), and the lowest of their thresholds, so that each is judged at least
/// as strictly as the regression was.
pub(super) fn bisect_commands(d: &RegressionDetail, server: &str, rules: &Rules) -> BisectCommands {
    let r = &d.regression;
    let mut members: Vec<&RegressionWorkload> = d.workloads.iter().filter(|w| !w.is_failure()).collect();
    if members.is_empty() {
        members = d.workloads.iter().collect();
    }
    let mut workloads: Vec<&str> = members.iter().map(|w| w.workload.as_str()).collect();
    workloads.dedup();
    let threshold = workloads.iter().map(|w| rules.threshold_for(w)).reduce(f64::min).unwrap_or(rules.threshold);
    let workloads = shell_word(&workloads.join(","));
    // Bisected by the measure the workloads were found on, when they share one other than wall time.
    let mut measures: Vec<Measure> = members.iter().map(|w| w.metric.measure()).collect();
    measures.sort();
    measures.dedup();
    let measure = match measures[..] {
        [m] if m != Measure::Wall => format!(" --measure {m}"),
        _ => String::new(),
    };
    let from_regression = format!(
        "slopewatch-agent bisect --regression {} --server {} --token \"$SLOPEWATCH_TOKEN\" \
         --candidates candidates.txt --max-slope {threshold} --workloads {workloads}{measure}",
        r.id,
        shell_word(server)
    );
    let explicit = r.previous_version.as_ref().map(|good| {
        format!(
            "slopewatch-agent bisect --good {} --bad {} --lineage {} --workloads {workloads}{measure} \
             --max-slope {threshold} --candidates candidates.txt",
            shell_word(good),
            shell_word(&r.version),
            shell_word(&r.lineage)
        )
    });
    BisectCommands { from_regression, explicit }
}

/// A regression as `GET /api/v1/regressions/{id}` answers it: as stored, with the commands that
/// would bisect it.
#[derive(Debug, Serialize, ToSchema)]
pub struct RegressionAnswer {
    #[serde(flatten)]
    detail: RegressionDetail,
    /// A regression (a step from a last good version) or a finding (over at the first version
    /// its lineage measured, with nothing to bisect).
    kind: RegressionKind,
    /// The command that bisects this regression on a build host, taking the range, workloads and
    /// threshold from the server; `candidates.txt` holds one `VERSION=CC COMMAND` line per
    /// toolchain build, oldest first. Null for a finding: it has no good end.
    bisect_command: Option<String>,
    /// The same bisection with the range given explicitly; null while the regression has no last
    /// good version.
    bisect_command_explicit: Option<String>,
}

impl RegressionAnswer {
    pub(super) fn new(detail: RegressionDetail, state: &AppState, headers: &HeaderMap) -> RegressionAnswer {
        let commands = bisect_commands(&detail, &server_url(state, headers), &state.config.alerts.rules);
        let kind = detail.regression.kind();
        RegressionAnswer {
            detail,
            kind,
            bisect_command: (kind == RegressionKind::Regression).then_some(commands.from_regression),
            bisect_command_explicit: commands.explicit,
        }
    }
}

/// One step as the page shows it.
pub(super) struct StepView {
    pub position: i32,
    pub version: String,
    pub verdict: &'static str,
    pub slope: String,
    pub workload: String,
    pub seconds: String,
    pub note: String,
    /// The step's run page, when the run is stored here.
    pub run_url: Option<String>,
    pub first_bad: bool,
    pub last_good: bool,
}

/// One bisection as the page shows it.
pub(super) struct BisectionView {
    pub anchor: String,
    pub summary: String,
    pub range: String,
    pub rule: String,
    pub by: String,
    pub steps: Vec<StepView>,
}

pub(super) fn bisection_view(b: &Bisection) -> BisectionView {
    BisectionView {
        anchor: anchor(&b.bisection_id),
        summary: format::sentence(&b.summary()),
        range: format!("{} → {}, {} candidates", b.good, b.bad, b.candidates),
        rule: b.rule(),
        by: format!("{} (agent {}), started {}", b.host.name, b.agent_version, format::timestamp(b.started_at)),
        steps: b
            .steps
            .iter()
            .map(|s| StepView {
                position: s.position,
                version: s.version.clone(),
                verdict: s.verdict.as_str(),
                slope: s.slope.map_or_else(|| "–".into(), |k| format!("{k:.2}")),
                workload: s.workload.clone().unwrap_or_else(|| "–".into()),
                seconds: format!("{:.1}", s.seconds),
                note: s.note.clone().unwrap_or_default(),
                run_url: s.run_id.filter(|_| s.run_stored).map(|id| crate::links::run(&id)),
                first_bad: b.first_bad.as_ref() == Some(&s.version),
                last_good: b.last_good.as_ref() == Some(&s.version),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_read_back_unchanged() {
        assert_eq!(shell_word("0.16.0-dev.1234+abc"), "0.16.0-dev.1234+abc");
        assert_eq!(shell_word("strchr,strcspn"), "strchr,strcspn");
        assert_eq!(shell_word("a b'; rm -rf /"), "'a b'\\''; rm -rf /'");
        assert_eq!(shell_word("$(x)"), "'$(x)'");
        assert_eq!(shell_word(""), "''");
    }
}
