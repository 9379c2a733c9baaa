//! Regression pages, the editor login, CSRF-protected editing, safe notes and the Markdown
//! export, through the HTTP surface, with the pages checked in a real headless browser.

use crate::builders::seed_regression;
use crate::helpers::chromium::{browser, output_dir, Chromium};
use crate::helpers::forms::{cookie_pair, get, hidden, login, post_form};
use crate::helpers::{on_both_backends, TestApp};
use axum::http::StatusCode;
use slopewatch::config::Config;

#[tokio::test]
async fn regression_pages_list_and_show_a_regression_to_anyone() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let empty = get(&app, "/regressions", "").await;
        assert_eq!(empty.status, StatusCode::OK);
        assert!(empty.text.contains("No regressions"));
        let id = seed_regression(&app).await;
        let list = get(&app, "/regressions", "").await;
        assert!(list.text.contains(&format!("/regressions/{id}")) && list.text.contains("zig-cc-musl"));
        assert!(list.text.contains("<code>0.15.0</code> → <code>0.16.0</code>"), "{}", list.text);
        assert!(list.text.contains("workload-0, workload-1, workload-2"));
        assert!(get(&app, "/regressions?status=fixed", "")
            .await
            .text
            .contains("No regressions or findings with this status."));
        assert_eq!(get(&app, "/regressions?status=bogus", "").await.status, StatusCode::BAD_REQUEST);

        let detail = get(&app, &format!("/regressions/{id}"), "").await;
        assert_eq!(detail.status, StatusCode::OK);
        for expected in [
            "First run of 0.16.0",
            "workload-0 crossed at 0.16.0",
            "<svg",
            "Export as Markdown",
            "Log in</a> to acknowledge",
        ] {
            assert!(detail.text.contains(expected), "{expected} missing");
        }
        assert!(!detail.text.contains("name=\"csrf\""), "no edit forms without a login");
        assert_eq!(get(&app, "/regressions/999", "").await.status, StatusCode::NOT_FOUND);
        assert_eq!(get(&app, "/regressions/abc", "").await.status, StatusCode::NOT_FOUND);
        // The outbox is for signed-in readers, even where reading is open.
        assert_eq!(get(&app, "/deliveries", "").await.status, StatusCode::SEE_OTHER);
    })
    .await;
}

#[tokio::test]
async fn an_editor_token_logs_in_once_and_other_tokens_do_not() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let bad = login(&app, "sw_not-a-token").await;
        assert_eq!(bad.status, StatusCode::UNAUTHORIZED);
        assert!(cookie_pair(&bad, "sw_session").is_none());
        let ingest = login(&app, &app.ingest_token.clone()).await;
        assert_eq!(ingest.status, StatusCode::FORBIDDEN);
        assert!(ingest.text.contains("editor or admin token"));

        let ok = login(&app, &app.editor_token.clone()).await;
        assert_eq!(ok.status, StatusCode::SEE_OTHER);
        assert_eq!(ok.location.as_deref(), Some("/regressions"));
        let set = ok.cookies.iter().find(|c| c.starts_with("sw_session=")).expect("a session cookie");
        assert!(set.contains("HttpOnly") && set.contains("SameSite=Lax") && set.contains("Path=/"), "{set}");
        assert!(!set.contains(&app.editor_token), "the cookie does not carry the token");
        let list = get(&app, "/regressions", &cookie_pair(&ok, "sw_session").unwrap()).await;
        assert!(list.text.contains("Logged in as test-editor"));

        let form = get(&app, "/login", "").await;
        let stale = post_form(
            &app,
            "/login",
            "",
            &[("token", &app.editor_token.clone()), ("csrf", &hidden(&form.text, "csrf"))],
        )
        .await;
        assert_eq!(stale.status, StatusCode::FORBIDDEN, "the login form needs its own CSRF cookie");

        let forged = "sw_session=1.99999999999.00.deadbeef";
        assert!(!get(&app, "/regressions", forged).await.text.contains("Logged in as"));
        let offsite = post_form(&app, "/login", "", &[("token", "x"), ("csrf", "x"), ("next", "//evil.example")]).await;
        assert!(offsite.text.contains("value=\"/regressions\""), "an off-site next is replaced");
    })
    .await;
}

