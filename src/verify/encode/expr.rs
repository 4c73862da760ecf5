//! Expressions: PVL expression → SMT term, with well-definedness checks.
//!
//! When `ECx::check` is set, every evaluation checks what makes the expression
//! meaningful, under the conditions that guard it (short-circuit `&&`, `||`,
//! `==>`, `?:`, quantifier ranges): read permission for heap reads (in the state
//! the read happens in — `\old` reads need permission in the old state), non-null
//! receivers, array and sequence bounds, non-zero divisors, and the
//! preconditions of called pure functions.
//!
//! PVL `/` and `%` truncate towards zero (VerCors `TruncDivMod`), SMT `div`/`mod`
//! are Euclidean; [`Encoder::trunc_div`] converts.

use super::state::State;
use super::{arr_sort, null_of, triggers, Blame, Encoder, Env, Term};
use crate::ast::{BinOp, Builtin, CollectionKind, Expr, ExprKind, Name, QuantKind, Ty, UnOp};
use crate::diagnostics::codes;
use crate::verify::smt::term::{Node, Op};
use crate::verify::smt::Sort;
use std::rc::Rc;

/// The context an expression is evaluated in.
pub struct ECx<'s> {
    pub guard: Term,
    pub env: &'s Env,
    /// Quantifier and `\let` binders, innermost last.
    pub binders: Vec<(Name, Term)>,
    /// The state heap reads happen in; `None` where the heap may not be read
    /// (pure function definitions).
    pub state: Option<State>,
    pub old: Option<State>,
    pub this: Option<Term>,
    pub result: Option<Term>,
    /// Conditions under which the expression is evaluated (for checks).
    pub conds: Vec<Term>,
    pub check: bool,
    pub class: Name,
    /// Calls of these functions use their limited twins (definitional axioms
    /// and postconditions of the functions on a call cycle).
    pub limited: Vec<usize>,
    /// The pure function whose body this evaluates: its calls of functions on
    /// its recursion cycle are recursion sites (`functions.rs`). Only the body's
    /// own context has it; the callees' contracts are evaluated without it.
    pub body_of: Option<usize>,
}

impl<'s> ECx<'s> {
    pub fn new(guard: &Term, env: &'s Env, state: Option<State>, class: &Name) -> ECx<'s> {
        ECx {
            guard: guard.clone(),
            env,
            binders: Vec::new(),
            state,
            old: None,
            this: None,
            result: None,
            conds: Vec::new(),
            check: true,
            class: class.clone(),
            limited: Vec::new(),
            body_of: None,
        }
    }
}

/// A heap location: its family and arguments (`[obj]` or `[arr, index]`).
pub struct Loc {
    pub fam: Rc<str>,
    pub args: Vec<Term>,
}

impl Encoder<'_> {
    pub fn snippet(&self, e: &Expr) -> String {
        let (s, t) = (e.span.start as usize, e.span.end as usize);
        self.src.get(s..t).map(|t| t.split_whitespace().collect::<Vec<_>>().join(" ")).unwrap_or_else(|| "?".into())
    }

    fn def_check(&mut self, cx: &ECx, goal: Term, blame: Blame) {
        if cx.check {
            self.check(&cx.guard.clone(), Some(cx.env), &cx.conds.clone(), goal, blame);
        }
    }

    pub fn field_family(&mut self, class: &str, field: &str) -> Option<Rc<str>> {
        let ty = self.prog.fields.iter().find(|(c, f, _)| &**c == class && &**f == field).map(|(_, _, t)| t.clone())?;
        let val = self.sort_of(&ty);
        Some(self.family(&format!("f:{class}.{field}"), vec![super::ref_sort()], val))
    }

    pub fn array_family(&mut self, elem: &Ty) -> Rc<str> {
        let val = self.sort_of(elem);
        let tag = super::seq::sort_tag(&val);
        self.family(&format!("a:{tag}"), vec![arr_sort(), Sort::Int], val)
    }

