//! Security checks through the public surface: editor forms without a session or CSRF token,
//! hostile names stored literally and shown escaped, tokens kept out of logs and listings, server
//! errors that say nothing internal, where the login sends people afterwards, sessions that end
//! at logout and a session key kept out of the database, reading behind a login, and the limit
//! on failed logins.
//!
//! Ingest without a token, with a forged, wrong, revoked or editor token is covered by
//! `api::ingest_requires_a_valid_token_of_the_right_scope`; escaping on every dashboard page by
//! `dashboard::names_full_of_markup_are_escaped_on_every_page`.

use crate::builders::seed_regression;
use crate::builders::RunShape;
use crate::helpers::forms::{cookie_pair, get, hidden, login, post_form, send, Page};
use crate::helpers::process::{cli, create_token, free_addr, Server};
use crate::helpers::{on_both_backends, Backend, TestApp, TestDb};
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{header, Request, StatusCode};
use serde_json::{json, Value};
use slopewatch::config::Config;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;

/// What an attacker types into every name: SQL, markup, quotes, wildcards, escapes, non-ASCII.
const HOSTILE: [&str; 8] = [
    "'; DROP TABLE runs; --",
    "x\" OR \"1\"=\"1",
    "Robert'); DELETE FROM samples WHERE ('1'='1",
    "<script>alert('sw')</script>",
    "\"><img src=x onerror=alert(1)>",
    "%_\\ $1 ?1 :name",
    "名前 🙂 ÿ \u{202e}rtl",
    "&amp; &lt;b&gt; {{ x }} {% if %}",
];

fn query(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish()
}

#[tokio::test]
async fn editor_forms_refuse_requests_without_a_session_or_its_csrf_token_and_change_nothing() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let id = seed_regression(&app).await;
        let page = format!("/regressions/{id}");
        let editor = cookie_pair(&login(&app, &app.editor_token.clone()).await, "sw_session").unwrap();
        let admin = cookie_pair(&login(&app, &app.admin_token.clone()).await, "sw_session").unwrap();
        let editor_csrf = hidden(&get(&app, &page, &editor).await.text, "csrf");
        let admin_csrf = hidden(&get(&app, &page, &admin).await.text, "csrf");
        assert_ne!(editor_csrf, admin_csrf, "each session has its own CSRF token");
        // A cookie of the right shape whose signature is not the server's.
        let forged = {
            let (head, sig) = editor.rsplit_once('.').unwrap();
            format!("{head}.{}", if sig.starts_with('0') { "1" } else { "0" }.repeat(sig.len()))
        };

        let actions: [(&str, Vec<(&str, &str)>); 4] = [
            ("status", vec![("status", "fixed")]),
            ("acknowledge", vec![]),
            ("notes", vec![("body", "forged note")]),
            ("links", vec![("title", "forged"), ("url", "https://example.org/forged")]),
        ];
        for (action, fields) in &actions {
            let uri = format!("{page}/{action}");
            let post = |cookie: &str, csrf: Option<&str>| {
                let mut form = fields.clone();
                form.extend(csrf.map(|c| ("csrf", c)));
                let (uri, cookie) = (uri.clone(), cookie.to_string());
                let form: Vec<(String, String)> = form.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
                let app = &app;
                async move {
                    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                    post_form(app, &uri, &cookie, &form).await.status
                }
            };
            assert_eq!(post("", Some(&editor_csrf)).await, StatusCode::UNAUTHORIZED, "{action} without a session");
            assert_eq!(post(&forged, Some(&editor_csrf)).await, StatusCode::UNAUTHORIZED, "{action}, forged session");
            let missing = post(&editor, None).await;
            assert!(missing.is_client_error(), "{action} without a CSRF field: {missing}");
            for (what, csrf) in
                [("empty", ""), ("wrong", "0000000000000000"), ("another session's", admin_csrf.as_str())]
            {
                assert_eq!(post(&editor, Some(csrf)).await, StatusCode::FORBIDDEN, "{action} with {what} CSRF token");
            }
        }
        let (_, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        assert_eq!(detail["regression"]["status"], "open", "{detail}");
        assert!(detail["regression"]["acknowledged_by"].is_null());
        assert!(detail["notes"].as_array().unwrap().is_empty() && detail["links"].as_array().unwrap().is_empty());

        // The login form: a CSRF value that is not the one its cookie carries, or no cookie at all.
        let form = get(&app, "/login", "").await;
        let login_cookie = cookie_pair(&form, "sw_login_csrf").unwrap();
        let token = app.editor_token.clone();
        for (cookie, csrf) in [(login_cookie.as_str(), "0".repeat(32)), ("", hidden(&form.text, "csrf"))] {
            let refused =
                post_form(&app, "/login", cookie, &[("token", token.as_str()), ("csrf", csrf.as_str())]).await;
            assert_eq!(refused.status, StatusCode::FORBIDDEN);
            assert!(cookie_pair(&refused, "sw_session").is_none(), "no session without the form's CSRF token");
        }
        // Logging out needs the CSRF token too, so another site cannot end a session.
        assert_eq!(post_form(&app, "/logout", &editor, &[("csrf", "x")]).await.status, StatusCode::FORBIDDEN);
    })
    .await;
}

