//! Regressions do not depend on the order versions arrive in: a lineage's regressions (first bad
//! and last good version, fixed-in version, workloads) are those in-order arrival gives, each
//! announced once, with `regression.updated` when a version measured late moved it. On Postgres
//! and on SQLite.

use crate::helpers::webhooks::{assert_signed, body_json, config, wait_for, Receiver};
use crate::helpers::{on_both_backends, TestApp};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use slopewatch::config::WebhookFormat;
use std::time::Duration;
use tokio::sync::watch;

/// What a workload does at a version.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    Linear,
    Quadratic,
    /// Measured at too few sizes for the rules to call it either way.
    Unsure,
}

/// A run of one version: every workload with its shape.
fn run(lineage: &str, version: &str, workloads: &[(String, Shape)]) -> Value {
    let workloads: Vec<Value> = workloads
        .iter()
        .map(|(name, shape)| {
            let (slope, sizes) = match shape {
                Shape::Linear => (1.0, 6),
                Shape::Quadratic => (2.0, 6),
                Shape::Unsure => (2.0, 3),
            };
            let measurements = crate::builders::measurements(65536, sizes, |n| 0.5 * n.powf(slope), &[1.0, 1.01, 1.02]);
            json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:00", "measurements": measurements})
        })
        .collect();
    crate::builders::run_of(lineage, version, "build-01", workloads)
}

/// A lineage's history: versions in order, and each workload's shape at each version.
#[derive(Debug, Clone)]
struct History {
    versions: Vec<String>,
    shapes: Vec<(String, Vec<Shape>)>,
}

impl History {
    fn run_of(&self, lineage: &str, at: usize) -> Value {
        let workloads: Vec<(String, Shape)> = self.shapes.iter().map(|(w, s)| (w.clone(), s[at])).collect();
        run(lineage, &self.versions[at], &workloads)
    }

    /// Linear throughout, quadratic from some version, fixed later, bad again later: each
    /// workload flips between good and bad along the versions, with an unsure version here and
    /// there.
    fn random(rng: &mut rand::rngs::StdRng) -> History {
        let n = rng.gen_range(4..=7);
        let versions = (0..n).map(|i| format!("1.{}.0", i + 2)).collect();
        let shapes = (0..rng.gen_range(1..=3))
            .map(|w| {
                let mut bad = rng.gen_bool(0.15);
                let shapes = (0..n)
                    .map(|_| {
                        if rng.gen_bool(0.35) {
                            bad = !bad;
                        }
                        match (rng.gen_bool(0.12), bad) {
                            (true, _) => Shape::Unsure,
                            (false, true) => Shape::Quadratic,
                            (false, false) => Shape::Linear,
                        }
                    })
                    .collect();
                (format!("scan-{w}"), shapes)
            })
            .collect();
        History { versions, shapes }
    }
}

/// A regression as the property compares it: first bad, last good, fixed in, workloads.
type Outcome = (String, Option<String>, Option<String>, Vec<String>);

