//! `alpine verify`: a permission-based verifier for PVL on Z3.
//!
//! Pipeline (see `docs/verifier.md`):
//! ```text
//! typed AST ──lower──► core IR (ir.rs) ──encode──► SMT terms ──► Z3, one solver per unit
//! ```
//! * [`lower`]: PVL → core IR (inhale/exhale/assert/assume, assignments, heap
//!   writes, if, loops with invariants, calls, par);
//! * [`encode`]: the IR → SMT, checking as it goes;
//! * [`smt`]: terms as data and the Z3 backend.
//!
//! Every method with a body and every pure function with a body is a *proof
//! unit*. Units are independent and run in parallel (rayon); each runs on a
//! thread of its own, in a Z3 context of its own, which a rayon worker waits
//! for until the limits allow and no longer ([`runner`]: Z3 does not always
//! stop at a limit; a unit it holds past one is reported as timed out, and is
//! tried once more with other nonlinear-arithmetic settings).

pub mod encode;
pub mod ir;
pub mod lower;
pub(crate) mod runner;
pub mod smt;
pub mod uniformity;

use crate::ast::{self, Span};
use crate::diagnostics::{codes, Diagnostic, Severity};
use rayon::prelude::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default of `--unit-timeout`.
pub const DEFAULT_UNIT_TIMEOUT_SECS: u64 = 30;

#[derive(Clone, Debug)]
pub struct Options {
    /// Wall-clock limit per Z3 query, in seconds.
    pub timeout_secs: u64,
    /// Z3's deterministic resource limit per query (0 = none).
    pub rlimit: u32,
    /// Wall-clock budget of one proof unit, in seconds (0 = none): each query
    /// gets at most what is left of it, and obligations met after it ran out
    /// are reported as not checked.
    pub unit_timeout_secs: u64,
    /// Also check that method ends and loop bodies are reachable.
    pub smoke: bool,
    /// Keep the SMT-LIB sent to Z3 in the unit reports.
    pub dump_smt: bool,
    /// Verify only these units (`Class.method` or `method`); empty = all.
    pub only: Vec<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            timeout_secs: 10,
            rlimit: 0,
            unit_timeout_secs: DEFAULT_UNIT_TIMEOUT_SECS,
            smoke: false,
            dump_smt: false,
            only: Vec::new(),
        }
    }
}

impl Options {
    /// Whether the unit called `name` (`Class.method`) is to be verified.
    pub fn selects(&self, name: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|o| o == name || name.rsplit('.').next() == Some(o.as_str()))
    }

    pub fn timeout_ms(&self) -> u32 {
        u32::try_from(self.timeout_secs.saturating_mul(1000)).unwrap_or(u32::MAX).max(1)
    }

    /// The limit of every query of a unit after one of its obligations failed:
    /// a third of `--timeout`, at least 1 s (or `--timeout` if that is less).
    pub fn after_failure_ms(&self) -> u32 {
        self.share_of_timeout_ms(3)
    }

    /// The limit of every query of a unit after one of its queries timed out:
    /// a tenth of `--timeout`, at least 1 s (or `--timeout` if that is less).
    pub fn after_timeout_ms(&self) -> u32 {
        self.share_of_timeout_ms(10)
    }

    /// `--timeout / n`, at least 1 s, at most `--timeout`.
    fn share_of_timeout_ms(&self, n: u32) -> u32 {
        let t = self.timeout_ms();
        t.min((t / n).max(1000))
    }
}

/// One failed proof obligation.
#[derive(Clone, Debug)]
pub struct Failure {
    pub code: &'static str,
    pub message: String,
    pub span: Span,
    pub related: Vec<(Span, String)>,
    /// Values of locals in Z3's counterexample.
    pub values: Vec<(String, String)>,
}

impl Failure {
    pub fn new(code: &'static str, message: impl Into<String>, span: Span) -> Failure {
        Failure { code, message: message.into(), span, related: vec![], values: vec![] }
    }

    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut d = if self.code == codes::VACUOUS {
            Diagnostic::warning(self.code, &self.message, self.span)
        } else {
            Diagnostic::error(self.code, &self.message, self.span)
        };
        for (s, m) in &self.related {
            d = d.with_related(*s, m);
        }
        if !self.values.is_empty() {
            let vals: Vec<String> = self.values.iter().map(|(n, v)| format!("{n} = {v}")).collect();
            d = d.with_help(format!("a counterexample: {}", vals.join(", ")));
        }
        d
    }
}

/// The verdict on one proof unit.
#[derive(Debug)]
pub struct UnitReport {
    /// `Class.method`
    pub name: String,
    pub span: Span,
    pub failures: Vec<Failure>,
    pub time: Duration,
    pub checks: u32,
    pub smt: Option<String>,
}

impl UnitReport {
    /// No failed obligation; with `--smoke`, also no vacuous contract (smoke
    /// mode exists to fail on those).
    pub fn proved(&self) -> bool {
        self.failures.is_empty()
    }
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        self.failures.iter().map(Failure::to_diagnostic).collect()
    }
}

