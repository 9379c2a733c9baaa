//! The alert rules applied to a version a summary pass just updated: reads the lineage's open
//! regressions (and, when they could matter, its history), asks `alerts::evaluate` what opens,
//! joins and resolves, and writes the regressions, their timelines and the webhook deliveries
//! that announce them, in the pass's transaction.

use super::{Settings, SummaryRow};
use crate::alerts::evaluate::{self, Current, Plan, VersionFit};
use crate::alerts::events::{self, Scene};
use crate::model::{SizeMedian, Slope};
use crate::store::{MemberFix, NewDelivery, NewMember, NewRegression, Tx};
use std::collections::HashMap;
use time::OffsetDateTime;

/// A version whose summaries a pass just wrote.
pub(super) struct Judged<'a> {
    pub lineage: &'a str,
    pub version: &'a str,
    /// The new summaries of the workloads the pass took runs of.
    pub rows: &'a [SummaryRow],
    /// Those workloads' ids by name.
    pub workload_ids: &'a HashMap<String, i64>,
    /// The time of what the rules create: the latest arrival among the runs taken in.
    pub now: OffsetDateTime,
}

/// A workload at the judged version, as the rules see it, with when the version first ran it.
struct Measured {
    current: Current,
    first_run: OffsetDateTime,
}

impl Judged<'_> {
    fn measured(&self) -> Vec<Measured> {
        self.rows
            .iter()
            .filter_map(|row| {
                let name = self.workload_ids.iter().find(|(_, &id)| id == row.workload_id)?.0;
                let s = &row.summary;
                let sizes =
                    s.sizes.iter().map(|&(size, median_ns, runs)| SizeMedian { size, median_ns, runs }).collect();
                let fit =
                    VersionFit::new(Slope { slope: s.slope, ci_low: s.ci_low, ci_high: s.ci_high, r2: s.r2 }, sizes);
                let current = Current { workload_id: row.workload_id, workload: name.clone(), fit };
                Some(Measured { current, first_run: row.first_seen })
            })
            .collect()
    }
}

/// Applies the alert rules to one judged version and writes what they decide.
pub(super) async fn judge(tx: &mut Tx<'_>, judged: &Judged<'_>, settings: &Settings) -> Result<(), sqlx::Error> {
    let (lineage, version, now) = (judged.lineage, judged.version, judged.now);
    // Versions of one lineage are judged one at a time, so a fix never misses the regression a
    // concurrent pass is opening.
    tx.lock_lineage(lineage).await?;
    let members = tx.lineage_members(lineage, version).await?;
    let measured = judged.measured();
    let current: Vec<Current> = measured.iter().map(|m| m.current.clone()).collect();
    let rules = &settings.alerts.rules;
    if !evaluate::needs_history(rules, version, &current, &members) {
        return Ok(());
    }
    let ids: Vec<i64> = current.iter().map(|c| c.workload_id).collect();
    let history = tx.lineage_history(lineage, &ids).await?;
    let plan = evaluate::plan(rules, version, &current, &members, &history);

    let name = |id: i64| current.iter().find(|c| c.workload_id == id).map_or("", |c| c.workload.as_str());
    let first_run = |id: i64| measured.iter().find(|m| m.current.workload_id == id).map_or(now, |m| m.first_run);
    let scene = Scene { lineage, version, rules, public_url: settings.public_url.as_deref() };
    let mut announced = Vec::new();

    // Crossings open a regression at this version, join the one already there, or join an earlier
    // open one they were unsure at (`Crossing::into`).
    let opened = if plan.opens() {
        let first_run_at =
            plan.crossings.iter().filter(|c| c.into.is_none()).map(|c| first_run(c.workload_id)).min().unwrap_or(now);
        let regression = NewRegression {
            lineage,
            version,
            previous_version: plan.last_good_version(),
            first_run_at,
            opened_at: now,
        };
        let id = tx.open_regression(&regression).await?;
        tx.append_event(id, first_run_at, "first_run", &format!("First run of {version}")).await?;
        announced.push(events::opened(&scene, id, &plan, name));
        Some(id)
    } else {
        None
    };
    record_crossings(tx, &plan, opened, &scene, name, now).await?;

    let mut ratio_sizes: HashMap<i64, HashMap<String, i64>> = HashMap::new();
    for f in &plan.fixes {
        let ratio = f.bad.as_ref().and_then(|b| evaluate::time_ratio(&f.fit.sizes, &b.sizes));
        let workload = name(f.workload_id);
        if let Some((size, _)) = ratio {
            ratio_sizes.entry(f.regression_id).or_default().insert(workload.to_string(), size as i64);
        }
        let fix = MemberFix {
            regression_id: f.regression_id,
            workload_id: f.workload_id,
            version,
            fit: f.fit.slope_fit(),
            time_ratio: ratio.map(|r| r.1),
            first_run_at: first_run(f.workload_id),
        };
        tx.record_fix(&fix).await?;
        let detail = format!(
            "{workload} back under {:.2} at {version}: slope {:.2}",
            rules.threshold_for(workload),
            f.fit.slope
        );
        tx.append_event(f.regression_id, now, "fix_seen", &detail).await?;
    }
    for &id in &plan.resolved {
        tx.resolve_regression(id, version, now).await?;
        tx.append_event(id, now, "resolved", &format!("Resolved by {version}")).await?;
        let members = tx.resolved_members(id).await?;
        let sizes = ratio_sizes.remove(&id).unwrap_or_default();
        announced.push(events::resolved(&scene, id, members, &sizes));
    }

    let deliveries: Vec<NewDelivery> = announced
        .iter()
        .flat_map(|event| {
            settings.alerts.webhooks.iter().map(move |target| NewDelivery {
                regression_id: event.regression_id,
                event: event.event,
                target: &target.name,
                body: event.render(target.format),
            })
        })
        .collect();
    tx.enqueue_deliveries(&deliveries, now).await
}

/// Adds each crossing workload to the regression it opens or joins, with a timeline entry, and
/// brings those regressions' magnitudes up to date.
async fn record_crossings<'n>(
    tx: &mut Tx<'_>,
    plan: &Plan,
    opened: Option<i64>,
    scene: &Scene<'_>,
    name: impl Fn(i64) -> &'n str,
    now: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    let mut touched: Vec<i64> = Vec::new();
    for c in &plan.crossings {
        let Some(regression_id) = c.into.or(plan.join).or(opened) else { continue };
        let late = Some(regression_id) != opened;
        let member = NewMember {
            regression_id,
            workload_id: c.workload_id,
            fit: c.fit.slope_fit(),
            previous_slope: c.previous.as_ref().map(|(_, p)| p.slope),
            time_ratio: c.previous.as_ref().and_then(|(_, p)| evaluate::time_ratio(&c.fit.sizes, &p.sizes)),
            joined_at: now,
            joined_late: late,
        };
        tx.add_regression_member(&member).await?;
        let workload = name(c.workload_id);
        let (kind, verb) = if late { ("joined", "joined") } else { ("opened", "crossed") };
        let detail = format!(
            "{workload} {verb} at {}: slope {:.2} (95% CI {:.2}–{:.2}, threshold {:.2})",
            scene.version,
            c.fit.slope,
            c.fit.ci_low,
            c.fit.ci_high,
            scene.rules.threshold_for(workload)
        );
        tx.append_event(regression_id, now, kind, &detail).await?;
        if !touched.contains(&regression_id) {
            touched.push(regression_id);
        }
    }
    for regression_id in touched {
        tx.update_magnitude(regression_id).await?;
    }
    Ok(())
}
