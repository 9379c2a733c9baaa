//! Pages and forms as a browser uses them: cookies, hidden CSRF fields, the editor login.

use super::TestApp;
use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use http_body_util::BodyExt;
use tower::ServiceExt;

/// A response's status, `Set-Cookie` and `Location` headers, and body text.
pub struct Page {
    pub status: StatusCode,
    pub cookies: Vec<String>,
    pub location: Option<String>,
    pub retry_after: Option<String>,
    pub text: String,
}

pub async fn send(app: &TestApp, req: Request<Body>) -> Page {
    let res = app.router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let cookies = res.headers().get_all(header::SET_COOKIE).iter().map(|v| v.to_str().unwrap().to_string()).collect();
    let location = res.headers().get(header::LOCATION).map(|v| v.to_str().unwrap().to_string());
    let retry_after = res.headers().get(header::RETRY_AFTER).map(|v| v.to_str().unwrap().to_string());
    let text = String::from_utf8(res.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    Page { status, cookies, location, retry_after, text }
}

pub async fn get(app: &TestApp, uri: &str, cookie: &str) -> Page {
    send(app, Request::get(uri).header(header::COOKIE, cookie).body(Body::empty()).unwrap()).await
}

pub async fn post_form(app: &TestApp, uri: &str, cookie: &str, fields: &[(&str, &str)]) -> Page {
    let body: String = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish();
    send(
        app,
        Request::post(uri)
            .header(header::COOKIE, cookie)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(body))
            .unwrap(),
    )
    .await
}

/// The `name=value` part of the named cookie.
pub fn cookie_pair(page: &Page, name: &str) -> Option<String> {
    page.cookies.iter().find(|c| c.starts_with(&format!("{name}="))).map(|c| c.split(';').next().unwrap().to_string())
}

/// The value of a hidden input in a page.
pub fn hidden(text: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = text.find(&marker).unwrap_or_else(|| panic!("no {name} field in {text}")) + marker.len();
    text[start..start + text[start..].find('"').unwrap()].to_string()
}

/// Logs in with `token` through the form, answering the session cookie.
pub async fn login(app: &TestApp, token: &str) -> Page {
    let form = get(app, "/login?next=/regressions", "").await;
    assert_eq!(form.status, StatusCode::OK);
    let login_cookie = cookie_pair(&form, "sw_login_csrf").expect("the login form sets its CSRF cookie");
    let csrf = hidden(&form.text, "csrf");
    post_form(app, "/login", &login_cookie, &[("token", token), ("csrf", &csrf), ("next", "/regressions")]).await
}