#[tokio::test]
async fn hostile_names_are_stored_literally_and_shown_escaped() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let mut ids = Vec::new();
        for (i, s) in HOSTILE.iter().enumerate() {
            let mut run = RunShape::new(s, s).host(s).json();
            run["host"] = json!({"name": s, "cpu": s, "kernel": s, "arch": s});
            run["toolchain"] = json!({"name": s, "version": s, "libc": s, "target": s, "compiler": s, "flags": s});
            run["agent_version"] = json!(s);
            let mut metadata = serde_json::Map::new();
            metadata.insert(s.to_string(), json!(s));
            metadata.insert("i".into(), json!(i.to_string()));
            run["workloads"][0]["name"] = json!(s);
            run["workloads"][0]["source_hash"] = json!(s);
            run["workloads"][0]["metadata"] = Value::Object(metadata);
            let (status, body) = app.submit(&run).await;
            assert_eq!(status, StatusCode::CREATED, "{s}: {body}");
            ids.push(run["run_id"].as_str().unwrap().to_string());

            // Read back through the API, byte for byte.
            let (status, stored) = app.get(&format!("/api/v1/runs/{}", ids[i])).await;
            assert_eq!(status, StatusCode::OK);
            assert_eq!(stored["agent_version"], *s);
            assert_eq!(stored["host"], run["host"], "{s}");
            assert_eq!(stored["toolchain"], run["toolchain"], "{s}");
            let (kept, sent) = (&stored["workloads"][0], &run["workloads"][0]);
            for field in ["name", "source_hash", "metadata"] {
                assert_eq!(kept[field], sent[field], "{s}: {field}");
            }
            let (status, series) =
                app.get(&format!("/api/v1/series?{}", query(&[("workload", s), ("toolchain", s)]))).await;
            assert_eq!(status, StatusCode::OK, "{s}: {series}");
            assert_eq!((&series["workload"], &series["versions"][0]["version"]), (&json!(s), &json!(s)));
        }
        let names = |v: &Value, list: &str, key: &str| -> Vec<String> {
            v[list].as_array().unwrap().iter().map(|x| x[key].as_str().unwrap().to_string()).collect()
        };
        let mut expected: Vec<String> = HOSTILE.iter().map(|s| s.to_string()).collect();
        expected.sort();
        for (uri, list) in
            [("/api/v1/hosts", "hosts"), ("/api/v1/workloads", "workloads"), ("/api/v1/toolchains", "toolchains")]
        {
            let mut got = names(&app.get(uri).await.1, list, "name");
            got.sort();
            assert_eq!(got, expected, "{uri}");
        }
        // Nothing was executed: every table still answers, with every run.
        let (_, runs) = app.get("/api/v1/runs?limit=100").await;
        assert_eq!(runs["runs"].as_array().unwrap().len(), HOSTILE.len());

        // Notes and link titles, through the editor's forms.
        let id = seed_regression(&app).await;
        let session = cookie_pair(&login(&app, &app.editor_token.clone()).await, "sw_session").unwrap();
        let csrf = hidden(&get(&app, &format!("/regressions/{id}"), &session).await.text, "csrf");
        let note = HOSTILE.join("\n\n");
        let added =
            post_form(&app, &format!("/regressions/{id}/notes"), &session, &[("csrf", &csrf), ("body", &note)]).await;
        assert_eq!(added.status, StatusCode::SEE_OTHER);
        let link = [("csrf", csrf.as_str()), ("title", HOSTILE[0]), ("url", "https://example.org/?q=';--")];
        assert_eq!(
            post_form(&app, &format!("/regressions/{id}/links"), &session, &link).await.status,
            StatusCode::SEE_OTHER
        );
        let (_, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        assert_eq!(detail["notes"][0]["body"], note.as_str());
        assert_eq!(detail["links"][0]["title"], HOSTILE[0]);

        // Shown escaped: no markup from a name reaches a page as markup.
        let mut pages = vec![format!("/regressions/{id}"), "/".to_string(), "/hosts".into(), "/toolchains".into()];
        pages.extend(ids.iter().map(|r| format!("/runs/{r}")));
        pages.extend(HOSTILE.iter().map(|s| {
            let seg =
                |x: &str| percent_encoding::utf8_percent_encode(x, percent_encoding::NON_ALPHANUMERIC).to_string();
            format!("/series/{}/{}", seg(s), seg(s))
        }));
        for uri in &pages {
            let page = get(&app, uri, "").await;
            assert_eq!(page.status, StatusCode::OK, "{uri}");
            for raw in ["<script>alert", "<img src=x", "onerror=alert(1)>"] {
                assert!(!page.text.contains(raw), "{uri} shows {raw:?} as markup");
            }
        }
        let run_page = get(&app, &format!("/runs/{}", ids[3]), "").await.text;
        assert!(run_page.contains("&#60;script&#62;alert(&#39;sw&#39;)&#60;/script&#62;"), "shown as text: {run_page}");
    })
    .await;
}

