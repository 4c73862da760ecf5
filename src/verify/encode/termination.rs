//! Termination of recursive pure functions, direct (`f` calls `f`) or mutual
//! (`even` calls `odd`, `odd` calls `even`).
//!
//! A pure function's definition is an axiom `∀x. pre(x) ⇒ f(x) = body(x)`
//! (`functions.rs`). Where the recursion does not terminate these axioms can
//! be inconsistent (`f(x) = f(x) + 1`, or `g(x) = h(x) + 1` beside
//! `h(x) = g(x) + 1`) and would prove `false` in every unit that assumes them.
//! So the functions of a *recursion cycle* (a strongly connected component of
//! the graph of calls in bodies, `facts::call_cycle`) must come with measures:
//! one tuple of integers `μ_f(x̄)` per function `f` of the cycle such that at
//! every call `g(ā)` in the body of `f` to a function `g` of the cycle, under
//! the conditions that lead to the call, `f`'s precondition and `g`'s at `ā`,
//!
//! ```text
//!   μ_g(ā) <lex μ_f(x̄)   where   (a₁..aₙ) <lex (b₁..bₘ)  iff  for some i,
//!                                 a_j = b_j for j < i,  0 <= a_i  and  a_i < b_i.
//! ```
//!
//! **Why this suffices.** The lexicographic order on integer tuples whose
//! decreasing component is non-negative is well-founded, so every chain of
//! calls through the cycle is finite: the definitions of the cycle, read as a
//! recursive program, terminate on every argument satisfying the
//! preconditions, and define one function each there (and arbitrary values
//! elsewhere, where the axioms say nothing). Those functions satisfy the
//! definitional axioms, which are therefore consistent. The same order
//! justifies the induction of the units (`functions.rs`): a unit proves its
//! function's postcondition at arguments of measure `m` assuming the cycle's
//! postconditions only at its body's calls of the cycle, all of smaller
//! measure.
//!
//! **Which measures.** For each function: the measure of its `decreases` clause
//! if it has one, then alpine's own candidates (each `int` parameter, the
//! length of each sequence parameter, and `|s| - k` for a sequence `s` and an
//! `int` `k`). Every combination of candidates over the cycle's functions is
//! tried (at most [`MAX_ASSIGNMENTS`]; each call checked at most once per pair
//! of candidates); the first under which every call decreases is a proof.
//! `decreases;` and `decreases assume;` add nothing: termination is proved
//! whatever the clause claims.
//!
//! **Where.** Every unit of a function on the cycle proves the termination of
//! the whole cycle on its own: it evaluates every body of the cycle afresh,
//! under a guard of its own, with the precondition assumed and nothing else
//! (no induction hypotheses: assumed at a call that did not decrease, the
//! hypothesis `ensures false` made a non-terminating function's termination
//! check vacuous, `fail/function_termination_hypothesis.pvl`; and the unit
//! does not assume the definitions of the cycle, whose consistency is what is
//! being proved). So no unit relies on a proof made in another unit, and a
//! program whose units pass has a proof of every cycle. A unit that finds no
//! measure reports `termination`, at the first call in its own body that the
//! first combination (the clauses, where written) does not show decreasing.

use super::expr::ECx;
use super::functions::RecSite;
use super::{Encoder, Env, Term};
use crate::ast::{Expr, Ty};
use crate::diagnostics::codes;
use crate::verify::smt::Sort;
use crate::verify::Failure;
use std::collections::HashMap;

/// At most this many combinations of candidate measures are tried for a cycle.
const MAX_ASSIGNMENTS: usize = 256;

/// A candidate measure of one function, over its parameters.
enum Measure {
    /// The `decreases` clause.
    Clause(Vec<Expr>),
    /// An `int` parameter.
    Param(usize),
    /// The length of a sequence parameter.
    Len(usize, Ty),
    /// The length of a sequence parameter minus an `int` parameter.
    LenMinus(usize, Ty, usize),
}