    /// Evaluates a location expression (`x.f`, implicit `f`, `a[i]`), checking
    /// that the receiver is non-null and the index in bounds, but not the
    /// permission to the location itself.
    pub fn location(&mut self, e: &Expr, cx: &mut ECx) -> Option<Loc> {
        match &e.kind {
            ExprKind::Var(x) if self.lookup_local(&x.name, cx).is_none() => {
                let this = cx.this.clone()?;
                let fam = self.field_family(&cx.class.clone(), &x.name)?;
                Some(Loc { fam, args: vec![this] })
            }
            ExprKind::Field { obj, field } => {
                let class = match &obj.ty {
                    Ty::Class(c) => c.clone(),
                    _ => return None,
                };
                let o = self.expr(obj, cx);
                self.def_check(
                    cx,
                    o.ne(&null_of(&o.sort())),
                    Blame::new(codes::NULL, format!("`{}` may be null", self.snippet(obj)), obj.span),
                );
                let fam = self.field_family(&class, &field.name)?;
                Some(Loc { fam, args: vec![o] })
            }
            ExprKind::Index { base, index } if matches!(base.ty, Ty::Array(_)) => {
                let Ty::Array(elem) = &base.ty else { unreachable!() };
                let a = self.expr(base, cx);
                let i = self.expr(index, cx);
                self.def_check(
                    cx,
                    a.ne(&null_of(&arr_sort())),
                    Blame::new(codes::NULL, format!("array `{}` may be null", self.snippet(base)), base.span),
                );
                let len = Term::app("alen", vec![a.clone()], Sort::Int);
                let inb = Term::int(0).le(&i).and2(&i.lt(&len));
                self.def_check(
                    cx,
                    inb,
                    Blame::new(codes::ARRAY_BOUNDS, format!("array index `{}` may be out of bounds", self.snippet(index)), e.span),
                );
                let fam = self.array_family(elem);
                Some(Loc { fam, args: vec![a, i] })
            }
            _ => None,
        }
    }

    fn lookup_local(&self, n: &str, cx: &ECx) -> Option<Term> {
        if let Some((_, t)) = cx.binders.iter().rev().find(|(b, _)| &**b == n) {
            return Some(t.clone());
        }
        if let Some((_, f, sort, iters)) = cx.env.per_thread.iter().find(|p| &*p.0 == n) {
            // A barrier's redistribution check: a local that differs between
            // threads is a function of the (bound) iteration variables.
            let args: Option<Vec<Term>> = iters.iter().map(|v| self.lookup_local(v, cx)).collect();
            return args.map(|a| Term::app(f, a, sort.clone()));
        }
        cx.env.get(n).cloned()
    }

    /// A heap read with its permission check.
    fn heap_read(&mut self, e: &Expr, cx: &mut ECx) -> Term {
        let Some(loc) = self.location(e, cx) else {
            self.unsupported(format!("reading `{}`", self.snippet(e)), e.span);
            let s = self.sort_of(&e.ty);
            return self.fresh_const("unsupported", s);
        };
        let Some(st) = cx.state.clone() else {
            self.unsupported(format!("a heap read (`{}`) in a pure function", self.snippet(e)), e.span);
            let s = self.heap.families[&loc.fam].val.clone();
            return self.fresh_const("unsupported", s);
        };
        let m = self.read_mask_at(&st, &loc.fam, loc.args.clone());
        let msg = format!("insufficient permission to read `{}`", self.snippet(e));
        self.def_check(cx, m.gt(&Term::real(0, 1)), Blame::new(codes::PERMISSION, msg, e.span));
        self.read_heap(&st, &loc.fam, loc.args)
    }

