//! Quantified permissions that are not syntactically invertible: the
//! inverse-function fallback (Carbon/Silicon; `verifier-encoding.md` §5.4).
//!
//! `assertion.rs` handles `\forall* v; c(v); Perm(a[k·v + d], p)` with a
//! syntactic inverse. Every other quantified permission — several bound
//! variables (nested `\forall*` is one QP over the tuple), indices through pure
//! functions or non-affine arithmetic, 2-D cells `(m[i])[j]`, fields of array
//! elements `workers[i].f` — comes here once `assertion.rs` has *proved* that
//! the receiver `loc(v̄)` is injective on the tuples with `c ∧ p > 0`.
//!
//! * **Pinned binders** ([`pinned`]): a conjunct `v == t` of the condition with
//!   `t` free of the bound variables fixes `v`; it is substituted away (exact:
//!   `∀* v. v = t ∧ c(v) ⇒ P(v)` is `c(t) ⇒ P(t)`). With every binder pinned
//!   the permission is a plain one.
//! * **Inverse functions**: one fresh function `inv_k` of the location per
//!   bound variable. The mask update is
//!   `M'(x̄) = M(x̄) ± ite(cond ∧ c(inv(x̄)) ∧ x̄ = loc(inv(x̄)), p(inv(x̄)), 0)`:
//!   the equation `x̄ = loc(inv(x̄))` is part of the condition, so Carbon's
//!   second inverse axiom is not needed at all (permission is only ever added
//!   at a location that *is* the image of an in-range tuple). The first axiom,
//!   `c(v̄) ∧ p(v̄) > 0 ⇒ inv_k(loc(v̄)) = v_k`, is what makes the update
//!   complete; it is consistent because injectivity was proved before it is
//!   assumed (under the same path guard and condition).
//! * **Triggers**: the first axiom is asserted as a quantifier only when
//!   `loc(v̄)` has a valid pattern (no arithmetic: `A[f(N,i,j)]`, `m[i]`). In
//!   every case alpine also instantiates it itself ([`Encoder::read_mask_at`]):
//!   where a permission is checked at a location `ȳ`, `ȳ` is matched
//!   syntactically against `loc(v̄)` of every inverse-function QP of that
//!   family, and the instance at the matched tuple is assumed. Matching only
//!   *proposes* a tuple; any instance of a valid axiom is sound, so a poor match
//!   can cost completeness but never soundness.
//! * **`\matrix(m, M, N)`** ([`matrix_assertion`]) is spelled out as an
//!   assertion; its row distinctness is what 2-D quantified permissions need.

use super::state::State;
use super::{Encoder, Term};
use crate::ast::{BinOp, Expr, ExprKind, Ident, Param, QuantKind, Span, Ty, Type, TypeKind};
use crate::verify::smt::term::{Node, Op};
use crate::verify::smt::Sort;
use std::collections::HashMap;
use std::rc::Rc;

/// What the encoding of quantified permissions keeps for a unit.
#[derive(Default)]
pub struct QpState {
    /// The quantified permissions encoded with inverse functions …
    invs: Vec<QpInv>,
    /// … and the ground instances of their inverse axioms already assumed.
    inst_done: std::collections::HashSet<String>,
}

/// One quantified permission encoded with inverse functions, kept for the
/// ground instances of its first inverse axiom.
#[derive(Clone, Debug)]
pub struct QpInv {
    fam: Rc<str>,
    /// Path guard and condition under which the axiom holds.
    guard: Term,
    cond: Term,
    vars: Vec<(Rc<str>, Sort)>,
    /// `c(v̄) ∧ p(v̄) > 0`
    hyp: Term,
    /// `loc(v̄)`, one term per argument of the family.
    locs: Vec<Term>,
    /// Extra conclusions (non-null receivers of inhaled field permissions).
    extra: Term,
    invs: Vec<Rc<str>>,
}

/// What [`Encoder::qp_inverse_update`] needs to know about the leaf.
pub struct QpLeaf<'t> {
    pub fam: &'t Rc<str>,
    pub vars: &'t [(Rc<str>, Sort)],
    /// The condition `c(v̄)` over the binder constants.
    pub range: &'t Term,
    pub args: &'t [Term],
    /// The amount per tuple (wildcards already resolved).
    pub p: &'t Term,
    pub inhale: bool,
}

