//! `par` blocks and barriers (issue #4; design: `shared/docs/verifier-encoding.md`
//! §5.7, and `docs/verifier.md` "par blocks and barriers").
//!
//! * **Host.** The host exhales every block's precondition quantified over the
//!   iteration range (`\forall*` for resources; a conjunct that does not mention
//!   some iteration variables has its permissions multiplied by the sizes of
//!   their ranges, as VerCors' `Scale`), and inhales the quantified
//!   postconditions. When that exhale fails for lack of permission and the
//!   threads' preconditions together already exceed full permission, the error
//!   says "possible data race".
//! * **Threads.** Each block's body is verified once, for an arbitrary thread, on
//!   a side path, in a fresh state holding the block's precondition; the
//!   locations it holds have the values they had at the fork.
//! * **Barriers.** On the thread side a barrier exhales its precondition (the
//!   heap is havocked where no permission is left) and inhales its
//!   postcondition; `\old` in a barrier contract is the thread's state just
//!   before the barrier. Once per syntactic barrier a *redistribution check* runs
//!   on a side path of the thread: in a fresh, empty state, inhale the
//!   precondition of every thread (`\forall*` over the range) and exhale the
//!   postcondition of every thread — permissions and value facts. A barrier can
//!   therefore only move permissions and knowledge between threads, never create
//!   them (VerCors#448: older VerCors let `read` become `write`).
//! * **Uniformity** ([`crate::verify::uniformity`]): a barrier under
//!   thread-dependent control flow is rejected (`barrier_divergence`); in the
//!   redistribution check a thread local that may differ between threads stands
//!   for an uninterpreted function of the iteration variables, never for one
//!   value shared by all threads (VerCors' weakness: `temp == tid` for every
//!   thread would be a contradiction, after which any barrier passes).
//!
//! Running the redistribution check under the thread's path guard is sound: the
//! path condition describes an arbitrary thread reaching the barrier, every
//! thread reaches it with the same values of the uniform locals (which is all
//! the check shares between threads), so the check's hypotheses are weaker than
//! "all threads arrived".

use super::assertion::{ExCx, Frame};
use super::{Encoder, Env, Path, UnitCx};
use crate::ast::subst::mentions;
use crate::ast::{BinOp, Expr, ExprKind, Ident, Name, Param, QuantKind, Span, Ty, Type, TypeKind};
use crate::diagnostics::codes;
use crate::verify::ir::facts::{heap_function_names, is_pure};
use crate::verify::ir::{self, Spec};
use crate::verify::smt::term::Node;
use crate::verify::smt::{Sort, Term};
use crate::verify::uniformity;
use std::collections::HashSet;

/// The message of a failed redistribution check.
const REDISTRIBUTION_FAILS: &str =
    "barrier postcondition may not follow from the barrier preconditions of all threads (a barrier only redistributes)";

/// The limit of the contradiction query of `contradicting_posts`: a clause
/// that contradicts the precondition does so in arithmetic over a few locals.
const CONTRADICTION_MS: u32 = 100;

/// What a barrier needs to know about the par block around it.
#[derive(Clone)]
pub struct ParCx {
    pub iters: Vec<(Name, Expr, Expr)>,
    /// The iteration ranges as evaluated by the host at the fork.
    pub bounds: Vec<(Term, Term)>,
    /// Thread locals that may differ between threads.
    pub nonuniform: HashSet<Name>,
    /// Barriers under thread-dependent control flow (already reported).
    pub divergent: Vec<Span>,
}

