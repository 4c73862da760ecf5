//! Time limits of one proof unit: failing fast without ever passing more.
//!
//! Every query has a wall-clock limit (`--timeout`, default 10 s). A unit that
//! has failed is rejected whatever its later obligations say; checking them
//! only adds diagnostics, and a unit that runs a query into a limit is usually
//! in trouble as a whole (a matching loop, nonlinear arithmetic): its later
//! queries tend to time out too, and a failing program then took minutes to
//! report. So:
//! * after an obligation of the unit failed (a counterexample or Z3's
//!   `unknown`), every later query of the unit gets
//!   [`crate::verify::Options::after_failure_ms`] (a third of `--timeout`);
//!   after one timed out, [`crate::verify::Options::after_timeout_ms`] (a
//!   tenth, at least 1 s): a timeout says Z3 is lost in this unit. Cheap later
//!   errors are still found and reported. (A third, not less, because a true
//!   obligation after a failure may take a second on a loaded machine; it
//!   would be reported as "could not prove" — noise, not a wrong verdict, but
//!   the fixtures list every diagnostic they expect);
//! * a query that runs out of time *after* the unit failed stops the unit: the
//!   obligations after it are not run (Viper's Silicon stops a path at its
//!   first failure; alpine goes on while going on is cheap);
//! * the unit as a whole has a wall-clock budget (`--unit-timeout`): a query
//!   gets at most what is left of it;
//! * an obligation met after the unit stopped or spent its budget is reported
//!   as *not checked*, with its location; further ones are counted in that
//!   first report instead of being listed one by one;
//! * when Z3 does not stop at a query's limit, the unit's runner stops
//!   waiting for it (`verify/runner.rs`); the abandoned attempt then asks
//!   nothing more ([`Encoder::query_limit`] answers `None`);
//! * optional queries — proposals the encoder may do without, such as a
//!   closed-form inverse for a quantified permission (`qp_solve.rs`) — get at
//!   most [`QUICK_MS`].
//!
//! A shorter limit can only turn a proof into a failure ("could not prove",
//! code `unknown`), never a failure into a proof: a query that is not run
//! counts as not proved. The first failure of a unit is always checked with
//! the full limit, so whether a unit is rejected never depends on these rules
//! — only how many of its further errors are listed.

use super::{Blame, Encoder};
use crate::diagnostics::codes;
use crate::verify::Failure;
use std::time::Instant;

/// The limit of an optional query.
pub const QUICK_MS: u32 = 2000;
/// The limit of a query for a lemma the encoder proves on its own
/// (`induction.rs`): such a step takes milliseconds when it holds.
pub const LEMMA_MS: u32 = 200;
/// Less than this left of the unit's budget: the next obligation is not run.
const MIN_QUERY_MS: u128 = 50;

/// What set the limit of a query (for the message of a timeout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cap {
    /// `--timeout`
    Query,
    /// an earlier obligation of the unit failed
    AfterFailure,
    /// an earlier query of the unit timed out
    AfterTimeout,
    /// what was left of `--unit-timeout`
    Unit,
    /// an optional query, or a lemma of the encoder's own
    Quick,
}

#[derive(Debug)]
pub struct UnitLimits {
    /// When the unit's budget ends, if it has one; by default `--unit-timeout`
    /// after the encoder was made ([`Encoder::set_budget_end`]).
    budget_end: Option<Instant>,
    /// A reported obligation of this unit was not proved.
    pub failed: bool,
    /// A reported query of this unit ran out of time.
    pub timed_out: bool,
    /// A query ran out of time after the unit had failed: nothing more is run.
    pub stopped: bool,
    /// The next query is optional ([`Encoder::prove_quick`]): its limit.
    quick: Option<u32>,
    /// The failure that reports the first obligation not checked, and how many
    /// more were skipped after it.
    first_skip: Option<(usize, String)>,
    skipped: u32,
}

impl UnitLimits {
    pub fn start(opts: &crate::verify::Options) -> UnitLimits {
        let budget_end = (opts.unit_timeout_secs > 0).then(|| Instant::now() + std::time::Duration::from_secs(opts.unit_timeout_secs));
        UnitLimits { budget_end, failed: false, timed_out: false, stopped: false, quick: None, first_skip: None, skipped: 0 }
    }
}