#[tokio::test]
async fn editors_acknowledge_set_status_write_safe_notes_and_add_links_with_csrf() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let id = seed_regression(&app).await;
        let page_uri = format!("/regressions/{id}");

        let anonymous = post_form(&app, &format!("{page_uri}/notes"), "", &[("csrf", "x"), ("body", "hi")]).await;
        assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);

        let session = cookie_pair(&login(&app, &app.editor_token.clone()).await, "sw_session").unwrap();
        let page = get(&app, &page_uri, &session).await;
        let csrf = hidden(&page.text, "csrf");

        let forged = post_form(&app, &format!("{page_uri}/notes"), &session, &[("csrf", "0000"), ("body", "forged")]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN, "a form without the session's CSRF token is refused");

        let ack = post_form(&app, &format!("{page_uri}/acknowledge"), &session, &[("csrf", &csrf)]).await;
        assert_eq!(ack.status, StatusCode::SEE_OTHER);
        let note = "Upstream `strchr` measures the rest of the string.\n\n<script>document.title='pwned'</script>\n\n[bad](javascript:alert(1)) **bold**";
        let added = post_form(&app, &format!("{page_uri}/notes"), &session, &[("csrf", &csrf), ("body", note)]).await;
        assert_eq!(added.status, StatusCode::SEE_OTHER);
        let link = [("csrf", csrf.as_str()), ("title", "Upstream issue"), ("url", "https://example.org/issues/1")];
        assert_eq!(post_form(&app, &format!("{page_uri}/links"), &session, &link).await.status, StatusCode::SEE_OTHER);
        let bad_link = [("csrf", csrf.as_str()), ("title", "x"), ("url", "javascript:alert(1)")];
        assert_eq!(post_form(&app, &format!("{page_uri}/links"), &session, &bad_link).await.status, StatusCode::BAD_REQUEST);
        let status = [("csrf", csrf.as_str()), ("status", "false_alarm")];
        assert_eq!(post_form(&app, &format!("{page_uri}/status"), &session, &status).await.status, StatusCode::SEE_OTHER);

        let page = get(&app, &page_uri, "").await;
        assert!(page.text.contains("<strong>bold</strong>") && page.text.contains("<code>strchr</code>"));
        assert!(!page.text.contains("<script>document") && page.text.contains("&lt;script&gt;"), "script is neutralised");
        assert!(!page.text.contains("javascript:"), "script URLs are dropped");
        assert!(page.text.contains("href=\"https://example.org/issues/1\""));
        assert!(page.text.contains("Acknowledged") && page.text.contains("by test-editor"));
        assert!(page.text.contains("false alarm"));

        let (_, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        assert_eq!(detail["regression"]["status"], "false_alarm");
        assert_eq!(detail["regression"]["acknowledged_by"], "test-editor");

        let export = get(&app, &format!("{page_uri}/postmortem.md"), "").await;
        assert_eq!(export.status, StatusCode::OK);
        for expected in [
            &format!("# Regression #{id}: zig-cc-musl 0.16.0") as &str,
            "## Timeline",
            "First run of 0.16.0",
            "Acknowledged (test-editor)",
            "| workload-0 | O(n) | O(n²) | 1.00 | 2.00 |",
            "[Upstream issue](<https://example.org/issues/1>)",
            "Upstream `strchr` measures the rest of the string.",
        ] {
            assert!(export.text.contains(expected), "{expected} missing from:\n{}", export.text);
        }

        let logout = post_form(&app, "/logout", &session, &[("csrf", &csrf)]).await;
        assert!(logout.cookies.iter().any(|c| c.starts_with("sw_session=;") && c.contains("Max-Age=0")));
    })
    .await;
}

#[tokio::test]
async fn reading_needs_a_login_when_the_config_says_so() {
    on_both_backends(|db| async move {
        let mut config = Config::default();
        config.auth.require_login_to_read = true;
        let app = TestApp::with_config(db, config).await;
        let page = get(&app, "/regressions", "").await;
        assert_eq!(page.status, StatusCode::SEE_OTHER);
        assert_eq!(page.location.as_deref(), Some("/login?next=%2Fregressions"));
        assert_eq!(get(&app, "/api/v1/regressions", "").await.status, StatusCode::UNAUTHORIZED);
        let session = cookie_pair(&login(&app, &app.editor_token.clone()).await, "sw_session").unwrap();
        assert_eq!(get(&app, "/regressions", &session).await.status, StatusCode::OK);
    })
    .await;
}