impl Encoder<'_> {
    /// The mask at a location where a permission is about to be checked, after
    /// assuming the instances of the inverse axioms that this location
    /// suggests (see the module documentation).
    pub fn read_mask_at(&mut self, st: &State, fam: &Rc<str>, args: Vec<Term>) -> Term {
        self.qp_instances(fam, &args);
        self.read_mask(st, fam, args)
    }

    fn qp_instances(&mut self, fam: &Rc<str>, args: &[Term]) {
        for idx in 0..self.qp.invs.len() {
            let q = &self.qp.invs[idx];
            if &q.fam != fam || q.locs.len() != args.len() {
                continue;
            }
            let names: Vec<Rc<str>> = q.vars.iter().map(|v| v.0.clone()).collect();
            let mut sigma = HashMap::new();
            if !q.locs.iter().zip(args).all(|(p, t)| unify(p, t, &names, &mut sigma)) {
                continue;
            }
            if names.iter().any(|n| !sigma.contains_key(n)) {
                continue;
            }
            let key = format!("{idx}|{}", names.iter().map(|n| sigma[n].to_string()).collect::<Vec<_>>().join(","));
            if !self.qp.inst_done.insert(key) {
                continue;
            }
            let inst = inverse_axiom_body(q).subst(&sigma);
            let (g, c) = (q.guard.clone(), q.cond.clone());
            self.assume(&g, c.implies(&inst));
        }
    }

    /// The mask update of a quantified permission through inverse functions,
    /// with the first inverse axiom (its quantified form where it has a
    /// pattern, ground instances via [`Encoder::read_mask_at`] in any case).
    /// The caller has proved injectivity and (on exhale) checked the amount.
    pub fn qp_inverse_update(&mut self, guard: &Term, cond: &Term, st: &mut State, leaf: QpLeaf) {
        let dom = self.heap.families[leaf.fam].dom.clone();
        let invs: Vec<Rc<str>> = leaf.vars.iter().map(|(v, _)| Rc::from(self.fresh_name(&format!("inv[{v}]")).as_str())).collect();
        let field_receiver = leaf.inhale && dom.len() == 1;
        let extra = if field_receiver { leaf.args[0].ne(&super::null_of(&leaf.args[0].sort())) } else { Term::tru() };
        let q = QpInv {
            fam: leaf.fam.clone(),
            guard: guard.clone(),
            cond: cond.clone(),
            vars: leaf.vars.to_vec(),
            hyp: leaf.range.and2(&leaf.p.gt(&Term::real(0, 1))),
            locs: leaf.args.to_vec(),
            extra,
            invs: invs.clone(),
        };
        let body = inverse_axiom_body(&q);
        let names: Vec<Rc<str>> = leaf.vars.iter().map(|v| v.0.clone()).collect();
        // Patterns only from the conclusion `inv_k(loc(v̄)) = v_k`: the range
        // may mention other functions, which would make Z3 instantiate the
        // axiom at tuples no location was ever asked about.
        let probe = Term::and(
            invs.iter()
                .zip(leaf.vars)
                .map(|(f, (v, s))| Term::app(f, leaf.args.to_vec(), s.clone()).eq(&Term::konst(v, s.clone())))
                .collect(),
        );
        let pats = super::triggers::choose(&names, &probe);
        if !pats.is_empty() {
            let qid = self.fresh_name("qp_inv");
            let ax = Term::forall(leaf.vars.to_vec(), pats, body, &qid);
            self.assume(guard, cond.implies(&ax));
        }
        self.qp.invs.push(q);
        let sign_neg = !leaf.inhale;
        self.update_mask(st, leaf.fam, |xs| {
            let m: HashMap<Rc<str>, Term> =
                leaf.vars.iter().zip(&invs).map(|((v, s), f)| (v.clone(), Term::app(f, xs.to_vec(), s.clone()))).collect();
            let at = Term::and(xs.iter().zip(leaf.args).map(|(x, a)| x.eq(&a.subst(&m))).collect());
            let hit = Term::and(vec![cond.clone(), leaf.range.subst(&m), at]);
            let amt = super::qp_solve::amount_at(leaf.p, leaf.args, xs).subst(&m);
            hit.ite(&if sign_neg { amt.neg() } else { amt }, &Term::real(0, 1))
        });
    }

    /// A wildcard amount given away by an exhale: a fresh function of the
    /// location, positive and strictly below what is held wherever something
    /// is held, so a `read` never takes everything.
    pub fn wildcard_fn(&mut self, guard: &Term, st: &State, fam: &Rc<str>, args: &[Term]) -> Term {
        let dom = self.heap.families[fam].dom.clone();
        let wf = self.fresh_name("wildcard_fn");
        let vars: Vec<(Rc<str>, Sort)> = dom.iter().map(|s| (Rc::from(self.fresh_name("x").as_str()), s.clone())).collect();
        let xs: Vec<Term> = vars.iter().map(|(n, s)| Term::konst(n, s.clone())).collect();
        let held = self.read_mask(st, fam, xs.clone());
        let w = Term::app(&wf, xs, Sort::Real);
        let ax =
            Term::forall(vars, vec![vec![w.clone()]], held.gt(&Term::real(0, 1)).implies(&Term::real(0, 1).lt(&w).and2(&w.lt(&held))), &wf);
        self.assume(guard, ax);
        Term::app(&wf, args.to_vec(), Sort::Real)
    }
}

