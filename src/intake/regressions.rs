//! A lineage's regressions brought in line with the alert rules, for a version a summary pass just
//! updated.
//!
//! When the version is the newest of its lineage and nothing in it could change a regression (see
//! `evaluate::needs_history`), nothing is read. Otherwise the lineage's summaries and regressions
//! are read, the rules replayed over them in version order (`rules::replay::derive`), and the
//! store brought in line with the result (`rules::replay::reconcile`): regressions opened,
//! moved, joined, fixed and resolved, with their timelines and the webhook deliveries that
//! announce them, in the pass's transaction. So the regressions of a lineage are those in-order
//! arrival gives, whatever order its versions arrive in.

use super::{PassSummary, Settings};
use crate::causes::{self, Member};
use crate::model::{workload_label, Reason, SizeMedian, Slope, Track};
use crate::profiles::{self, Traced};
use crate::rules::evaluate::{self, Current, Evidence, Outcomes, Verdict, VersionFit};
use crate::rules::replay::{
    self, Derived, DerivedFix, DerivedMember, MovedField, RegressionChange, TrackSummary, Update,
};
use crate::rules::timeline::Entry;
use crate::store::{NewMember, NewRegression, Tx};
use crate::webhooks;
use crate::webhooks::events::{self, Named, Scene};
use crate::webhooks::payload::{Event, Field, FieldChange, OPENED};
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::wire::{Contract, Metric, SizeUnit};
use std::collections::HashMap;
use time::OffsetDateTime;

/// Most artifacts a regression's webhook names; its page names up to a hundred.
const ARTIFACTS_ANNOUNCED: i64 = 20;

/// A version whose summaries a pass just wrote.
pub(super) struct Judged<'a> {
    pub at: &'a LineageVersion,
    /// The new summaries of the workloads the pass took runs of.
    pub rows: &'a [PassSummary],
    /// How the version's runs fared with each workload the pass took runs of, by workload id.
    pub outcomes: &'a [(i64, Outcomes)],
    /// Those workloads' names (one workload per name and metric), by id.
    pub workloads: &'a HashMap<i64, String>,
    /// The time of what the rules create: the latest arrival among the runs taken in.
    pub now: OffsetDateTime,
}

impl Judged<'_> {
    /// The judged tracks as the rules see them: each summary's slope (held to its workload's
    /// contract, in `contracts`, when it has one) and, for a count or a time with a control beside
    /// it, its cost; each workload's outcomes.
    fn current(&self, contracts: &HashMap<i64, Contract>) -> Vec<Current> {
        let name = |id: i64| self.workloads.get(&id).cloned();
        let mut current = Vec::new();
        for row in self.rows {
            let Some(workload) = name(row.workload_id) else { continue };
            let s = &row.summary;
            let sizes = s.sizes.iter().map(|&(size, median_ns, runs)| SizeMedian { size, median_ns, runs }).collect();
            let slope = Slope { slope: s.slope, ci_low: s.ci_low, ci_high: s.ci_high, r2: s.r2 };
            let fit = VersionFit::new(slope, sizes, s.complexity.clone())
                .held_to(contracts.get(&row.workload_id).map(|c| c.expected))
                .built(s.source_hash.clone(), s.build_hash.clone());
            let counted = row.metric.is_count();
            let beside = s.beside.as_ref().map(|b| {
                let sizes = b.sizes.iter().map(|&(size, median_ns, runs)| SizeMedian { size, median_ns, runs });
                (b.lineage.as_str(), sizes.collect())
            });
            if let Some(cost) = fit.clone().cost(counted, beside) {
                let evidence = Evidence::Cost(cost);
                current.push(Current { track: Track::cost(row.workload_id), workload: workload.clone(), evidence });
            }
            current.push(Current { track: Track::slope(row.workload_id), workload, evidence: Evidence::Slope(fit) });
        }
        current.extend(self.outcomes.iter().filter_map(|(id, o)| {
            Some(Current { track: Track::failure(*id), workload: name(*id)?, evidence: Evidence::Outcomes(o.clone()) })
        }));
        current
    }
}

