//! The OpenAPI 3.1 document of the JSON API, generated from the handlers' `#[utoipa::path]`
//! attributes and the request and response types, and served at `/api/v1/openapi.json`.

use super::error::ErrorBody;
use super::{api, health, metrics, regressions, session, AppState};
use crate::model::RegressionStatus;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use std::sync::LazyLock;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(OpenApi)]
#[openapi(
    modifiers(&SecuritySchemes),
    // Schemas that parameters name: utoipa collects those of bodies, not of query parameters.
    components(schemas(ErrorBody, RegressionStatus)),
    tags(
        (name = "runs", description = "Submitting runs measured by the agent"),
        (name = "reads", description = "Runs, workloads, toolchains, hosts and slope series"),
        (name = "regressions", description = "Regressions the server detected, with their retrospectives"),
        (name = "operations", description = "Probes, metrics and this document"),
    )
)]
struct ApiDoc;

/// The security schemes operations name: `bearer`, an API token, and `session`, an editor's login.
struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let bearer = HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .description(Some(
                "A token from `slopewatch token create`; submitting runs needs scope `ingest` or `admin`",
            ))
            .build();
        let session = ApiKeyValue::with_description(
            session::SESSION_COOKIE,
            "The session cookie set by logging in at `/login` with an `editor` or `admin` token",
        );
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme("bearer", SecurityScheme::Http(bearer));
        components.add_security_scheme("session", SecurityScheme::ApiKey(ApiKey::Cookie(session)));
    }
}

/// Every documented route. `app` serves these and `document` describes them, so a route cannot be
/// served undocumented or documented unserved.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(api::router())
        .merge(regressions::api_router())
        .merge(health::router())
        .routes(routes!(metrics::metrics))
        .routes(routes!(openapi_json))
}

/// The OpenAPI document, as served.
pub fn document() -> utoipa::openapi::OpenApi {
    routes().split_for_parts().1
}

static DOCUMENT_JSON: LazyLock<String> =
    LazyLock::new(|| document().to_pretty_json().expect("the OpenAPI document always serializes"));

/// This document
///
/// The OpenAPI 3.1 description of every endpoint above, with request and response schemas.
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    tag = "operations",
    responses((status = 200, description = "The OpenAPI document", body = Object, content_type = "application/json"))
)]
async fn openapi_json() -> impl IntoResponse {
    ([(CONTENT_TYPE, "application/json")], DOCUMENT_JSON.as_str())
}