    pub fn expr(&mut self, e: &Expr, cx: &mut ECx) -> Term {
        match &e.kind {
            ExprKind::IntLit(v) => Term::nat(*v),
            ExprKind::StringLit(text) => self.string_literal(text),
            ExprKind::BoolLit(b) => Term::bool(*b),
            ExprKind::Null => null_of(&super::ref_sort()),
            ExprKind::This => cx.this.clone().unwrap_or_else(|| {
                self.unsupported("`this` in a static context", e.span);
                null_of(&super::ref_sort())
            }),
            ExprKind::Result => cx.result.clone().unwrap_or_else(|| {
                self.unsupported("`\\result` here", e.span);
                Term::int(0)
            }),
            ExprKind::Write => Term::real(1, 1),
            ExprKind::NoPerm => Term::real(0, 1),
            ExprKind::Read => {
                self.unsupported("`read` outside a permission", e.span);
                Term::real(0, 1)
            }
            ExprKind::Var(x) => match self.lookup_local(&x.name, cx) {
                Some(t) => t,
                None => self.heap_read(e, cx),
            },
            // `E.C`: the receiver of an enum constant has the enum's type (an
            // enum value has no fields).
            ExprKind::Field { obj, field } if matches!(obj.ty, Ty::Enum(_)) => {
                let Ty::Enum(name) = &obj.ty else { unreachable!() };
                self.enum_constant(name, &field.name)
            }
            ExprKind::Field { obj, field } if &*field.name == "length" && matches!(obj.ty, Ty::Array(_)) => {
                let a = self.expr(obj, cx);
                self.def_check(
                    cx,
                    a.ne(&null_of(&arr_sort())),
                    Blame::new(codes::NULL, format!("array `{}` may be null", self.snippet(obj)), obj.span),
                );
                Term::app("alen", vec![a], Sort::Int)
            }
            ExprKind::Field { .. } => self.heap_read(e, cx),
            ExprKind::Index { base, index } => match &base.ty {
                Ty::Array(_) => self.heap_read(e, cx),
                Ty::Seq(elem) => {
                    let f = self.seq_fns_of(elem);
                    let s = self.expr(base, cx);
                    let i = self.expr(index, cx);
                    let inb = Term::int(0).le(&i).and2(&i.lt(&f.len(&s)));
                    self.def_check(
                        cx,
                        inb,
                        Blame::new(codes::SEQ_BOUNDS, format!("sequence index `{}` may be out of bounds", self.snippet(index)), e.span),
                    );
                    f.index(&s, &i)
                }
                Ty::Map(..) => match self.map_lookup(base, index, cx) {
                    Some(t) => t,
                    None => self.unsupported_term(e, "indexing this type"),
                },
                _ => self.unsupported_term(e, "indexing this type"),
            },
            ExprKind::Slice { base, lo, hi } => {
                let Ty::Seq(elem) = &base.ty else { return self.unsupported_term(e, "slicing this type") };
                let f = self.seq_fns_of(elem);
                let s = self.expr(base, cx);
                let len = f.len(&s);
                let l = lo.as_ref().map(|x| self.expr(x, cx));
                let h = hi.as_ref().map(|x| self.expr(x, cx));
                let lt = l.clone().unwrap_or(Term::int(0));
                let ht = h.clone().unwrap_or(len.clone());
                let ok = Term::and(vec![Term::int(0).le(&lt), lt.le(&ht), ht.le(&len)]);
                self.def_check(cx, ok, Blame::new(codes::SEQ_BOUNDS, "slice bounds may be out of range", e.span));
                let dropped = if l.is_some() { f.drop(&s, &lt) } else { s };
                if h.is_some() {
                    f.take(&dropped, &ht.sub(&lt))
                } else {
                    dropped
                }
            }
            ExprKind::SeqUpdate { base, index, value } => {
                if let Some(t) = self.map_update(base, index, value, cx) {
                    return t;
                }
                let Ty::Seq(elem) = &base.ty else { return self.unsupported_term(e, "updating this type") };
                let f = self.seq_fns_of(elem);
                let s = self.expr(base, cx);
                let i = self.expr(index, cx);
                let v = self.expr(value, cx);
                let inb = Term::int(0).le(&i).and2(&i.lt(&f.len(&s)));
                self.def_check(
                    cx,
                    inb,
                    Blame::new(codes::SEQ_BOUNDS, format!("sequence index `{}` may be out of bounds", self.snippet(index)), index.span),
                );
                f.update(&s, &i, &v)
            }
            ExprKind::Size(inner) => match &inner.ty {
                Ty::Seq(elem) => {
                    let f = self.seq_fns_of(elem);
                    let s = self.expr(inner, cx);
                    f.len(&s)
                }
                _ => match self.collection_size(inner, cx) {
                    Some(t) => t,
                    None => self.unsupported_term(e, "`|…|` of this type"),
                },
            },
            ExprKind::Collection { kind: CollectionKind::Seq, elems, .. } => {
                let Ty::Seq(elem) = &e.ty else { return self.unsupported_term(e, "this sequence literal") };
                let f = self.seq_fns_of(elem);
                let mut acc: Option<Term> = None;
                for x in elems {
                    let u = f.unit(&self.expr(x, cx));
                    acc = Some(match acc {
                        None => u,
                        Some(a) => f.concat(&a, &u),
                    });
                }
                acc.unwrap_or_else(|| f.empty())
            }
            ExprKind::Collection { kind: CollectionKind::Bag, elems, .. } => self.bag_literal(e, elems, cx),
            ExprKind::Collection { kind: CollectionKind::Set, elems, .. } => self.set_literal(e, elems, cx),
            ExprKind::MapLit { entries, .. } => self.map_literal(e, entries, cx),
            ExprKind::Builtin { func, args } => match self.map_builtin(e, *func, args, cx) {
                Some(t) => t,
                None => self.builtin(e, *func, args, cx),
            },
            ExprKind::Unary { op: UnOp::Not, operand } => self.expr(operand, cx).not(),
            ExprKind::Unary { op: UnOp::Neg, operand } => self.expr(operand, cx).neg(),
            ExprKind::Binary { op, lhs, rhs } => self.binary(e, *op, lhs, rhs, cx),
            ExprKind::Cond { cond, then_expr, else_expr } => {
                let c = self.expr(cond, cx);
                cx.conds.push(c.clone());
                let t = self.expr(then_expr, cx);
                cx.conds.pop();
                cx.conds.push(c.not());
                let f = self.expr(else_expr, cx);
                cx.conds.pop();
                c.ite(&t, &f)
            }
            ExprKind::Quant { kind, binder, guard, body } if *kind != QuantKind::Sum && *kind != QuantKind::ForallStar => {
                let sort = self.sort_of(&binder.ty.to_ty());
                let name: Rc<str> = Rc::from(self.fresh_name(&binder.name.name));
                let v = Term::konst(&name, sort.clone());
                cx.binders.push((binder.name.name.clone(), v));
                let g = self.expr(guard, cx);
                cx.conds.push(g.clone());
                let b = self.expr(body, cx);
                cx.conds.pop();
                cx.binders.pop();
                let forall = *kind == QuantKind::Forall;
                let matrix = if forall { g.implies(&b) } else { g.and2(&b) };
                // A binder fixed by a conjunct `v == t` of the range (or of the
                // body's antecedent / conjunction) is substituted: exact, and the
                // result needs no trigger (`tid == n-1 ==> a[0] == f(tid)`).
                let fixing = match (forall, b.node()) {
                    (true, Node::Op(Op::Implies, a, _)) => g.and2(&a[0]),
                    (true, _) => g.clone(),
                    (false, _) => matrix.clone(),
                };
                let pin = super::qp::pinned(&fixing, std::slice::from_ref(&name));
                if !pin.is_empty() {
                    return matrix.subst(&pin);
                }
                let qid = format!("{}@{}", kind.keyword(), e.span.start);
                // `∀i. g ⇒ ∀j. h ⇒ b` becomes one quantifier over `(i, j)`:
                // the outer one alone has no valid pattern (its candidates
                // mention the inner variable).
                if let (true, Some((inner_vars, inner_body))) = (forall, inner_forall(&b)) {
                    let mut vars = vec![(name, sort)];
                    vars.extend(inner_vars);
                    let names: Vec<Rc<str>> = vars.iter().map(|v| v.0.clone()).collect();
                    let matrix = g.implies(&inner_body);
                    let pats = triggers::choose(&names, &matrix);
                    if !pats.is_empty() {
                        return Term::forall(vars, pats, matrix, &qid);
                    }
                    let (vars, matrix, pats) = pin_quotients(vars, matrix, true);
                    return Term::forall(vars, pats, matrix, &qid);
                }
                let mut pats = triggers::choose(std::slice::from_ref(&name), &matrix);
                let (mut name, mut matrix) = (name, matrix);
                if pats.is_empty() && sort == Sort::Int {
                    let j: Rc<str> = Rc::from(self.fresh_name(&format!("{}_idx", binder.name.name)));
                    if let Some((m, p)) = triggers::reindex(&name, &matrix, forall, &j) {
                        (name, matrix, pats) = (j, m, p);
                    }
                }
                if forall {
                    Term::forall(vec![(name, sort)], pats, matrix, &qid)
                } else {
                    Term::exists(vec![(name, sort)], pats, matrix, &qid)
                }
            }
            ExprKind::Let { binder, value, body } => {
                let v = self.expr(value, cx);
                cx.binders.push((binder.name.name.clone(), v));
                let b = self.expr(body, cx);
                cx.binders.pop();
                b
            }
            ExprKind::Unfolding { pred, body } => self.unfolding(e, pred, body, cx),
            ExprKind::Old(inner) => {
                let Some(old) = cx.old.clone() else { return self.unsupported_term(e, "`\\old` here") };
                let saved = cx.state.replace(old);
                let t = self.expr(inner, cx);
                cx.state = saved;
                t
            }
            ExprKind::OldAt { label, expr: inner } => {
                let Some(st) = self.labels.iter().rev().find(|(n, _)| *n == label.name).map(|(_, s)| s.clone()) else {
                    return self.unsupported_term(e, "`\\old[l]` here (the label's state is not known at this point)");
                };
                let saved = cx.state.replace(st);
                let t = self.expr(inner, cx);
                cx.state = saved;
                t
            }
            ExprKind::Trigger(inner) => self.expr(inner, cx),
            ExprKind::Call { receiver, method, args } => self.function_call(e, receiver.as_deref(), &method.name, args, cx),
            _ => self.unsupported_term(e, "this expression in a verified program"),
        }
    }