/// The parts of a token worth stealing: the whole, the part never stored, and its stored hash.
fn secrets_of(token: &str) -> [String; 3] {
    let hex = token.strip_prefix("sw_").unwrap();
    [token.to_string(), hex[12..].to_string(), slopewatch::auth::hash(token)]
}

#[tokio::test]
async fn tokens_never_reach_the_server_log_or_the_token_list() {
    let db = TestDb::new(Backend::Sqlite).await;
    let dir = tempfile::tempdir().unwrap();
    let ingest = create_token(&db.url, "agent-01", "ingest");
    let editor = create_token(&db.url, "alice", "editor");
    let wrong = format!("sw_{}", "ab".repeat(32));
    let log = dir.path().join("server.log");
    let server = Server::start_logging(&db.url, &free_addr(), None, &log, "debug");
    let url = server.url();
    let c = reqwest::Client::new();
    let run = RunShape::new("gcc-glibc", "12.2.0").workloads(2).json();
    for (token, expected) in [(&ingest, 201), (&wrong, 401), (&editor, 403)] {
        let res = c.post(format!("{url}/api/v1/runs")).bearer_auth(token).json(&run).send().await.unwrap();
        assert_eq!(res.status().as_u16(), expected);
    }
    let res = c.post(format!("{url}/api/v1/runs")).header("authorization", &ingest).json(&run).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 401, "a token without `Bearer` is not accepted");

    // The login form carries the token in its body.
    let form = c.get(format!("{url}/login")).send().await.unwrap();
    let cookie = form.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_string();
    let csrf = hidden(&form.text().await.unwrap(), "csrf");
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    for (token, expected) in [(&editor, 303), (&wrong, 401)] {
        let res = no_redirects
            .post(format!("{url}/login"))
            .header("cookie", &cookie)
            .form(&[("token", token.as_str()), ("csrf", csrf.as_str()), ("next", "/regressions")])
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), expected);
    }
    drop(server);

    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("run stored") && logged.contains("\"status\":401"), "the requests were logged: {logged}");
    for token in [&ingest, &editor, &wrong] {
        for secret in secrets_of(token) {
            assert!(!logged.contains(&secret), "the server log holds a token (or its hash)");
        }
    }
    let listed = cli(&["token", "list"], &db.url);
    assert!(listed.contains("agent-01") && listed.contains("alice"), "{listed}");
    for token in [&ingest, &editor] {
        let lookup = &token[3..15];
        for secret in secrets_of(token).iter().map(String::as_str).chain([lookup]) {
            assert!(!listed.contains(secret), "`token list` shows a token or part of one: {listed}");
        }
    }
}