/// One function of the cycle, evaluated afresh for the termination proof.
struct Member {
    idx: usize,
    formals: Vec<Term>,
    cands: Vec<Measure>,
}

fn candidates(f: &crate::verify::ir::Function) -> Vec<Measure> {
    let mut out = Vec::new();
    if let Some((es, _)) = &f.decreases {
        out.push(Measure::Clause(es.clone()));
    }
    for (i, (_, t)) in f.params.iter().enumerate() {
        match t {
            Ty::Int => out.push(Measure::Param(i)),
            Ty::Seq(el) => {
                out.push(Measure::Len(i, (**el).clone()));
                for (k, (_, tk)) in f.params.iter().enumerate() {
                    if *tk == Ty::Int {
                        out.push(Measure::LenMinus(i, (**el).clone(), k));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

impl Encoder<'_> {
    /// The components of measure `m` of function `idx` at arguments `args`.
    fn measure_at(&mut self, idx: usize, m: &Measure, args: &[Term]) -> Vec<Term> {
        let f = &self.prog.functions[idx];
        match m {
            Measure::Clause(es) => {
                let mut env = Env::default();
                env.push();
                for ((n, _), v) in f.params.iter().zip(args) {
                    env.declare(n.clone(), v.clone());
                }
                let g = Term::tru();
                let mut out = Vec::new();
                for e in es {
                    let mut cx = ECx::new(&g, &env, None, &f.class);
                    cx.check = false;
                    out.push(self.expr(e, &mut cx));
                }
                out
            }
            Measure::Param(i) => vec![args[*i].clone()],
            Measure::Len(i, el) => vec![self.seq_fns_of(el).len(&args[*i])],
            Measure::LenMinus(i, el, k) => vec![self.seq_fns_of(el).len(&args[*i]).sub(&args[*k])],
        }
    }

    /// Function `idx`'s precondition at `args` (unchecked).
    fn precondition_at(&mut self, idx: usize, args: &[Term]) -> Term {
        let f = &self.prog.functions[idx];
        let mut env = Env::default();
        env.push();
        for ((n, _), v) in f.params.iter().zip(args) {
            env.declare(n.clone(), v.clone());
        }
        let g = Term::tru();
        let mut pre = Vec::new();
        for s in &f.pre {
            let mut cx = ECx::new(&g, &env, None, &f.class);
            cx.check = false;
            pre.push(self.expr(&s.expr, &mut cx));
        }
        Term::and(pre)
    }
}

/// `there <lex here` (see the module documentation).
fn lex_less(there: &[Term], here: &[Term]) -> Term {
    let mut alts = Vec::new();
    for i in 0..there.len().min(here.len()) {
        let mut conj: Vec<Term> = (0..i).map(|j| there[j].eq(&here[j])).collect();
        conj.push(Term::int(0).le(&there[i]));
        conj.push(there[i].lt(&here[i]));
        alts.push(Term::and(conj));
    }
    Term::or(alts)
}

/// Proves that the recursion of `cycle` (the recursion cycle of `own`, whose
/// unit this is) terminates, or reports `termination` at `own`.
pub fn check(enc: &mut Encoder, own: usize, cycle: &[usize]) {
    let prog = enc.prog;
    // Every body of the cycle, evaluated afresh: its calls of the cycle.
    enc.functions.cycle = cycle.to_vec();
    enc.functions.hypothesis = false;
    enc.functions.sites.clear();
    let mut members = Vec::new();
    for &h in cycle {
        let f = &prog.functions[h];
        let g = enc.fresh_const("term", Sort::Bool);
        let mut env = Env::default();
        env.push();
        let mut formals = Vec::new();
        for (n, t) in &f.params {
            let s = enc.sort_of(t);
            let c = enc.fresh_const(n, s);
            env.declare(n.clone(), c.clone());
            formals.push(c);
        }
        for s in &f.pre {
            let mut cx = ECx::new(&g, &env, None, &f.class);
            cx.check = false;
            let t = enc.expr(&s.expr, &mut cx);
            enc.assume(&g, t);
        }
        if let Some(body) = &f.body {
            let mut cx = ECx::new(&g, &env, None, &f.class);
            cx.check = false;
            cx.body_of = Some(h);
            enc.expr(body, &mut cx);
        }
        members.push(Member { idx: h, formals, cands: candidates(f) });
    }
    let sites = std::mem::take(&mut enc.functions.sites);
    enc.functions.cycle.clear();
    let pos: HashMap<usize, usize> = members.iter().enumerate().map(|(i, m)| (m.idx, i)).collect();
    // Whether site `s` decreases under candidates `a` (caller) and `b` (callee).
    let mut memo: HashMap<(usize, usize, usize), bool> = HashMap::new();
    let mut decreases = |enc: &mut Encoder, s: usize, a: usize, b: usize| -> bool {
        if let Some(&v) = memo.get(&(s, a, b)) {
            return v;
        }
        let site: &RecSite = &sites[s];
        let (caller, callee) = (&members[pos[&site.caller]], &members[pos[&site.callee]]);
        let here = enc.measure_at(caller.idx, &caller.cands[a], &caller.formals.clone());
        let there = enc.measure_at(callee.idx, &callee.cands[b], &site.args);
        // A measure that is syntactically unchanged cannot decrease.
        let v = there != here && {
            let mut hyps = site.conds.clone();
            hyps.push(enc.precondition_at(callee.idx, &site.args));
            enc.prove(&site.guard, &Term::and(hyps), &lex_less(&there, &here), None)
        };
        memo.insert((s, a, b), v);
        v
    };
    let sizes: Vec<usize> = members.iter().map(|m| m.cands.len()).collect();
    if sizes.iter().all(|&n| n > 0) {
        let mut assign = vec![0usize; members.len()];
        for _ in 0..MAX_ASSIGNMENTS {
            let ok = (0..sites.len()).all(|s| {
                let (a, b) = (assign[pos[&sites[s].caller]], assign[pos[&sites[s].callee]]);
                decreases(enc, s, a, b)
            });
            if ok {
                return;
            }
            // The next combination (the last function's candidate varies fastest).
            let mut k = assign.len();
            loop {
                if k == 0 {
                    break;
                }
                k -= 1;
                assign[k] += 1;
                if assign[k] < sizes[k] {
                    break;
                }
                assign[k] = 0;
            }
            if assign.iter().all(|&c| c == 0) {
                break;
            }
        }
    }
    // Blame the first call of `own`'s body that the first combination does not
    // show decreasing.
    let f = &prog.functions[own];
    let own_sites: Vec<usize> = (0..sites.len()).filter(|&s| sites[s].caller == own).collect();
    let blamed = if sizes.iter().all(|&n| n > 0) {
        own_sites.iter().copied().find(|&s| !decreases(enc, s, 0, 0)).or(own_sites.first().copied())
    } else {
        own_sites.first().copied()
    };
    let span = blamed.map(|s| sites[s].span).unwrap_or(f.name_span);
    let what = if f.decreases.is_some() {
        "neither its `decreases` measure nor a parameter, sequence length or `|s| - k`"
    } else {
        "no parameter, sequence length or `|s| - k`"
    };
    let message = if cycle.len() == 1 {
        format!("the recursion of `{}` may not terminate: {what} decreases at this call", f.name)
    } else {
        let others: Vec<String> = cycle.iter().filter(|&&h| h != own).map(|&h| format!("`{}`", prog.functions[h].name)).collect();
        format!(
            "the recursion of `{}` through {} may not terminate: {what} of each function decreases at every call of the cycle",
            f.name,
            others.join(", ")
        )
    };
    enc.failures.push(Failure {
        code: codes::TERMINATION,
        message,
        span,
        related: vec![(f.name_span, "the recursive function".into())],
        values: vec![],
    });
}
