//! # `loop_unroll` — loop unrolling
//!
//! **What.** Peels the first `K` iterations of a loop off in front of it:
//! `K` copies of the body (and `for` update), each preceded by the loop's
//! invariants as `assert`s, then the loop itself, whose invariants bounding the
//! variable in its start direction are shifted by the `K` updates.
//!
//! **Why.** Straight-line copies let a GPU compiler schedule the first
//! iterations freely, and the asserts keep the proof local: each copy is
//! verified from the invariant, like an iteration of the loop.
//!
//! **When.** The loop fits the template of [`super::loops`] and provably runs at
//! least `K` times: Z3 shows, from the facts of [`super::prove`], that the guard
//! holds for the variable's first `K` values `i₀, i₀ OP c, …`. The copies carry
//! no guard, so this proof is what makes them safe.
//!
//! **Example** (`gpuopt loop_unroll i 2;`, `requires N >= 2`):
//!
//! ```text
//! int i = 0;                           int i = 0;
//! loop_invariant 0 <= i;               assert 0 <= i;
//! loop_invariant i <= N;               assert i <= N;
//! while (i < N) {             ──▶      a[i] = 0;
//!   a[i] = 0;                          i = i + 1;
//!   i = i + 1;                         assert 0 <= i;
//! }                                    assert i <= N;
//!                                      a[i] = 0;
//!                                      i = i + 1;
//!                                      loop_invariant 0 + 2 <= i;
//!                                      loop_invariant i <= N;
//!                                      while (i < N) { a[i] = 0; i = i + 1; }
//! ```
//!
//! (Like Alpinist, the asserts also stand in front of the first copy: they are
//! the loop's entry check, and they make re-verification confirm the
//! invariants the applicability proof assumed.)

use super::fallback::{self, Fallback, Verdict};
use super::loops::{self, Cmp, LoopShape, UpdateOp};
use super::prove::{encode, var_term, LoopFacts};
use super::{loop_template, replace_loop, residual, ApplicabilityError, Context, LoopId, LoopRequest, Pass};
use crate::ast::*;
use crate::diagnostics::codes;
use crate::verify::encode::trunc_div;
use crate::verify::smt::Term;
use std::collections::HashSet;

/// The largest unroll factor accepted (the output grows linearly with it).
pub const MAX_FACTOR: i64 = 1024;

pub struct LoopUnroll;

/// What [`LoopUnroll`]'s check established: the loop, its shape, and that it
/// runs at least `factor` times.
#[derive(Clone, Debug)]
pub struct UnrollPlan {
    pub target: LoopId,
    pub shape: LoopShape,
    pub factor: u64,
    /// The directive that asked (removed by the rewrite).
    pub directive: Option<Span>,
}

// ------------------------------------------------------------------------------------
// Applicability

impl Pass for LoopUnroll {
    const NAME: &'static str = "loop_unroll";
    type Request = LoopRequest;
    type Plan = UnrollPlan;

    fn check(program: &Program, request: &LoopRequest, cx: &Context<'_>) -> Result<UnrollPlan, ApplicabilityError> {
        let (id, var) = request.locate(program, cx)?;
        let directive = request.origin.directive();
        super::check_factor(super::request_span(program, id, directive), request.factor, 1, MAX_FACTOR, "unroll")?;
        let (site, shape) = loop_template(program, id, &var, directive)?;
        let k = request.factor.unsigned_abs(); // checked: 1 ≤ factor
        let plan = |shape| UnrollPlan { target: id, shape, factor: k, directive };
        let mut facts = LoopFacts::new(&site, &shape.var, shape.start.as_ref());
        if let Err(mut e) = prove_trip_count(&mut facts, &shape, k) {
            let e = match cx.fallback {
                Fallback::Off => e,
                Fallback::Skipped => {
                    e.0.message.push_str(" (the fallback to alpine's verifier was skipped: `--no-verify`)");
                    e
                }
                Fallback::Verify(v) => match fallback::holds_on_entry(program, id, &trip_condition(&shape, k), v) {
                    Verdict::Proved => return Ok(plan(shape)),
                    Verdict::NotProved(why) => {
                        let tried = format!("alpine's verifier could not prove it either ({why})");
                        let help = match e.0.help.take() {
                            Some(h) => format!("{h}; {tried}"),
                            None => tried,
                        };
                        e.help(help)
                    }
                },
            };
            return Err(match directive {
                Some(d) => e.related(d, "requested here"),
                None => e,
            });
        }
        Ok(plan(shape))
    }