#[tokio::test]
async fn server_errors_answer_nothing_internal_and_log_the_detail() {
    let db = TestDb::new(Backend::Sqlite).await;
    let dir = tempfile::tempdir().unwrap();
    let token = create_token(&db.url, "agent", "ingest");
    let log = dir.path().join("server.log");
    let server = Server::start(&db.url, &free_addr(), None, &log);
    let url = server.url();
    let c = reqwest::Client::new();
    let run = RunShape::new("gcc-glibc", "12.2.0").json();
    let res = c.post(format!("{url}/api/v1/runs")).bearer_auth(&token).json(&run).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 201);

    // The store breaks under the running server.
    let pool = sqlx::SqlitePool::connect(&db.url).await.unwrap();
    sqlx::raw_sql("DROP TABLE version_summaries; DROP TABLE pending_summaries").execute(&pool).await.unwrap();
    pool.close().await;

    let series = format!("{url}/api/v1/series?workload=workload-0&toolchain=gcc-glibc");
    let other = RunShape::new("gcc-glibc", "12.2.0").json();
    let answers = [
        c.get(&series).send().await.unwrap(),
        c.post(format!("{url}/api/v1/runs")).bearer_auth(&token).json(&other).send().await.unwrap(),
        c.get(format!("{url}/series/workload-0/gcc-glibc")).send().await.unwrap(),
        c.get(format!("{url}/")).send().await.unwrap(),
    ];
    for res in answers {
        let (status, text) = (res.status().as_u16(), res.text().await.unwrap());
        assert_eq!(status, 500, "{text}");
        for internal in [
            "version_summaries",
            "pending_summaries",
            "no such table",
            "sqlite",
            "SELECT",
            "INSERT",
            "sqlx",
            "error returned from database",
        ] {
            assert!(!text.to_lowercase().contains(&internal.to_lowercase()), "a 5xx says {internal:?}: {text}");
        }
        assert!(text.contains("internal error") || text.contains("Internal error"), "{text}");
    }
    drop(server);
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("no such table: version_summaries"), "the log has the detail: {logged}");
}

/// Logs in through the form from `peer` with `token` and `next`, reusing one login form.
struct LoginForm {
    cookie: String,
    csrf: String,
}

impl LoginForm {
    async fn open(app: &TestApp) -> LoginForm {
        let form = get(app, "/login", "").await;
        LoginForm { cookie: cookie_pair(&form, "sw_login_csrf").unwrap(), csrf: hidden(&form.text, "csrf") }
    }

    async fn post(&self, app: &TestApp, token: &str, next: &str, peer: &str, headers: &[(&str, &str)]) -> Page {
        let body = query(&[("token", token), ("csrf", &self.csrf), ("next", next)]);
        let mut req = Request::post("/login")
            .header(header::COOKIE, &self.cookie)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let mut req = req.body(Body::from(body)).unwrap();
        req.extensions_mut().insert(ConnectInfo(peer.parse::<SocketAddr>().unwrap()));
        send(app, req).await
    }
}

#[tokio::test]
async fn login_sends_people_only_to_paths_on_this_server() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let token = app.editor_token.clone();
        let form = LoginForm::open(&app).await;
        let elsewhere = [
            "/\t/evil.example",
            "/\t\\evil.example",
            "/\x7f",
            "//evil.example",
            "/\\evil.example",
            "/%09/evil.example",
            "/%2F/evil.example",
            "/%5Cevil.example",
            "/ /evil.example",
            "/\n/evil.example",
            "https://evil.example/",
            "evil.example",
            "/regressions\r\nSet-Cookie: x=1",
        ];
        for next in elsewhere {
            let page = form.post(&app, &token, next, "192.0.2.1:1", &[]).await;
            assert_eq!(page.status, StatusCode::SEE_OTHER, "next={next:?}: {}", page.text);
            assert_eq!(page.location.as_deref(), Some("/regressions"), "next={next:?}");
            assert!(cookie_pair(&page, "sw_session").is_some());
            let shown = get(&app, &format!("/login?{}", query(&[("next", next)])), "").await;
            assert_eq!(hidden(&shown.text, "next"), "/regressions", "the login form keeps next={next:?}");
        }
        for next in ["/series/workload-0/gcc-glibc?v=1.0&v=2.0", "/regressions/3", "/", "/compare?a=x%40y"] {
            let page = form.post(&app, &token, next, "192.0.2.1:1", &[]).await;
            assert_eq!(page.location.as_deref(), Some(next), "a path on this server is kept");
        }
    })
    .await;
}

