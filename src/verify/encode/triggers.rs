//! Trigger (pattern) selection for the quantifiers alpine assumes.
//!
//! With MBQI off, Z3 instantiates a quantifier only when a ground term matches
//! one of its patterns, so every assumed quantifier gets patterns chosen here
//! (after silver's `GenericTriggerGenerator`):
//! * a candidate is an application of an uninterpreted function (heap and mask
//!   versions, `alen`, pure functions, sequence functions) that mentions a bound
//!   variable;
//! * its arguments are bound variables, terms without bound variables, or valid
//!   candidates themselves — never arithmetic over bound variables: Z3 accepts it
//!   in a pattern, but matches it syntactically, not modulo arithmetic (silver's
//!   generator excludes it too); what Z3 rejects outright is checked where every
//!   quantifier is built (`Term::is_pattern_term`);
//! * every candidate that covers all bound variables becomes a pattern of its
//!   own; if none does, one multi-pattern is built greedily.
//!
//! A quantifier for which nothing qualifies is left to Z3's own inference; that
//! can only cost completeness, never soundness.

use crate::verify::smt::term::{Node, Term};
use crate::verify::smt::Sort;
use std::rc::Rc;

pub fn choose(vars: &[Rc<str>], body: &Term) -> Vec<Vec<Term>> {
    let mut cands: Vec<Term> = Vec::new();
    collect(vars, body, &mut cands);
    let covers = |t: &Term, v: &Rc<str>| t.mentions(v);
    let full: Vec<Term> = cands.iter().filter(|t| vars.iter().all(|v| covers(t, v))).cloned().collect();
    if !full.is_empty() {
        // Prefer the smallest covering terms: a term containing another covering
        // term is redundant and matches less often.
        let minimal: Vec<Term> = full.iter().filter(|t| !full.iter().any(|o| o != *t && contains(t, o))).take(4).cloned().collect();
        return minimal.into_iter().map(|t| vec![t]).collect();
    }
    let mut multi = Vec::new();
    let mut left: Vec<&Rc<str>> = vars.iter().collect();
    while !left.is_empty() {
        let best = cands.iter().max_by_key(|t| left.iter().filter(|v| covers(t, v)).count());
        match best {
            Some(t) if left.iter().any(|v| covers(t, v)) => {
                left.retain(|v| !covers(t, v));
                multi.push(t.clone());
            }
            _ => return Vec::new(),
        }
    }
    vec![multi]
}

/// `∀v. m(v)` (or `∃`) over an Int `v` for which [`choose`] found no pattern
/// because `v` occurs only under arithmetic in applications (`H(b, 2·v)`):
/// the equivalent quantifier over the index `j = k·v + d` of one such
/// application, `∀j. k | j − d ⇒ m[k·v + d ↦ j, v ↦ (j − d)/k]` (`∧` for `∃`),
/// whose application `H(b, j)` is a valid pattern (verifier-encoding.md §5.8).
/// Returns the new matrix and its patterns; `j` is the constant `fresh`.
pub fn reindex(v: &Rc<str>, matrix: &Term, forall: bool, fresh: &Rc<str>) -> Option<(Term, Vec<Vec<Term>>)> {
    let mut apps = Vec::new();
    collect_apps(matrix, &mut apps);
    for app in apps {
        let Node::App(_, args, _) = app.node() else { continue };
        for a in args {
            if matches!(a.node(), Node::Const(n, _) if n == v) {
                continue;
            }
            let Some((k, d)) = super::assertion::affine(a, v) else { continue };
            let j = Term::konst(fresh, Sort::Int);
            let shifted = j.sub(&d);
            let (inv, divisible) = match k {
                1 => (shifted, Term::tru()),
                -1 => (shifted.neg(), Term::tru()),
                k => (shifted.ediv(&Term::int(k)), shifted.emod(&Term::int(k.abs())).eq(&Term::int(0))),
            };
            let replaced = matrix.replace(a, &j);
            let mut map = std::collections::HashMap::new();
            map.insert(v.clone(), inv);
            let body = replaced.subst(&map);
            let m = if forall { divisible.implies(&body) } else { divisible.and2(&body) };
            let pats = choose(std::slice::from_ref(fresh), &m);
            if !pats.is_empty() {
                return Some((m, pats));
            }
        }
    }
    None
}