    fn apply(program: &mut Program, plan: UnrollPlan) {
        let found = replace_loop(program, plan.target, |l| {
            let (mut out, declares) = loops::init_stmts(l);
            out.extend(peel(l, plan.factor, &[]));
            let mut rest = residual(l, plan.directive);
            shift_invariants(&mut rest, &plan.shape, plan.factor);
            out.push(loops::stmt(StmtKind::Loop(rest)));
            scoped(out, declares)
        });
        assert!(found, "a plan is applied to the program it was checked on, which has its loop");
    }
}

/// The loop runs at least `k` times, as a PVL condition on the state in which
/// it is entered: the guard holds for the variable's first `k` values
/// (`i < N && i + 1 < N && …`; the template guarantees that the body changes
/// neither the update nor the bound). What [`prove_trip_count`] proves, for the
/// verifier fallback.
pub fn trip_condition(shape: &LoopShape, k: u64) -> Expr {
    let op = match shape.op {
        UpdateOp::Add => BinOp::Add,
        UpdateOp::Sub => BinOp::Sub,
        UpdateOp::Mul => BinOp::Mul,
        UpdateOp::Div => BinOp::Div,
    };
    let cmp = match shape.cmp {
        Cmp::Lt => BinOp::Lt,
        Cmp::Le => BinOp::Le,
        Cmp::Gt => BinOp::Gt,
        Cmp::Ge => BinOp::Ge,
    };
    let mut v = loops::var(&shape.var);
    let mut guards = Vec::new();
    for _ in 0..k {
        guards.push(loops::bin(cmp, v.clone(), shape.bound.clone()));
        v = loops::bin(op, v, loops::int(shape.step));
    }
    guards.into_iter().reduce(|a, b| loops::bin(BinOp::And, a, b)).unwrap_or(Expr::new(ExprKind::BoolLit(true), Span::DUMMY))
}

/// The values of the loop variable at the start of iterations `0..n`, as terms
/// over its entry value.
pub fn iterates(shape: &LoopShape, n: u64) -> Vec<Term> {
    let mut v = var_term(&shape.var, &Ty::Int).expect("int variable");
    let c = Term::int(i128::from(shape.step));
    let mut out = Vec::with_capacity(n as usize);
    for _ in 0..n {
        out.push(v.clone());
        v = match shape.op {
            UpdateOp::Add => v.add(&c),
            UpdateOp::Sub => v.sub(&c),
            UpdateOp::Mul => v.mul(&c),
            UpdateOp::Div => trunc_div(&v, &c),
        };
    }
    out
}

/// `v CMP bound`
pub fn guard_at(shape: &LoopShape, v: &Term, bound: &Term) -> Term {
    match shape.cmp {
        Cmp::Lt => v.lt(bound),
        Cmp::Le => v.le(bound),
        Cmp::Gt => v.gt(bound),
        Cmp::Ge => v.ge(bound),
    }
}

