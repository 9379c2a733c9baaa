//! The OpenAPI 3.1 document of the JSON API, generated from the handlers' `#[utoipa::path]`
//! attributes and the request and response types, and served at `/api/v1/openapi.json`.

use super::error::ErrorBody;
use super::{api, capabilities, exposures, found_probes, health, metrics, regressions, session, versions, AppState};
use crate::model::RegressionStatus;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use std::sync::LazyLock;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(OpenApi)]
#[openapi(
    modifiers(&SecuritySchemes),
    // Schemas that parameters name: utoipa collects those of bodies, not of query parameters.
    components(schemas(ErrorBody, RegressionStatus)),
    tags(
        (name = "runs", description = "Submitting runs measured by the agent, exposure scans of built artifacts and probes a search found"),
        (name = "reads", description = "Runs, workloads, toolchains, hosts, slope series and found probes"),
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
                "A token from `slopewatch token create`; submitting runs needs scope `ingest` or `admin`, reading \
                 (where the server requires a login to read) any scope",
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

/// Reads of the API answer 401 without a session or a token, where the server requires a login to
/// read (`read_gate.rs`); run ingest and this document do not change.
struct ReadsMayNeedLogin;

impl Modify for ReadsMayNeedLogin {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let unauthorized = ResponseBuilder::new()
            .description(
                "The server requires a login to read (`[auth] require_login_to_read`) and the request has \
                 neither a session nor a valid token",
            )
            .content("application/json", ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorBody"))).build())
            .build();
        let anyone = || SecurityRequirement::default();
        let requirements =
            [anyone(), SecurityRequirement::new("bearer", [""; 0]), SecurityRequirement::new("session", [""; 0])];
        for (path, item) in openapi.paths.paths.iter_mut() {
            let Some(get) =
                item.get.as_mut().filter(|_| path.starts_with("/api/v1/") && path != "/api/v1/openapi.json")
            else {
                continue;
            };
            get.responses.responses.insert("401".into(), RefOr::T(unauthorized.clone()));
            get.security = Some(requirements.to_vec());
        }
    }
}

/// Every documented route. `app` serves these and `document` describes them, so a route cannot be
/// served undocumented or documented unserved.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(api::router())
        .merge(capabilities::router())
        .merge(versions::api_router())
        .merge(exposures::api_router())
        .merge(found_probes::api_router())
        .merge(regressions::api_router())
        .merge(health::router())
        .routes(routes!(metrics::metrics))
        .routes(routes!(openapi_json))
}

/// The OpenAPI document, as served.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut document = routes().split_for_parts().1;
    // The paths are only there once every router is merged in.
    ReadsMayNeedLogin.modify(&mut document);
    ClassOrUnsure.modify(&mut document);
    document
}

/// A complexity's `class` is one of the classes or `"unsure"`: core's type writes it through its
/// own serializer, which the derived schema sees as any string.
struct ClassOrUnsure;

impl Modify for ClassOrUnsure {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use slopewatch_core::complexity::{Class, UNSURE};
        use utoipa::openapi::schema::{Object, Schema, Type};
        let Some(components) = openapi.components.as_mut() else { return };
        let Some(RefOr::T(Schema::Object(complexity))) = components.schemas.get_mut("Complexity") else { return };
        let values = Class::ALL.iter().map(|c| c.as_str()).chain([UNSURE]);
        let class = Object::builder()
            .schema_type(Type::String)
            .enum_values(Some(values))
            .description(Some(
                "The class the evidence names, or `unsure` when it does not name one (docs/complexity.md)",
            ))
            .build();
        complexity.properties.insert("class".into(), RefOr::T(Schema::Object(class)));
    }
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
