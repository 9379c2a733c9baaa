//! Extractors whose rejections answer in the app's error format: `AppQuery`, `AppPath`, `AppForm`
//! (and path extractors such as `RegressionId`) with the JSON error body, or wrapped in `OnPage` as
//! a page; `ClientAddr`, the address a request comes from; and `measure`, the metric a query asks
//! for.

use super::bodies::Cut;
use super::pages::PageError;
use super::{AppState, Error};
use axum::extract::rejection::{FormRejection, PathRejection, QueryRejection};
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Path, Request};
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderMap};
use slopewatch_core::wire::Metric;
use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// The query string, deserialized.
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(Error))]
pub struct AppQuery<T>(pub T);

/// The path's parameters, percent-decoded.
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(Error))]
pub struct AppPath<T>(pub T);

/// A form body (`application/x-www-form-urlencoded`), deserialized.
#[derive(FromRequest)]
#[from_request(via(axum::Form), rejection(Error))]
pub struct AppForm<T>(pub T);

// A malformed query, form or path is the client's mistake whatever axum would answer (415 and 422
// among them): one status, with axum's own text as the reason.
impl From<QueryRejection> for Error {
    fn from(rejection: QueryRejection) -> Self {
        Error::BadRequest(rejection.body_text())
    }
}

// A body cut for its size or pace (`bodies::Cut`) answers 413 or 408 as it does on every route.
impl From<FormRejection> for Error {
    fn from(rejection: FormRejection) -> Self {
        match Cut::behind(&rejection) {
            Some(cut) => cut.into(),
            None => Error::BadRequest(rejection.body_text()),
        }
    }
}

impl From<PathRejection> for Error {
    fn from(rejection: PathRejection) -> Self {
        Error::BadRequest(rejection.body_text())
    }
}

/// The metric `?measure=` asks a page or a read to show (`Metric::as_str`); `None` where not
/// given. A value that names no metric is refused, naming it and the ones there are.
pub fn measure(value: Option<&str>) -> Result<Option<Metric>, Error> {
    let Some(value) = value else { return Ok(None) };
    Metric::parse(value).map(Some).ok_or_else(|| {
        let known: Vec<&str> = Metric::ALL.iter().map(|m| m.as_str()).collect();
        let shown: String = value.chars().take(64).collect();
        Error::BadRequest(format!("unknown measure {shown:?}: it is one of {}", known.join(", ")))
    })
}

/// The `{id}` in a regression's URL; one that is not a number names no regression.
pub(super) struct RegressionId(pub(super) i64);

impl FromRequestParts<AppState> for RegressionId {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let Path(raw) = Path::<String>::from_request_parts(parts, state).await?;
        raw.parse().map(RegressionId).map_err(|_| Error::NotFound(format!("no regression {raw:?}")))
    }
}

/// One of the extractors above in a page handler: its rejection answers as the error page.
pub struct OnPage<X>(pub X);

impl<S, X> FromRequestParts<S> for OnPage<X>
where
    S: Send + Sync,
    X: FromRequestParts<S, Rejection = Error>,
{
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, PageError> {
        Ok(OnPage(X::from_request_parts(parts, state).await?))
    }
}

impl<S, X> FromRequest<S> for OnPage<X>
where
    S: Send + Sync,
    X: FromRequest<S, Rejection = Error>,
{
    type Rejection = PageError;

    async fn from_request(req: Request, state: &S) -> Result<Self, PageError> {
        Ok(OnPage(X::from_request(req, state).await?))
    }
}

/// The client's address: the peer's, or the one trusted proxies forwarded (`[server]
/// trusted_proxies`). A router served without connection info (in tests) sees `0.0.0.0`.
pub struct ClientAddr(pub IpAddr);

impl FromRequestParts<AppState> for ClientAddr {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Infallible> {
        Ok(ClientAddr::of(state, &parts.extensions, &parts.headers))
    }
}

impl ClientAddr {
    /// The client of a request with these extensions (connection info) and headers.
    pub fn of(state: &AppState, extensions: &Extensions, headers: &HeaderMap) -> ClientAddr {
        let forwarded = headers.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok());
        ClientAddr(state.config.trusted_proxies.client(peer_of(extensions), forwarded))
    }
}

/// Whether the request came over TLS: the server's `public_url` is `https`, or a trusted proxy
/// says so in `X-Forwarded-Proto`. Cookies are `Secure` and answers carry HSTS then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Https(pub bool);

impl Https {
    /// The request's transport, from its peer and headers.
    pub fn of(state: &AppState, peer: IpAddr, headers: &axum::http::HeaderMap) -> Https {
        let public = state.config.public_url.as_deref().is_some_and(|u| u.starts_with("https://"));
        let proto = headers.get_all("x-forwarded-proto").iter().filter_map(|v| v.to_str().ok());
        Https(public || state.config.trusted_proxies.forwarded_https(peer, proto))
    }
}

impl FromRequestParts<AppState> for Https {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Infallible> {
        Ok(Https::of(state, peer(parts), &parts.headers))
    }
}

/// The peer a request came from; `0.0.0.0` without connection info (in tests).
pub fn peer(parts: &Parts) -> IpAddr {
    peer_of(&parts.extensions)
}

fn peer_of(extensions: &Extensions) -> IpAddr {
    extensions.get::<ConnectInfo<SocketAddr>>().map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |ConnectInfo(a)| a.ip())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measure_is_a_metric_s_name_and_an_unknown_one_is_refused_by_name() {
        assert_eq!(measure(None).unwrap(), None);
        assert_eq!(measure(Some("instructions-valgrind")).unwrap(), Some(Metric::InstructionsValgrind));
        let e = measure(Some("cycles")).unwrap_err();
        assert_eq!(e.status(), axum::http::StatusCode::BAD_REQUEST);
        assert!(e.to_string().contains("unknown measure \"cycles\""), "{e}");
        assert!(e.to_string().contains("wall, cpu, instructions-perf, instructions-valgrind"), "{e}");
    }
}