/// A binder that the hypotheses of a quantifier's matrix fix through a
/// quotient: conjuncts `0 <= s` and `s < w` with `s = e − w·v` (`w` free of the
/// bound variables, a literal or a symbolic size; `e` free of `v`) hold exactly
/// when `v = e div w` (SMT-LIB's Euclidean `div`: `e = w·q + r`, `0 <= r < w`,
/// for `w > 0`; for `w <= 0` no `v` meets them, and neither does `e div w`,
/// since `0 <= s < w` then fails whatever `v` is). So substituting `v ↦ e div w`
/// is exact, in either polarity, like pinning by an equation (`qp::pinned`).
/// This is what a block-of-threads index needs: after `t ↦ j − b·B` (the
/// affine re-indexing above), `∀b, j. 0 <= b < G ⇒ 0 <= j − b·B < B ⇒ A[j] = 0`
/// has no pattern for `b`, but `b = j div B` does away with it.
/// A bound on a quotient by a literal, `0 <= s div k < w`, is the bound
/// `0 <= s < k·w` (strided indices: `a[2·(b·B + t)]`).
/// The coefficient may also be a literal multiple of the bound, `s = e − k·w·v`
/// with `k >= 1`: for `w > 0`, `0 <= s < w` implies `0 <= s < k·w`, so
/// `v = e div (k·w)`; the hypotheses stay (substituted), so the rewriting is
/// still exact. This is a packed thread's index: `K` elements per thread at
/// `(K·b + e)·B + t`, where `0 <= t < B` leaves `0 <= j − e·B − K·B·b < B`.
///
/// `hyps` are the conjuncts of the matrix's hypotheses (the antecedents of a
/// `∀`'s implication chain, the conjuncts of an `∃`'s matrix).
pub fn pin_by_division(vars: &[Rc<str>], hyps: &[Term]) -> Option<(Rc<str>, Term)> {
    use crate::verify::smt::term::Op;
    // A quotient by a literal `k > 0` (what re-indexing a strided index
    // leaves) is taken apart: `0 <= s div k` iff `0 <= s`, and `s div k < w`
    // iff `s < k·w` (floor division, `w` an integer).
    let undivided = |t: &Term| match t.node() {
        Node::Op(Op::Div, a, _) if a[1].as_int_lit().is_some_and(|k| k > 0) => (a[0].clone(), a[1].clone()),
        _ => (t.clone(), Term::int(1)),
    };
    let lower = |c: &Term| match c.node() {
        Node::Op(Op::Le, a, _) if a[0].as_int_lit() == Some(0) => Some(undivided(&a[1]).0),
        _ => None,
    };
    let upper = |c: &Term| match c.node() {
        Node::Op(Op::Lt, a, _) => {
            let (s, k) = undivided(&a[0]);
            Some((s, k.mul(&a[1])))
        }
        _ => None,
    };
    // Every pin the hypotheses offer, best first: a quotient whose rest is free
    // of the other binders, then one by the bound itself (`k = 1`). Any pin is
    // exact; the order only decides which binders the later steps can still
    // pin (`(4·b + e)·B + t`: `e` by `B` first, whose bound `0 <= e < 4` then
    // pins `b` by `4·B`, rather than `b` by `4·B` with `e` in its rest).
    let mut best: Option<((bool, bool), Rc<str>, Term)> = None;
    for lo in hyps.iter().filter_map(lower) {
        for (s, w) in hyps.iter().filter_map(upper).filter(|(s, _)| *s == lo) {
            if mentions_any(&w, vars) {
                continue;
            }
            let want = negated(&monomials(&w)?);
            for v in vars.iter().filter(|v| s.mentions(v)) {
                let Some((coef, rest)) = split_linear(&s, v) else { continue };
                if rest.mentions(v) {
                    continue;
                }
                let Some(k) = multiple(&coef, &want) else { continue };
                let rank = (mentions_any(&rest, vars), k != 1);
                if best.as_ref().is_none_or(|(r, _, _)| rank < *r) {
                    let by = if k == 1 { rest.ediv(&w) } else { rest.ediv(&Term::int(k).mul(&w)) };
                    best = Some((rank, v.clone(), by));
                }
            }
        }
    }
    best.map(|(_, v, by)| (v, by))
}