    /// `perm(loc)`: the amount held to `loc` in the state the expression is
    /// evaluated in; only in `assert`, `exhale`, `assume` and `inhale` statements
    /// (see `Encoder::perm_reads`).
    fn current_perm(&mut self, e: &Expr, loc: &Expr, cx: &mut ECx) -> Term {
        if !self.perm_reads {
            return self.unsupported_term(e, "`perm(..)` outside `assert`, `exhale`, `assume` and `inhale` statements");
        }
        let Some(st) = cx.state.clone() else { return self.unsupported_term(e, "`perm(..)` here") };
        let Some(Loc { fam, args }) = self.location(loc, cx) else {
            return self.unsupported_term(e, "`perm` of this location");
        };
        self.read_mask_at(&st, &fam, args)
    }

    pub fn unsupported_term(&mut self, e: &Expr, what: &str) -> Term {
        self.unsupported(format!("{what} (`{}`)", self.snippet(e)), e.span);
        let s = self.sort_of(&e.ty);
        self.fresh_const("unsupported", s)
    }

    pub fn seq_fns_of(&mut self, elem: &Ty) -> super::seq::SeqFns {
        let s = self.sort_of(elem);
        self.seq_fns(s)
    }

    fn builtin(&mut self, e: &Expr, func: Builtin, args: &[Expr], cx: &mut ECx) -> Term {
        if let (Builtin::CurPerm, [loc]) = (func, args) {
            return self.current_perm(e, loc, cx);
        }
        if let (Builtin::Array, [a, n]) = (func, args) {
            // VerCors' `\array(a, n)`: `a` is an array of `n` cells — a boolean
            // (`a != null && a.length == n`), no permission, so total: no read to
            // check.
            let a = self.expr(a, cx);
            let n = self.expr(n, cx);
            return a.ne(&null_of(&arr_sort())).and2(&Term::app("alen", vec![a], Sort::Int).eq(&n));
        }
        let Some(Ty::Seq(elem)) = args.first().map(|a| a.ty.clone()) else {
            return self.unsupported_term(e, "this built-in");
        };
        let f = self.seq_fns_of(&elem);
        let s = self.expr(&args[0], cx);
        match func {
            Builtin::Head => {
                let ok = f.len(&s).gt(&Term::int(0));
                self.def_check(
                    cx,
                    ok,
                    Blame::new(codes::SEQ_BOUNDS, format!("`head` of a possibly empty sequence `{}`", self.snippet(&args[0])), e.span),
                );
                f.index(&s, &Term::int(0))
            }
            Builtin::Tail => f.drop(&s, &Term::int(1)),
            Builtin::IsEmpty => f.len(&s).eq(&Term::int(0)),
            // VerCors: `removeAt(xs, i)` is `xs[..i] + xs[i+1..]`, defined for an index in range.
            Builtin::RemoveAt if args.len() == 2 => {
                let i = self.expr(&args[1], cx);
                let ok = Term::int(0).le(&i).and2(&i.lt(&f.len(&s)));
                let b = Blame::new(
                    codes::SEQ_BOUNDS,
                    format!("`removeAt` index `{}` may be out of bounds", self.snippet(&args[1])),
                    args[1].span,
                );
                self.def_check(cx, ok, b);
                f.concat(&f.take(&s, &i), &f.drop(&s, &i.add(&Term::int(1))))
            }
            _ => self.unsupported_term(e, "this built-in"),
        }
    }

