//! What `bisect` reads of a stored regression: the lineage, the versions either side of the
//! change, and the workloads that regressed.

use crate::server::client::{error_message, Answer, Client};
use anyhow::{bail, Context, Result};
use slopewatch_core::answers::reads::RegressionAnswer;

/// A stored regression's facts that a bisection starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct RegressionFacts {
    pub lineage: String,
    pub last_good: String,
    pub first_bad: String,
    pub workloads: Vec<String>,
}

/// Reads regression `id` from the server's read API.
pub fn read(client: &Client, id: i64) -> Result<RegressionFacts> {
    let server = client.server();
    let path = format!("/api/v1/regressions/{id}");
    let url = format!("{server}{path}");
    let Answer { status, body } = client.get(&path, &[]).with_context(|| format!("cannot reach {server}"))?;
    match status {
        200 => {}
        404 => bail!("the server {server} has no regression {id}"),
        _ => bail!("the server {server} answered {url} with HTTP {status}: {}", error_message(&body)),
    }
    let answer: RegressionAnswer = serde_json::from_str(&body).with_context(|| format!("{url} answered unreadably"))?;
    let r = answer.regression;
    let (lineage, first_bad) = (r.lineage, r.version);
    let last_good = r.previous_version.with_context(|| {
        format!(
            "#{id} is a finding, not a regression: {first_bad} is the first version of {lineage} measured, so \
             there is no good end to bisect from; give --good with a version that held"
        )
    })?;
    let workloads = answer.workloads.into_iter().map(|w| w.workload).collect();
    Ok(RegressionFacts { lineage, last_good, first_bad, workloads })
}