/// The conjuncts of `m`'s hypotheses: the antecedents along a `∀` matrix's
/// chain of implications, or every conjunct of an `∃` matrix.
pub fn hypotheses(m: &Term, forall: bool, out: &mut Vec<Term>) {
    use crate::verify::smt::term::Op;
    match m.node() {
        Node::Op(Op::Implies, a, _) if forall => {
            out.extend(a[0].conjuncts());
            hypotheses(&a[1], forall, out);
        }
        Node::Op(Op::And, _, _) if !forall => out.extend(m.conjuncts()),
        _ => {}
    }
}

/// A sum of literal multiples of atoms (`None`: the constant 1).
type Sum = Vec<(i128, Option<Term>)>;

/// `t` (free of the binder in question) as a [`Sum`]: `+`, `−`, negation and
/// products with a literal are taken apart, anything else is an atom.
fn monomials(t: &Term) -> Option<Sum> {
    use crate::verify::smt::term::Op;
    if let Some(k) = t.as_int_lit() {
        return Some(vec![(k, None)]);
    }
    Some(match t.node() {
        Node::Op(Op::Add, a, _) => [monomials(&a[0])?, monomials(&a[1])?].concat(),
        Node::Op(Op::Sub, a, _) => [monomials(&a[0])?, negated(&monomials(&a[1])?)].concat(),
        Node::Op(Op::Neg, a, _) => negated(&monomials(&a[0])?),
        Node::Op(Op::Mul, a, _) => match (a[0].as_int_lit(), a[1].as_int_lit()) {
            (Some(c), _) => scaled(&monomials(&a[1])?, c)?,
            (_, Some(c)) => scaled(&monomials(&a[0])?, c)?,
            _ => vec![(1, Some(t.clone()))],
        },
        _ => vec![(1, Some(t.clone()))],
    })
}

fn negated(s: &Sum) -> Sum {
    s.iter().map(|(k, a)| (-k, a.clone())).collect()
}

fn scaled(s: &Sum, c: i128) -> Option<Sum> {
    s.iter().map(|(k, a)| Some((k.checked_mul(c)?, a.clone()))).collect()
}

/// `t = coef·v + rest` with `coef` a [`Sum`] free of `v`: linear in `v`, where a
/// product's other factor may be symbolic (`b·B`).
fn split_linear(t: &Term, v: &str) -> Option<(Sum, Term)> {
    use crate::verify::smt::term::Op;
    if !t.mentions(v) {
        return Some((Vec::new(), t.clone()));
    }
    match t.node() {
        Node::Const(n, _) if &**n == v => Some((vec![(1, None)], Term::int(0))),
        Node::Op(Op::Add, a, _) => {
            let ((c1, r1), (c2, r2)) = (split_linear(&a[0], v)?, split_linear(&a[1], v)?);
            Some(([c1, c2].concat(), r1.add(&r2)))
        }
        Node::Op(Op::Sub, a, _) => {
            let ((c1, r1), (c2, r2)) = (split_linear(&a[0], v)?, split_linear(&a[1], v)?);
            Some(([c1, negated(&c2)].concat(), r1.sub(&r2)))
        }
        Node::Op(Op::Neg, a, _) => {
            let (c, r) = split_linear(&a[0], v)?;
            Some((negated(&c), r.neg()))
        }
        Node::Op(Op::Mul, a, _) => {
            let (with, factor) = match (a[0].mentions(v), a[1].mentions(v)) {
                (true, false) => (&a[0], &a[1]),
                (false, true) => (&a[1], &a[0]),
                _ => return None,
            };
            let (c, r) = split_linear(with, v)?;
            let f = monomials(factor)?;
            let mut prod = Sum::new();
            for (k, atom) in &c {
                for (l, g) in &f {
                    let atom = match (atom, g) {
                        (None, g) => g.clone(),
                        (a, None) => a.clone(),
                        (Some(a), Some(g)) => Some(a.mul(g)),
                    };
                    prod.push((k.checked_mul(*l)?, atom));
                }
            }
            let rest = if r.as_int_lit() == Some(0) { r } else { r.mul(factor) };
            Some((prod, rest))
        }
        _ => None,
    }
}

