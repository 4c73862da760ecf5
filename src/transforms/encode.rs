//! Annotations as Z3 terms, for the applicability facts of [`super::prove`] and
//! the other passes' Z3 checks.
//!
//! Two fragments:
//!
//! * [`encode`] (every pass): integers and booleans — literals, variables,
//!   `x.length`, `|s|` of a sequence variable, arithmetic with PVL's truncating
//!   `/` and `%`, comparisons, connectives, `?:`.
//! * [`Enc::with_functions`] (the loop facts of [`super::prove`]) adds
//!   sequences of integers, booleans and sequences, and calls of the class's
//!   pure functions, unfolded once.
//!
//! **Sequences** are an uninterpreted sort per type (`Seq<Int>`,
//! `Seq<Seq<Int>>`, …) with uninterpreted `len`, `++`, `head`, `tail`,
//! indexing and literals. The only axioms are ground instances, for the terms
//! built, of facts true of PVL's sequences: `len(s) >= 0`,
//! `len(a ++ b) == len(a) + len(b)`, `len(seq{e1, …, en}) == n`,
//! `len(s) > 0 ⇒ len(tail(s)) == len(s) - 1`, and `size$x == len(x)` linking
//! [`encode`]'s `|x|` to the sequence `x`. `==` is the sort's equality, which is
//! PVL's sequence equality, so it may stand anywhere (under `!`, left of `==>`).
//!
//! **Pure functions.** A call `f(args)` (no receiver or `this`) of the one pure
//! function of the class with that name and the arguments' types, whose
//! parameters and result are in the fragment, is an application of an
//! uninterpreted symbol: within one state a pure function's value depends only
//! on its arguments. It is unfolded once, as the side fact
//! `pre[args] ⇒ f(args) == body[args]`, when the whole precondition and the body
//! are in the fragment and read nothing but the parameters. Calls inside the
//! unfolded body use a *limited* twin symbol that no equation mentions (the
//! verifier's fuel scheme, `verify/encode/functions.rs`): one unfolding only,
//! and the equations are satisfiable whatever the recursion does.
//!
//! Anything else makes the whole expression unencodable (`None`): callers drop
//! the whole fact, which only weakens what is known. Side facts are true
//! whether or not the fact they came with is kept.

use crate::ast::*;
use crate::resolve::types::assignable;
use crate::verify::encode::{trunc_div, trunc_mod};
use crate::verify::smt::{Sort, Term};
use std::collections::{HashMap, HashSet};

/// The SMT name of a program variable of type `ty` (integers and booleans).
pub fn var_term(name: &str, ty: &Ty) -> Option<Term> {
    let sort = match ty {
        Ty::Int => Sort::Int,
        Ty::Bool => Sort::Bool,
        _ => return None,
    };
    Some(Term::konst(&format!("v${name}"), sort))
}

/// Encodes the integer/boolean fragment; `None` outside it. `lengths` collects
/// the arrays whose `.length` is read, and `|s|` for the sequences whose size is
/// read (see [`length_or_size`]).
pub fn encode(e: &Expr, lengths: &mut HashSet<Name>) -> Option<Term> {
    let mut enc = Enc { lengths: std::mem::take(lengths), ..Enc::default() };
    let t = enc.expr(e);
    *lengths = enc.lengths;
    t
}

pub fn length_term(array: &str) -> Term {
    Term::konst(&format!("len${array}"), Sort::Int)
}

fn size_term(seq: &str) -> Term {
    Term::konst(&format!("size${seq}"), Sort::Int)
}

/// The term for an entry of `lengths`: `a.length`, or `|s|` written `"|s|"`.
pub fn length_or_size(name: &str) -> Term {
    match name.strip_prefix('|').and_then(|n| n.strip_suffix('|')) {
        Some(seq) => size_term(seq),
        None => length_term(name),
    }
}

/// The sort of values of type `ty` in the sequence fragment.
fn sort_of(ty: &Ty) -> Option<Sort> {
    match ty {
        Ty::Int => Some(Sort::Int),
        Ty::Bool => Some(Sort::Bool),
        Ty::Seq(t) => Some(Sort::named(&format!("Seq<{}>", sort_name(&sort_of(t)?)))),
        _ => None,
    }
}

fn sort_name(s: &Sort) -> String {
    match s {
        Sort::Named(n) => n.to_string(),
        s => s.to_string(),
    }
}

fn is_seq(s: &Sort) -> bool {
    matches!(s, Sort::Named(n) if n.starts_with("Seq<"))
}