/// Proves that the guard holds for the first `k` values of the variable, i.e.
/// that the loop runs at least `k` times; otherwise explains what is missing.
pub fn prove_trip_count(facts: &mut LoopFacts, shape: &LoopShape, k: u64) -> Result<(), ApplicabilityError> {
    if k == 0 {
        return Ok(());
    }
    let times = |n: u64| if n == 1 { "once".to_string() } else { format!("{n} times") };
    let fail = |why: String| {
        ApplicabilityError::new(
            codes::OPTIMISE_TRIP_COUNT,
            format!("cannot prove that this loop runs at least {}{why}", times(k)),
            shape.guard_span,
        )
    };
    let Some(bound) = encode(&shape.bound, &mut HashSet::new()) else {
        return Err(fail(format!(
            ": its bound `{}` is outside what alpine reasons about (integer arithmetic)",
            crate::printer::print_expr(&shape.bound)
        )));
    };
    let values = iterates(shape, k);
    let all = Term::and(values.iter().map(|v| guard_at(shape, v, &bound)).collect());
    if facts.proves(&all) {
        return Ok(());
    }
    // Explain: how far the proof gets, and what would help.
    let known = values.iter().take_while(|v| facts.proves(&guard_at(shape, v, &bound))).count() as u64;
    let last = values.last().expect("k > 0");
    let lower = matches!(shape.cmp, Cmp::Lt | Cmp::Le);
    let needed = facts.constant(last).map(|c| match shape.cmp {
        Cmp::Lt => (">=", c.saturating_add(1)),
        Cmp::Le => (">=", c),
        Cmp::Gt => ("<=", c.saturating_sub(1)),
        Cmp::Ge => ("<=", c),
    });
    let shown = crate::printer::print_expr(&shape.bound);
    let far = Term::int(1 << 62);
    let unconstrained = !facts.proves(&if lower { bound.ge(&far.neg()) } else { bound.le(&far) });
    let mut e = if unconstrained {
        fail(format!(": nothing bounds `{shown}` from {}", if lower { "below" } else { "above" }))
    } else if known > 0 {
        fail(format!(": the annotations only show that it runs at least {}", times(known)))
    } else if shape.start.is_none() && !facts.mentioned.contains(&shape.var) {
        fail(format!(": nothing says what `{}` is when the loop starts", shape.var))
    } else {
        fail(": the annotations do not show that it runs at all".to_string())
    };
    if let Some((op, c)) = needed {
        let wanted = if op == ">=" { bound.ge(&Term::int(i128::from(c))) } else { bound.le(&Term::int(i128::from(c))) };
        // A clause the program's own facts contradict (e.g. `N >= 6` where a
        // precondition pins `N == 5`) would only make the method unverifiable.
        e = if facts.proves(&wanted.not()) {
            let smaller =
                if known > 0 { format!("use a factor of at most {known}") } else { "this loop cannot be unrolled here".to_string() };
            e.help(format!("the annotations rule out `{shown} {op} {c}`: {smaller}"))
        } else {
            let clause = if matches!(shape.bound.kind, ExprKind::Var(_) | ExprKind::Field { .. }) { "requires" } else { "assume" };
            e.help(format!("add e.g. `{clause} {shown} {op} {c}`"))
        };
    }
    Err(e)
}

// ------------------------------------------------------------------------------------
// Rewrite

/// `k` copies of an iteration, each preceded by the invariants as asserts and
/// followed by `extra` (iteration merging's counter update).
pub fn peel(l: &Loop, k: u64, extra: &[Stmt]) -> Vec<Stmt> {
    let inv = loops::invariant_conjuncts(l);
    let mut out = Vec::new();
    for _ in 0..k {
        out.extend(inv.iter().cloned().map(loops::assert_stmt));
        out.extend(loops::iteration_copy(l, true, extra.to_vec()));
    }
    out
}

/// The residual loop's invariants after `k` peeled iterations.
pub fn shift_invariants(l: &mut Loop, shape: &LoopShape, k: u64) {
    for c in &mut l.contract.clauses {
        if let ClauseKind::LoopInvariant(e) = &mut c.kind {
            *e = loops::shift_bounds(e, &shape.var, shape.op, shape.step, k);
        }
    }
}