/// The literal `k >= 1` with `a = k·b` as polynomials over their atoms (`b`
/// not zero), if there is one.
fn multiple(a: &Sum, b: &Sum) -> Option<i128> {
    let (first, atom) = combined(b).into_iter().next()?;
    let k = combined(a).into_iter().find(|(_, x)| *x == atom)?.0;
    if k % first != 0 || k / first < 1 {
        return None;
    }
    let k = k / first;
    same_sum(a, &scaled(b, k)?).then_some(k)
}

/// `s` with the multiples of each atom added up and zero terms left out.
fn combined(s: &Sum) -> Sum {
    let mut out: Sum = Vec::new();
    for (k, atom) in s {
        match out.iter_mut().find(|(_, a)| a == atom) {
            Some(e) => e.0 = e.0.saturating_add(*k),
            None => out.push((*k, atom.clone())),
        }
    }
    out.retain(|(k, _)| *k != 0);
    out
}

/// Whether two sums are equal as polynomials over their atoms (syntactic atoms).
fn same_sum(a: &Sum, b: &Sum) -> bool {
    let (a, b) = (combined(a), combined(b));
    a.len() == b.len() && a.iter().all(|m| b.contains(m))
}

fn collect_apps(t: &Term, out: &mut Vec<Term>) {
    match t.node() {
        Node::App(_, args, _) => {
            out.push(t.clone());
            args.iter().for_each(|a| collect_apps(a, out));
        }
        Node::Op(_, args, _) => args.iter().for_each(|a| collect_apps(a, out)),
        // Nested quantifiers keep their own patterns.
        _ => {}
    }
}

fn mentions_any(t: &Term, vars: &[Rc<str>]) -> bool {
    vars.iter().any(|v| t.mentions(v))
}

/// Whether `t` may appear in a pattern: an application whose arguments are
/// bound variables, ground, or valid themselves.
fn valid(vars: &[Rc<str>], t: &Term) -> bool {
    match t.node() {
        Node::App(_, args, _) => args.iter().all(|a| match a.node() {
            Node::Const(n, _) if vars.contains(n) => true,
            _ if !mentions_any(a, vars) => true,
            Node::App(..) => valid(vars, a),
            _ => false,
        }),
        _ => false,
    }
}

fn collect(vars: &[Rc<str>], t: &Term, out: &mut Vec<Term>) {
    match t.node() {
        Node::App(_, args, _) => {
            if mentions_any(t, vars) && valid(vars, t) && !out.contains(t) {
                out.push(t.clone());
            }
            for a in args {
                collect(vars, a, out);
            }
        }
        Node::Op(_, args, _) => {
            for a in args {
                collect(vars, a, out);
            }
        }
        Node::Quant(q) => collect(vars, &q.body, out),
        _ => {}
    }
}