fn int_of(t: Term) -> Option<Term> {
    (t.sort() == Sort::Int).then_some(t)
}

fn bools(a: Term, b: Term) -> Option<(Term, Term)> {
    (a.sort() == Sort::Bool && b.sort() == Sort::Bool).then_some((a, b))
}

/// An encoder; see the module documentation.
#[derive(Default)]
pub struct Enc<'a> {
    /// The class whose pure functions calls may name; `None`: no calls, and no
    /// sequences other than `|x|` (the [`encode`] fragment).
    class: Option<&'a Class>,
    /// Inside an unfolded function body: the parameters' values (nothing else
    /// may be read there).
    params: Option<HashMap<Name, Term>>,
    /// As for [`encode`].
    pub lengths: HashSet<Name>,
    /// Facts about the terms built (axiom instances and unfoldings), in order.
    pub side: Vec<Term>,
    seen: HashSet<Term>,
}

impl<'a> Enc<'a> {
    /// The richer fragment, with the pure functions of `class`.
    pub fn with_functions(class: &'a Class) -> Enc<'a> {
        Enc { class: Some(class), ..Enc::default() }
    }

    fn seqs(&self) -> bool {
        self.class.is_some()
    }

    fn fact(&mut self, t: Term) {
        if self.seen.insert(t.clone()) {
            self.side.push(t);
        }
    }

    /// `len(s)` of a sequence term, with `len(s) >= 0`.
    fn len(&mut self, s: &Term) -> Term {
        let l = Term::app(&format!("len${}", sort_name(&s.sort())), vec![s.clone()], Sort::Int);
        self.fact(l.ge(&Term::int(0)));
        l
    }

    /// Encodes `e`; `None` outside the fragment.
    pub fn expr(&mut self, e: &Expr) -> Option<Term> {
        let t = match &e.kind {
            ExprKind::IntLit(v) => Term::nat(*v),
            ExprKind::BoolLit(b) => Term::bool(*b),
            ExprKind::Var(x) => self.var(x.as_str(), &e.ty)?,
            ExprKind::Field { obj, field } if field.as_str() == "length" && self.params.is_none() => match &obj.kind {
                ExprKind::Var(a) => {
                    self.lengths.insert(a.name.clone());
                    length_term(a.as_str())
                }
                _ => return None,
            },
            // `|s|` of a sequence variable: its own unknown, non-negative (the
            // caller adds that for every name in `lengths`).
            ExprKind::Size(s) => match (&s.kind, &s.ty) {
                (ExprKind::Var(x), Ty::Seq(_)) if self.params.is_none() => {
                    self.lengths.insert(Name::from(format!("|{}|", x.as_str()).as_str()));
                    size_term(x.as_str())
                }
                _ if self.seqs() => {
                    let t = self.expr(s)?;
                    if !is_seq(&t.sort()) {
                        return None;
                    }
                    self.len(&t)
                }
                _ => return None,
            },
            ExprKind::Unary { op: UnOp::Not, operand } => self.expr(operand)?.not(),
            ExprKind::Unary { op: UnOp::Neg, operand } => int_of(self.expr(operand)?)?.neg(),
            ExprKind::Cond { cond, then_expr, else_expr } => {
                let c = self.expr(cond)?;
                let (t, f) = (self.expr(then_expr)?, self.expr(else_expr)?);
                if c.sort() != Sort::Bool || t.sort() != f.sort() {
                    return None;
                }
                c.ite(&t, &f)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.expr(lhs)?, self.expr(rhs)?);
                self.binary(*op, a, b)?
            }
            _ if !self.seqs() => return None,
            ExprKind::Collection { kind: CollectionKind::Seq, elems, .. } => {
                let s = sort_of(&e.ty)?;
                let vals = elems.iter().map(|x| self.expr(x)).collect::<Option<Vec<_>>>()?;
                let name = format!("lit{}${}", vals.len(), sort_name(&s));
                let t = Term::app(&name, vals, s);
                let l = self.len(&t);
                self.fact(l.eq(&Term::int(i128::try_from(elems.len()).ok()?)));
                t
            }
            ExprKind::Builtin { func: func @ (Builtin::Head | Builtin::Tail | Builtin::IsEmpty), args } if args.len() == 1 => {
                let s = self.expr(&args[0])?;
                if !is_seq(&s.sort()) {
                    return None;
                }
                match func {
                    Builtin::Head => Term::app(&format!("head${}", sort_name(&s.sort())), vec![s], sort_of(&e.ty)?),
                    Builtin::Tail => {
                        let t = Term::app(&format!("tail${}", sort_name(&s.sort())), vec![s.clone()], s.sort());
                        let (ls, lt) = (self.len(&s), self.len(&t));
                        self.fact(ls.gt(&Term::int(0)).implies(&lt.eq(&ls.sub(&Term::int(1)))));
                        t
                    }
                    _ => self.len(&s).eq(&Term::int(0)),
                }
            }
            ExprKind::Index { base, index } => {
                let (s, i) = (self.expr(base)?, int_of(self.expr(index)?)?);
                if !is_seq(&s.sort()) {
                    return None;
                }
                Term::app(&format!("index${}", sort_name(&s.sort())), vec![s, i], sort_of(&e.ty)?)
            }
            ExprKind::Call { receiver, method, args } if matches!(receiver.as_deref().map(|r| &r.kind), None | Some(ExprKind::This)) => {
                self.call(method.as_str(), args, &e.ty)?
            }
            _ => return None,
        };
        Some(t)
    }