#[tokio::test]
async fn a_revoked_token_ends_its_sessions() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let session = cookie_pair(&login(&app, &app.editor_token.clone()).await, "sw_session").unwrap();
        assert!(get(&app, "/regressions", &session).await.text.contains("Logged in as"));
        assert!(app.db.store.revoke_token("test-editor").await.unwrap());
        assert!(!get(&app, "/regressions", &session).await.text.contains("Logged in as"));
    })
    .await;
}

#[tokio::test]
async fn a_browser_renders_the_regression_pages_and_runs_no_script_from_notes() {
    let db = crate::helpers::TestDb::new(crate::helpers::Backend::Sqlite).await;
    let app = TestApp::new(db).await;
    let id = seed_regression(&app).await;
    let session = cookie_pair(&login(&app, &app.editor_token.clone()).await, "sw_session").unwrap();
    let csrf = hidden(&get(&app, &format!("/regressions/{id}"), &session).await.text, "csrf");
    let note = "Found by the nightly run.\n\n<script>document.body.setAttribute('data-pwned','1')</script>\n\n<img src=x onerror=\"document.body.setAttribute('data-pwned','2')\">";
    post_form(&app, &format!("/regressions/{id}/notes"), &session, &[("csrf", &csrf), ("body", note)]).await;

    let base = crate::helpers::serve(app.router.clone()).await;
    let chromium =
        Chromium::new(browser().expect("Chromium is needed: `apt-get install chromium` or set SLOPEWATCH_CHROMIUM"));
    let dir = output_dir();

    let (list_url, detail_url) = (format!("{base}/regressions"), format!("{base}/regressions/{id}"));
    let (list, detail) = tokio::task::spawn_blocking(move || {
        chromium.screenshot(&list_url, &dir.join("regressions.png"), (1280, 1400));
        chromium.screenshot(&detail_url, &dir.join("regression.png"), (1280, 1400));
        (chromium.dom(&list_url), chromium.dom(&detail_url))
    })
    .await
    .unwrap();
    assert!(list.contains("zig-cc-musl") && list.contains(&format!("#{id}")), "{list}");
    assert!(detail.contains("Found by the nightly run."), "{detail}");
    let body_tag = &detail[detail.find("<body").unwrap()..];
    let body_tag = &body_tag[..body_tag.find('>').unwrap()];
    assert!(!body_tag.contains("data-pwned"), "a script in a note ran in the browser: {body_tag}");
    assert!(detail.contains("&lt;script&gt;document.body"), "the script is shown as text");
    assert!(detail.contains("<polyline"), "the before/after chart is drawn");
    assert!(detail.contains("First run of 0.16.0"));
}

#[tokio::test]
async fn the_markdown_postmortem_keeps_what_editors_wrote_as_text_and_refuses_urls_with_line_breaks() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let id = seed_regression(&app).await;
        let page_uri = format!("/regressions/{id}");
        let session = cookie_pair(&login(&app, &app.editor_token.clone()).await, "sw_session").unwrap();
        let csrf = hidden(&get(&app, &page_uri, &session).await.text, "csrf");
        let link = |title: &'static str, url: &'static str| {
            [("csrf", csrf.clone()), ("title", title.into()), ("url", url.into())]
        };
        for url in ["https://example.org/a\n## Injected", "https://example.org/a\tb", "https://example.org/\u{7f}"] {
            let form = link("x", url);
            let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let refused = post_form(&app, &format!("{page_uri}/links"), &session, &form).await;
            assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{url:?} is refused");
        }
        let form = link("x](https://evil.example) [y", "https://example.org/2");
        let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(post_form(&app, &format!("{page_uri}/links"), &session, &form).await.status, StatusCode::SEE_OTHER);
        let note = "<img src=x onerror=alert(1)>\n# Heading injection\n\n**kept**";
        let form = [("csrf", csrf.as_str()), ("body", note)];
        assert_eq!(post_form(&app, &format!("{page_uri}/notes"), &session, &form).await.status, StatusCode::SEE_OTHER);

        let export = get(&app, &format!("{page_uri}/postmortem.md"), "").await.text;
        assert!(export.contains("- [x\\](https://evil.example) \\[y](<https://example.org/2>)"), "{export}");
        assert!(
            export.contains("> &lt;img src=x onerror=alert(1)&gt;\n> # Heading injection\n>\n> **kept**"),
            "{export}"
        );
        assert!(!export.contains("<img") && !export.lines().any(|l| l.starts_with("# Heading")), "{export}");
        assert!(!export.contains("## Injected"), "{export}");
    })
    .await;
}
