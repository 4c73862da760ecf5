//! Exact inverses for quantified permissions to array cells whose index is not
//! affine in one binder: tiled and linearised loops.
//!
//! Alpinist's tiling writes `\forall* i_0; …; \forall* i_1; low(i_0,8) <= i_1 &&
//! i_1 < upp(i_0,8); Perm(A[i_1], p)` (a binder the location does not mention)
//! and `Perm(a[newIdx(i_0,i_1,10)], p)` with `newIdx(a,b,c) = a + b*c` and
//! `0 <= i_0 < 10`. Both are invertible in closed form: `i_0 = x div 8`, and
//! `i_1 = x div 10`, `i_0 = x − 10·(x div 10)`. With such an inverse the mask
//! update is quantifier-free, like the affine case (`assertion.rs`), and needs
//! neither inverse functions nor triggers.
//!
//! * [`Encoder::unfold_defs`] replaces applications of pure functions that have
//!   a plain definition (no precondition, not recursive) by their bodies; the
//!   definitional axiom `f(x̄) = body(x̄)` holds for every argument, so the
//!   result is equivalent.
//! * [`propose_inverse`] proposes, for the index `x` of the location, one term
//!   per binder: from an equation of the range (or `x = idx(v̄)`) in which a
//!   binder has coefficient ±1 (eliminated, possibly in terms of other binders),
//!   else from an upper bound `k·v + d <= 0` with a literal `k > 0` whose rest
//!   `d` mentions `x` (then `v = (−d) div k`, exact when the range also bounds
//!   `v` from below, as tiles do).
//! * The caller **proves** the proposal, `range(v̄) ⇒ v̄ = t̄(idx(v̄))`, before it
//!   uses it; a wrong proposal only costs the fallback (inverse functions).
//!   With that fact the update `M'(a, x) = M(a, x) ± ite(range(t̄(x)) ∧ x =
//!   idx(t̄(x)), p(t̄(x)), 0)` is exact: a cell is the image of an in-range tuple
//!   iff it is the image of `t̄(x)`, and of no other tuple (so injectivity holds
//!   as well).

use super::{Encoder, Term};
use crate::verify::smt::term::{Node, Op};
use crate::verify::smt::Sort;
use std::collections::HashMap;
use std::rc::Rc;

/// How deep definitions are unfolded into each other.
const UNFOLD_DEPTH: u32 = 8;

impl Encoder<'_> {
    /// `t` with every application of a plainly defined pure function replaced by
    /// its body (see the module documentation).
    pub fn unfold_defs(&self, t: &Term) -> Term {
        if self.functions.defs.is_empty() {
            return t.clone();
        }
        unfold(t, &self.functions.defs, UNFOLD_DEPTH)
    }
}

/// A proved closed-form inverse of `\forall* v̄; range; Perm(a[idx], p)`.
pub struct Solved {
    /// The index variable the solutions are written over.
    x: Rc<str>,
    sol: HashMap<Rc<str>, Term>,
    /// `range` and `idx`, definitions unfolded.
    range: Term,
    idx: Term,
}