/// The lineage's regressions, and each one's announcements by event.
async fn outcome(app: &TestApp, lineage: &str) -> Vec<(Outcome, Vec<String>, usize)> {
    let mut found = Vec::new();
    for (r, workloads) in app.db.store.regressions(None).await.unwrap() {
        if r.lineage != lineage {
            continue;
        }
        let mut names: Vec<String> = workloads.iter().map(|w| w.workload.clone()).collect();
        names.sort();
        let detail = app.db.store.regression(r.id).await.unwrap().unwrap();
        let mut events: Vec<String> = detail.deliveries.iter().map(|d| d.delivery.event.clone()).collect();
        events.sort();
        let moves = detail.events.iter().filter(|e| e.kind == "moved").count();
        found.push(((r.version, r.previous_version, r.fixed_version, names), events, moves));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

#[tokio::test]
async fn regressions_are_those_of_in_order_arrival_whatever_the_order_and_each_is_announced_once() {
    let seed: u64 = std::env::var("SLOPEWATCH_ORDER_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(20261130);
    let scenarios: usize = std::env::var("SLOPEWATCH_ORDER_SCENARIOS").ok().and_then(|s| s.parse().ok()).unwrap_or(14);
    eprintln!("seed {seed}, {scenarios} lineages (SLOPEWATCH_ORDER_SEED and SLOPEWATCH_ORDER_SCENARIOS change them)");
    on_both_backends(|db| async move {
        // Deliveries stay in the outbox (nothing sends them), where the test counts them.
        let app = TestApp::with_config(db, config(&Receiver::reserve(), &[WebhookFormat::Json])).await;
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let (mut moved, mut regressions) = (0, 0);
        for scenario in 0..scenarios {
            let history = History::random(&mut rng);
            let ordered = format!("s{scenario}-in-order");
            for at in 0..history.versions.len() {
                let (status, body) = app.submit(&history.run_of(&ordered, at)).await;
                assert_eq!(status, 201, "{body}");
            }
            let expected = outcome(&app, &ordered).await;
            for (o, events, moves) in &expected {
                // In order, a first version already over is a finding, announced as one.
                let kind = if o.1.is_some() { "regression" } else { "finding" };
                let count = |event: &str| events.iter().filter(|e| **e == format!("{kind}.{event}")).count();
                let (opened, resolved) = (count("opened"), count("resolved"));
                assert_eq!(opened + resolved, events.len(), "only {kind} events: {history:?}: {o:?} {events:?}");
                assert_eq!((opened, resolved, *moves), (1, o.2.is_some() as usize, 0), "{history:?}: {o:?} {events:?}");
            }
            regressions += expected.len();
            for k in 0..3 {
                let lineage = format!("s{scenario}-order-{k}");
                let mut order: Vec<usize> = (0..history.versions.len()).collect();
                order.shuffle(&mut rng);
                for &at in &order {
                    let (status, body) = app.submit(&history.run_of(&lineage, at)).await;
                    assert_eq!(status, 201, "{body}");
                }
                let got = outcome(&app, &lineage).await;
                let arrival: Vec<&str> = order.iter().map(|&i| history.versions[i].as_str()).collect();
                let outcomes = |x: &[(Outcome, Vec<String>, usize)]| x.iter().map(|e| e.0.clone()).collect::<Vec<_>>();
                assert_eq!(
                    outcomes(&got),
                    outcomes(&expected),
                    "arrival {arrival:?} of {history:?} (seed {seed}, scenario {scenario})"
                );
                for (o, events, moves) in &got {
                    let count = |name: &str| events.iter().filter(|e| *e == name).count();
                    // Opened once as what it was when it arrived. A finding that a backfilled
                    // version gave a good end became a regression, announced once as such.
                    let (finding, regression) = (count("finding.opened"), count("regression.opened"));
                    let became = finding == 1 && regression == 1;
                    assert!(finding <= 1 && regression <= 1 && finding + regression >= 1, "{o:?} {events:?}");
                    if o.1.is_some() {
                        assert_eq!(regression, 1, "a regression is announced: {o:?} {events:?}, arrival {arrival:?}");
                    }
                    // Resolved once it is fixed; again only after a late workload reopened it.
                    let resolved = count("regression.resolved") + count("finding.resolved");
                    let fixed = o.2.is_some() as usize;
                    assert!(resolved >= fixed, "resolved when fixed: {o:?} {events:?}");
                    assert!(resolved <= fixed || count("regression.updated") > 0 || became, "{o:?} {events:?}");
                    assert_eq!(
                        count("regression.updated") > 0 || became,
                        *moves > 0,
                        "announced exactly when the range moved: {o:?} {events:?}, arrival {arrival:?}"
                    );
                    moved += (*moves > 0) as usize;
                }
            }
        }
        // A regression merged into another keeps its page, which says where it went.
        let newest = app.db.store.regressions(None).await.unwrap().iter().map(|(r, _)| r.id).max().unwrap_or(0);
        let mut merged = 0;
        for id in 1..=newest {
            let Some(into) = app.db.store.regression(id).await.unwrap().and_then(|d| d.regression.merged_into) else {
                continue;
            };
            merged += 1;
            let (status, page) = app.get(&format!("/regressions/{id}")).await;
            assert_eq!(status, 200);
            let page = page.as_str().unwrap_or_default().to_string();
            assert!(page.contains(&format!("Merged into <a href=\"/regressions/{into}\">")), "{page}");
        }
        eprintln!("{regressions} regressions in order; {moved} of their reorderings moved a range; {merged} merged");
        assert!(regressions >= 5 && moved >= 5, "the scenarios exercise the rule");
    })
    .await;
}

#[tokio::test]
async fn a_backfilled_release_moves_an_announced_regression_once_signed_in_json_and_slack() {
    on_both_backends(|db| async move {
        let receiver = Receiver::up().await;
        let app = TestApp::with_config(db, config(&receiver, &[WebhookFormat::Json, WebhookFormat::Slack])).await;
        let (stop, stopped) = watch::channel(false);
        let settings = config(&receiver, &[WebhookFormat::Json, WebhookFormat::Slack]).alerts;
        tokio::spawn(slopewatch::webhooks::sender::run(app.db.store.clone(), settings, app.metrics.clone(), stopped));
        let strchr = |shape| vec![("strchr-scan".to_string(), shape)];
        let post = |version: &'static str, shape| {
            let body = run("zig-cc-musl", version, &strchr(shape));
            let app = &app;
            async move {
                let (status, body) = app.submit(&body).await;
                assert_eq!(status, 201, "{body}");
            }
        };
        // Today's release first, then the backfill, newest first.
        post("0.17.1", Shape::Quadratic).await;
        post("0.13.0", Shape::Linear).await;
        post("0.16.0", Shape::Quadratic).await;
        post("0.15.2", Shape::Linear).await;
        post("0.14.0", Shape::Linear).await;

        let regressions = app.db.store.regressions(None).await.unwrap();
        assert_eq!(regressions.len(), 1, "{regressions:?}");
        let r = &regressions[0].0;
        assert_eq!((r.version.as_str(), r.previous_version.as_deref()), ("0.16.0", Some("0.15.2")));
        let detail = app.db.store.regression(r.id).await.unwrap().unwrap();
        let moves: Vec<&str> = detail.events.iter().filter(|e| e.kind == "moved").map(|e| e.detail.as_str()).collect();
        assert_eq!(
            moves,
            [
                "Last good moved from none to 0.13.0 when 0.13.0 was measured",
                "First bad moved from 0.17.1 to 0.16.0 when 0.16.0 was measured",
                "Last good moved from 0.13.0 to 0.15.2 when 0.15.2 was measured",
            ]
        );
        let member = &detail.workloads[0];
        assert!((member.slope.unwrap() - 2.0).abs() < 0.05 && (member.previous_slope.unwrap() - 1.0).abs() < 0.05);

        // A finding, then three moves, each announced once per target: the first gave it a good
        // end (announced as the regression opening), the other two as updates.
        wait_for(Duration::from_secs(20), "the announcements", || receiver.delivered().len() >= 8).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let seen = receiver.delivered();
        assert_eq!(seen.len(), 8, "{seen:?}");
        for r in &seen {
            assert_signed(r);
        }
        let json: Vec<Value> = seen.iter().map(body_json).filter(|b| b.get("event").is_some()).collect();
        let events: Vec<&str> = json.iter().map(|b| b["event"].as_str().unwrap()).collect();
        // 0.17.1 arrived first and alone: a finding. 0.13.0 gave it a good end: a regression.
        assert_eq!(events.iter().filter(|e| **e == "finding.opened").count(), 1, "{events:?}");
        assert_eq!(events.iter().filter(|e| **e == "regression.opened").count(), 1, "{events:?}");
        assert_eq!(events.iter().filter(|e| **e == "regression.updated").count(), 2, "{events:?}");
        let first_bad = json
            .iter()
            .find(|b| b["changes"].as_array().is_some_and(|c| c.iter().any(|c| c["field"] == "version")))
            .expect("the first bad version's move is announced");
        assert_eq!(first_bad["changes"], json!([{"field": "version", "from": "0.17.1", "to": "0.16.0"}]));
        assert_eq!(
            (first_bad["version"].as_str(), first_bad["previous_version"].as_str()),
            (Some("0.16.0"), Some("0.13.0"))
        );
        let slack: Vec<String> =
            seen.iter().map(body_json).filter_map(|b| b["text"].as_str().map(str::to_string)).collect();
        assert!(slack.iter().any(|t| t.contains("updated") && t.contains("first bad 0.17.1 → 0.16.0")), "{slack:?}");

        // A good version measured inside the bad range ends the regression there, and the bad
        // version after it is a regression of its own.
        post("0.18.0", Shape::Linear).await;
        post("0.16.5", Shape::Linear).await;
        let mut regressions = app.db.store.regressions(None).await.unwrap();
        regressions.sort_by_key(|r| r.0.id);
        let ranges: Vec<(&str, Option<&str>, Option<&str>, &str)> = regressions
            .iter()
            .map(|(r, _)| {
                (r.version.as_str(), r.previous_version.as_deref(), r.fixed_version.as_deref(), r.status.as_str())
            })
            .collect();
        assert_eq!(
            ranges,
            [("0.16.0", Some("0.15.2"), Some("0.16.5"), "fixed"), ("0.17.1", Some("0.16.5"), Some("0.18.0"), "fixed")]
        );
        let _ = stop.send(true);
    })
    .await;
}

#[tokio::test]
async fn a_regression_that_a_late_unsure_version_shows_to_be_part_of_another_is_merged_into_it() {
    on_both_backends(|db| async move {
        let app = TestApp::with_config(db, config(&Receiver::reserve(), &[WebhookFormat::Json])).await;
        use Shape::{Linear as L, Quadratic as Q, Unsure as U};
        let history = History {
            versions: (2..=8).map(|i| format!("1.{i}.0")).collect(),
            shapes: vec![("scan-0".into(), vec![Q, U, L, L, Q, L, L]), ("scan-1".into(), vec![U, Q, Q, L, L, L, L])],
        };
        // 1.4.0 first opens a regression of scan-1; 1.2.0 and 1.3.0 (scan-1 unsure at 1.2.0) later
        // show that scan-1 regressed at 1.3.0 with scan-0's regression of 1.2.0.
        for at in [2, 6, 5, 0, 4, 3, 1] {
            let (status, body) = app.submit(&history.run_of("zig-cc-musl", at)).await;
            assert_eq!(status, 201, "{body}");
        }
        let listed = outcome(&app, "zig-cc-musl").await;
        let listed: Vec<Outcome> = listed.into_iter().map(|o| o.0).collect();
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            listed,
            [
                ("1.2.0".into(), None, Some("1.5.0".into()), names(&["scan-0", "scan-1"])),
                ("1.6.0".into(), Some("1.5.0".into()), Some("1.7.0".into()), names(&["scan-0"])),
            ]
        );
        let survivor = app.db.store.regressions(None).await.unwrap().into_iter().find(|(r, _)| r.version == "1.2.0");
        let survivor = survivor.unwrap().0.id;
        let newest = app.db.store.regressions(None).await.unwrap().iter().map(|(r, _)| r.id).max().unwrap();
        let mut merged = Vec::new();
        for id in 1..=newest {
            if let Some(d) = app.db.store.regression(id).await.unwrap() {
                if d.regression.merged_into.is_some() {
                    merged.push(d);
                }
            }
        }
        assert_eq!(merged.len(), 1, "one regression merged");
        let m = &merged[0];
        assert_eq!(m.regression.merged_into, Some(survivor));
        assert!(m
            .events
            .iter()
            .any(|e| e.detail.starts_with(&format!("Merged into #{survivor} when 1.3.0 was measured"))));
        let updated = m.deliveries.iter().filter(|d| d.delivery.event == "regression.updated").count();
        // Each judgement that moved it (the merge last) announced it once, never more.
        let moves = m.events.iter().filter(|e| e.kind == "moved").count();
        assert!(updated >= 1 && updated <= moves, "{updated} updates for {moves} moves");
        let (status, page) = app.get(&format!("/regressions/{}", m.regression.id)).await;
        assert_eq!(status, 200);
        let page = page.as_str().unwrap_or_default().to_string();
        assert!(page.contains(&format!("Merged into <a href=\"/regressions/{survivor}\">")), "{page}");
        let (_, list) = app.get("/api/v1/regressions").await;
        assert!(
            !list.to_string().contains(&format!("\"id\":{}", m.regression.id)),
            "merged ones leave the list: {list}"
        );
    })
    .await;
}