impl Encoder<'_> {
    /// The wall-clock limit of the next query and what set it; `None` when the
    /// unit stopped or its budget is spent.
    pub fn query_limit(&self) -> Option<(u32, Cap)> {
        if self.limits.stopped || crate::verify::runner::abandoned() {
            return None;
        }
        let mut limit = (self.opts.timeout_ms(), Cap::Query);
        let mut lower = |ms: u32, cap: Cap| {
            if ms < limit.0 {
                limit = (ms, cap);
            }
        };
        // A timeout is the more telling reason when both limits are equal.
        if self.limits.timed_out {
            lower(self.opts.after_timeout_ms(), Cap::AfterTimeout);
        }
        if self.limits.failed {
            lower(self.opts.after_failure_ms(), Cap::AfterFailure);
        }
        if let Some(ms) = self.limits.quick {
            lower(ms, Cap::Quick);
        }
        if let Some(end) = self.limits.budget_end {
            let left = end.saturating_duration_since(Instant::now()).as_millis();
            if left < MIN_QUERY_MS {
                return None;
            }
            lower(u32::try_from(left).unwrap_or(u32::MAX), Cap::Unit);
        }
        Some(limit)
    }

    /// The unit's budget ends at `end` (a retry of the unit has what its
    /// first attempt left: `verify/runner.rs`).
    pub fn set_budget_end(&mut self, end: Option<Instant>) {
        self.limits.budget_end = end;
    }

    /// Whether `hyp ⇒ goal` holds under `guard`, asked with the short limit
    /// of an optional query; reports nothing.
    pub fn prove_quick(&mut self, guard: &super::Term, hyp: &super::Term, goal: &super::Term) -> bool {
        self.prove_within(QUICK_MS, guard, hyp, goal)
    }

    /// As [`Encoder::prove_quick`], with the limit `ms`.
    pub fn prove_within(&mut self, ms: u32, guard: &super::Term, hyp: &super::Term, goal: &super::Term) -> bool {
        self.limits.quick = Some(ms);
        let ok = self.prove(guard, hyp, goal, None);
        self.limits.quick = None;
        ok
    }

    /// Records the outcome of a reported obligation that was not proved:
    /// `timed_out` when its query ran out of time. The first failure makes
    /// later queries short; a timeout after it stops the unit.
    pub fn note_failure(&mut self, timed_out: bool) {
        if timed_out && self.limits.failed {
            self.limits.stopped = true;
        }
        self.limits.failed = true;
        self.limits.timed_out |= timed_out;
    }

    /// Reports an obligation that was not run because the unit stopped or its
    /// budget is spent: the first one with its location, later ones as a count
    /// in it.
    pub fn not_checked(&mut self, b: Blame) {
        let budget = if self.limits.stopped {
            "the unit stopped: an obligation timed out after an earlier one had failed".to_string()
        } else {
            format!("the unit's time budget ran out: --unit-timeout {} s", self.opts.unit_timeout_secs)
        };
        // A side path (the par block's trial exhale) drains the failures it
        // reported, the first skip included; its index is then stale (it
        // panicked on Blelloch's Kernel), so the next skip starts afresh.
        let live = |i: usize, head: &str, failures: &[Failure]| {
            failures.get(i).is_some_and(|f| f.message.starts_with(head) && f.message.contains(": not checked ("))
        };
        let stale = self.limits.first_skip.as_ref().is_some_and(|(i, head)| !live(*i, head, &self.failures));
        if stale {
            self.limits.first_skip = None;
            self.limits.skipped = 0;
        }
        match self.limits.first_skip {
            None => {
                self.limits.first_skip = Some((self.failures.len(), b.message.clone()));
                self.failures.push(Failure {
                    code: codes::UNKNOWN,
                    message: format!("{}: not checked ({budget})", b.message),
                    span: b.span,
                    related: b.related,
                    values: vec![],
                });
            }
            Some((i, ref head)) => {
                let head = head.clone();
                self.limits.skipped += 1;
                let n = self.limits.skipped;
                let f = &mut self.failures[i];
                let more = if n == 1 {
                    "1 later obligation of the unit was".to_string()
                } else {
                    format!("{n} later obligations of the unit were")
                };
                f.message = format!("{head}: not checked ({budget}; {more} not checked either)");
            }
        }
    }
}

/// "timeout after 10 s", with why the limit was lower than `--timeout`.
pub fn timeout_text(ms: u32, cap: Cap) -> String {
    let secs = if ms.is_multiple_of(1000) { format!("{} s", ms / 1000) } else { format!("{:.1} s", f64::from(ms) / 1000.0) };
    match cap {
        Cap::Query | Cap::Quick => format!("timeout after {secs}"),
        Cap::AfterFailure => format!("timeout after {secs}: an earlier obligation of this unit failed"),
        Cap::AfterTimeout => format!("timeout after {secs}: an earlier obligation of this unit timed out"),
        Cap::Unit => format!("timeout after {secs}: the rest of the unit's time budget (--unit-timeout)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_texts() {
        assert_eq!(timeout_text(10_000, Cap::Query), "timeout after 10 s");
        assert_eq!(timeout_text(3_000, Cap::AfterFailure), "timeout after 3 s: an earlier obligation of this unit failed");
        assert_eq!(timeout_text(1_000, Cap::AfterTimeout), "timeout after 1 s: an earlier obligation of this unit timed out");
        assert_eq!(timeout_text(2_345, Cap::Unit), "timeout after 2.3 s: the rest of the unit's time budget (--unit-timeout)");
    }
}
