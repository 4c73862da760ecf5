//! The Z3 backend: one incremental solver per proof unit.
//!
//! Terms are given to Z3 in batches (what the encoder asserted since the last
//! check), built as ASTs through the C API ([`super::native`]): as Z3's SMT-LIB
//! parser would build the printed batch, which `--dump-smt` writes. A batch with a
//! term Z3 refuses is reported as an internal error and nothing of it is asserted
//! (dropping assertions could only make proofs fail, never succeed, but it must
//! not go unnoticed).
//!
//! Z3 objects live in the thread-local context of the thread that created the
//! solver; a `SmtSolver` never leaves its thread.

use super::abstraction::Shadow;
use super::native::NativeTerms;
use super::term::{Decls, Sort, Term};
use std::fmt::Write;
use z3::ast::Bool;

/// The answer to one check.
#[derive(Debug)]
pub enum Outcome {
    /// The negated goal is unsatisfiable: proved.
    Proved,
    /// Z3 found a model of the negated goal (`sat`) or gave up (`unknown`).
    /// Either way: not proved.
    NotProved { unknown: Option<Unknown> },
}

/// Why Z3 answered `unknown`.
#[derive(Clone, Debug, PartialEq)]
pub enum Unknown {
    /// The check ran for the whole wall-clock limit.
    Timeout,
    /// The check used up the deterministic resource limit (`--rlimit`).
    ResourceLimit(u32),
    /// Z3 gave up on its own (incomplete quantifier instantiation, nonlinear
    /// arithmetic): its stated reason.
    Incomplete(String),
}

pub struct SmtSolver {
    solver: z3::Solver,
    native: NativeTerms,
    pending: Vec<Term>,
    asserted: usize,
    /// Everything sent to Z3, when `--dump-smt` asked for it.
    pub dump: Option<String>,
    /// The declarations already in `dump`.
    dumped_decls: std::collections::HashSet<String>,
    last_model: Option<z3::Model>,
    /// The wall-clock limit currently set on the solver (checks may lower it:
    /// see [`SmtSolver::check_within`]).
    timeout_ms: u32,
    rlimit: u32,
    /// The same unit with symbolic division abstracted, asked first.
    shadow: Shadow,
}

/// Z3's E-matching threshold: instances of a higher cost (generation + 1) wait
/// for the final check instead of being made at once. Viper uses 100. alpine
/// uses 3: the sequence and function axioms make long but finite instance
/// chains, and with a high threshold Z3 never reaches the final check, where
/// theory combination supplies equalities like `l = k` between a skolemised
/// index and a loop bound that the proof needs (measured on the sorting
/// programs of the corpus: `lemma_count_app_all` 10 s timeout → 0.3 s).
const EAGER_THRESHOLD: &str = "3.0";

/// Z3's bound on instance chains: an instance of cost (generation + 1) above it
/// is never made, so a chain of instances, each triggered by a term the previous
/// one made, stops at generation 6. Z3's default, 20, let a chain of sequence
/// axioms (`drop_index_rev`, `concat_index`, `take_index` and the `plus`/`minus`
/// index functions, generation 18, 100 k instances) run VerifyThis 2019
/// Challenge 1's loop-invariant checks into the 10 s limit once the terms
/// reached Z3 in a different order (ASTs built through the API instead of parsed:
/// the same problem, other term ids). Measured (2026-11-23): with 7 every corpus
/// program that verified before verifies (Challenge 1 in 3–4 s), and the corpus
/// costs 10 % fewer `rlimit` steps (75 M → 67 M: the rejected programs give up
/// sooner); 6 and 8 also verify Challenge 1 (8: in 10–12 s); 5 loses four
/// sequence programs whose proofs need longer chains (`BubbleSort`, `MaxSort`,
/// `iter_merge_mul`); 12 and 16 lose Challenge 1. Fewer instances can only lose
/// proofs, never make one.
const LAZY_THRESHOLD: &str = "7.0";