/// Applies the alert rules to one judged version and writes what they decide.
pub(super) async fn judge(tx: &mut Tx<'_>, judged: &Judged<'_>, settings: &Settings) -> Result<(), sqlx::Error> {
    let (lineage, version) = (judged.at.lineage.as_str(), judged.at.version.as_str());
    // Versions of one lineage are judged one at a time, each seeing what the one before wrote.
    tx.lock_lineage(lineage).await?;
    let ids: Vec<i64> = judged.rows.iter().map(|r| r.workload_id).collect();
    let current = judged.current(&tx.workload_contracts(&ids).await?);
    if current.is_empty() {
        return Ok(());
    }
    let rules = &settings.alerts.rules;
    let members = super::lineage::members(tx, judged.at).await?;
    let before = super::lineage::costs_before(tx, judged.at, &current).await?;
    if !evaluate::needs_history(rules, version, &current, &members, &before) {
        // Nothing here changes what the rules decided at the versions before, so in version order
        // nothing changes: the version is the newest, or nothing is over its threshold in a
        // lineage without regressions (so nothing in it ever was).
        let over = current.iter().any(|c| rules.judge(&c.workload, &c.evidence) == Verdict::Over);
        if !over && !tx.lineage_has_regressions(lineage).await? {
            return Ok(());
        }
        // Any build of a later version, even one whose runs are not summarised yet or that did
        // not measure these workloads, sends the judgement through the replay below, which is
        // right whatever the versions hold; only the newest version is spared it.
        let versions = tx.lineage_versions(lineage).await?;
        if versions.iter().all(|v| slopewatch_core::version::compare(v, version).is_le()) {
            return Ok(());
        }
    }
    let summaries = super::lineage::summaries(tx, lineage).await?;
    let mut ids: Vec<i64> = summaries.iter().map(|s| s.history.track.workload_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let contracts = tx.workload_contracts(&ids).await?;
    let interests = tx.sizes_of_interest(&ids).await?;
    let stored = tx.lineage_regressions(lineage).await?;
    let derived = replay::derive(rules, &summaries);
    let changes = replay::reconcile(rules, &stored, &derived, &summaries);
    if changes.is_empty() {
        return Ok(());
    }
    let mut writer = Writer {
        tx,
        judged,
        settings,
        summaries: &summaries,
        contracts: &contracts,
        interests: &interests,
        announced: Vec::new(),
        ratio_sizes: HashMap::new(),
        opened: HashMap::new(),
    };
    for change in &changes {
        match change {
            RegressionChange::Update(u) => writer.update(u).await?,
            RegressionChange::Open(d) => writer.open(d).await?,
            RegressionChange::Fix { id, fixes, resolve } => {
                let fixes: Vec<(Track, &DerivedFix)> = fixes.iter().map(|(t, f)| (*t, f)).collect();
                writer.fix(*id, &fixes).await?;
                if let Some(at) = resolve {
                    writer.resolve(*id, at).await?;
                }
            }
            RegressionChange::Merge { id, into, into_stored } => writer.merge(*id, into, *into_stored).await?,
        }
    }
    writer.enqueue().await
}

/// Writes one judgement's changes and collects the events that announce them.
struct Writer<'t, 'c, 'j> {
    tx: &'t mut Tx<'c>,
    judged: &'j Judged<'j>,
    settings: &'j Settings,
    summaries: &'j [TrackSummary],
    /// The contracts of the lineage's workloads that have one, by workload id.
    contracts: &'j HashMap<i64, Contract>,
    /// The size of interest and unit of the lineage's workloads that have one, by workload id.
    interests: &'j HashMap<i64, (u64, SizeUnit)>,
    announced: Vec<Event>,
    /// By regression and workload id, the size at which each fix's ratio was measured.
    ratio_sizes: HashMap<i64, HashMap<i64, i64>>,
    /// The id of each derived regression opened so far, by its first bad version.
    opened: HashMap<String, i64>,
}

