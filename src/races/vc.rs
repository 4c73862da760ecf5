//! The verification conditions of one run of the two-thread program: a Z3
//! solver that receives the program's assumptions in execution order and is
//! asked, at each assertion, whether the assertion can fail there.
//!
//! The two-thread program is straight-line (predication turned branches into
//! guarded updates, loops into havoc + invariants), so the set of facts known
//! at an assertion is exactly what was assumed before it: one solver, one
//! `push`/`check`/`pop` per assertion, no weakest preconditions.
//!
//! Soundness: an assertion counts as proved only on `unsat`; `sat` and
//! `unknown` (timeout included) are failures at the assertion's place. After an
//! assertion is checked it is assumed, so that one defect is not reported again
//! through its consequences; the verdict "all proved" is unaffected (every
//! assertion was proved under the ones before it, which were proved too).
//! Houdini candidates (see `houdini.rs`) are checked the same way, but a failed
//! one only drops the candidate, and a run in which some candidate failed
//! proves nothing (its later checks relied on the candidate): the driver runs
//! again without it.

use super::report::{self, Goal};
use super::state::Geometry;
use crate::ast::Span;
use crate::cfront::ir::Module;
use crate::diagnostics::{codes, Diagnostic};
use crate::verify::smt::watchdog;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};
use z3::ast::Bool;
use z3::SatResult;

/// A Houdini candidate: the loop (in execution order) and its index there.
pub(crate) type CandidateKey = (usize, usize);

/// What a kind of access is, for the logs and for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AccessKind {
    Read,
    Write,
    Atomic,
}

impl AccessKind {
    pub(crate) fn word(self) -> &'static str {
        match self {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
            AccessKind::Atomic => "atomic",
        }
    }
}

/// One run's solver and results.
pub(crate) struct Checker<'m> {
    pub(crate) module: &'m Module,
    solver: z3::Solver,
    /// Candidates that a previous run refuted (not assumed, not checked).
    pub(crate) dropped: &'m BTreeSet<CandidateKey>,
    /// Candidates refuted in this run.
    pub(crate) refuted: BTreeSet<CandidateKey>,
    pub(crate) failures: Vec<Diagnostic>,
    /// Access sites by id (an access log records the id of the access it holds).
    pub(crate) sites: Vec<(Span, AccessKind)>,
    pub(crate) geometry: Geometry,
    check_limit: Duration,
    deadline: Instant,
    pub(crate) timed_out: bool,
    pub(crate) queries: usize,
    /// Arrays a previous run saw written (by declaration place); the others
    /// are read-only and keep their contents across barriers.
    pub(crate) written: &'m BTreeSet<u32>,
    /// Arrays this run saw written.
    pub(crate) writes_seen: BTreeSet<u32>,
}

enum Answer {
    Valid,
    Invalid(Option<z3::Model>),
    Unknown(String),
}

impl<'m> Checker<'m> {
    pub(crate) fn new(
        module: &'m Module,
        dropped: &'m BTreeSet<CandidateKey>,
        written: &'m BTreeSet<u32>,
        geometry: Geometry,
        check_limit: Duration,
        deadline: Instant,
    ) -> Checker<'m> {
        let solver = z3::Solver::new();
        for fact in geometry.facts() {
            solver.assert(&fact);
        }
        Checker {
            module,
            solver,
            dropped,
            refuted: BTreeSet::new(),
            failures: Vec::new(),
            sites: Vec::new(),
            geometry,
            check_limit,
            deadline,
            timed_out: false,
            queries: 0,
            written,
            writes_seen: BTreeSet::new(),
        }
    }

    pub(crate) fn assume(&mut self, fact: &Bool) {
        if fact.as_bool() != Some(true) {
            self.solver.assert(fact);
        }
    }

    /// Whether this run's results still count (no candidate refuted so far).
    pub(crate) fn counts(&self) -> bool {
        self.refuted.is_empty()
    }

    pub(crate) fn site(&mut self, span: Span, kind: AccessKind) -> u64 {
        self.sites.push((span, kind));
        (self.sites.len() - 1) as u64
    }

    fn ask(&mut self, goal: &Bool) -> Answer {
        if goal.as_bool() == Some(true) {
            return Answer::Valid;
        }
        let now = Instant::now();
        if now >= self.deadline {
            self.timed_out = true;
            return Answer::Unknown("the kernel's time limit ran out".into());
        }
        let limit = self.check_limit.min(self.deadline - now);
        self.queries += 1;
        self.solver.push();
        self.solver.assert(goal.not());
        let guard = watchdog::arm(&z3::Context::thread_local(), limit);
        let result = self.solver.check();
        let fired = guard.fired();
        drop(guard);
        let answer = match result {
            SatResult::Unsat => Answer::Valid,
            SatResult::Sat => Answer::Invalid(self.solver.get_model()),
            SatResult::Unknown if fired => Answer::Unknown(format!("Z3 timed out after {} ms", limit.as_millis())),
            SatResult::Unknown => {
                Answer::Unknown(format!("Z3 answered unknown ({})", self.solver.get_reason_unknown().unwrap_or_default()))
            }
        };
        self.solver.pop(1);
        if std::env::var_os("ALPINE_RACES_DEBUG").is_some() && now.elapsed() > Duration::from_millis(300) {
            eprintln!("races: slow check ({} ms): {}", now.elapsed().as_millis(), goal.to_string().chars().take(600).collect::<String>());
        }
        answer
    }

    /// Checks an assertion of the kernel (a race, a divergence, an annotation);
    /// a failure is recorded with what Z3's model says, then the assertion is
    /// assumed.
    pub(crate) fn prove(&mut self, goal: Bool, what: Goal) {
        if !self.counts() {
            return;
        }
        match self.ask(&goal) {
            Answer::Valid => {}
            Answer::Invalid(model) => {
                let d = report::failure(self, &what, model.as_ref());
                self.failures.push(d);
            }
            Answer::Unknown(why) => {
                let d = report::failure(self, &what, None);
                let d = Diagnostic { code: codes::RACES_UNKNOWN, ..d }.with_help(format!("not proved: {why}"));
                self.failures.push(d);
            }
        }
        self.assume(&goal);
    }

    pub(crate) fn alive(&self, key: CandidateKey) -> bool {
        !self.dropped.contains(&key) && !self.refuted.contains(&key)
    }

    /// The one value `v` can have under what is assumed so far, if it has one
    /// (a parameter a precondition fixes, a size from the launch): a model's
    /// value, then proved to be the only one.
    pub(crate) fn forced(&mut self, v: &z3::ast::BV) -> Option<u64> {
        use z3::ast::Ast;
        if let Some(c) = v.simplify().as_u64() {
            return Some(c);
        }
        if v.get_size() > 64 {
            return None;
        }
        let Answer::Invalid(Some(model)) = self.ask(&Bool::from_bool(false)) else { return None };
        let c = model.eval(v, true)?.as_u64()?;
        matches!(self.ask(&v.eq(z3::ast::BV::from_u64(c, v.get_size()))), Answer::Valid).then_some(c)
    }

    /// Checks a candidate invariant; a candidate that may fail (or whose check
    /// is inconclusive) is dropped.
    pub(crate) fn candidate(&mut self, key: CandidateKey, goal: Option<Bool>) {
        if !self.alive(key) {
            return;
        }
        let holds = match goal {
            Some(g) => matches!(self.ask(&g), Answer::Valid),
            None => false,
        };
        if !holds {
            self.refuted.insert(key);
        }
    }
}
