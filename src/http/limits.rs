//! What one request may take: a body of its route's size and pace (`bodies`), a place among the
//! requests handled at once, and time. Requests with a valid token or a signed-in session may take
//! any place; those without may take all but `reserved_requests` of them, and one client address
//! at most `anonymous_per_client` at once, counted from the moment its request arrives. Beyond any
//! of these the answer is 503 with `Retry-After`, which agents retry.

use super::auth::{bearer, Identified};
use super::bodies::{self, Pace};
use super::connections::{held, OpenConnection};
use super::extract::ClientAddr;
use super::pages::PageError;
use super::session::{self, Checked};
use super::throttle::{ClientShare, DatabaseShare, UnknownTokens, DATABASE_WAIT};
use super::{AppState, Error};
use crate::metrics::Refusal;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The places, shares and deadlines shared by every request to one app.
#[derive(Clone)]
pub(super) struct RequestLimits {
    state: AppState,
    /// Every request slot.
    places: Arc<Semaphore>,
    /// The slots requests without a token or session may take: all but the reserved ones.
    anonymous: Arc<Semaphore>,
    clients: Arc<ClientShare>,
    unknown: Arc<UnknownTokens>,
    database: Arc<DatabaseShare>,
    pace: Pace,
}

impl RequestLimits {
    pub(super) fn new(state: AppState) -> RequestLimits {
        let limits = &state.config.limits;
        let anonymous = limits.max_concurrent_requests.saturating_sub(limits.reserved_requests).max(1);
        RequestLimits {
            places: Arc::new(Semaphore::new(limits.max_concurrent_requests)),
            anonymous: Arc::new(Semaphore::new(anonymous)),
            clients: Arc::new(ClientShare::new(limits.anonymous_per_client)),
            unknown: Arc::new(UnknownTokens::default()),
            database: Arc::new(DatabaseShare::new(state.store.pool_limit(), DATABASE_WAIT)),
            pace: Pace::new(limits),
            state,
        }
    }

    /// Counts a refusal and answers it: 503 with `Retry-After` in the JSON error format.
    fn busy(&self, why: Refusal, message: &str) -> Response {
        self.state.metrics.record_refusal(why);
        Error::Busy(message.into()).into_response()
    }
}

/// Liveness answers whatever the load, so a busy server is not restarted for being busy;
/// readiness (`/readyz`) takes a place like any request, and a full server is not ready.
const ALWAYS_ANSWERED: &str = "/healthz";

const FULL: &str = "the server is handling as many requests as it may; retry shortly";