impl<'j> Writer<'_, '_, 'j> {
    /// The name, metric and size unit of a workload of the lineage.
    fn workload(&self, workload_id: i64) -> Named<'j> {
        let summaries: &'j [TrackSummary] = self.summaries;
        let found = summaries.iter().find(|s| s.history.track.workload_id == workload_id);
        found.map_or(Named { name: "", metric: Metric::Wall, unit: SizeUnit::Bytes }, |s| Named {
            name: s.workload.as_str(),
            metric: s.metric,
            unit: s.size_unit,
        })
    }

    /// The workload's name alone, for its threshold: a threshold holds under every metric.
    fn name(&self, workload_id: i64) -> &'j str {
        self.workload(workload_id).name
    }

    /// The workload as its regression's timeline names it: with its metric, unless wall time.
    fn label(&self, workload_id: i64) -> String {
        let w = self.workload(workload_id);
        workload_label(w.name, w.metric)
    }

    fn scene<'s>(&'s self, version: &'s str) -> Scene<'s> {
        Scene {
            lineage: &self.judged.at.lineage,
            version,
            rules: &self.settings.alerts.rules,
            public_url: self.settings.public_url.as_deref(),
            contracts: self.contracts,
            interests: self.interests,
        }
    }

    fn threshold(&self, workload: &str) -> f64 {
        self.settings.alerts.rules.threshold_for(workload)
    }

    /// What a track is held to: the slope threshold, or for a cost its factor.
    fn limit(&self, track: Track) -> f64 {
        let rules = &self.settings.alerts.rules;
        let name = self.name(track.workload_id);
        match track.reason {
            Reason::Cost => rules.cost_factor_for(name).unwrap_or(f64::INFINITY),
            Reason::Slope | Reason::Failure => self.threshold(name),
        }
    }

    /// The version whose runs the judgement took in.
    fn measured(&self) -> &'j str {
        let judged: &'j Judged<'j> = self.judged;
        &judged.at.version
    }

    /// Appends to a regression's timeline, at the judgement's time.
    async fn note(&mut self, id: i64, entry: &Entry<'_>) -> Result<(), sqlx::Error> {
        self.tx.append_event(id, self.judged.now, &entry.event()).await
    }

    /// A regression nobody has seen: opened, and resolved at once when its fix is measured too.
    async fn open(&mut self, d: &Derived) -> Result<(), sqlx::Error> {
        let now = self.judged.now;
        let regression = NewRegression {
            lineage: &self.judged.at.lineage,
            version: &d.version,
            previous_version: d.previous_version.clone(),
            first_run_at: d.first_run_at,
            opened_at: now,
        };
        let id = self.tx.open_regression(&regression).await?;
        self.opened.insert(d.version.clone(), id);
        self.tx.append_event(id, d.first_run_at, &Entry::FirstRun { version: &d.version }.event()).await?;
        for m in &d.members {
            self.add_member(id, m, m.joined_late).await?;
        }
        self.tx.update_magnitude(id).await?;
        let mut event = events::opened(&self.scene(&d.version), id, d, |w| self.workload(w));
        event.attribution = super::control::of(self.tx, id, self.settings).await?;
        self.where_cost_went(&mut event, d).await?;
        self.announced.push(event);
        let fixes: Vec<(Track, &DerivedFix)> =
            d.members.iter().filter_map(|m| m.fix.as_ref().map(|f| (m.track, f))).collect();
        self.fix(id, &fixes).await?;
        if let Some(at) = &d.fixed_version {
            self.resolve(id, at).await?;
        }
        Ok(())
    }

    /// Brings a stored regression in line with the derived one it matched.
    async fn update(&mut self, u: &Update<'_>) -> Result<(), sqlx::Error> {
        let (id, d, now, measured) = (u.id, u.derived, self.judged.now, self.measured());
        let range_moved = u.moved.iter().any(|m| m.field.moves_range());
        if range_moved {
            self.tx.move_regression(id, &d.version, d.previous_version.as_deref(), d.first_run_at).await?;
        }
        for moved in &u.moved {
            if moved.field == MovedField::MergedInto {
                self.tx.merge_regression(id, None).await?;
            }
            self.note(id, &Entry::Moved { moved, measured }).await?;
        }
        for &t in &u.removed {
            self.tx.remove_regression_member(id, t).await?;
            let workload = self.label(t.workload_id);
            self.note(id, &Entry::Left { workload: &workload, measured }).await?;
        }
        for m in &u.added {
            self.add_member(id, m, true).await?;
        }
        if range_moved {
            for m in u.kept() {
                self.tx.refresh_regression_member(&new_member(id, m, m.joined_late, now)).await?;
            }
        }
        if range_moved || !u.added.is_empty() || !u.removed.is_empty() {
            self.tx.update_magnitude(id).await?;
        }
        // Workloads that joined are announced only for a cause they brought.
        let joined = !u.added.is_empty() && !u.false_alarm;
        if u.announce || joined {
            let changes = events::changes(u, |w| self.workload(w));
            let opens = events::gives_a_good_end(&changes) && !self.tx.announced(id, OPENED).await?;
            let mut event = events::updated(&self.scene(&d.version), id, d, changes, opens, |w| self.workload(w));
            event.attribution = super::control::of(self.tx, id, self.settings).await?;
            let traced = self.where_cost_went(&mut event, d).await?;
            let brought = if joined { self.causes_brought(&event, &traced, &u.added) } else { None };
            let announce = u.announce || brought.is_some();
            event.changes.extend(brought);
            if announce {
                self.announced.push(event);
            }
        }
        for &t in &u.unfixed {
            self.tx.clear_fix(id, t).await?;
        }
        match u.moved.iter().find(|m| m.field == MovedField::FixedVersion).map(|m| m.to.as_deref()) {
            Some(Some(fixed)) => {
                let first_run_at = d.members.iter().filter_map(|m| m.fix.as_ref()).map(|f| f.first_run_at).min();
                self.tx.move_fix(id, fixed, first_run_at.unwrap_or(now)).await?;
            }
            Some(None) => self.tx.reopen_regression(id).await?,
            None => {}
        }
        let fixes: Vec<(Track, &DerivedFix)> =
            u.fixed.iter().filter_map(|m| m.fix.as_ref().map(|f| (m.track, f))).collect();
        self.fix(id, &fixes).await?;
        if u.resolves {
            if let Some(at) = &d.fixed_version {
                self.resolve(id, at).await?;
            }
        }
        Ok(())
    }

    /// Merges a stored regression into the derived one it turned out to be part of, and announces
    /// where it went.
    async fn merge(&mut self, id: i64, into: &Derived, into_stored: Option<i64>) -> Result<(), sqlx::Error> {
        let Some(target) = into_stored.or_else(|| self.opened.get(&into.version).copied()) else {
            return Ok(());
        };
        let measured = self.measured();
        self.tx.merge_regression(id, Some(target)).await?;
        self.note(id, &Entry::MergedInto { into: target, measured }).await?;
        self.note(target, &Entry::Merged { from: id, measured }).await?;
        let change = FieldChange { field: Field::MergedInto, from: None, to: Some(target.to_string()) };
        let mut event =
            events::updated(&self.scene(&into.version), target, into, vec![change], false, |w| self.workload(w));
        event.regression_id = id;
        self.announced.push(event);
        Ok(())
    }

    async fn add_member(&mut self, id: i64, m: &DerivedMember, late: bool) -> Result<(), sqlx::Error> {
        self.tx.add_regression_member(&new_member(id, m, late, self.judged.now)).await?;
        let workload = self.label(m.track.workload_id);
        let entry = Entry::Crossed {
            workload: &workload,
            unit: self.workload(m.track.workload_id).unit,
            at: &m.crossed_at,
            evidence: &m.evidence,
            before: m.previous.as_ref().map(|(_, p)| p),
            threshold: self.limit(m.track),
            late,
        };
        self.note(id, &entry).await
    }

    /// Records members of a regression back under their thresholds, or passing again.
    async fn fix(&mut self, id: i64, fixes: &[(Track, &DerivedFix)]) -> Result<(), sqlx::Error> {
        for &(track, f) in fixes {
            let ratio = f.bad.as_ref().and_then(|b| evaluate::time_ratio(f.evidence.sizes(), b.sizes()));
            if let Some((size, _)) = ratio {
                self.ratio_sizes.entry(id).or_default().insert(track.workload_id, size as i64);
            }
            let fix = crate::store::FixedMember {
                regression_id: id,
                track,
                version: &f.version,
                fit: f.evidence.slope().map(VersionFit::slope_fit),
                time_ratio: ratio.map(|r| r.1),
                first_run_at: f.first_run_at,
            };
            self.tx.record_fix(&fix).await?;
            let threshold = self.limit(track);
            let workload = self.label(track.workload_id);
            let entry = Entry::Fixed { workload: &workload, version: &f.version, evidence: &f.evidence, threshold };
            self.note(id, &entry).await?;
        }
        Ok(())
    }

    /// Marks a regression fixed in `version` and announces it.
    async fn resolve(&mut self, id: i64, version: &str) -> Result<(), sqlx::Error> {
        let now = self.judged.now;
        self.tx.resolve_regression(id, version, now).await?;
        self.note(id, &Entry::Resolved { version }).await?;
        let members = self.tx.resolved_members(id).await?;
        let sizes = self.ratio_sizes.remove(&id).unwrap_or_default();
        let summaries = self.summaries;
        let fit = |workload_id: i64, at: &str| {
            summaries
                .iter()
                .find(|s| s.history.track == Track::slope(workload_id) && s.history.version == at)
                .and_then(|s| s.history.evidence.slope())
        };
        let event = events::resolved(&self.scene(version), id, members, &sizes, fit);
        self.announced.push(event);
        Ok(())
    }

    /// Gives each workload of `event` (about `d`) where its cost went, from the versions' profiles,
    /// the artifacts that reach the functions it names, and its root causes; returns what the
    /// causes were worked out from, to work them out again for fewer workloads.
    async fn where_cost_went(&mut self, event: &mut Event, d: &Derived) -> Result<Traced, sqlx::Error> {
        let members: Vec<(&str, SizeUnit)> = event.workloads.iter().map(|w| (w.name.as_str(), w.size_unit)).collect();
        let lineage = &self.judged.at.lineage;
        let traced =
            profiles::read(&mut *self.tx, lineage, &d.version, d.previous_version.as_deref(), &members).await?;
        for w in &mut event.workloads {
            w.where_cost_went = traced.shifts.iter().find(|s| s.workload == w.name).map(|s| s.sentence());
        }
        let workloads = event.workloads.iter().map(|w| w.name.as_str());
        let reaches =
            profiles::reaching(&mut *self.tx, lineage, workloads, &traced.shifts, ARTIFACTS_ANNOUNCED).await?;
        event.artifacts = reaches.iter().map(|r| r.sentence.clone()).collect();
        let members: Vec<Member<'_>> = event.workloads.iter().map(Member::from).collect();
        event.causes = causes::group(lineage, &members, &traced.shifts, &traced.broken, &reaches);
        Ok(Traced { reaches, ..traced })
    }

    /// The root causes as they moved when the workloads `joined`: those of `event`'s other
    /// workloads, to those of all; `None` when the joined ones brought no cause.
    fn causes_brought(&self, event: &Event, traced: &Traced, joined: &[&DerivedMember]) -> Option<FieldChange> {
        let joined: Vec<&str> = joined.iter().map(|m| self.name(m.track.workload_id)).collect();
        let kept: Vec<Member<'_>> =
            event.workloads.iter().filter(|w| !joined.contains(&w.name.as_str())).map(Member::from).collect();
        let lineage = &self.judged.at.lineage;
        let before = causes::group(lineage, &kept, &traced.shifts, &traced.broken, &traced.reaches);
        let (had, now) = (before.functions(), event.causes.functions());
        let brought = now.iter().any(|f| !had.contains(f));
        brought.then(|| FieldChange { field: Field::RootCauses, from: Some(had.join(", ")), to: Some(now.join(", ")) })
    }

    /// Queues every announcement for every webhook target.
    async fn enqueue(self) -> Result<(), sqlx::Error> {
        let deliveries = webhooks::deliveries(&self.announced, &self.settings.alerts.webhooks);
        self.tx.enqueue_deliveries(&deliveries, self.judged.now).await
    }
}

/// A derived workload as a regression's member row.
fn new_member(regression_id: i64, m: &DerivedMember, late: bool, now: OffsetDateTime) -> NewMember {
    NewMember {
        regression_id,
        track: m.track,
        fit: m.evidence.slope().map(VersionFit::slope_fit),
        failure: m.evidence.failure().cloned(),
        previous_slope: m.previous.as_ref().and_then(|(_, p)| p.slope()).map(|p| p.slope),
        time_ratio: m.previous.as_ref().and_then(|(_, p)| evaluate::time_ratio(m.evidence.sizes(), p.sizes())),
        joined_at: now,
        joined_late: late,
    }
}