#[derive(Clone, Copy)]
enum UnitRef {
    Method(usize),
    Function(usize),
}

/// Verifies every method and pure function of a type-checked program.
pub fn verify_program(program: &ast::Program, src: &str, opts: &Options) -> Vec<UnitReport> {
    verify_program_with(program, &[], src, opts)
}

/// [`verify_program`] for one file of a program of several files: the classes of
/// `companions` (type-checked, their spans placed after `program`'s in `src`, see
/// `crate::workspace`) that `program` does not declare are known through their
/// declarations — fields, contracts, lock invariants, predicates, pure functions —
/// and none of their bodies is verified here.
pub fn verify_program_with(program: &ast::Program, companions: &[&ast::Program], src: &str, opts: &Options) -> Vec<UnitReport> {
    verify_program_observed(program, companions, src, opts, &|_| {})
}

/// What [`verify_program_observed`] tells its caller while it works (for progress
/// displays). Units run in parallel, so `Started` and `Finished` of different units
/// interleave, from several threads.
pub enum UnitEvent<'a> {
    /// This many units will be verified.
    Planned(usize),
    /// The unit with this name (`Class.method`) started.
    Started(&'a str),
    /// A unit is done.
    Finished(&'a UnitReport),
}

/// [`verify_program_with`], calling `observe` as units are planned, start and end.
pub fn verify_program_observed(
    program: &ast::Program,
    companions: &[&ast::Program],
    src: &str,
    opts: &Options,
    observe: &(dyn Fn(UnitEvent) + Sync),
) -> Vec<UnitReport> {
    // Shared with the units' threads, which may outlive this call (`runner`).
    let ir = Arc::new(lower::lower_with(program, companions));
    let src: Arc<str> = Arc::from(src);
    let own: std::collections::HashSet<&str> = program.classes.iter().map(|c| &*c.name.name).collect();
    let mut units: Vec<(UnitRef, String, Span)> = Vec::new();
    for (i, f) in ir.functions.iter().enumerate() {
        // An abstract function that reads the heap is a unit too: its
        // precondition must be self-framing and its postcondition framed by it
        // (`encode/heapfn.rs`).
        let unit = f.body.is_some() || ir::facts::reads_heap(&ir, i);
        if unit && own.contains(&*f.class) {
            units.push((UnitRef::Function(i), ast::qualified_name(&f.class, &f.name), f.span));
        }
    }
    for (i, m) in ir.methods.iter().enumerate() {
        if m.body.is_some() && own.contains(&*m.class) {
            units.push((UnitRef::Method(i), ast::qualified_name(&m.class, &m.name), m.span));
        }
    }
    units.retain(|u| opts.selects(&u.1));
    units.sort_by_key(|u| u.2.start);
    observe(UnitEvent::Planned(units.len()));
    // Lemmas every unit may use, proved once (`encode/induction.rs`).
    let monotone = if units.is_empty() || !encode::induction::has_candidates(&ir) {
        Vec::new()
    } else {
        configure_z3();
        // A Z3 context of its own, as each unit has (made only when there is
        // something to prove: a context costs 20–40 ms), on a thread that can
        // be given up like a unit's: then no lemma is assumed (fewer
        // assumptions can only lose proofs).
        let (ir, opts, src) = (Arc::clone(&ir), opts.clone(), Arc::clone(&src));
        match runner::run(None, || {}, move || encode::induction::prove_monotonicity(&ir, &opts, &src)) {
            runner::Ended::Done(m) => m,
            runner::Ended::Abandoned(_) => Vec::new(),
        }
    };
    let monotone = Arc::new(monotone);
    // What lowering could not handle belongs to the unit around it (units do not
    // nest), and is part of its report before the report is observed.
    let unsupported =
        |(what, span): &(String, Span)| Failure::new(codes::UNSUPPORTED, format!("not supported by the verifier yet: {what}"), *span);
    let inside = |outer: Span, inner: Span| outer.start <= inner.start && inner.end <= outer.end;
    let mut reports: Vec<UnitReport> = units
        .par_iter()
        .map(|(u, name, span)| {
            configure_z3();
            observe(UnitEvent::Started(name));
            let unit = Unit { ir: Arc::clone(&ir), at: (*u, name.clone(), *span), src: Arc::clone(&src), monotone: Arc::clone(&monotone) };
            let mut report = run_unit(unit, opts);
            report.failures.extend(ir.unsupported.iter().filter(|(_, s)| inside(*span, *s)).map(unsupported));
            observe(UnitEvent::Finished(&report));
            report
        })
        .collect();
    // Outside every unit: a report of its own (unless only some units were asked for).
    if opts.only.is_empty() {
        for u in ir.unsupported.iter().filter(|(_, s)| !units.iter().any(|unit| inside(unit.2, *s))) {
            let report = UnitReport {
                name: "(program)".into(),
                span: u.1,
                failures: vec![unsupported(u)],
                time: Duration::ZERO,
                checks: 0,
                smt: None,
            };
            observe(UnitEvent::Finished(&report));
            reports.push(report);
        }
    }
    reports
}

/// A proof unit and what its attempts read, owned (`runner`: an attempt may
/// outlive the call that started it).
#[derive(Clone)]
struct Unit {
    ir: Arc<ir::Program>,
    at: (UnitRef, String, Span),
    src: Arc<str>,
    monotone: Arc<Vec<encode::induction::Monotone>>,
}

/// Less than this left of the unit's budget after a first attempt was given
/// up: no second attempt.
const MIN_RETRY: Duration = Duration::from_secs(1);

/// Verifies one proof unit on a thread of its own, in a Z3 context of its own,
/// and waits for it no longer than the limits allow (`runner`). A first
/// attempt that Z3 held past a check's limit is reported as it stood, with a
/// timeout at that check's obligation — unless a second attempt, with Z3's
/// other nonlinear setting and what is left of the budget, completes.
fn run_unit(unit: Unit, opts: &Options) -> UnitReport {
    let start = Instant::now();
    let budget_end = (opts.unit_timeout_secs > 0).then(|| start + Duration::from_secs(opts.unit_timeout_secs));
    let attempt = |unit: &Unit| {
        let (unit, opts) = (unit.clone(), opts.clone());
        // Each attempt runs in a Z3 context of its own — the thread-local
        // default context of its new thread (`runner::run`) — so its verdict
        // and time do not depend on which units ran before it (Z3's term ids,
        // and so its search order, are per context): a unit proves the same in
        // `alpine verify`, the LSP server and the benchmark.
        move || verify_unit(&unit, &opts, start, budget_end)
    };
    let given_up = match runner::run(budget_end, || {}, attempt(&unit)) {
        runner::Ended::Done(report) => return report,
        runner::Ended::Abandoned(a) => a,
    };
    // Only a check that did not stop calls for other settings; a budget spent
    // between checks is spent.
    let left = budget_end.map(|end| end.saturating_duration_since(Instant::now()));
    let retry = given_up.in_check && left.is_none_or(|l| l >= MIN_RETRY);
    let first = abandoned_report(&unit, opts, start, given_up);
    if !retry {
        return first;
    }
    match runner::run(budget_end, smt::solver::use_fallback_arithmetic, attempt(&unit)) {
        runner::Ended::Done(report) => report,
        runner::Ended::Abandoned(_) => first,
    }
}

/// The report of a unit whose attempt was given up: the failures it had
/// found, and one that says where it stopped — at the obligation of the check
/// Z3 did not finish, else at the unit.
fn abandoned_report(unit: &Unit, opts: &Options, start: Instant, given_up: runner::Abandoned) -> UnitReport {
    let (_, name, span) = &unit.at;
    let runner::Abandoned { mut failures, in_check, at_risk } = given_up;
    let last = at_risk.unwrap_or_else(|| {
        let why = if in_check {
            format!("a Z3 query did not stop at its limit; {}", runner::STUCK)
        } else {
            format!("the unit's time budget ran out (--unit-timeout {} s) and it was given up", opts.unit_timeout_secs)
        };
        Failure::new(codes::UNKNOWN, format!("the unit was not checked to its end: {why}"), *span)
    });
    failures.push(last);
    failures.sort_by_key(|f| (f.span.start, f.code));
    UnitReport { name: name.clone(), span: *span, failures, time: start.elapsed(), checks: 0, smt: None }
}

/// Verifies one proof unit in the current thread's Z3 context; its budget
/// ends at `budget_end`.
fn verify_unit(unit: &Unit, opts: &Options, start: Instant, budget_end: Option<Instant>) -> UnitReport {
    let (ir, src, (u, name, span)) = (&*unit.ir, &*unit.src, (unit.at.0, &unit.at.1, unit.at.2));
    let mut enc = encode::Encoder::new(ir, opts, src);
    enc.set_budget_end(budget_end);
    enc.monotone = unit.monotone.to_vec();
    enc.function_axioms(match u {
        UnitRef::Function(i) => Some(i),
        UnitRef::Method(_) => None,
    });
    match u {
        UnitRef::Method(i) => encode::verify_method(&mut enc, &ir.methods[i]),
        UnitRef::Function(i) => encode::verify_function(&mut enc, i),
    }
    let mut failures = std::mem::take(&mut enc.failures);
    failures.sort_by_key(|f| (f.span.start, f.code));
    failures.dedup_by(|a, b| a.span == b.span && a.code == b.code && a.message == b.message);
    UnitReport { name: name.to_string(), span, failures, time: start.elapsed(), checks: enc.checks, smt: enc.smt.dump.take() }
}

static Z3_CONFIGURED: std::sync::Once = std::sync::Once::new();

fn configure_z3() {
    Z3_CONFIGURED.call_once(smt::solver::configure_globals);
}

/// Sets the verifier's global Z3 parameters again if it set them before in
/// this process: for code that changed them for a solver of its own
/// (`races::with_own_z3`).
pub(crate) fn restore_z3_globals() {
    if Z3_CONFIGURED.is_completed() {
        smt::solver::configure_globals();
    }
}

/// Severity helper for callers that print summaries.
pub fn is_error(d: &Diagnostic) -> bool {
    d.severity == Severity::Error
}