impl Encoder<'_> {
    /// A closed-form inverse for the binders `vars` of a quantified permission
    /// to `a[idx]` under `range`, proposed by [`propose_inverse`] and proved
    /// (as an optional query) under `guard` and `cond`.
    pub fn solve_qp(&mut self, guard: &Term, cond: &Term, idx: &Term, range: &Term, vars: &[(Rc<str>, Sort)]) -> Option<Solved> {
        let names: Vec<Rc<str>> = vars.iter().map(|v| v.0.clone()).collect();
        let (idx, range) = (self.unfold_defs(idx), self.unfold_defs(range));
        let x: Rc<str> = Rc::from(self.fresh_name("x").as_str());
        let (sol, derived) = propose_inverse(&idx, &range, &names, &Term::konst(&x, Sort::Int))?;
        // range(v̄) ⇒ v̄ = t̄(idx(v̄)), for fresh v̄: already a theorem when every
        // step derived its binder from the conjuncts (see `Proposal::derived`),
        // else proved here. Z3 takes seconds over a symbolic divisor
        // (`(i·M + j) div M = i`), which derivation does not need.
        if !derived {
            let copy: HashMap<Rc<str>, Term> =
                vars.iter().map(|(v, s)| (v.clone(), self.fresh_const(&format!("{v}'0"), s.clone()))).collect();
            let at: HashMap<Rc<str>, Term> = [(x.clone(), idx.subst(&copy))].into_iter().collect();
            let goal = Term::and(names.iter().map(|v| copy[v].eq(&sol[v].subst(&at))).collect());
            let hyp = cond.and2(&range.subst(&copy));
            if !self.prove_quick(guard, &hyp, &goal) {
                return None;
            }
        }
        Some(Solved { x, sol, range, idx })
    }

    /// The mask update of a solved quantified permission: `a[x]` gains (or
    /// loses) `p(t̄(x))` where `t̄(x)` is in range and maps back to `x`.
    #[allow(clippy::too_many_arguments)]
    pub fn solved_update(
        &mut self,
        st: &mut super::state::State,
        fam: &Rc<str>,
        s: &Solved,
        arr: &Term,
        idx: &Term,
        cond: &Term,
        p: &Term,
        inhale: bool,
    ) {
        self.update_mask(st, fam, |xs| {
            let at: HashMap<Rc<str>, Term> = [(s.x.clone(), xs[1].clone())].into_iter().collect();
            let m: HashMap<Rc<str>, Term> = s.sol.iter().map(|(v, t)| (v.clone(), t.subst(&at))).collect();
            let hit = Term::and(vec![xs[0].eq(arr), cond.clone(), s.range.subst(&m), xs[1].eq(&s.idx.subst(&m))]);
            let amt = amount_at(p, &[arr.clone(), idx.clone()], xs).subst(&m);
            hit.ite(&if inhale { amt } else { amt.neg() }, &Term::real(0, 1))
        });
    }
}

/// The amount of a quantified permission as used in a mask update at the
/// location `xs`, where the update's condition already says that `xs` is the
/// location `args` of the tuple: occurrences of `args` in the amount (an
/// exhaled wildcard is `w(a, idx(v̄))`) become `xs` itself. Equal under that
/// condition, and no new location term `idx(inv(xs))` appears for every
/// location the mask is read at (each would trigger the heap, mask and
/// wildcard axioms again: a matching loop through the arithmetic of `inv`).
pub fn amount_at(p: &Term, args: &[Term], xs: &[Term]) -> Term {
    let mut out = p.clone();
    for (a, x) in args.iter().zip(xs).rev() {
        out = out.replace(a, x);
    }
    out
}

fn unfold(t: &Term, defs: &HashMap<Rc<str>, (Vec<Rc<str>>, Term)>, depth: u32) -> Term {
    match t.node() {
        Node::App(f, args, _) if depth > 0 && defs.contains_key(f) => {
            let (params, body) = &defs[f];
            let map: HashMap<Rc<str>, Term> = params.iter().cloned().zip(args.iter().map(|a| unfold(a, defs, depth))).collect();
            unfold(&body.subst(&map), defs, depth - 1)
        }
        // Quantified bodies are left alone: nothing here looks into them.
        Node::Quant(_) => t.clone(),
        _ => t.map_children(&mut |c| unfold(c, defs, depth)),
    }
}

/// Whether the term applies the function `name`.
pub fn applies(t: &Term, name: &str) -> bool {
    match t.node() {
        Node::App(f, args, _) => &**f == name || args.iter().any(|a| applies(a, name)),
        Node::Op(_, args, _) => args.iter().any(|a| applies(a, name)),
        Node::Quant(q) => applies(&q.body, name),
        _ => false,
    }
}

/// Proposed binder values, and whether they are *derived*: every step took its
/// binder from an equation of the conjuncts (`v + d = 0`, or `k·v + d = 0`
/// where `(−d) div k` is exact because `k` divides `−d`) or from a quotient
/// pin (`0 <= e − w·v < w` iff `v = e div w`, `triggers::pin_by_division`).
/// Each such step is implied by `range ∧ x = idx` and the steps before it, so
/// `range(v̄) ⇒ v̄ = t̄(idx(v̄))` holds without a proof. A bound (the largest
/// value) or a rotation is only a guess, proved by the caller.
type Proposal = (HashMap<Rc<str>, Term>, bool);