/// Z3 settings, after Viper's `z3config.smt2`: no model-based quantifier
/// instantiation (every quantifier gets patterns from alpine), no auto-config.
///
/// These are *global* parameters, set before any solver exists: Z3 4.8 ignores
/// `smt.*` settings passed to one solver's `set_params` (the timeout and rlimit
/// are honoured there, the E-matching settings were silently not).
pub fn configure_globals() {
    z3::set_global_param("auto_config", "false");
    z3::set_global_param("smt.mbqi", "false");
    z3::set_global_param("smt.qi.eager_threshold", EAGER_THRESHOLD);
    z3::set_global_param("smt.case_split", "3");
    z3::set_global_param("smt.delay_units", "true");
    z3::set_global_param("smt.qi.lazy_threshold", LAZY_THRESHOLD);
    // Experiments with other Z3 settings (`ALPINE_Z3_PARAMS=name=value,...`),
    // applied after alpine's own.
    if let Ok(extra) = std::env::var("ALPINE_Z3_PARAMS") {
        for kv in extra.split(',').filter(|kv| !kv.is_empty()) {
            if let Some((k, v)) = kv.split_once('=') {
                z3::set_global_param(k.trim(), v.trim());
            }
        }
    }
    // Where a unit's quantifier instances go (per `qid`: instances, maximal
    // generation and cost), printed by Z3 on stderr: to find matching loops.
    if std::env::var_os("ALPINE_QI_PROFILE").is_some() {
        z3::set_global_param("smt.qi.profile", "true");
        z3::set_global_param("verbose", "1");
    }
}