    fn var(&mut self, x: &str, ty: &Ty) -> Option<Term> {
        if let Some(params) = &self.params {
            return params.get(x).cloned();
        }
        if let Some(t) = var_term(x, ty) {
            return Some(t);
        }
        if !self.seqs() || !matches!(ty, Ty::Seq(_)) {
            return None;
        }
        let t = Term::konst(&format!("v${x}"), sort_of(ty)?);
        let l = self.len(&t);
        self.fact(size_term(x).eq(&l));
        Some(t)
    }

    fn binary(&mut self, op: BinOp, a: Term, b: Term) -> Option<Term> {
        Some(match op {
            BinOp::And | BinOp::Star => {
                let (a, b) = bools(a, b)?;
                a.and2(&b)
            }
            BinOp::Or => {
                let (a, b) = bools(a, b)?;
                a.or2(&b)
            }
            BinOp::Implies => {
                let (a, b) = bools(a, b)?;
                a.implies(&b)
            }
            BinOp::Eq | BinOp::Ne => {
                if a.sort() != b.sort() || !(matches!(a.sort(), Sort::Int | Sort::Bool) || is_seq(&a.sort())) {
                    return None;
                }
                if op == BinOp::Eq {
                    a.eq(&b)
                } else {
                    a.ne(&b)
                }
            }
            BinOp::Add if is_seq(&a.sort()) => {
                if a.sort() != b.sort() {
                    return None;
                }
                let s = a.sort();
                let t = Term::app(&format!("concat${}", sort_name(&s)), vec![a.clone(), b.clone()], s);
                let (la, lb, lt) = (self.len(&a), self.len(&b), self.len(&t));
                self.fact(lt.eq(&la.add(&lb)));
                t
            }
            _ => {
                let (a, b) = (int_of(a)?, int_of(b)?);
                match op {
                    BinOp::Lt => a.lt(&b),
                    BinOp::Le => a.le(&b),
                    BinOp::Gt => a.gt(&b),
                    BinOp::Ge => a.ge(&b),
                    BinOp::Add => a.add(&b),
                    BinOp::Sub => a.sub(&b),
                    BinOp::Mul => a.mul(&b),
                    BinOp::Div => trunc_div(&a, &b),
                    BinOp::Mod => trunc_mod(&a, &b),
                    _ => return None,
                }
            }
        })
    }

    /// A call of the class's pure function `name`, unfolded once outside
    /// function bodies.
    fn call(&mut self, name: &str, args: &[Expr], ty: &Ty) -> Option<Term> {
        let class = self.class?;
        // The overload the type checker picks (`select_overload`): the first of
        // that name and arity whose parameters accept the arguments; used only
        // when they are exactly the arguments' types (then the verifier's
        // `find_function` picks it too).
        let (k, f) = class.members.iter().enumerate().find_map(|(k, m)| match m {
            Member::Method(m)
                if m.name.as_str() == name
                    && m.params.len() == args.len()
                    && m.params.iter().zip(args).all(|(p, a)| assignable(&a.ty, &p.ty.to_ty())) =>
            {
                Some((k, m))
            }
            _ => None,
        })?;
        if !f.is_pure_function() || f.params.iter().zip(args).any(|(p, a)| p.ty.to_ty() != a.ty) {
            return None;
        }
        let ret = sort_of(&f.ret.as_ref()?.to_ty())?;
        if ret != sort_of(ty)?
            || f.params.iter().any(|p| sort_of(&p.ty.to_ty()).is_none())
            || f.contract.clauses.iter().any(|c| matches!(c.kind, ClauseKind::Given(_) | ClauseKind::Yields(_)))
        {
            return None;
        }
        let vals = args.iter().map(|a| self.expr(a)).collect::<Option<Vec<_>>>()?;
        let limited = self.params.is_some();
        let call = Term::app(&format!("fn{}${name}#{k}", if limited { "'" } else { "" }), vals.clone(), ret);
        if !limited && !self.seen.contains(&call) {
            self.seen.insert(call.clone());
            self.unfold(f, vals, &call);
        }
        Some(call)
    }