/// Proposes binder values over the index `x` for `\forall* vars; range;
/// Perm(a[idx], p)` (`idx` and `range` with definitions unfolded). `None` when
/// some binder is not determined by the rules of the module documentation.
pub fn propose_inverse(idx: &Term, range: &Term, vars: &[Rc<str>], x: &Term) -> Option<Proposal> {
    if let Some(sol) = propose_rotation(idx, vars, x) {
        return Some((sol, false));
    }
    let mut conjs = range.conjuncts();
    conjs.push(x.eq(idx));
    let x_name = match x.node() {
        Node::Const(n, _) => n.clone(),
        _ => return None,
    };
    let mut open: Vec<Rc<str>> = vars.to_vec();
    let mut sol: Vec<(Rc<str>, Term)> = Vec::new();
    let mut derived = true;
    while !open.is_empty() {
        let exact = solve_equation(&conjs, &open).or_else(|| super::triggers::pin_by_division(&open, &conjs));
        derived &= exact.is_some();
        let (v, t) = exact.or_else(|| solve_bound(&conjs, &open, &x_name))?;
        let one: HashMap<Rc<str>, Term> = [(v.clone(), t.clone())].into_iter().collect();
        conjs = conjs.iter().map(|c| c.subst(&one)).collect();
        for (_, s) in sol.iter_mut() {
            *s = s.subst(&one);
        }
        open.retain(|o| *o != v);
        sol.push((v, t));
    }
    let out: HashMap<Rc<str>, Term> = sol.into_iter().collect();
    // Every binder was eliminated, so no solution mentions one.
    debug_assert!(out.values().all(|t| !vars.iter().any(|v| t.mentions(v))));
    Some((out, derived))
}

/// A rotation of the threads, `(v + c) % n` with one binder `v` (PVL's `%`, a
/// truncated remainder: `ite(a >= 0, a mod n, −(−a mod n))`): `v = (x − c) mod n`,
/// where `c` is the index at `v = 0`. Exact on `0 <= v < n` when `c >= 0`, which the
/// caller proves (a wrong proposal only costs the fallback).
fn propose_rotation(idx: &Term, vars: &[Rc<str>], x: &Term) -> Option<HashMap<Rc<str>, Term>> {
    let [v] = vars else { return None };
    let remainder = match idx.node() {
        Node::Op(Op::Ite, a, _) => &a[1],
        _ => idx,
    };
    let Node::Op(Op::Mod, a, _) = remainder.node() else { return None };
    let (inner, n) = (&a[0], &a[1]);
    if n.mentions(v) || !inner.mentions(v) {
        return None;
    }
    let at_zero: HashMap<Rc<str>, Term> = [(v.clone(), Term::int(0))].into_iter().collect();
    let c = inner.subst(&at_zero);
    Some([(v.clone(), x.sub(&c).emod(n))].into_iter().collect())
}

/// `l = r` with a binder of literal coefficient `k` in `l − r`: that binder in
/// terms of the rest (which may mention other open binders), `(−d) div k`.
/// Coefficients ±1 are preferred (no division; other binders can still be
/// eliminated through them); with another `k` the rest must be free of open
/// binders (`x = tid + 10·k` gives `k = (x − tid) div 10`, exact where `x` is
/// an image, which the update checks with `x = idx(t̄(x))`); failing both, the
/// binder of the smallest coefficient whatever its rest (a strided index).
fn solve_equation(conjs: &[Term], open: &[Rc<str>]) -> Option<(Rc<str>, Term)> {
    let eqs: Vec<Term> = conjs
        .iter()
        .filter_map(|c| match c.node() {
            Node::Op(Op::Eq, a, _) if a[0].sort() == Sort::Int => Some(a[0].sub(&a[1])),
            _ => None,
        })
        .collect();
    for diff in &eqs {
        for v in open {
            match super::assertion::affine(diff, v) {
                // v + d = 0
                Some((1, d)) => return Some((v.clone(), negate(&d))),
                // −v + d = 0
                Some((-1, d)) => return Some((v.clone(), d)),
                _ => {}
            }
        }
    }
    for diff in &eqs {
        for v in open {
            if let Some((k, d)) = super::assertion::affine(diff, v) {
                if !open.iter().any(|o| d.mentions(o)) {
                    return Some((v.clone(), solved_for(&d, k)));
                }
            }
        }
    }
    // Every binder has a coefficient other than ±1 and a rest with other
    // binders (a strided index, `x = 2·(lo + (4·b + e)·256 + t)`): the binder
    // of the smallest coefficient, `t = (x − 2·lo − 2048·b − 512·e) div 2`,
    // still exact on images (there the dividend is `2·t`), and the bounds of `t`
    // then bound a quotient by a literal, which pins the others
    // (`triggers::pin_by_division`).
    let mut best: Option<(i128, Rc<str>, Term)> = None;
    for diff in &eqs {
        for v in open {
            if let Some((k, d)) = super::assertion::affine(diff, v) {
                if best.as_ref().is_none_or(|(b, _, _)| k.abs() < *b) {
                    best = Some((k.abs(), v.clone(), solved_for(&d, k)));
                }
            }
        }
    }
    best.map(|(_, v, t)| (v, t))
}