#[tokio::test]
async fn with_login_to_read_every_page_and_read_api_needs_a_session_or_a_token() {
    on_both_backends(|db| async move {
        let mut config = Config::default();
        config.auth.require_login_to_read = true;
        let app = TestApp::with_config(db, config).await;
        for (version, slope) in [("0.15.0", 1.0), ("0.16.0", 2.0)] {
            let (status, body) = app
                .submit(&RunShape::new("zig-cc-musl", version).slope(slope).workloads(3).sizes(8).samples(5).json())
                .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        let id = app.db.store.regressions(None).await.unwrap()[0].0.id;
        let (_, runs) = app.get_with("/api/v1/runs", Some(&app.ingest_token.clone())).await;
        let run = runs["runs"][0]["id"].as_str().expect("a run is listed to a token").to_string();
        let series = "/series/workload-0/zig-cc-musl";
        let compare = "/compare?workload=workload-0&a=zig-cc-musl%400.15.0&b=zig-cc-musl%400.16.0";
        let pages = [
            "/".to_string(),
            series.into(),
            format!("{series}/slope.svg"),
            format!("{series}/loglog.svg"),
            format!("{series}/data.csv"),
            format!("{series}/data.json"),
            compare.into(),
            compare.replace("/compare?", "/compare/chart.svg?"),
            compare.replace("/compare?", "/compare/data.csv?"),
            compare.replace("/compare?", "/compare/data.json?"),
            format!("/runs/{run}"),
            "/toolchains".into(),
            "/hosts".into(),
            "/regressions".into(),
            format!("/regressions/{id}"),
            format!("/regressions/{id}/postmortem.md"),
            "/deliveries".into(),
        ];
        let session = cookie_pair(&login(&app, &app.editor_token.clone()).await, "sw_session").unwrap();
        for page in &pages {
            let anonymous = get(&app, page, "").await;
            assert_eq!(anonymous.status, StatusCode::SEE_OTHER, "{page} without a login: {}", anonymous.text);
            let to = anonymous.location.unwrap_or_default();
            assert!(to.starts_with("/login?next="), "{page} sends to {to}");
            assert!(!anonymous.text.contains("zig-cc-musl"), "{page} shows data without a login");
            assert_eq!(get(&app, page, &session).await.status, StatusCode::OK, "{page} with a session");
        }
        let apis = [
            "/api/v1/runs".to_string(),
            format!("/api/v1/runs/{run}"),
            "/api/v1/workloads".into(),
            "/api/v1/toolchains".into(),
            "/api/v1/hosts".into(),
            "/api/v1/series?workload=workload-0&toolchain=zig-cc-musl".into(),
            "/api/v1/regressions".into(),
            format!("/api/v1/regressions/{id}"),
        ];
        let wrong = format!("sw_{}", "ab".repeat(32));
        for api in &apis {
            let (status, body) = app.get(api).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{api} without a token: {body}");
            assert_eq!(body["error"]["code"], "unauthorized", "{api}");
            assert_eq!(app.get_with(api, Some(&wrong)).await.0, StatusCode::UNAUTHORIZED, "{api}, unknown token");
            for token in [&app.ingest_token, &app.editor_token, &app.admin_token] {
                let (status, body) = app.get_with(api, Some(token)).await;
                assert_eq!(status, StatusCode::OK, "{api} with a token of any scope: {body}");
            }
            assert_eq!(get(&app, api, &session).await.status, StatusCode::OK, "{api} with a session");
        }
        // Probes, the login, the stylesheet, this document and the metrics stay open; the metrics
        // name routes, never workloads, toolchains or hosts.
        for open in ["/healthz", "/readyz", "/login", "/static/style.css", "/api/v1/openapi.json", "/metrics"] {
            assert_eq!(get(&app, open, "").await.status, StatusCode::OK, "{open} stays open");
        }
        let metrics = get(&app, "/metrics", "").await.text;
        assert!(!metrics.contains("zig-cc-musl") && !metrics.contains("build-01"), "{metrics}");
    })
    .await;
}

#[tokio::test]
async fn logging_out_ends_the_session_on_the_server() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let id = seed_regression(&app).await;
        let session = cookie_pair(&login(&app, &app.editor_token.clone()).await, "sw_session").unwrap();
        let other = cookie_pair(&login(&app, &app.editor_token.clone()).await, "sw_session").unwrap();
        let page = get(&app, &format!("/regressions/{id}"), &session).await;
        let csrf = hidden(&page.text, "csrf");
        assert_eq!(post_form(&app, "/logout", &session, &[("csrf", &csrf)]).await.status, StatusCode::SEE_OTHER);
        // A copy of the cookie kept after logging out (another tab, a stolen cookie) is worth nothing.
        let after = get(&app, "/regressions", &session).await;
        assert!(!after.text.contains("Logged in as"), "the session still works after logging out");
        let note =
            post_form(&app, &format!("/regressions/{id}/notes"), &session, &[("csrf", &csrf), ("body", "x")]).await;
        assert_eq!(note.status, StatusCode::UNAUTHORIZED);
        assert!(get(&app, "/regressions", &other).await.text.contains("Logged in as"), "other sessions go on");
    })
    .await;
}