/// The replacement statements, in a block of their own when they declare the
/// `for` loop's variable (its scope was the loop).
pub fn scoped(out: Vec<Stmt>, declares: bool) -> Vec<Stmt> {
    if declares {
        vec![loops::stmt(StmtKind::Block(Block { stmts: out, span: Span::DUMMY }))]
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::SourceFile;
    use crate::transforms::step::next_directive;
    use crate::transforms::{Context, Step};

    use crate::transforms::tests::apply_first_directive as run;

    const PLUS: &str = "class C { requires N >= 3; void m(int N) { int i = 0; gpuopt loop_unroll i K; \
        loop_invariant 0 <= i; loop_invariant i <= N; while (i < N) { i = i + 1; } } }";

    #[test]
    fn unrolls_k_copies_with_asserts_and_shifts_the_bound() {
        let out = run(&PLUS.replace('K', "3")).unwrap();
        assert_eq!(out.matches("i = i + 1;").count(), 4, "{out}");
        assert_eq!(out.matches("assert 0 <= i;").count(), 3, "{out}");
        assert!(out.contains("loop_invariant 0 + 3 <= i;"), "{out}");
        assert!(!out.contains("gpuopt"), "{out}");
    }

    #[test]
    fn refuses_more_than_the_provable_trip_count() {
        let e = run(&PLUS.replace('K', "4")).unwrap_err();
        assert!(e.starts_with(codes::OPTIMISE_TRIP_COUNT), "{e}");
        assert!(e.contains("at least 3 times"), "{e}");
    }

    #[test]
    fn never_suggests_a_clause_the_facts_contradict() {
        let src = PLUS.replace('K', "6").replace("requires N >= 3;", "requires N == 5;");
        let file = SourceFile::new("t.pvl", src.as_str());
        let (p, _) = crate::frontend(&file).unwrap();
        let step = next_directive(&p, None).unwrap();
        let e = step.check(&p, &Context::z3_only(&src)).unwrap_err().0;
        assert!(e.message.contains("at least 5 times"), "{}", e.message);
        assert_eq!(e.help.as_deref(), Some("the annotations rule out `N >= 6`: use a factor of at most 5"));
    }

    #[test]
    fn explains_a_missing_lower_bound() {
        let src = PLUS.replace('K', "3").replace("requires N >= 3;", "").replace("loop_invariant i <= N;", "");
        let file = SourceFile::new("t.pvl", src.as_str());
        let (p, _) = crate::frontend(&file).unwrap();
        let step = next_directive(&p, None).unwrap();
        let e = step.check(&p, &Context::z3_only(&src)).unwrap_err().0;
        assert!(e.message.contains("nothing bounds `N` from below"), "{}", e.message);
        assert_eq!(e.help.as_deref(), Some("add e.g. `requires N >= 3`"));
    }

    #[test]
    fn refuses_non_positive_factors() {
        let e = run(&PLUS.replace('K', "0")).unwrap_err();
        assert!(e.starts_with(codes::OPTIMISE_FACTOR), "{e}");
    }

    /// VerifyThis 2019 challenge 1 in small: the loop runs once because
    /// `flat(segs) == xs` and `|xs| > 0` give `|segs| > 0`, which needs the
    /// pure function's definition, unfolded once.
    const FLAT: &str = "class C { pure seq<int> flat(seq<seq<int>> xs) = 0 < |xs| ? head(xs) + flat(tail(xs)) : seq<int>{}; \
        requires XS; requires flat(segs) == xs; void m(seq<int> xs, seq<seq<int>> segs) { int x = 0; gpuopt loop_unroll x 1; \
        loop_invariant 0 <= x && x <= |segs|; while (x < |segs|) { x = x + 1; } } }";

    /// The same with a function known only by its postcondition, which the Z3
    /// check does not use (the verifier does).
    const SHRINK: &str = "class C { ensures |\\result| <= |xs|; pure seq<int> shrink(seq<int> xs); \
        requires |shrink(segs)| > 0; void m(seq<int> segs) { int x = 0; gpuopt loop_unroll x 1; \
        loop_invariant 0 <= x && x <= |segs|; while (x < |segs|) { x = x + 1; } } }";

    fn check_with(src: &str, fallback: Fallback) -> Result<UnrollPlan, crate::diagnostics::Diagnostic> {
        let (p, _) = crate::frontend(&SourceFile::new("t.pvl", src)).unwrap();
        let Some(Step::Unroll(req)) = next_directive(&p, None) else { panic!("an unroll directive") };
        LoopUnroll::check(&p, &req, &Context { text: src, fallback: &fallback }).map_err(|e| e.0)
    }

    fn verifier() -> Fallback {
        Fallback::Verify(fallback::Verifier { path: "no-such-dir/t.pvl".into(), opts: Default::default() })
    }

    #[test]
    fn z3_alone_unfolds_a_pure_function_once() {
        let src = FLAT.replace("XS", "|xs| > 0");
        // No fallback configured: the Z3 check alone proves it.
        assert!(check_with(&src, Fallback::Off).is_ok());
        assert!(check_with(&src, Fallback::Skipped).is_ok());
        // `xs` may be empty, and then `segs` may be too.
        let e = check_with(&FLAT.replace("XS", "|xs| >= 0"), Fallback::Off).unwrap_err();
        assert_eq!(e.code, codes::OPTIMISE_TRIP_COUNT);
        assert_eq!(e.message, "cannot prove that this loop runs at least once: the annotations do not show that it runs at all");
        // The equation the other way round and under `!`: the same.
        assert!(check_with(&FLAT.replace("XS", "|xs| > 0").replace("flat(segs) == xs", "!(xs != flat(segs))"), Fallback::Off).is_ok());
        // An inequality says nothing about `segs`.
        let e = check_with(&src.replace("flat(segs) == xs", "flat(segs) != xs"), Fallback::Off).unwrap_err();
        assert_eq!(e.message, "cannot prove that this loop runs at least once: the annotations do not show that it runs at all");
        // Twice is more than `|xs| > 0` shows (one segment may hold all of `xs`).
        let e = check_with(&src.replace("loop_unroll x 1", "loop_unroll x 2"), Fallback::Off).unwrap_err();
        assert!(e.message.starts_with("cannot prove that this loop runs at least 2 times"), "{}", e.message);
    }

    #[test]
    fn the_verifier_proves_what_z3_alone_cannot() {
        let e = check_with(SHRINK, Fallback::Off).unwrap_err();
        assert_eq!(e.message, "cannot prove that this loop runs at least once: the annotations do not show that it runs at all");
        assert!(check_with(SHRINK, verifier()).is_ok());
        let e = check_with(SHRINK, Fallback::Skipped).unwrap_err();
        assert!(e.message.ends_with("(the fallback to alpine's verifier was skipped: `--no-verify`)"), "{}", e.message);
    }

    #[test]
    fn the_verifier_refuses_when_the_loop_may_not_run() {
        // `xs` may be empty, and then `segs` may be too.
        let e = check_with(&FLAT.replace("XS", "|xs| >= 0"), verifier()).unwrap_err();
        assert_eq!(e.code, codes::OPTIMISE_TRIP_COUNT);
        assert_eq!(e.message, "cannot prove that this loop runs at least once: the annotations do not show that it runs at all");
        assert!(e.help.as_deref().is_some_and(|h| h.contains("alpine's verifier could not prove it either")), "{:?}", e.help);
        // Twice is more than `|xs| > 0` shows.
        let e = check_with(&FLAT.replace("XS", "|xs| > 0").replace("loop_unroll x 1", "loop_unroll x 2"), verifier()).unwrap_err();
        assert!(e.message.starts_with("cannot prove that this loop runs at least 2 times"), "{}", e.message);
        // `shrink` may return a longer sequence than it is given.
        let e = check_with(&SHRINK.replace("<= |xs|", ">= |xs|"), verifier()).unwrap_err();
        assert!(e.help.as_deref().is_some_and(|h| h.contains("alpine's verifier could not prove it either")), "{:?}", e.help);
    }

    #[test]
    fn the_trip_condition_is_asserted_after_a_for_loops_initialiser() {
        // `i` is declared by the loop: the check's block declares it itself.
        let src = "class C { pure int f(int n) = n + 1; requires n >= 0; void m(int n) { gpuopt loop_unroll i 2; \
                   loop_invariant 0 <= i; for (int i = 0; i < f(n) + 1; i = i + 1) { } } }";
        assert!(check_with(src, Fallback::Off).unwrap_err().message.contains("is outside what alpine reasons about"));
        assert!(check_with(src, verifier()).is_ok());
        assert!(check_with(&src.replace("n >= 0", "n >= -1"), verifier()).is_err());
        let (p, _) = crate::frontend(&SourceFile::new("t.pvl", src)).unwrap();
        let Some(Step::Unroll(req)) = next_directive(&p, None) else { panic!("an unroll directive") };
        let Some((id, var)) = req.locate(&p, &Context::z3_only(src)).ok() else { panic!("a loop") };
        let (_, shape) = loop_template(&p, id, &var, req.origin.directive()).unwrap();
        assert_eq!(crate::printer::print_expr(&trip_condition(&shape, 2)), "i < f(n) + 1 && i + 1 < f(n) + 1");
    }

    #[test]
    fn division_counts_truncating() {
        // 243, 81, 27, 9, 3 > 1: five iterations, a sixth would need 1 > 1.
        let src = "class C { void m() { int i = 243; gpuopt loop_unroll i K; loop_invariant 0 <= i; \
                   loop_invariant i <= 243; while (i > 1) { i = i / 3; } } }";
        assert!(run(&src.replace('K', "5")).unwrap().contains("i <= 243 / 243"));
        assert!(run(&src.replace('K', "6")).is_err());
    }
}