pub(super) async fn limit(State(limits): State<RequestLimits>, req: Request, next: Next) -> Response {
    if req.uri().path() == ALWAYS_ANSWERED {
        return next.run(req).await;
    }
    let state = &limits.state;
    let api = req.uri().path().starts_with("/api/");
    let answer = |e: Error| if api { e.into_response() } else { PageError::from(e).into_response() };
    let route = req.extensions().get::<MatchedPath>().map(|p| p.as_str().to_string());
    let rule = bodies::rule(req.method(), route.as_deref(), state.config.body_limit);
    if bodies::declared(req.headers()).is_some_and(|n| n > rule.limit as u64) {
        state.metrics.record_refusal(Refusal::BodyTooLarge);
        return answer(Error::PayloadTooLarge(rule.limit));
    }
    let mut req = bodies::watch(req, rule.limit, limits.pace, state.metrics.clone());

    // A request that carries a credential takes a place as if it were valid while it is checked,
    // so checking costs no more than the places allow; an invalid one is then anonymous.
    let mut known = None;
    // A token the store did not know lately is anonymous at once: repeating it costs neither a
    // slot nor a lookup.
    let unknown = bearer(req.headers()).map(crate::auth::hash).filter(|h| limits.unknown.holds(h, Instant::now()));
    if unknown.is_some() {
        req.extensions_mut().insert(Identified(None));
    }
    if (bearer(req.headers()).is_some() && unknown.is_none()) || session::carries_cookie(req.headers()) {
        let Ok(place) = limits.places.clone().try_acquire_owned() else { return limits.busy(Refusal::Busy, FULL) };
        match identify(state, &limits.unknown, &mut req).await {
            Ok(true) => {
                if let Some(conn) = req.extensions().get::<Arc<OpenConnection>>() {
                    conn.trust();
                }
                known = Some(place);
            }
            Ok(false) => {}
            Err(e) => return answer(Error::from(e)),
        }
    }
    let tokenless = known.is_none();
    let share = match known {
        Some(_) => None,
        None => {
            let ClientAddr(client) = ClientAddr::of(state, req.extensions(), req.headers());
            let Some(share) = limits.clients.take(client) else {
                return limits.busy(
                    Refusal::AnonymousCap,
                    "your address has as many requests without a token in progress as it may; retry shortly",
                );
            };
            Some(share)
        }
    };
    // Read before an anonymous request takes a slot: a client sending its form slowly holds its
    // own share and a connection, nothing others need.
    if rule.read_first {
        req = match bodies::read_whole(req).await {
            Ok(req) => req,
            Err(e) => return answer(e),
        };
    }
    let places: (OwnedSemaphorePermit, Option<OwnedSemaphorePermit>) = match known {
        Some(place) => (place, None),
        None => {
            let Ok(anonymous) = limits.anonymous.clone().try_acquire_owned() else {
                return limits.busy(Refusal::AnonymousShare, FULL);
            };
            let Ok(place) = limits.places.clone().try_acquire_owned() else {
                return limits.busy(Refusal::Busy, FULL);
            };
            (place, Some(anonymous))
        }
    };
    // Without a token, a request's handler takes a place among the database connections such
    // requests may hold; static files and `/metrics` read none.
    let path = req.uri().path();
    let reads_database = !(path.starts_with("/static/") || path == "/metrics");
    let _database = match tokenless && reads_database {
        true => match limits.database.enter().await {
            Some(place) => Some(place),
            None => {
                return limits.busy(
                    Refusal::DatabaseShare,
                    "requests without a token are using every database connection they may; retry shortly",
                )
            }
        },
        false => None,
    };
    let timeout = state.config.limits.request_timeout;
    match tokio::time::timeout(timeout, next.run(req)).await {
        // The slot is held until the answer is written (or its connection dropped at the write
        // deadline): a client that does not read cannot free it and take another.
        Ok(response) => response.map(|body| held(body, (places, share))),
        Err(_) => {
            let secs = timeout.as_secs_f64();
            tracing::warn!(timeout_s = secs, "request cut off at the request timeout");
            state.metrics.record_refusal(Refusal::RequestTimeout);
            Error::Busy(format!("the request took longer than the server's limit of {secs} s; retry")).into_response()
        }
    }
}

/// Whether the request carries a valid token or a signed-in session; either found is kept in the
/// request for the read gate and the handlers. A store that cannot answer is an error: the
/// request is answered 503 at once, rather than waiting for the database again in its handler.
async fn identify(state: &AppState, unknown: &UnknownTokens, req: &mut Request) -> Result<bool, sqlx::Error> {
    let known_unknown = matches!(req.extensions().get::<Identified>(), Some(Identified(None)));
    if let Some(secret) = bearer(req.headers()).filter(|_| !known_unknown) {
        let token = crate::auth::identify(&state.store, secret).await?;
        if token.is_none() {
            unknown.remember(crate::auth::hash(secret), Instant::now());
        }
        let valid = token.is_some();
        req.extensions_mut().insert(Identified(token));
        if valid {
            return Ok(true);
        }
    }
    let found = session::current(state, req.headers()).await?;
    let valid = found.is_some();
    req.extensions_mut().insert(Checked(found));
    Ok(valid)
}