/// `hyp(v̄) ⇒ ⋀ inv_k(loc(v̄)) = v_k ∧ extra(v̄)`.
fn inverse_axiom_body(q: &QpInv) -> Term {
    let mut concl: Vec<Term> =
        q.invs.iter().zip(&q.vars).map(|(f, (v, s))| Term::app(f, q.locs.clone(), s.clone()).eq(&Term::konst(v, s.clone()))).collect();
    concl.push(q.extra.clone());
    q.hyp.implies(&Term::and(concl))
}

/// Valid facts of integer arithmetic that make injectivity of linearised
/// indices (`i * n + j` with `0 <= j < n`) easy for Z3, whose nonlinear
/// reasoning is slow on them (seconds per check without, milliseconds with):
/// for every product `v * t` (or `t * v`) in the location with `v` a binder and
/// `t` free of binders, and the two copies `v1`, `v2` of the injectivity check,
/// `v1 < v2 ∧ t > 0 ⇒ v1·t + t ≤ v2·t` and `v1 < v2 ∧ t < 0 ⇒ v2·t ≤ v1·t + t`
/// (and the same with the copies swapped).
pub fn product_hints(args: &[Term], vars: &[Rc<str>], m1: &HashMap<Rc<str>, Term>, m2: &HashMap<Rc<str>, Term>) -> Vec<Term> {
    let mut prods = Vec::new();
    for a in args {
        collect_products(a, vars, &mut prods);
    }
    let mut out = Vec::new();
    for (prod, v, t) in prods {
        for (ma, mb) in [(m1, m2), (m2, m1)] {
            let (lo, hi) = (ma[&v].clone(), mb[&v].clone());
            let (p_lo, p_hi) = (prod.subst(ma), prod.subst(mb));
            let zero = Term::int(0);
            out.push(lo.lt(&hi).and2(&t.gt(&zero)).implies(&p_lo.add(&t).le(&p_hi)));
            out.push(lo.lt(&hi).and2(&t.lt(&zero)).implies(&p_hi.le(&p_lo.add(&t))));
        }
    }
    out
}

fn collect_products(t: &Term, vars: &[Rc<str>], out: &mut Vec<(Term, Rc<str>, Term)>) {
    match t.node() {
        Node::Op(Op::Mul, a, _) if a.len() == 2 => {
            let free = |x: &Term| !vars.iter().any(|v| x.mentions(v));
            let var = |x: &Term| match x.node() {
                Node::Const(n, _) => vars.iter().find(|v| *v == n).cloned(),
                _ => None,
            };
            match (var(&a[0]), var(&a[1])) {
                (Some(v), _) if free(&a[1]) => out.push((t.clone(), v, a[1].clone())),
                (_, Some(v)) if free(&a[0]) => out.push((t.clone(), v, a[0].clone())),
                _ => a.iter().for_each(|x| collect_products(x, vars, out)),
            }
        }
        Node::Op(_, a, _) | Node::App(_, a, _) => a.iter().for_each(|x| collect_products(x, vars, out)),
        _ => {}
    }
}