/// `v` from `k·v + d = 0` (`k` not ±1): `(−d) div k`, written as a quotient by
/// the positive `|k|` (`d div |k|` for `k < 0`), which is exact where `|k|`
/// divides it, and whose bounds `triggers::pin_by_division` reads.
fn solved_for(d: &Term, k: i128) -> Term {
    if k < 0 {
        d.ediv(&Term::int(-k))
    } else {
        negate(d).ediv(&Term::int(k))
    }
}

/// An upper bound `k·v + d <= 0` (`k > 0` a literal, `d` free of open binders
/// and mentioning the index `x`): `v = (−d) div k`, its largest value.
fn solve_bound(conjs: &[Term], open: &[Rc<str>], x: &str) -> Option<(Rc<str>, Term)> {
    for c in conjs {
        let Some(t) = as_le_zero(c) else { continue };
        for v in open {
            let Some((k, d)) = super::assertion::affine(&t, v) else { continue };
            if k <= 0 || !d.mentions(x) || open.iter().any(|o| d.mentions(o)) {
                continue;
            }
            let up = negate(&d);
            return Some((v.clone(), if k == 1 { up } else { up.ediv(&Term::int(k)) }));
        }
    }
    None
}

/// An integer comparison as `t <= 0`.
fn as_le_zero(c: &Term) -> Option<Term> {
    let Node::Op(op, a, _) = c.node() else { return None };
    if a.len() != 2 || a[0].sort() != Sort::Int {
        return None;
    }
    match op {
        Op::Le => Some(a[0].sub(&a[1])),
        Op::Lt => Some(a[0].sub(&a[1]).add(&Term::int(1))),
        _ => None,
    }
}