thread_local! {
    /// Whether the solvers made on this thread use [`FALLBACK_ARITHMETIC`].
    static FALLBACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The solver parameter, and its value, that a unit's second attempt changes
/// (`verify/runner.rs`): Z3 4.8.12's nonlinear arithmetic does not look at an
/// interrupt during its Gröbner-basis step, so a unit whose check did not stop
/// is tried again without that step. Only there: as the setting of every
/// unit it loses proofs (the `opt_` `NestedLoops` mutant of issue #32 ran
/// 85 s with it). A solver parameter, unlike the global settings above (the
/// `smt.` prefix is the global name; a solver takes the name without it):
/// each attempt's context has its own.
pub const FALLBACK_ARITHMETIC: (&str, bool) = ("arith.nl.grobner", false);

/// Every solver made on this thread from now on uses [`FALLBACK_ARITHMETIC`]
/// (called first on the thread of a unit's second attempt).
pub fn use_fallback_arithmetic() {
    FALLBACK.with(|f| f.set(true));
}

impl SmtSolver {
    /// `timeout_ms` is the wall-clock limit per check; `rlimit` Z3's
    /// deterministic resource limit per check (0 = none).
    pub fn new(timeout_ms: u32, rlimit: u32, dump: bool) -> SmtSolver {
        let solver = z3::Solver::new();
        // The wall-clock limit is not given to Z3: its timer is unreliable in
        // 4.8.12, so `watchdog` enforces it (see there). The resource limit is
        // counted by Z3 itself and is deterministic.
        // A misspelt or wrongly typed parameter makes Z3 ignore later input
        // silently; `params_are_accepted` below guards these names.
        let mut p = z3::Params::new();
        if rlimit > 0 {
            p.set_u32("rlimit", rlimit);
        }
        let fallback = set_arithmetic(&mut p);
        if rlimit > 0 || fallback {
            solver.set_params(&p);
        }
        // The dump starts with the same settings, so `z3 FILE` replays the unit.
        let mut header = format!(
            "(set-option :auto_config false)\n(set-option :smt.mbqi false)\n(set-option :smt.qi.eager_threshold {EAGER_THRESHOLD})\n(set-option :smt.qi.lazy_threshold {LAZY_THRESHOLD})\n\
             (set-option :smt.case_split 3)\n(set-option :smt.delay_units true)\n(set-option :timeout {timeout_ms})\n"
        );
        if fallback {
            let (name, value) = FALLBACK_ARITHMETIC;
            let _ = writeln!(header, "(set-option :smt.{name} {value})");
        }
        let native = NativeTerms::new(solver.get_context());
        SmtSolver {
            solver,
            native,
            pending: Vec::new(),
            asserted: 0,
            dump: dump.then_some(header),
            dumped_decls: Default::default(),
            last_model: None,
            timeout_ms,
            rlimit,
            shadow: Shadow::default(),
        }
    }

    pub fn assert(&mut self, t: Term) {
        if !t.is_true() {
            self.pending.push(t);
        }
    }

    /// Opens a Z3 scope for the next query's negated goal (after sending what
    /// is pending, which belongs to the unit). The scope is never popped: the
    /// query's goal stays guarded by its own `chk` constant, and the instances
    /// Z3 made for it stay available to later queries (popping the scope of
    /// every query loses instances that later queries need: five sorting and
    /// loop programs of the corpus no longer verify). Pushing alone changes how
    /// Z3 treats a unit's queries and cuts its work: summed over the corpus,
    /// 66 M instead of 92 M `rlimit` steps, and VerifyThis 2019 Challenge 1's `part1a` 1.9 M instead of
    /// 6.6 M (a timeout); see docs/verifier.md, "Query scopes".
    pub fn open_query_scope(&mut self) -> Result<(), String> {
        self.flush()?;
        self.solver.push();
        self.shadow.push();
        if let Some(d) = &mut self.dump {
            d.push_str("(push)\n");
        }
        Ok(())
    }

    /// Sends the pending assertions to Z3.
    fn flush(&mut self) -> Result<(), String> {
        if self.pending.is_empty() {
            return Ok(());
        }
        assert_batch(&self.solver, &mut self.native, &self.pending)?;
        self.asserted += self.pending.len();
        self.shadow.assert(self.solver.get_context(), &self.pending)?;
        if let Some(d) = &mut self.dump {
            let mut decls = Decls::default();
            for t in &self.pending {
                t.collect_decls(&mut decls);
            }
            let mut text = String::new();
            decls.write(&mut text);
            for t in &self.pending {
                let _ = writeln!(text, "(assert {t})");
            }
            // Each declaration once, as a replayable file needs.
            for line in text.lines() {
                let is_decl = line.starts_with("(declare-");
                if !is_decl || self.dumped_decls.insert(line.to_string()) {
                    d.push_str(line);
                    d.push('\n');
                }
            }
        }
        self.pending.clear();
        // A second net, in test builds: the assertion count (listing the
        // assertions costs time linear in their number, at every batch).
        if cfg!(debug_assertions) {
            let now = self.solver.get_assertions().len();
            if now != self.asserted {
                return Err(format!("Z3 rejected a batch (expected {} assertions, has {now})", self.asserted));
            }
        }
        Ok(())
    }

    /// Checks satisfiability under the given Bool constants, with the limit
    /// the solver was created with.
    pub fn check(&mut self, assumptions: &[&str]) -> Result<Outcome, String> {
        let ms = self.timeout_ms;
        self.check_within(assumptions, ms)
    }

    /// As [`SmtSolver::check`], with a wall-clock limit of `limit_ms` for this
    /// check (the unit's remaining budget, or the short limit after a timeout).
    pub fn check_within(&mut self, assumptions: &[&str], limit_ms: u32) -> Result<Outcome, String> {
        self.forget_model();
        self.flush()?;
        // The abstraction first (only units with a symbolic divisor have one):
        // its `unsat` is a proof; otherwise the real check decides, with what
        // the shadow left of the query's limit. The limit is the query's, both
        // solvers together: after a timeout a unit's queries are capped at 1 s,
        // and a shadow that used its own second besides doubled them.
        let shadow_started = std::time::Instant::now();
        if self.shadow.proves(assumptions, limit_ms) {
            return Ok(Outcome::Proved);
        }
        let shadow_ms = u32::try_from(shadow_started.elapsed().as_millis()).unwrap_or(u32::MAX);
        let real_ms = limit_ms.saturating_sub(shadow_ms).max(1);
        // The dump states the query's limit (not what the shadow left of it,
        // which depends on the clock), so a dump stays the same from run to run.
        let limit_ms = limit_ms.max(1);
        if limit_ms != self.timeout_ms {
            self.timeout_ms = limit_ms;
            if let Some(d) = &mut self.dump {
                let _ = writeln!(d, "(set-option :timeout {limit_ms})");
            }
        }
        let lits: Vec<Bool> = assumptions.iter().map(|n| Bool::new_const(*n)).collect();
        if let Some(d) = &mut self.dump {
            for a in assumptions {
                let decl = format!("(declare-fun |{a}| () Bool)");
                if self.dumped_decls.insert(decl.clone()) {
                    let _ = writeln!(d, "{decl}");
                }
            }
            let _ = writeln!(d, "(check-sat-assuming ({}))", assumptions.iter().map(|a| format!("|{a}|")).collect::<Vec<_>>().join(" "));
        }
        let started = std::time::Instant::now();
        let armed = super::watchdog::arm(self.solver.get_context(), std::time::Duration::from_millis(u64::from(real_ms)));
        let r = self.solver.check_assumptions(&lits);
        let elapsed = started.elapsed();
        let interrupted = armed.fired();
        drop(armed);
        Ok(match r {
            z3::SatResult::Unsat => {
                self.last_model = None;
                Outcome::Proved
            }
            z3::SatResult::Sat => {
                self.last_model = self.solver.get_model();
                Outcome::NotProved { unknown: None }
            }
            z3::SatResult::Unknown => {
                self.last_model = self.solver.get_model();
                let reason = self.solver.get_reason_unknown().unwrap_or_else(|| "unknown".into());
                // Z3's reason is not reliable when it is interrupted (a timeout
                // during nonlinear arithmetic reads "incomplete (theory
                // arithmetic)"), so the clock decides what a timeout is.
                let why = if interrupted || elapsed.as_millis() + 50 >= u128::from(real_ms) {
                    Unknown::Timeout
                } else if self.rlimit > 0 && (reason.contains("canceled") || reason.contains("resource")) {
                    Unknown::ResourceLimit(self.rlimit)
                } else {
                    Unknown::Incomplete(reason)
                };
                Outcome::NotProved { unknown: Some(why) }
            }
        })
    }

    /// Drops the model of the last failed check, in Z3 as well; called before
    /// every check, as the model only serves the report of the check before.
    ///
    /// Z3's API context keeps a counted reference to the last object it
    /// returned (`api::context::save_object`), so a model fetched after a failed
    /// check stayed alive through every later check until the next object was
    /// returned — in a failing unit often until its end. The checks made while
    /// a model was alive were slower for the same work: the merged Blelloch
    /// kernel took 12.5–13.6 s instead of 8.8–9.4 s, with the same `rlimit`
    /// count (Z3's effort) either way. Creating a parameter set, the cheapest
    /// call that returns an object, takes that reference over.
    fn forget_model(&mut self) {
        if self.last_model.take().is_some() {
            drop(z3::Params::new());
        }
    }

    /// The shadow solver alone (tests).
    #[cfg(test)]
    pub(crate) fn shadow_mut(&mut self) -> &mut Shadow {
        &mut self.shadow
    }

    /// The value of a constant in the model of the last failed check, as text.
    pub fn model_value(&self, name: &str, sort: &Sort) -> Option<String> {
        let m = self.last_model.as_ref()?;
        let v = match sort {
            Sort::Int => m.eval(&z3::ast::Int::new_const(name), false)?.to_string(),
            Sort::Bool => m.eval(&Bool::new_const(name), false)?.to_string(),
            Sort::Real => m.eval(&z3::ast::Real::new_const(name), false)?.to_string(),
            Sort::Named(_) => return None,
        };
        // An unconstrained constant evaluates to itself.
        if v.contains(name) || v.starts_with('|') {
            return None;
        }
        Some(v)
    }

    /// Z3's cumulative counters of this solver: (`rlimit` steps, quantifier
    /// instances). Deterministic for a given input, unlike the time a check
    /// takes (`ALPINE_TRACE_QUERIES` prints them per query).
    /// The shadow solver's work is included (Z3 counts `rlimit` steps per
    /// context, which the two solvers share; instances per solver).
    pub fn effort(&self) -> (u64, u64) {
        let (main, shadow) = (effort_of(&self.solver), self.shadow.effort());
        (main.0, main.1 + shadow.1)
    }

    pub fn statistics_rlimit(&self) -> Option<u64> {
        let s = self.solver.get_statistics();
        let found = s.entries().find(|e| e.key == "rlimit count").map(|e| match e.value {
            z3::StatisticsValue::UInt(v) => v as u64,
            z3::StatisticsValue::Double(v) => v as u64,
        });
        found
    }
}

/// Adds [`FALLBACK_ARITHMETIC`] to `p` when this thread's solvers use it;
/// whether it did.
pub fn set_arithmetic(p: &mut z3::Params) -> bool {
    let fallback = FALLBACK.with(|f| f.get());
    if fallback {
        p.set_bool(FALLBACK_ARITHMETIC.0, FALLBACK_ARITHMETIC.1);
    }
    fallback
}

/// Builds a batch of Boolean terms with `native` and asserts them in `solver`
/// (of the same context). `Err`: Z3 refused a term; nothing was asserted.
pub fn assert_batch(solver: &z3::Solver, native: &mut NativeTerms, batch: &[Term]) -> Result<(), String> {
    let asts = native.batch(batch)?;
    let ctx = solver.get_context();
    for a in asts {
        // SAFETY: `a` is a Boolean AST of this solver's context, kept alive by
        // `native`; `wrap` takes a reference of its own.
        let b = unsafe { <Bool as z3::ast::Ast>::wrap(ctx, a) };
        solver.assert(&b);
    }
    Ok(())
}

/// Z3's cumulative counters of one solver: (`rlimit` steps, quantifier
/// instances).
pub fn effort_of(solver: &z3::Solver) -> (u64, u64) {
    let s = solver.get_statistics();
    let mut out = (0, 0);
    for e in s.entries() {
        let v = match e.value {
            z3::StatisticsValue::UInt(v) => u64::from(v),
            z3::StatisticsValue::Double(v) => v as u64,
        };
        match e.key.as_str() {
            "rlimit count" => out.0 = v,
            "quant instantiations" => out.1 = v,
            _ => {}
        }
    }
    out
}

/// Pretty model values: Z3 prints negative numbers as `(- 3)`.
pub fn tidy_value(v: &str) -> String {
    let t = v.trim();
    if let Some(inner) = t.strip_prefix("(- ").and_then(|s| s.strip_suffix(')')) {
        return format!("-{inner}");
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn params_are_accepted_and_batches_accumulate() {
        configure_globals();
        let mut s = SmtSolver::new(2000, 0, false);
        let f = |x: Term| Term::app("f", vec![x], Sort::Int);
        let x = Term::konst("x", Sort::Int);
        let ax = Term::forall(vec![(Rc::from("x"), Sort::Int)], vec![vec![f(x.clone())]], f(x.clone()).gt(&x), "ax");
        let g = Term::konst("g", Sort::Bool);
        s.assert(g.implies(&ax));
        assert!(matches!(s.check(&["g"]).unwrap(), Outcome::NotProved { .. }));
        // A second batch refers to symbols declared in the first.
        s.assert(g.implies(&f(Term::int(3)).lt(&Term::int(2))));
        assert!(matches!(s.check(&["g"]).unwrap(), Outcome::Proved));
    }

    /// The second attempt's arithmetic setting is a solver parameter Z3
    /// takes (a wrong name would make it ignore later input: checked here),
    /// only on the thread that asked for it, and in the dump.
    #[test]
    fn the_fallback_arithmetic_is_accepted_on_its_thread_only() {
        configure_globals();
        let x = Term::konst("x", Sort::Int);
        let nonneg = |s: &mut SmtSolver| {
            s.assert(x.mul(&x).lt(&Term::int(0)));
            matches!(s.check(&[]).unwrap(), Outcome::Proved)
        };
        let dump = std::thread::spawn(move || {
            use_fallback_arithmetic();
            let mut s = SmtSolver::new(2000, 0, true);
            let x = Term::konst("x", Sort::Int);
            s.assert(x.mul(&x).lt(&Term::int(0)));
            assert!(matches!(s.check(&[]).unwrap(), Outcome::Proved));
            s.dump.take().unwrap()
        })
        .join()
        .unwrap();
        assert!(dump.contains("(set-option :smt.arith.nl.grobner false)"), "{dump}");
        let mut here = SmtSolver::new(2000, 0, true);
        assert!(nonneg(&mut here));
        assert!(!here.dump.unwrap().contains("grobner"));
    }

    /// A batch Z3 cannot take (here an ill-sorted term) is an error of the
    /// check, not a batch silently left out.
    #[test]
    fn a_rejected_batch_is_an_error() {
        configure_globals();
        let mut s = SmtSolver::new(2000, 0, false);
        let b = Term::konst("b", Sort::Bool);
        s.assert(b.eq(&Term::int(1)));
        let err = s.check(&[]).expect_err("an ill-sorted batch must be reported");
        assert!(err.contains("rejected"), "{err}");
    }

    #[test]
    fn model_values_are_read_back() {
        configure_globals();
        let mut s = SmtSolver::new(2000, 0, false);
        let x = Term::konst("x", Sort::Int);
        s.assert(x.eq(&Term::int(-4)));
        assert!(matches!(s.check(&[]).unwrap(), Outcome::NotProved { unknown: None }));
        assert_eq!(s.model_value("x", &Sort::Int).map(|v| tidy_value(&v)), Some("-4".to_string()));
        // The model serves only the report of the check it came from.
        s.assert(Term::konst("p", Sort::Bool).implies(&x.eq(&Term::int(3))));
        assert!(matches!(s.check(&["p"]).unwrap(), Outcome::Proved));
        assert_eq!(s.model_value("x", &Sort::Int), None);
    }
}