    fn binary(&mut self, e: &Expr, op: BinOp, lhs: &Expr, rhs: &Expr, cx: &mut ECx) -> Term {
        match op {
            BinOp::And | BinOp::Star | BinOp::Implies | BinOp::Or => {
                let l = self.expr(lhs, cx);
                let c = if op == BinOp::Or { l.not() } else { l.clone() };
                cx.conds.push(c);
                let r = self.expr(rhs, cx);
                cx.conds.pop();
                match op {
                    BinOp::Implies => l.implies(&r),
                    BinOp::Or => l.or2(&r),
                    _ => l.and2(&r),
                }
            }
            _ => {
                if let Some(t) = self.collection_binary(e, op, lhs, rhs, cx) {
                    return t;
                }
                if let Some(w) = euclidean_remainder(op, lhs, rhs) {
                    return self.expr(w, cx).emod(&self.expr(rhs, cx));
                }
                let mut l = self.expr(lhs, cx);
                let mut r = self.expr(rhs, cx);
                if matches!(lhs.kind, ExprKind::Null) {
                    l = null_of(&r.sort());
                }
                if matches!(rhs.kind, ExprKind::Null) {
                    r = null_of(&l.sort());
                }
                // Arithmetic and ordering exist in SMT only on numbers; an operand
                // of any other sort here (a stand-in for an unsupported value) would
                // make an ill-sorted term that Z3 rejects with its whole batch.
                let numeric = |t: &Term| matches!(t.sort(), Sort::Int | Sort::Real);
                let arith = matches!(
                    op,
                    BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod | BinOp::Frac
                ) || (op == BinOp::Add && !matches!(lhs.ty, Ty::Seq(_)));
                if arith && !(numeric(&l) && numeric(&r)) {
                    return self.unsupported_term(e, "this operator on these operands");
                }
                let seq = |me: &mut Self, t: &Ty| match t {
                    Ty::Seq(el) => Some(me.seq_fns_of(el)),
                    _ => None,
                };
                match op {
                    BinOp::Eq | BinOp::Ne => {
                        let eq = match (seq(self, &lhs.ty).or_else(|| seq(self, &rhs.ty)), &lhs.ty) {
                            (Some(f), _) => f.equal(&l, &r),
                            // Through the index, to trigger the enum's axiom.
                            (None, Ty::Enum(name)) => self.enum_index(name, &l).eq(&self.enum_index(name, &r)),
                            (None, _) => l.eq(&r),
                        };
                        if op == BinOp::Eq {
                            eq
                        } else {
                            eq.not()
                        }
                    }
                    BinOp::Lt => l.lt(&r),
                    BinOp::Le => l.le(&r),
                    BinOp::Gt => l.gt(&r),
                    BinOp::Ge => l.ge(&r),
                    BinOp::Add => match seq(self, &lhs.ty) {
                        Some(f) => f.concat(&l, &r),
                        None => l.add(&r),
                    },
                    BinOp::Sub => l.sub(&r),
                    BinOp::Mul => l.mul(&r),
                    BinOp::Div | BinOp::Mod | BinOp::Frac => {
                        let msg = format!("possible division by zero (`{}`)", self.snippet(rhs));
                        self.def_check(cx, r.ne(&Term::int(0)), Blame::new(codes::DIV_BY_ZERO, msg, rhs.span));
                        match op {
                            BinOp::Div => trunc_div(&l, &r),
                            BinOp::Mod => trunc_mod(&l, &r),
                            _ => l.real_div(&r),
                        }
                    }
                    BinOp::Cons => match seq(self, &rhs.ty) {
                        Some(f) => f.concat(&f.unit(&l), &r),
                        None => self.unsupported_term(e, "`::` here"),
                    },
                    BinOp::Append => match (seq(self, &lhs.ty), matches!(rhs.ty, Ty::Seq(_))) {
                        (Some(f), true) => f.concat(&l, &r),
                        (Some(f), false) => f.concat(&l, &f.unit(&r)),
                        _ => self.unsupported_term(e, "`++` here"),
                    },
                    BinOp::In => match seq(self, &rhs.ty) {
                        Some(f) => f.contains(&r, &l),
                        None => self.unsupported_term(e, "`in` on this type"),
                    },
                    _ => self.unsupported_term(e, "this operator"),
                }
            }
        }
    }
}

