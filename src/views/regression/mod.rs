//! A regression's page beyond its rows: what its editors write, and the postmortem it exports.

pub mod causes;
pub mod edits;
pub mod markdown;
pub mod postmortem;

use crate::model::RegressionDetail;

/// The regression as a reader who is not signed in as an editor reads it, on its page and in its
/// JSON alike: webhook receivers' errors and answers left out (they may quote a receiver's
/// addresses and internals), and each failure's detail cut to its first line.
pub fn for_anyone(mut d: RegressionDetail) -> RegressionDetail {
    let said = |text: &Option<String>| text.as_deref().is_some_and(|t| !t.is_empty());
    for delivery in &mut d.deliveries {
        if said(&delivery.delivery.last_error) || delivery.attempts.iter().any(|a| said(&a.answer)) {
            delivery.delivery.last_error = Some("log in to see the error".into());
        }
        for attempt in &mut delivery.attempts {
            (attempt.error, attempt.answer) = (None, None);
        }
    }
    for w in &mut d.workloads {
        if let Some(f) = &mut w.failure {
            f.detail = crate::views::detail_for(&f.detail, false);
        }
    }
    d
}