/// `−t`, without the double negation `0 − (0 − y)` that `affine` tends to build.
fn negate(t: &Term) -> Term {
    match t.node() {
        Node::Op(Op::Neg, a, _) => a[0].clone(),
        Node::Op(Op::Sub, a, _) if a[0].as_int_lit() == Some(0) => a[1].clone(),
        _ => Term::int(0).sub(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(n: &str) -> Term {
        Term::konst(n, Sort::Int)
    }

    #[test]
    fn tiled_binder_is_the_quotient() {
        // 0 <= i0 && i0 < c && i0*8 <= j && j < (i0+1)*8 ; location j
        let (i0, j, c, x) = (k("i0"), k("j"), k("c"), k("x"));
        let range =
            Term::and(vec![Term::int(0).le(&i0), i0.lt(&c), i0.mul(&Term::int(8)).le(&j), j.lt(&i0.add(&Term::int(1)).mul(&Term::int(8)))]);
        let (s, derived) = propose_inverse(&j, &range, &[Rc::from("i0"), Rc::from("j")], &x).expect("solved");
        assert!(!derived, "i0 is the largest value of a bound: a guess, proved by the caller");
        assert_eq!(s[&Rc::from("j")], x);
        assert_eq!(s[&Rc::from("i0")], x.ediv(&Term::int(8)));
    }

    #[test]
    fn strided_index_is_quotient_and_remainder() {
        // 0 <= i0 && i0 < 10 && 0 <= i1 ; location i0 + i1*10
        let (i0, i1, x) = (k("i0"), k("i1"), k("x"));
        let range = Term::and(vec![Term::int(0).le(&i0), i0.lt(&Term::int(10)), Term::int(0).le(&i1)]);
        let idx = i0.add(&i1.mul(&Term::int(10)));
        let (s, derived) = propose_inverse(&idx, &range, &[Rc::from("i0"), Rc::from("i1")], &x).expect("solved");
        assert!(derived, "i0 from the equation, i1 pinned by 0 <= x − 10·i1 < 10");
        let q = x.ediv(&Term::int(10));
        assert_eq!(s[&Rc::from("i1")], q);
        assert_eq!(s[&Rc::from("i0")], x.sub(&q.mul(&Term::int(10))));
    }

    #[test]
    fn block_of_symbolic_size_is_quotient_and_remainder() {
        // 0 <= i < m && 0 <= j < n ; location i*n + j (blocks of n threads): j = x − i·n, i = x div n.
        let (i, j, x, n, m) = (k("i"), k("j"), k("x"), k("n"), k("m"));
        let range = Term::and(vec![Term::int(0).le(&i), i.lt(&m), Term::int(0).le(&j), j.lt(&n)]);
        let (s, derived) = propose_inverse(&i.mul(&n).add(&j), &range, &[Rc::from("i"), Rc::from("j")], &x).expect("solved");
        assert!(derived, "an equation and a quotient pin: no proof needed");
        assert_eq!(s[&Rc::from("i")], x.ediv(&n));
        assert_eq!(s[&Rc::from("j")], x.sub(&x.ediv(&n).mul(&n)));
    }

    #[test]
    fn packed_element_is_quotient_by_a_multiple_of_the_block() {
        // Element 2 of 4 per thread: location (4·i + 2)·n + j, 0 <= j < n. Then
        // j = x − (4·i + 2)·n, and 0 <= x − 2·n − 4·n·i < n pins i = (x − 2·n) div (4·n).
        let (i, j, x, n, m) = (k("i"), k("j"), k("x"), k("n"), k("m"));
        let range = Term::and(vec![Term::int(0).le(&i), i.lt(&m), Term::int(0).le(&j), j.lt(&n)]);
        let idx = Term::int(4).mul(&i).add(&Term::int(2)).mul(&n).add(&j);
        let (s, derived) = propose_inverse(&idx, &range, &[Rc::from("i"), Rc::from("j")], &x).expect("solved");
        assert!(derived);
        let q = &s[&Rc::from("i")];
        assert!(format!("{q}").contains("div"), "{q}");
        // The bound wider than the coefficient (0 <= j < 8·n against 4·n): i is not pinned.
        let wide = Term::and(vec![Term::int(0).le(&i), i.lt(&m), Term::int(0).le(&j), j.lt(&Term::int(8).mul(&n))]);
        let none = propose_inverse(&idx, &wide, &[Rc::from("i"), Rc::from("j")], &x);
        assert!(none.as_ref().is_none_or(|(_, derived)| !derived), "{none:?}");
    }

    #[test]
    fn strided_packed_element_is_inverted() {
        // x = 2·((4·i + e)·32 + j): j = (x − 2·(4·i + e)·32) div 2, whose bounds
        // pin e = (x div 2 − 128·i) div 32, then i.
        let (i, j, e, x, m) = (k("i"), k("j"), k("e"), k("x"), k("m"));
        let range = Term::and(vec![
            Term::int(0).le(&i),
            i.lt(&m),
            Term::int(0).le(&j),
            j.lt(&Term::int(32)),
            Term::int(0).le(&e),
            e.lt(&Term::int(4)),
        ]);
        let idx = Term::int(2).mul(&Term::int(4).mul(&i).add(&e).mul(&Term::int(32)).add(&j));
        let vars = [Rc::from("i"), Rc::from("j"), Rc::from("e")];
        let (s, derived) = propose_inverse(&idx, &range, &vars, &x).expect("solved");
        assert!(derived);
        assert!(vars.iter().all(|v| !s[v].mentions("i") && !s[v].mentions("j") && !s[v].mentions("e")));
    }

    #[test]
    fn undetermined_binder_gives_nothing() {
        // i*n + j with j unbounded above: j = x − i·n, but nothing fixes i.
        let (i, j, x, n, m) = (k("i"), k("j"), k("x"), k("n"), k("m"));
        let range = Term::and(vec![Term::int(0).le(&i), i.lt(&m), Term::int(0).le(&j)]);
        assert!(propose_inverse(&i.mul(&n).add(&j), &range, &[Rc::from("i"), Rc::from("j")], &x).is_none());
    }
}