/// `w` when `lhs op rhs` is `((w % m) + m) % m` with `m` a positive literal:
/// the idiom for the non-negative remainder (C's unsigned wrap-around in
/// `src/kernels` is written so), which is SMT's `w mod m` exactly — `w % m`
/// lies in `(−m, m)`, so the outer dividend is positive and its truncated
/// remainder is its Euclidean one, and `((w % m) + m) mod m = w mod m`. One
/// `mod` instead of two truncating remainders, whose case splits repeat `w`
/// three times each (nested wrap-arounds grew exponentially), and no division
/// to check (`m` is not zero).
fn euclidean_remainder<'e>(op: BinOp, lhs: &'e Expr, rhs: &'e Expr) -> Option<&'e Expr> {
    let positive = |e: &Expr| match e.kind {
        ExprKind::IntLit(m) if m > 0 => Some(m),
        _ => None,
    };
    let m = positive(rhs)?;
    let ExprKind::Binary { op: BinOp::Add, lhs: inner, rhs: plus } = &lhs.kind else { return None };
    let ExprKind::Binary { op: BinOp::Mod, lhs: w, rhs: m1 } = &inner.kind else { return None };
    (op == BinOp::Mod && positive(plus) == Some(m) && positive(m1) == Some(m) && w.ty == Ty::Int).then_some(&**w)
}