impl Encoder<'_> {
    pub(super) fn par(&mut self, blocks: &[ir::ParBlock], span: Span, path: &mut Path, ucx: &UnitCx) {
        // Per block: non-emptiness, and each iteration variable's (lo, hi).
        let mut ranges: Vec<(Term, Vec<(Term, Term)>)> = Vec::new();
        for b in blocks {
            let mut conds = Vec::new();
            let mut bounds = Vec::new();
            for (_, lo, hi) in &b.iters {
                let (l, h) = (self.eval(lo, path, ucx), self.eval(hi, path, ucx));
                conds.push(l.lt(&h));
                bounds.push((l, h));
            }
            ranges.push((Term::and(conds), bounds));
        }
        // The threads are checked first, in the state at the fork; the host's
        // exhale and inhale come after. A contradictory par postcondition (or a
        // failed host check, which is assumed afterwards) must not make the
        // threads' checks vacuous: the thread branch's guard implies the host's.
        let at_fork = path.state.clone();
        // Each block: one arbitrary thread.
        let host_names: HashSet<Name> = path.env.names();
        for (b, (_, bounds)) in blocks.iter().zip(&ranges) {
            let g = self.side_guard(&path.guard);
            let mut p = Path { guard: g.clone(), state: self.fresh_state(), env: path.env.clone(), alive: true, host_depth: None };
            p.env.push();
            let mut in_range = Vec::new();
            for ((n, _, _), (l, h)) in b.iters.iter().zip(bounds) {
                let t = self.fresh_const(n, Sort::Int);
                in_range.push(l.le(&t).and2(&t.lt(h)));
                p.env.declare(n.clone(), t);
            }
            self.assume(&g, Term::and(in_range));
            p.host_depth = Some(p.env.depth());
            p.env.push();
            let iter_names: Vec<Name> = b.iters.iter().map(|i| i.0.clone()).collect();
            let u = uniformity::analyse_with_heap_fns(&b.body, &iter_names, &host_names, &heap_function_names(self.prog));
            for d in &u.divergent {
                let mut f = crate::verify::Failure::new(
                    codes::BARRIER_DIVERGENCE,
                    "barrier under thread-dependent control flow: not every thread of the block may reach it (barrier divergence)",
                    *d,
                );
                if let Some(c) = u.reason.iter().find(|r| r.0 == *d) {
                    f.related.push((c.1, "this condition may differ between threads".into()));
                }
                self.failures.push(f);
            }
            self.par_stack.push(ParCx { iters: b.iters.clone(), bounds: bounds.clone(), nonuniform: u.nonuniform, divergent: u.divergent });
            {
                let fr = self.frame(&p, ucx);
                let mut st = p.state.clone();
                for s in &b.pre {
                    self.inhale(&g, &mut st, &fr, &s.expr, &Term::tru(), None, true);
                }
                p.state = st;
            }
            // The locations a thread holds have the values they had when the
            // threads were forked (VerCors' `allLocationsSame`): sound, because
            // nobody else can have changed them.
            let mut fams: Vec<std::rc::Rc<str>> = self.heap.families.keys().cloned().collect();
            fams.sort();
            for fam in fams {
                self.same_where_held(&g, &p.state, &at_fork, &fam);
            }
            let _ = self.smoke(&p, b.span, "the par block body");
            self.block(&b.body, &mut p, ucx);
            if p.alive {
                let fr = self.frame(&p, ucx);
                let mut st = p.state.clone();
                let parts: Vec<(&Expr, ExCx)> = b
                    .post
                    .iter()
                    .map(|s| {
                        (
                            &s.expr,
                            ExCx {
                                code: codes::POSTCONDITION,
                                what: "postcondition of the par block may not hold".into(),
                                span: Some(s.span),
                                perm_code: codes::PERMISSION,
                                perm_span: None,
                                related: vec![],
                                check_only: false,
                                keeps_heap: false,
                                scale: None,
                            },
                        )
                    })
                    .collect();
                self.exhale_all(&p.guard.clone(), &mut st, &fr, &parts, &Term::tru(), None);
            }
            self.par_stack.pop();
        }
        // Host: give up the preconditions, get the postconditions.
        let fr = self.frame(path, ucx);
        let mut st = path.state.clone();
        let mut parts: Vec<(Expr, ExCx, Term)> = Vec::new();
        for (b, (non_empty, bounds)) in blocks.iter().zip(&ranges) {
            for s in &b.pre {
                for conj in s.expr.conjuncts() {
                    let (q, unused) = quantify(conj, &b.iters, &HashSet::new());
                    let ex = ExCx {
                        code: codes::PRECONDITION,
                        what: "precondition of the par block may not hold".into(),
                        span: Some(s.span),
                        perm_code: codes::PERMISSION,
                        perm_span: Some(s.span),
                        related: vec![(span, "the par block".into())],
                        check_only: false,
                        keeps_heap: false,
                        scale: scale_of(&unused, bounds),
                    };
                    parts.push((q, ex, non_empty.clone()));
                }
            }
        }
        // A failed check is assumed afterwards, which makes the rest of the
        // host path vacuous; so the exhale is first tried on a side path, and
        // only if that fails are the threads' preconditions examined for a
        // data race (on another side path) to word the real error.
        let all_non_empty = Term::and(ranges.iter().map(|r| r.0.clone()).collect());
        let racy = if parts.iter().any(|(q, _, _)| !is_pure(q)) {
            let trial = self.side_guard(&path.guard);
            let before = self.failures.len();
            // The trial's failures are dropped, so they must not shorten the
            // unit's later queries (`limits.rs`): the real exhale asks with
            // the limits the unit had before the trial, and its failure is
            // the one reported.
            let limits_before = (self.limits.failed, self.limits.timed_out, self.limits.stopped);
            self.host_exhale(&trial, &mut st.clone(), &fr, &parts, &all_non_empty, ranges.len());
            (self.limits.failed, self.limits.timed_out, self.limits.stopped) = limits_before;
            let failed: Vec<Span> = self.failures.drain(before..).filter(|f| f.code == codes::PERMISSION).map(|f| f.span).collect();
            if failed.is_empty() {
                Vec::new()
            } else {
                let bounds: Vec<(Term, Term)> = ranges.iter().flat_map(|r| r.1.clone()).collect();
                self.racy_clauses(&path.guard.clone(), &fr, &parts, &bounds, &failed)
            }
        } else {
            Vec::new()
        };
        let failures_before = self.failures.len();
        self.host_exhale(&path.guard.clone(), &mut st, &fr, &parts, &all_non_empty, ranges.len());
        for f in &mut self.failures[failures_before..] {
            if f.code == codes::PERMISSION && racy.contains(&f.span) {
                let what = f.message.rsplit_once("insufficient permission for ").map(|x| x.1.to_string()).unwrap_or_default();
                f.message = format!(
                    "possible data race on {what} between threads: the preconditions of all threads together need more than full permission to it"
                );
            }
        }
        for (b, (non_empty, bounds)) in blocks.iter().zip(&ranges) {
            for s in &b.post {
                for conj in s.expr.conjuncts() {
                    let (q, unused) = quantify(conj, &b.iters, &HashSet::new());
                    let scale = scale_of(&unused, bounds);
                    self.inhale(&path.guard.clone(), &mut st, &fr, &q, non_empty, scale.as_ref(), false);
                }
            }
        }
        path.state = st;
    }

    /// The host's exhale of the quantified preconditions. Blocks may have
    /// different ranges: then each part is exhaled under its own block's
    /// non-emptiness.
    fn host_exhale(
        &mut self,
        guard: &Term,
        st: &mut super::state::State,
        fr: &Frame,
        parts: &[(Expr, ExCx, Term)],
        all_non_empty: &Term,
        blocks: usize,
    ) {
        if blocks == 1 {
            let refs: Vec<(&Expr, ExCx)> = parts.iter().map(|(q, ex, _)| (q, ex.clone())).collect();
            self.exhale_all(guard, st, fr, &refs, all_non_empty, None);
        } else {
            for (q, ex, ne) in parts {
                self.exhale_all(guard, st, fr, &[(q, ex.clone())], ne, None);
            }
        }
    }

    /// The clauses (among `failed`) at which the preconditions of all threads
    /// together become contradictory by themselves once there are at least two
    /// threads per iteration variable: inhaling assumes at most full permission
    /// everywhere, so more than full permission to one location is a
    /// contradiction — a data race. Diagnosis only: it changes the wording of
    /// errors, never adds or removes one.
    fn racy_clauses(
        &mut self,
        guard: &Term,
        fr: &Frame,
        parts: &[(Expr, ExCx, Term)],
        bounds: &[(Term, Term)],
        failed: &[Span],
    ) -> Vec<Span> {
        // A race needs two threads; with two or more the contradiction must not
        // come from the path alone.
        let two = Term::and(bounds.iter().map(|(l, h)| h.sub(l).ge(&Term::int(2))).collect());
        let side = self.side_guard(guard);
        let g = self.sub_guard(&side, &two);
        if self.prove(&g, &Term::tru(), &Term::fls(), None) {
            return Vec::new();
        }
        let mut st = self.fresh_state();
        let mut racy: Vec<Span> = Vec::new();
        for (q, ex, ne) in parts {
            // Conjuncts without permissions cannot race.
            if is_pure(q) {
                continue;
            }
            self.inhale(&g, &mut st, fr, q, ne, ex.scale.as_ref(), false);
            let Some(span) = ex.perm_span else { continue };
            if failed.contains(&span) && !racy.contains(&span) && self.prove(&g, &Term::tru(), &Term::fls(), None) {
                racy.push(span);
            }
        }
        racy
    }

    /// `barrier(L) { requires B; ensures B'; }` for the current thread.
    pub(super) fn barrier(&mut self, pre: &[Spec], post: &[Spec], span: Span, path: &mut Path, ucx: &UnitCx) {
        let Some(pcx) = self.par_stack.last().cloned() else {
            return self.unsupported("a barrier outside a par block", span);
        };
        let before = path.state.clone();
        // 1. The thread gives up B (heap havocked where nothing is left).
        {
            let fr = Frame { old: Some(before.clone()), ..self.frame(path, ucx) };
            let mut st = path.state.clone();
            let parts: Vec<(&Expr, ExCx)> = pre
                .iter()
                .map(|s| {
                    (
                        &s.expr,
                        ExCx {
                            code: codes::PRECONDITION,
                            what: "barrier precondition may not hold".into(),
                            span: Some(s.span),
                            perm_code: codes::PERMISSION,
                            perm_span: None,
                            related: vec![(span, "the barrier".into())],
                            check_only: false,
                            keeps_heap: false,
                            scale: None,
                        },
                    )
                })
                .collect();
            self.exhale_all(&path.guard.clone(), &mut st, &fr, &parts, &Term::tru(), None);
            path.state = st;
        }
        // 2. All threads together: B' must follow from B. A divergent barrier
        // was reported already; the check assumes every thread arrives.
        let mut contradiction = None;
        if !pcx.divergent.contains(&span) {
            contradiction = self.contradicting_posts(&pcx, pre, post, span, path, ucx);
            self.redistribution(&pcx, pre, post, contradiction, span, path, ucx);
        }
        // 3. The thread gets B'; `\old` is the state just before the barrier.
        let fr = Frame { old: Some(before), ..self.frame(path, ucx) };
        let mut st = path.state.clone();
        for s in post {
            self.inhale(&path.guard.clone(), &mut st, &fr, &s.expr, &Term::tru(), None, true);
        }
        path.state = st;
        // A postcondition clause that contradicts the precondition leaves
        // the thread nothing to continue with: its locals met the
        // precondition's arithmetic clauses (step 1 asserted them, and a
        // failed assertion is assumed afterwards) and the barrier does not
        // change them, so with that clause inhaled the path is infeasible.
        // Saying so here spares Z3 finding it out again in every later query
        // of the path, which can take it seconds each (a model of the path is
        // what it looks for first).
        if contradiction.is_some() {
            self.assume(&path.guard.clone(), Term::fls());
        }
    }

    /// Postcondition clauses of a barrier that contradict its own
    /// precondition: arithmetic over the thread's locals (no heap, no calls,
    /// no division but by a literal; `is_arithmetic`) that no values satisfy
    /// together with the precondition's arithmetic clauses, for a thread in
    /// range, where those alone are satisfiable. Such a clause cannot follow
    /// on any path that reaches the barrier with its precondition met (which
    /// the thread side checks), so the redistribution check fails on it; but
    /// showing that in the unit's solver means finding a model of the
    /// thread's whole path, where Z3 may search until the time limit
    /// (Blelloch's `2 * indicator + 2 == 2 * stride * (tid + 1)` against
    /// `indicator + 1 == 2 * stride * (tid + 1)`: 2.5–10 s). Here a solver of
    /// its own, holding nothing but these clauses, refutes it in milliseconds.
    /// The failure gets the redistribution check's blame.
    ///
    /// Returns the position of the first contradicting conjunct among the
    /// postcondition's conjuncts (in the order `redistribution` takes them):
    /// what follows it is vacuous (`redistribution`, `barrier`). Not finding
    /// a contradiction changes nothing.
    fn contradicting_posts(&mut self, pcx: &ParCx, pre: &[Spec], post: &[Spec], span: Span, path: &Path, ucx: &UnitCx) -> Option<usize> {
        let candidates: Vec<(usize, Span, &Expr)> =
            post_conjuncts(post).enumerate().filter(|(_, (_, c))| is_arithmetic(c, &path.env)).map(|(i, (sp, c))| (i, sp, c)).collect();
        if candidates.is_empty() || self.limits.stopped {
            return None;
        }
        let mut facts = Vec::new();
        for ((n, _, _), (l, h)) in pcx.iters.iter().zip(&pcx.bounds) {
            if let Some(t) = path.env.get(n).cloned() {
                facts.push(l.le(&t).and2(&t.lt(h)));
            }
        }
        for s in pre {
            for conj in s.expr.conjuncts().into_iter().filter(|c| is_arithmetic(c, &path.env)) {
                facts.push(self.eval(conj, path, ucx));
            }
        }
        let mut solver = crate::verify::smt::SmtSolver::new(CONTRADICTION_MS, 0, false);
        solver.assert(Term::and(facts));
        // Only a precondition that some values satisfy (Z3 says `sat`) can be
        // contradicted by a clause; `requires false` is the thread side's
        // error, not every postcondition's.
        if !matches!(solver.check_within(&[], CONTRADICTION_MS), Ok(crate::verify::smt::Outcome::NotProved { unknown: None })) {
            return None;
        }
        let mut reported: Vec<Span> = Vec::new();
        let mut first = None;
        for (index, spec, conj) in candidates {
            if reported.contains(&spec) {
                continue;
            }
            let q = self.fresh_const("contradicts", Sort::Bool);
            solver.assert(q.implies(&self.eval(conj, path, ucx)));
            let name = q.to_string().trim_matches('|').to_string();
            let started = std::time::Instant::now();
            let outcome = solver.check_within(&[name.as_str()], CONTRADICTION_MS);
            if super::trace_queries() {
                let verdict = if matches!(outcome, Ok(crate::verify::smt::Outcome::Proved)) { "contradicts" } else { "consistent" };
                eprintln!("[contradiction {:>4} ms] {verdict} @{}", started.elapsed().as_millis(), spec.start);
            }
            if matches!(outcome, Ok(crate::verify::smt::Outcome::Proved)) {
                self.note_failure(false);
                let mut f = crate::verify::Failure::new(codes::POSTCONDITION, REDISTRIBUTION_FAILS, spec);
                f.related.push((span, "the barrier: this postcondition contradicts its precondition, whatever the values".into()));
                self.failures.push(f);
                reported.push(spec);
                first = first.or(Some(index));
            }
        }
        first
    }

    /// From the preconditions of all threads, the postconditions of all
    /// threads must follow: the pre's conjuncts are inhaled quantified over
    /// the thread ids into a fresh state, the post's exhaled from it.
    /// `contradiction` is the first post conjunct that `contradicting_posts`
    /// refuted: it and the conjuncts after it are not asked. It has failed
    /// already; assumed afterwards, as every failed obligation is, it
    /// contradicts the precondition inhaled for the checking thread (in range
    /// on this path), so every later conjunct would hold. (Asked anyway,
    /// Blelloch's true `%` permission clause after its defect ran into the
    /// time limit.)
    // The barrier's situation (kernel, both contracts, path, unit) is what the
    // check is about; a struct bundling it would only be unpacked again here.
    #[allow(clippy::too_many_arguments)]
    fn redistribution(
        &mut self,
        pcx: &ParCx,
        pre: &[Spec],
        post: &[Spec],
        contradiction: Option<usize>,
        span: Span,
        path: &Path,
        ucx: &UnitCx,
    ) {
        let g = self.side_guard(&path.guard);
        // Thread locals that may differ between threads become functions of the
        // iteration variables; uniform ones keep the thread's value.
        let mut env = path.env.clone();
        let iter_names: Vec<Name> = pcx.iters.iter().map(|i| i.0.clone()).collect();
        let mut per_thread: HashSet<Name> = HashSet::new();
        let mut nonuniform: Vec<&Name> = pcx.nonuniform.iter().filter(|n| !iter_names.contains(n)).collect();
        nonuniform.sort();
        for n in nonuniform {
            if let Some(v) = env.get(n).cloned() {
                let f = self.fresh_name(&format!("{n}@thread"));
                env.per_thread.push((n.clone(), f.into(), v.sort(), iter_names.clone()));
                per_thread.insert(n.clone());
            }
        }
        let mut st = self.fresh_state();
        {
            let fr = Frame { env: &env, old: Some(st.clone()), ..self.frame(path, ucx) };
            for s in pre {
                for conj in s.expr.conjuncts() {
                    let (q, unused) = quantify(conj, &pcx.iters, &per_thread);
                    let scale = scale_of(&unused, &pcx.bounds);
                    self.inhale(&g, &mut st, &fr, &q, &Term::tru(), scale.as_ref(), false);
                }
            }
        }
        let fr = Frame { env: &env, old: Some(st.clone()), ..self.frame(path, ucx) };
        let mut quantified: Vec<(Expr, ExCx)> = Vec::new();
        for (spec, conj) in post_conjuncts(post).take(contradiction.unwrap_or(usize::MAX)) {
            let (q, unused) = quantify(conj, &pcx.iters, &per_thread);
            quantified.push((
                q,
                ExCx {
                    code: codes::POSTCONDITION,
                    what: REDISTRIBUTION_FAILS.into(),
                    span: Some(spec),
                    perm_code: codes::PERMISSION,
                    perm_span: Some(spec),
                    related: vec![(span, "the barrier".into())],
                    check_only: false,
                    keeps_heap: false,
                    scale: scale_of(&unused, &pcx.bounds),
                },
            ));
        }
        let refs: Vec<(&Expr, ExCx)> = quantified.iter().map(|(q, ex)| (q, ex.clone())).collect();
        self.exhale_all(&g, &mut st, &fr, &refs, &Term::tru(), None);
    }
}