#[tokio::test]
async fn the_session_key_lives_in_a_private_file_beside_the_sqlite_database_not_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("sw.db");
    let url = format!("sqlite://{}", db_path.display());
    cli(&["migrate"], &url);
    let editor = create_token(&url, "alice", "editor");
    let log = dir.path().join("server.log");
    let login_once = |url: String| async move {
        let c = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        let form = c.get(format!("{url}/login")).send().await.unwrap();
        let cookie = form.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_string();
        let csrf = hidden(&form.text().await.unwrap(), "csrf");
        let res = c
            .post(format!("{url}/login"))
            .header("cookie", &cookie)
            .form(&[("token", editor.as_str()), ("csrf", csrf.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 303);
        res.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_string()
    };
    let logged_in = |url: String, session: String| async move {
        let page = reqwest::Client::new().get(format!("{url}/regressions")).header("cookie", session).send().await;
        page.unwrap().text().await.unwrap().contains("Logged in as alice")
    };

    let server = Server::start(&url, &free_addr(), None, &log);
    let session = login_once(server.url()).await;
    assert!(logged_in(server.url(), session.clone()).await);
    drop(server);

    let key_file = dir.path().join("sw.db.session-key");
    let mode = std::fs::metadata(&key_file).expect("a key file is made beside the database").permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "only the server's user may read the key");
    let db = sqlx::SqlitePool::connect(&url).await.unwrap();
    let key = std::fs::read_to_string(&key_file).unwrap();
    let settings: Vec<(String, String)> =
        sqlx::query_as("SELECT key, value FROM settings").fetch_all(&db).await.unwrap();
    assert!(
        settings.iter().all(|(k, v)| !k.contains("session") && !v.contains(key.trim())),
        "the database holds the session key: {settings:?}"
    );
    db.close().await;

    // The key survives a restart, and so do sessions; a new key ends them.
    let server = Server::start(&url, &free_addr(), None, &log);
    assert!(logged_in(server.url(), session.clone()).await, "a restart keeps sessions");
    drop(server);
    std::fs::remove_file(&key_file).unwrap();
    let server = Server::start(&url, &free_addr(), None, &log);
    assert!(!logged_in(server.url(), session).await, "a new key ends every session");
}

