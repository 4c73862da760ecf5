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
