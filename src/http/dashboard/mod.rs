//! The dashboard: server-rendered pages, SVG charts and CSV/JSON exports. Every page works with
//! JavaScript off; `static/dashboard.js` only inlines charts for hover values.

mod compare;
mod contracts;
mod inventory;
mod overview;
mod runs;
mod series;
mod version;

use super::{AppState, Error};
use crate::charts::ChartError;
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::Serialize;
use sha2::{Digest, Sha256};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(overview::page))
        .route("/series/{workload}/{toolchain}", get(series::page))
        .route("/series/{workload}/{toolchain}/slope.svg", get(series::slope_svg))
        .route("/series/{workload}/{toolchain}/loglog.svg", get(series::loglog_svg))
        .route("/series/{workload}/{toolchain}/data.csv", get(series::csv))
        .route("/series/{workload}/{toolchain}/data.json", get(series::json))
        .route("/compare", get(compare::page))
        .route("/compare/chart.svg", get(compare::svg))
        .route("/compare/data.csv", get(compare::csv))
        .route("/compare/data.json", get(compare::json))
        .route("/runs/{id}", get(runs::page))
        .route("/toolchains", get(inventory::toolchains))
        .route("/toolchains/{lineage}/{version}", get(version::page))
        .route("/hosts", get(inventory::hosts))
        .route("/contracts", get(contracts::page))
}

/// Serves a chart drawn from `view`. The ETag is a hash of the view (and of this build), so a
/// reload that finds the chart unchanged gets a 304 without drawing it again; drawing itself
/// runs on the blocking pool, off the async workers.
async fn chart<V>(
    request: &HeaderMap,
    kind: &str,
    view: V,
    draw: fn(&V) -> Result<String, ChartError>,
) -> Result<Response, Error>
where
    V: Serialize + Send + 'static,
{
    let etag = etag(kind, &view)?;
    let headers = [(ETAG, etag.clone()), (CACHE_CONTROL, HeaderValue::from_static("no-cache"))];
    if matches_etag(request, &etag) {
        return Ok((StatusCode::NOT_MODIFIED, headers).into_response());
    }
    let svg = tokio::task::spawn_blocking(move || draw(&view))
        .await
        .map_err(anyhow::Error::from)?
        .map_err(anyhow::Error::from)?;
    let content_type = (CONTENT_TYPE, HeaderValue::from_static("image/svg+xml; charset=utf-8"));
    Ok((headers, [content_type], svg).into_response())
}

fn etag(kind: &str, view: &impl Serialize) -> Result<HeaderValue, Error> {
    let mut hash = Sha256::new();
    hash.update(crate::instance::VERSION.as_bytes());
    hash.update(kind.as_bytes());
    hash.update(serde_json::to_vec(view).map_err(anyhow::Error::from)?);
    let tag = format!("\"{}\"", hex::encode(&hash.finalize()[..16]));
    Ok(HeaderValue::from_str(&tag).expect("hex is a valid header value"))
}

fn matches_etag(request: &HeaderMap, etag: &HeaderValue) -> bool {
    request.get_all(IF_NONE_MATCH).iter().filter_map(|v| v.to_str().ok()).any(|list| {
        list.split(',').map(str::trim).any(|t| t == "*" || t.trim_start_matches("W/") == etag.to_str().unwrap_or(""))
    })
}

/// A CSV export, sent as a download named `name.csv` (`name` kept to characters safe in any file
/// system and header; others become `_`).
fn csv_response(name: &str, body: String) -> Response {
    let name: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' }).collect();
    let disposition = HeaderValue::from_str(&format!("attachment; filename=\"{name}.csv\""))
        .expect("the name is made of header-safe characters");
    ([(CONTENT_TYPE, HeaderValue::from_static("text/csv; charset=utf-8")), (CONTENT_DISPOSITION, disposition)], body)
        .into_response()
}

/// One CSV line: fields quoted where needed, and text that a spreadsheet would run as a
/// formula (`=`, `+`, `-`, `@`, a tab or a carriage return first, as OWASP lists them) prefixed
/// with an apostrophe.
fn csv_line(fields: &[String]) -> String {
    let mut line = fields
        .iter()
        .map(|f| {
            let f = if f.starts_with(['=', '+', '-', '@', '\t', '\r']) && f.parse::<f64>().is_err() {
                format!("'{f}")
            } else {
                f.clone()
            };
            if f.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f
            }
        })
        .collect::<Vec<_>>()
        .join(",");
    line.push('\n');
    line
}

/// An optional number as a CSV field: empty when absent.
fn csv_number(n: Option<f64>) -> String {
    n.map(|n| n.to_string()).unwrap_or_default()
}

/// The metric a page's query asks for with `?measure=`; `None` where not asked. Given twice, or
/// naming no metric, it is refused.
fn asked_measure(query: Option<&str>) -> Result<Option<slopewatch_core::wire::Metric>, Error> {
    let asked = query_values(query, crate::links::MEASURE);
    if asked.len() > 1 {
        return Err(Error::BadRequest(format!("measure is given {} times; give it once", asked.len())));
    }
    crate::http::extract::measure(asked.first().map(String::as_str))
}

/// Every value of a repeated query parameter, e.g. `v=1&v=2`, which `Query` cannot collect.
fn query_values(query: Option<&str>, key: &str) -> Vec<String> {
    url::form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_and_formulas_defused() {
        let line = csv_line(&["a,b".into(), "say \"hi\"".into(), "=cmd()".into(), "-1.5".into(), "x".into()]);
        assert_eq!(line, "\"a,b\",\"say \"\"hi\"\"\",'=cmd(),-1.5,x\n");
        // A leading tab or carriage return is defused too; the carriage return also quotes.
        let line = csv_line(&["\t=1+1".into(), "\r=1+1".into()]);
        assert_eq!(line, "'\t=1+1,\"'\r=1+1\"\n");
    }

    #[test]
    fn etags_match_exactly_weakly_or_by_star() {
        let tag = HeaderValue::from_static("\"abc\"");
        let with = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(IF_NONE_MATCH, HeaderValue::from_static(v));
            matches_etag(&h, &tag)
        };
        assert!(with("\"abc\""));
        assert!(with("\"x\", W/\"abc\""));
        assert!(with("*"));
        assert!(!with("\"abd\""));
        assert!(!matches_etag(&HeaderMap::new(), &tag));
    }

    #[test]
    fn repeated_query_values_are_all_kept() {
        assert_eq!(query_values(Some("v=1&x=2&v=0.16.0%2Bdev"), "v"), ["1", "0.16.0+dev"]);
        assert!(query_values(None, "v").is_empty());
    }
}