fn contains(big: &Term, small: &Term) -> bool {
    if big == small {
        return true;
    }
    match big.node() {
        Node::App(_, args, _) | Node::Op(_, args, _) => args.iter().any(|a| contains(a, small)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::smt::Sort;

    /// `0 <= j − b·B ∧ j − b·B < B` pins `b` to `j div B`, with `B` a literal
    /// or a symbolic size; bounds of another width, or a width that mentions a
    /// binder, pin nothing.
    #[test]
    fn block_index_is_pinned_by_a_quotient() {
        let (j, b) = (Term::konst("j", Sort::Int), Term::konst("b", Sort::Int));
        let vars = [Rc::from("b"), Rc::from("j")];
        for w in [Term::int(256), Term::konst("B", Sort::Int)] {
            let s = j.sub(&b.mul(&w));
            let hyps = [Term::int(0).le(&s), s.lt(&w)];
            let (v, by) = pin_by_division(&vars, &hyps).expect("pinned");
            assert_eq!((&*v, by), ("b", j.ediv(&w)));
            // The upper bound one short of the width: `b` is not determined.
            let short = [Term::int(0).le(&s), s.lt(&w.sub(&Term::int(1)))];
            assert!(pin_by_division(&vars, &short).is_none());
        }
        let s = j.sub(&b.mul(&j));
        assert!(pin_by_division(&vars, &[Term::int(0).le(&s), s.lt(&j)]).is_none());
        // Stride 2: `0 <= (j − 2·b·B) div 2 < B` pins `b = j div (2·B)`.
        let w = Term::konst("B", Sort::Int);
        let s = j.sub(&Term::int(2).mul(&b).mul(&w));
        let q = s.ediv(&Term::int(2));
        let (v, by) = pin_by_division(&vars, &[Term::int(0).le(&q), q.lt(&w)]).expect("pinned through the quotient");
        assert_eq!((&*v, by), ("b", j.ediv(&Term::int(2).mul(&w))));
    }

    #[test]
    fn arithmetic_arguments_are_not_patterns() {
        let i = Term::konst("i", Sort::Int);
        let s = Term::konst("s", Sort::named("S"));
        let idx = |k: Term| Term::app("index", vec![s.clone(), k], Sort::Int);
        let body = idx(i.clone()).le(&idx(i.add(&Term::int(1))));
        let pats = choose(&[Rc::from("i")], &body);
        assert_eq!(pats, vec![vec![idx(i)]]);
    }

    #[test]
    fn multi_pattern_when_no_single_term_covers() {
        let (i, j) = (Term::konst("i", Sort::Int), Term::konst("j", Sort::Int));
        let f = |x: &Term| Term::app("f", vec![x.clone()], Sort::Int);
        let body = f(&i).le(&f(&j));
        let pats = choose(&[Rc::from("i"), Rc::from("j")], &body);
        assert_eq!(pats.len(), 1);
        assert_eq!(pats[0].len(), 2);
    }

    #[test]
    fn strided_index_is_reindexed() {
        // ∀t. 0 ≤ t ⇒ H(b, 2t) = 7  becomes  ∀j. j mod 2 = 0 ⇒ (0 ≤ j div 2 ⇒ H(b, j) = 7)
        let t = Term::konst("t", Sort::Int);
        let b = Term::konst("b", Sort::named("Arr"));
        let h = |x: Term| Term::app("H", vec![b.clone(), x], Sort::Int);
        let m = Term::int(0).le(&t).implies(&h(Term::int(2).mul(&t)).eq(&Term::int(7)));
        assert!(choose(&[Rc::from("t")], &m).is_empty());
        let (m2, pats) = reindex(&Rc::from("t"), &m, true, &Rc::from("j")).expect("re-indexed");
        let j = Term::konst("j", Sort::Int);
        assert_eq!(pats, vec![vec![h(j.clone())]]);
        assert!(!m2.mentions("t"));
        let text = format!("{m2}");
        assert!(text.contains("mod") && text.contains("div"), "{text}");
    }

    #[test]
    fn no_reindex_without_an_affine_argument() {
        let (t, n) = (Term::konst("t", Sort::Int), Term::konst("n", Sort::Int));
        let h = |x: Term| Term::app("H", vec![x], Sort::Int);
        let m = h(t.mul(&n)).eq(&Term::int(0));
        assert!(reindex(&Rc::from("t"), &m, true, &Rc::from("j")).is_none());
    }
}