/// Binders fixed by a conjunct `v == t` of `range` (with `t` free of every
/// binder), or `v + d == e` (a coefficient ±1 in the difference, the rest free
/// of every binder: `v = e − d`, exact), as a substitution; later binders are tried again after earlier
/// ones are substituted, so `j == i + 1 && i == 0` pins both.
pub fn pinned(range: &Term, vars: &[Rc<str>]) -> HashMap<Rc<str>, Term> {
    let mut sigma: HashMap<Rc<str>, Term> = HashMap::new();
    loop {
        let conjs = range.subst(&sigma).conjuncts();
        let free: Vec<&Rc<str>> = vars.iter().filter(|v| !sigma.contains_key(*v)).collect();
        let found = conjs.iter().find_map(|c| match c.node() {
            Node::Op(Op::Eq, a, _) => {
                let bound = |t: &Term| free.iter().any(|v| t.mentions(v));
                let var_of = |t: &Term| match t.node() {
                    Node::Const(n, _) => free.iter().find(|v| **v == n).map(|v| (*v).clone()),
                    _ => None,
                };
                match (var_of(&a[0]), var_of(&a[1])) {
                    (Some(v), _) if !bound(&a[1]) => Some((v, a[1].clone())),
                    (_, Some(v)) if !bound(&a[0]) => Some((v, a[0].clone())),
                    // `lo + t == n - 1`: a binder with coefficient ±1 in the
                    // difference, the rest free of the open binders.
                    _ if a[0].sort() == Sort::Int => {
                        let diff = a[0].sub(&a[1]);
                        free.iter().find_map(|v| match super::assertion::affine(&diff, v) {
                            Some((1, d)) if !bound(&d) => Some(((*v).clone(), Term::int(0).sub(&d))),
                            Some((-1, d)) if !bound(&d) => Some(((*v).clone(), d)),
                            _ => None,
                        })
                    }
                    _ => None,
                }
            }
            _ => None,
        });
        match found {
            Some((v, t)) => {
                // Earlier pins may mention `v`: keep the substitution idempotent.
                let one: HashMap<Rc<str>, Term> = [(v.clone(), t.clone())].into_iter().collect();
                for val in sigma.values_mut() {
                    *val = val.subst(&one);
                }
                sigma.insert(v, t);
            }
            None => return sigma,
        }
    }
}

/// Proposes values for the binders `vars` such that `pat` becomes `t`.
/// Lenient by design (ground parts of `pat` are not compared, heap versions
/// of one family are identified): the result is only used to instantiate a
/// valid axiom.
fn unify(pat: &Term, t: &Term, vars: &[Rc<str>], sigma: &mut HashMap<Rc<str>, Term>) -> bool {
    if let Node::Const(n, _) = pat.node() {
        if vars.contains(n) {
            sigma.entry(n.clone()).or_insert_with(|| t.clone());
            return true;
        }
    }
    if !vars.iter().any(|v| pat.mentions(v)) {
        return true;
    }
    match (pat.node(), t.node()) {
        (Node::Op(o1, a1, _), Node::Op(o2, a2, _)) if o1 == o2 && a1.len() == a2.len() => {
            a1.iter().zip(a2).all(|(p, x)| unify(p, x, vars, sigma))
        }
        (Node::App(f1, a1, _), Node::App(f2, a2, _)) if a1.len() == a2.len() && (f1 == f2 || same_heap_family(f1, f2)) => {
            a1.iter().zip(a2).all(|(p, x)| unify(p, x, vars, sigma))
        }
        _ => false,
    }
}

/// Heap versions are named `H[fam]…`; two versions of one family read the
/// same kind of location.
fn same_heap_family(f1: &str, f2: &str) -> bool {
    let fam = |f: &str| f.strip_prefix("H[").and_then(|r| r.find(']').map(|i| r[..i].to_string()));
    matches!((fam(f1), fam(f2)), (Some(a), Some(b)) if a == b)
}

