//! `/toolchains` and `/hosts`: what has reported, when last, and which versions.

use crate::format;
use crate::http::pages::{render, PageResult};
use crate::http::AppState;
use crate::links;
use crate::store::{HostRow, HostVersion, ToolchainRow};
use axum::extract::State;
use axum::http::StatusCode;
use slopewatch_core::wire::VersionFrom;

#[derive(askama::Template)]
#[template(path = "dashboard/toolchains.html")]
struct ToolchainsPage {
    /// Builds grouped by lineage, each group in version order.
    lineages: Vec<Vec<ToolchainRow>>,
}

impl ToolchainsPage {
    /// What a build's version counts, e.g. `libc musl` or `compiler`.
    fn version_source(&self, t: &ToolchainRow) -> String {
        match t.version_from {
            VersionFrom::Libc => format!("libc {}", t.libc.split_whitespace().next().unwrap_or_default()),
            VersionFrom::Compiler => "compiler".into(),
        }
    }
}

pub(super) async fn toolchains(State(state): State<AppState>) -> PageResult {
    let mut lineages: Vec<Vec<ToolchainRow>> = Vec::new();
    for t in state.store.toolchains().await? {
        match lineages.last_mut() {
            Some(group) if group[0].name == t.name => group.push(t),
            _ => lineages.push(vec![t]),
        }
    }
    Ok(render(StatusCode::OK, &ToolchainsPage { lineages }))
}

#[derive(askama::Template)]
#[template(path = "dashboard/hosts.html")]
struct HostsPage {
    hosts: Vec<HostRow>,
    versions: Vec<HostVersion>,
}

impl HostsPage {
    fn versions_of<'a>(&'a self, host: &'a str) -> impl Iterator<Item = &'a HostVersion> + 'a {
        self.versions.iter().filter(move |v| v.host == host)
    }
}

pub(super) async fn hosts(State(state): State<AppState>) -> PageResult {
    let (hosts, versions) = tokio::try_join!(state.store.hosts(), state.store.host_versions())?;
    Ok(render(StatusCode::OK, &HostsPage { hosts, versions }))
}