/// PVL `/`: truncating division, from SMT's Euclidean `div`.
///
/// One form serves every divisor sign: SMT-LIB's `div` satisfies
/// `div(a, -b) == -div(a, b)` (`a = (-b)·q + r` iff `a = b·(-q) + r`, with the
/// same `0 <= r < |b|`), so the truncating quotient, `sign(a)·sign(b)·(|a| div |b|)`,
/// is `a >= 0 ? div(a, b) : -div(-a, b)` whatever the sign of `b`. A case split
/// on the divisor's sign would double the `div` terms Z3 must relate (with a
/// symbolic divisor each is a nonlinear problem of its own). At `b == 0` PVL's
/// `/` is undefined and every evaluation is checked.
pub fn trunc_div(a: &Term, b: &Term) -> Term {
    a.ge(&Term::int(0)).ite(&a.ediv(b), &a.neg().ediv(b).neg())
}

/// PVL `%`: the remainder of truncating division (sign of the dividend).
///
/// Written with SMT `mod` on the same divisor as [`trunc_div`] rather than as
/// `a - b * (a / b)`, which with a symbolic divisor adds a nonlinear product of
/// its own (Z3 effort on the corpus programs using `%`: −2%). SMT-LIB's `mod`
/// depends only on `|b|` (`mod(a, -b) == mod(a, b)`), so no case split on the
/// divisor's sign is needed either: `a == b * (a / b) + a % b` holds for every
/// `b != 0` (Z3's `div`/`mod` axiom). At `b == 0` PVL's `%` is undefined and
/// every evaluation is checked.
pub fn trunc_mod(a: &Term, b: &Term) -> Term {
    a.ge(&Term::int(0)).ite(&a.emod(b), &a.neg().emod(b).neg())
}