/// `\matrix(m, M, N)` spelled out (pvl-reference: "`m` is a non-null array of
/// length `M` whose rows are non-null, pairwise distinct arrays of length `N`;
/// it also carries a `read` permission on every row reference `m[i]`"):
///
/// ```text
/// m != null ** m.length == M
///   ** (\forall* int i; 0 <= i && i < M; Perm(m[i], read))
///   ** (\forall int i; 0 <= i && i < M; m[i] != null && m[i].length == N)
///   ** (\forall int i; 0 <= i && i < M; (\forall int k; 0 <= k && k < M && i != k; m[i] != m[k]))
/// ```
///
/// The row distinctness is what makes `\forall* i, j; Perm((m[i])[j], p)`
/// injective. `None` when `m` is not a 2-D array.
pub fn matrix_assertion(args: &[Expr], sp: Span) -> Option<Expr> {
    let [m, rows, cols] = args else { return None };
    let Ty::Array(row_ty) = &m.ty else { return None };
    if !matches!(**row_ty, Ty::Array(_)) {
        return None;
    }
    let mk = |kind: ExprKind, ty: Ty| Expr { kind, span: sp, ty };
    let bin = |op: BinOp, l: Expr, r: Expr| mk(ExprKind::Binary { op, lhs: Box::new(l), rhs: Box::new(r) }, Ty::Bool);
    let var = |n: &str| mk(ExprKind::Var(Ident::new(n, sp)), Ty::Int);
    let row = |n: &str| mk(ExprKind::Index { base: Box::new(m.clone()), index: Box::new(var(n)) }, (**row_ty).clone());
    let len = |e: Expr| mk(ExprKind::Field { obj: Box::new(e), field: Ident::new("length", sp) }, Ty::Int);
    let null = mk(ExprKind::Null, (**row_ty).clone());
    let in_range =
        |n: &str| bin(BinOp::And, bin(BinOp::Le, mk(ExprKind::IntLit(0), Ty::Int), var(n)), bin(BinOp::Lt, var(n), rows.clone()));
    let quant = |kind: QuantKind, n: &str, guard: Expr, body: Expr| {
        let binder = Param { ty: Type::new(TypeKind::Int, sp), name: Ident::new(n, sp), span: sp };
        mk(ExprKind::Quant { kind, binder, guard: Box::new(guard), body: Box::new(body) }, Ty::Bool)
    };
    // Binder names that no program can write (PVL identifiers have no `@`).
    let (i, k) = ("i@matrix", "k@matrix");
    let perm = mk(ExprKind::Perm { loc: Box::new(row(i)), amount: Box::new(mk(ExprKind::Read, Ty::Unknown)) }, Ty::Bool);
    let parts = vec![
        bin(BinOp::Ne, m.clone(), mk(ExprKind::Null, m.ty.clone())),
        bin(BinOp::Eq, len(m.clone()), rows.clone()),
        quant(QuantKind::ForallStar, i, in_range(i), perm),
        quant(QuantKind::Forall, i, in_range(i), bin(BinOp::And, bin(BinOp::Ne, row(i), null), bin(BinOp::Eq, len(row(i)), cols.clone()))),
        quant(
            QuantKind::Forall,
            i,
            in_range(i),
            quant(QuantKind::Forall, k, bin(BinOp::And, in_range(k), bin(BinOp::Ne, var(i), var(k))), bin(BinOp::Ne, row(i), row(k))),
        ),
    ];
    parts.into_iter().reduce(|a, b| bin(BinOp::Star, a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_binders_are_substituted() {
        let (i, j, n) = (Term::konst("i", Sort::Int), Term::konst("j", Sort::Int), Term::konst("n", Sort::Int));
        let range = Term::and(vec![Term::int(0).le(&i), j.eq(&i.add(&Term::int(1))), i.eq(&n.sub(&Term::int(1)))]);
        let s = pinned(&range, &[Rc::from("i"), Rc::from("j")]);
        assert_eq!(s[&Rc::from("i")], n.sub(&Term::int(1)));
        assert_eq!(s[&Rc::from("j")], n.sub(&Term::int(1)).add(&Term::int(1)));
        // `i == i + 0`-style conjuncts that mention the binder on both sides pin nothing.
        assert!(pinned(&i.eq(&i.add(&j)), &[Rc::from("i"), Rc::from("j")]).is_empty());
    }

    #[test]
    fn unify_proposes_the_tuple() {
        let (i, j, n, a, b) = (
            Term::konst("i", Sort::Int),
            Term::konst("j", Sort::Int),
            Term::konst("n", Sort::Int),
            Term::konst("a", Sort::Int),
            Term::konst("b", Sort::Int),
        );
        let pat = i.mul(&n).add(&j);
        let t = a.mul(&n).add(&b);
        let mut s = HashMap::new();
        assert!(unify(&pat, &t, &[Rc::from("i"), Rc::from("j")], &mut s));
        assert_eq!(s[&Rc::from("i")], a);
        assert_eq!(s[&Rc::from("j")], b);
        let mut s = HashMap::new();
        assert!(!unify(&pat, &a.sub(&b), &[Rc::from("i"), Rc::from("j")], &mut s));
        assert!(same_heap_family("H[a:Arr]@12", "H[a:Arr]~3"));
        assert!(!same_heap_family("H[a:Arr]@12", "H[a:Int]~3"));
    }
}