/// The conjuncts of a barrier's postcondition, each with its clause's span,
/// in the order they are checked.
fn post_conjuncts(post: &[Spec]) -> impl Iterator<Item = (Span, &Expr)> {
    post.iter().flat_map(|s| s.expr.conjuncts().into_iter().map(move |c| (s.span, c)))
}

/// The number of threads a conjunct stands for when it does not mention the
/// iteration variables `unused` (indices into the block's iterators): the
/// product of their range sizes; `None` when it mentions all of them.
fn scale_of(unused: &[usize], bounds: &[(Term, Term)]) -> Option<Term> {
    if unused.is_empty() {
        return None;
    }
    let mut t = Term::int(1);
    for &i in unused {
        let (l, h) = &bounds[i];
        t = t.mul(&h.sub(l));
    }
    Some(t)
}

/// A par or barrier contract conjunct as all threads together see it:
/// quantified over the iteration variables it mentions (a `\forall*` if it
/// holds permissions), and the indices of the iteration variables it does not
/// mention (its permissions count once per value of those). A conjunct that
/// mentions one of the `per_thread` locals depends on every iteration variable.
fn quantify(conj: &Expr, iters: &[(Name, Expr, Expr)], per_thread: &HashSet<Name>) -> (Expr, Vec<usize>) {
    let all = per_thread.iter().any(|n| mentions(conj, n));
    let used: Vec<usize> = (0..iters.len()).filter(|&i| all || mentions(conj, &iters[i].0)).collect();
    let unused: Vec<usize> = (0..iters.len()).filter(|i| !used.contains(i)).collect();
    let pure = is_pure(conj);
    let mut e = conj.clone();
    for &i in used.iter().rev() {
        let (n, lo, hi) = &iters[i];
        let sp = conj.span;
        let var = Expr { kind: ExprKind::Var(Ident::new(&**n, sp)), span: sp, ty: Ty::Int };
        let b = |op, l: Expr, r: Expr| Expr { kind: ExprKind::Binary { op, lhs: Box::new(l), rhs: Box::new(r) }, span: sp, ty: Ty::Bool };
        let guard = b(BinOp::And, b(BinOp::Le, lo.clone(), var.clone()), b(BinOp::Lt, var, hi.clone()));
        e = Expr {
            kind: ExprKind::Quant {
                kind: if pure { QuantKind::Forall } else { QuantKind::ForallStar },
                binder: Param { ty: Type::new(TypeKind::Int, sp), name: Ident::new(&**n, sp), span: sp },
                guard: Box::new(guard),
                body: Box::new(e),
            },
            span: sp,
            ty: Ty::Bool,
        };
    }
    (e, unused)
}