/// The bound variables of a quantifier, with their sorts.
type Binders = Vec<(Rc<str>, Sort)>;

/// The variables and body of a universal quantifier (`None` for anything else).
/// A quantifier over `vars` without patterns: binders its hypotheses fix by a
/// quotient (`triggers::pin_by_division`, exact) are substituted away, and the
/// patterns chosen again for the rest. A binder left with nothing to match is
/// left to Z3 (completeness only).
fn pin_quotients(mut vars: Binders, mut matrix: Term, forall: bool) -> (Binders, Term, Vec<Vec<Term>>) {
    loop {
        let names: Vec<Rc<str>> = vars.iter().map(|v| v.0.clone()).collect();
        let mut hyps = Vec::new();
        triggers::hypotheses(&matrix, forall, &mut hyps);
        let Some((v, by)) = triggers::pin_by_division(&names, &hyps) else {
            let pats = triggers::choose(&names, &matrix);
            return (vars, matrix, pats);
        };
        let one: std::collections::HashMap<Rc<str>, Term> = [(v.clone(), by)].into_iter().collect();
        matrix = matrix.subst(&one);
        vars.retain(|(n, _)| *n != v);
        let names: Vec<Rc<str>> = vars.iter().map(|v| v.0.clone()).collect();
        let pats = triggers::choose(&names, &matrix);
        if !pats.is_empty() || vars.is_empty() {
            return (vars, matrix, pats);
        }
    }
}

fn inner_forall(t: &Term) -> Option<(Binders, Term)> {
    match t.node() {
        Node::Quant(q) if q.forall => Some((q.vars.clone(), q.body.clone())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{trunc_div, trunc_mod};
    use crate::verify::smt::solver::{configure_globals, Outcome, SmtSolver};
    use crate::verify::smt::{Sort, Term};

    /// The encodings agree with Rust's `/` and `%`, which truncate as PVL's do,
    /// for dividends and divisors of both signs given as constants (so the
    /// symbolic-divisor form is the one checked), and the negative twin: the
    /// Euclidean answer is refuted wherever it differs.
    #[test]
    fn truncating_division_matches_rust() {
        configure_globals();
        let mut s = SmtSolver::new(5000, 0, false);
        let mut n = 0;
        let mut proves = |s: &mut SmtSolver, hyp: Term, goal: Term| {
            n += 1;
            let chk = format!("chk{n}");
            s.open_query_scope().unwrap();
            s.assert(Term::konst(&chk, Sort::Bool).implies(&hyp.and2(&goal.not())));
            matches!(s.check(&[chk.as_str()]).unwrap(), Outcome::Proved)
        };
        let (a, b) = (Term::konst("a", Sort::Int), Term::konst("b", Sort::Int));
        for va in -7i128..=7 {
            for vb in [-3i128, -2, -1, 1, 2, 3] {
                let at = a.eq(&Term::int(va)).and2(&b.eq(&Term::int(vb)));
                assert!(proves(&mut s, at.clone(), trunc_div(&a, &b).eq(&Term::int(va / vb))), "{va} / {vb}");
                assert!(proves(&mut s, at.clone(), trunc_mod(&a, &b).eq(&Term::int(va % vb))), "{va} % {vb}");
                let (q, r) = (va.div_euclid(vb), va.rem_euclid(vb));
                if (q, r) != (va / vb, va % vb) {
                    assert!(!proves(&mut s, at.clone(), trunc_div(&a, &b).eq(&Term::int(q))), "{va} div {vb}");
                    assert!(!proves(&mut s, at, trunc_mod(&a, &b).eq(&Term::int(r))), "{va} mod {vb}");
                }
            }
        }
    }
}