#[tokio::test]
async fn failed_logins_are_limited_per_client_address() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let editor = app.editor_token.clone();
        let wrong = format!("sw_{}", "ab".repeat(32));
        let form = LoginForm::open(&app).await;
        for attempt in 1..=10 {
            let page = form.post(&app, &wrong, "/", "198.51.100.7:40000", &[]).await;
            assert_eq!(page.status, StatusCode::UNAUTHORIZED, "failed login #{attempt}");
        }
        for token in [&wrong, &editor] {
            let limited = form.post(&app, token, "/", "198.51.100.7:40001", &[]).await;
            assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS, "past 10 failures: {}", limited.text);
            assert!(cookie_pair(&limited, "sw_session").is_none(), "no session past the limit, even for a good token");
            let retry: u64 = limited.retry_after.expect("Retry-After").parse().unwrap();
            assert!((1..=300).contains(&retry), "Retry-After {retry}");
        }
        // Another address is not held back; a forwarded address from an untrusted peer is ignored.
        assert_eq!(form.post(&app, &editor, "/", "198.51.100.8:1", &[]).await.status, StatusCode::SEE_OTHER);
        let spoofed = form.post(&app, &editor, "/", "198.51.100.7:2", &[("x-forwarded-for", "203.0.113.50")]).await;
        assert_eq!(spoofed.status, StatusCode::TOO_MANY_REQUESTS, "X-Forwarded-For from any peer is not trusted");
    })
    .await;
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_limit_holds_per_forwarded_client() {
    on_both_backends(|db| async move {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("slopewatch.toml");
        std::fs::write(&file, "[server]\ntrusted_proxies = [\"10.0.0.0/8\", \"127.0.0.1\"]\n").unwrap();
        let app = TestApp::with_config(db, Config::from_file(Some(&file)).unwrap()).await;
        let editor = app.editor_token.clone();
        let wrong = format!("sw_{}", "ab".repeat(32));
        let form = LoginForm::open(&app).await;
        // A client behind two of our proxies; what it claims itself (the left-most entry) is ignored.
        for attempt in 0..10 {
            let xff = format!("192.0.2.{attempt}, 203.0.113.9, 10.1.2.3");
            let page = form.post(&app, &wrong, "/", "127.0.0.1:5000", &[("x-forwarded-for", &xff)]).await;
            assert_eq!(page.status, StatusCode::UNAUTHORIZED);
        }
        let same = [("x-forwarded-for", "203.0.113.9")];
        assert_eq!(form.post(&app, &editor, "/", "10.9.9.9:1", &same).await.status, StatusCode::TOO_MANY_REQUESTS);
        let other = [("x-forwarded-for", "203.0.113.10")];
        assert_eq!(form.post(&app, &editor, "/", "127.0.0.1:5000", &other).await.status, StatusCode::SEE_OTHER);
    })
    .await;
}

#[tokio::test]
async fn cookies_are_secure_and_hsts_sent_over_tls_as_public_url_or_a_trusted_proxy_says() {
    use tower::ServiceExt;
    // The login form from `peer`, with `X-Forwarded-Proto: proto` where given: whether its cookie
    // is `Secure`, and whether the answer carries HSTS.
    async fn login_form(app: &TestApp, peer: &str, proto: Option<&str>) -> (bool, bool) {
        let mut req = Request::get("/login");
        if let Some(p) = proto {
            req = req.header("x-forwarded-proto", p);
        }
        let mut req = req.body(Body::empty()).unwrap();
        req.extensions_mut().insert(ConnectInfo(peer.parse::<SocketAddr>().unwrap()));
        let res = app.router.clone().oneshot(req).await.unwrap();
        let cookie = res.headers().get(header::SET_COOKIE).unwrap().to_str().unwrap().to_string();
        (cookie.ends_with("; Secure"), res.headers().contains_key(header::STRICT_TRANSPORT_SECURITY))
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let behind = Config { trusted_proxies: "10.0.0.0/8".parse().unwrap(), ..Config::default() };
    let app = TestApp::with_config(db, behind).await;
    assert_eq!(login_form(&app, "10.1.2.3:40000", Some("https")).await, (true, true), "a trusted proxy's https");
    assert_eq!(login_form(&app, "10.1.2.3:40000", Some("http")).await, (false, false));
    assert_eq!(login_form(&app, "192.0.2.7:40000", Some("https")).await, (false, false), "an untrusted header");
    assert_eq!(login_form(&app, "10.1.2.3:40000", None).await, (false, false));
    let db = TestDb::new(Backend::Sqlite).await;
    let public = Config { public_url: Some("https://slopewatch.example".into()), ..Config::default() };
    let app = TestApp::with_config(db, public).await;
    assert_eq!(login_form(&app, "192.0.2.7:40000", None).await, (true, true), "public_url says https");
}