/// A clause of integer and Boolean arithmetic over locals and array lengths:
/// no heap cell, call, quantifier or `\old`, and division or remainder only
/// by a nonzero literal, so evaluating it checks nothing that can fail but
/// that an array whose `.length` it reads is not null (the same check, with
/// the same blame, as the thread side's check of the barrier contract), and
/// Z3 reasons about it in linear arithmetic where the clause is linear
/// (Blelloch's `stride == output.length / 2` after `stride ==
/// output.length`). What `contradicting_posts` looks at. Its names must be
/// locals bound to a symbol of their own (as assignments, joins and havocs
/// bind them), so that a contradiction found holds for every value of them,
/// also for another thread's (the redistribution check's per-thread values);
/// a name that is not a local of `env` is a field of `this`, a heap cell,
/// whose value after the barrier need not be its value before.
fn is_arithmetic(e: &Expr, env: &Env) -> bool {
    use crate::ast::visit::Visitor;
    struct A<'a>(bool, &'a Env);
    impl Visitor for A<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Var(x) if self.1.get(&x.name).is_some_and(|t| matches!(t.node(), Node::Const(..))) => {}
                ExprKind::IntLit(_) | ExprKind::BoolLit(_) | ExprKind::Unary { .. } | ExprKind::Cond { .. } => {}
                ExprKind::Field { obj, field } if &*field.name == "length" && matches!(obj.kind, ExprKind::Var(_)) => {}
                ExprKind::Binary { op: BinOp::Div | BinOp::Mod, rhs, .. } if matches!(rhs.kind, ExprKind::IntLit(v) if v != 0) => {}
                ExprKind::Binary { op, .. } if !matches!(op, BinOp::Div | BinOp::Mod) => {}
                _ => self.0 = false,
            }
            crate::ast::visit::walk_expr(self, e);
        }
    }
    let mut a = A(true, env);
    a.visit_expr(e);
    a.0 && matches!(e.ty, Ty::Bool)
}