    /// Adds `pre[vals] ⇒ call == body[vals]` when `f`'s precondition and body
    /// are in the fragment.
    fn unfold(&mut self, f: &Method, vals: Vec<Term>, call: &Term) {
        let MethodBody::Expr(body) = &f.body else { return };
        let params = f.params.iter().map(|p| p.name.name.clone()).zip(vals).collect();
        let mut inner = Enc { class: self.class, params: Some(params), ..Enc::default() };
        let mut pre = Vec::new();
        for c in &f.contract.clauses {
            match &c.kind {
                ClauseKind::Requires(e) | ClauseKind::Context(e) => match inner.expr(e) {
                    Some(t) if t.sort() == Sort::Bool => pre.push(t),
                    // Dropping part of a precondition would strengthen the equation.
                    _ => return,
                },
                ClauseKind::Ensures(_) => {}
                _ => return,
            }
        }
        let Some(b) = inner.expr(body) else { return };
        if b.sort() != call.sort() {
            return;
        }
        for t in inner.side {
            self.fact(t);
        }
        self.fact(Term::and(pre).implies(&call.eq(&b)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::smt::{Outcome, SmtSolver};

    /// Do the conjuncts of the `requires` of `m` imply its `ensures`, encoded
    /// with the functions of the class? (`None`: something is not encodable.)
    fn implies(src: &str) -> Option<bool> {
        let file = crate::diagnostics::SourceFile::new("t.pvl", src);
        let (p, _) = crate::frontend(&file).expect("checks");
        let class = &p.classes[0];
        let m = class
            .members
            .iter()
            .find_map(|m| match m {
                Member::Method(m) if m.name.as_str() == "m" => Some(m),
                _ => None,
            })
            .unwrap();
        let mut enc = Enc::with_functions(class);
        let mut solver = SmtSolver::new(2000, 0, false);
        for c in &m.contract.clauses {
            match &c.kind {
                ClauseKind::Requires(e) => solver.assert(enc.expr(e)?),
                ClauseKind::Ensures(e) => solver.assert(Term::konst("goal", Sort::Bool).implies(&enc.expr(e)?.not())),
                _ => {}
            }
        }
        for t in enc.side.drain(..) {
            solver.assert(t);
        }
        for l in &enc.lengths {
            solver.assert(length_or_size(l).ge(&Term::int(0)));
        }
        Some(matches!(solver.check(&["goal"]), Ok(Outcome::Proved)))
    }

    const FLAT: &str = "class C { pure seq<int> flat(seq<seq<int>> xs) = 0 < |xs| ? head(xs) + flat(tail(xs)) : seq<int>{}; \
        requires PRE; ensures POST; void m(seq<int> xs, seq<seq<int>> segs) { } }";

    fn flat(pre: &str, post: &str) -> Option<bool> {
        implies(&FLAT.replace("PRE", pre).replace("POST", post))
    }

    #[test]
    fn one_unfolding_of_a_recursive_function() {
        assert_eq!(flat("flat(segs) == xs && |xs| > 0", "|segs| >= 1"), Some(true));
        // Under negation and on the left of `==>` too: equality is exact.
        assert_eq!(flat("!(flat(segs) != xs) && |xs| > 0", "|segs| >= 1"), Some(true));
        assert_eq!(flat("|segs| == 0 ==> flat(segs) == xs", "|segs| == 0 ==> |xs| == 0"), Some(true));
        // Without `|xs| > 0`, or asking for more than one unfolding shows.
        assert_eq!(flat("flat(segs) == xs", "|segs| >= 1"), Some(false));
        assert_eq!(flat("flat(segs) == xs && |xs| > 0", "|segs| >= 2"), Some(false));
        assert_eq!(flat("flat(segs) != xs && |xs| > 0", "|segs| >= 1"), Some(false));
    }

    #[test]
    fn sequence_lengths() {
        let src = "class C { requires PRE; ensures POST; void m(seq<int> xs, seq<int> ys) { } }";
        let q = |pre: &str, post: &str| implies(&src.replace("PRE", pre).replace("POST", post));
        assert_eq!(q("xs == ys + seq<int>{1, 2}", "|xs| == |ys| + 2"), Some(true));
        assert_eq!(q("xs == ys + seq<int>{1, 2}", "|xs| == |ys| + 3"), Some(false));
        assert_eq!(q("|xs| > 0 && ys == tail(xs)", "|ys| == |xs| - 1"), Some(true));
        // `tail` of an empty sequence: nothing is assumed.
        assert_eq!(q("ys == tail(xs)", "|ys| == |xs| - 1"), Some(false));
        assert_eq!(q("isEmpty(xs) && xs == ys", "|ys| == 0"), Some(true));
        assert_eq!(q("xs[0] == 3 && xs == ys", "ys[0] == 3"), Some(true));
    }

    #[test]
    fn preconditions_guard_the_unfolding() {
        let src = "class C { requires n >= 0; pure int f(int n) = n + 1; \
                   requires PRE; ensures POST; void m(int k) { } }";
        let q = |pre: &str, post: &str| implies(&src.replace("PRE", pre).replace("POST", post));
        assert_eq!(q("k >= 0", "f(k) == k + 1"), Some(true));
        assert_eq!(q("k >= -1", "f(k) == k + 1"), Some(false));
    }

    #[test]
    fn what_is_left_out() {
        // A body that reads a field, a precondition outside the fragment: the
        // call is an unknown of its own, never unfolded.
        let field = "class C { int g; pure int f(int n) = n + g; requires k >= 0; ensures f(k) == k + g; void m(int k) { } }";
        assert_eq!(implies(field), Some(false));
        let pre = "class C { requires (\\forall int i; 0 <= i && i < n; i >= 0); pure int f(int n) = n + 1; \
                   requires k >= 0; ensures f(k) == k + 1; void m(int k) { } }";
        assert_eq!(implies(pre), Some(false));
        // Sequences of objects and quantifiers are not encoded at all.
        assert_eq!(implies("class C { requires |xs| > 0; ensures xs == xs; void m(seq<C> xs) { } }"), None);
        // A non-terminating function yields no contradiction.
        let rec = "class C { pure int f(int n) = f(n) + 1; requires f(k) == 0; ensures false; void m(int k) { } }";
        assert_eq!(implies(rec), Some(false));
    }

    #[test]
    fn overloads_resolve_as_the_type_checker_does() {
        // `f(k)` with an int `k` calls the first overload (an int is a `frac`):
        // not encoded, and the second one's body is not used for it.
        let src = "class C { pure int f(frac x) = 0; pure int f(int x) = 1; requires k > 0; ensures f(k) == 1; void m(int k) { } }";
        assert_eq!(implies(src), None);
        let src = src.replace("pure int f(frac x) = 0; ", "");
        assert_eq!(implies(&src), Some(true));
        // Overloads by sequence type: each call unfolds its own body.
        let src = "class C { pure int g(seq<int> x) = 1; pure int g(seq<boolean> x) = 2; \
                   requires true; ensures g(xs) == 1 && g(bs) == 2; void m(seq<int> xs, seq<boolean> bs) { } }";
        assert_eq!(implies(src), Some(true));
    }

    #[test]
    fn the_plain_fragment_has_no_sequences_or_calls() {
        let file = crate::diagnostics::SourceFile::new(
            "t.pvl",
            "class C { pure int f(int n) = n; requires f(1) == 1 && xs == xs && |xs| >= 0; void m(seq<int> xs) { } }",
        );
        let (p, _) = crate::frontend(&file).expect("checks");
        let Member::Method(m) = &p.classes[0].members[1] else { panic!() };
        let ClauseKind::Requires(e) = &m.contract.clauses[0].kind else { panic!() };
        let parts = super::super::loops::conjuncts(e);
        let mut lengths = HashSet::new();
        assert!(encode(parts[0], &mut lengths).is_none());
        assert!(encode(parts[1], &mut lengths).is_none());
        assert!(encode(parts[2], &mut lengths).is_some());
        assert!(lengths.contains("|xs|"));
    }
}
