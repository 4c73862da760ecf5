//! Inhale and exhale of assertions (`Perm`, `PointsTo`, `\forall*`, `**`, `==>`,
//! `?:`, pure parts), after Carbon.
//!
//! * **Inhale** adds permission (a new mask version), checks amounts are
//!   non-negative, and assumes pure parts; afterwards "good mask" (no location
//!   above full permission) is assumed for every touched family.
//! * **Exhale** checks that enough permission is held and removes it, and checks
//!   the pure parts, which are evaluated in the state *before* the exhale; then
//!   the heap of every touched family is havocked where no permission is left.
//! * **Quantified permissions** `\forall* v; c(v); Perm(a[e(v)], p(v))` with `a`
//!   independent of `v` and `e` affine in `v` (`k·v + d`, `k ≠ 0` constant) are
//!   inverted syntactically: location `(x, j)` gains `p(inv(j))` when `x = a`,
//!   `j − d` is divisible by `k` and `c(inv(j))`, where `inv(j) = (j − d)/k`.
//!   Injectivity is then syntactic; in every other case it is checked with Z3 (on
//!   inhale too) and the mask update goes through inverse functions (`qp.rs`).
//!   Binders pinned by the condition (`i == n-1 ==> Perm(a[0], 1)`) are
//!   substituted away first.
//! * Amounts: `write` = 1, `none` = 0, `p\q` a real, `read` a wildcard — a fresh
//!   positive amount on inhale, a fresh amount strictly below what is held on
//!   exhale, so a `read` never adds up to `write`.

use super::expr::{ECx, Loc};
use super::state::State;
use super::{Blame, Encoder, Env, Term};
use crate::ast::{BinOp, Expr, ExprKind, Name, QuantKind, Span};
use crate::diagnostics::codes;
use crate::verify::ir::facts::is_pure;
use crate::verify::smt::term::{Node, Op};
use crate::verify::smt::Sort;
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

/// What the evaluation of a contract may refer to.
#[derive(Clone)]
pub struct Frame<'e> {
    pub env: &'e Env,
    pub this: Option<Term>,
    pub old: Option<State>,
    pub result: Option<Term>,
    pub class: Name,
}

/// How exhale failures are reported.
#[derive(Clone)]
pub struct ExCx {
    /// Code for a pure part that may not hold.
    pub code: &'static str,
    /// "postcondition may not hold", …
    pub what: String,
    /// Primary span for pure failures (the clause or the call); `None`: the
    /// failing expression itself.
    pub span: Option<Span>,
    /// Permission failures are reported with this code (`permission`, or
    /// `precondition` at calls) …
    pub perm_code: &'static str,
    /// … and at this span (`None`: the `Perm` expression).
    pub perm_span: Option<Span>,
    pub related: Vec<(Span, String)>,
    /// `assert`: check only, change nothing.
    pub check_only: bool,
    /// The permission moves into or out of a predicate instance this thread holds
    /// (`fold`/`unfold`): the heap keeps its values (see `lower/resources.rs`).
    pub keeps_heap: bool,
    /// Multiply permission amounts by this (par host side).
    pub scale: Option<Term>,
}

impl ExCx {
    /// Exhaling a precondition clause (at `clause`) of `callee` at the call at
    /// `call`: every failure, pure or of permission, is the call's, with the clause
    /// as the related location ("this precondition of the {kind}").
    pub fn call_precondition(callee: &str, kind: &str, call: Span, clause: Span) -> ExCx {
        ExCx {
            code: codes::PRECONDITION,
            what: format!("precondition of `{callee}` may not hold"),
            span: Some(call),
            perm_code: codes::PRECONDITION,
            perm_span: Some(call),
            related: vec![(clause, format!("this precondition of the {kind}"))],
            check_only: false,
            keeps_heap: false,
            scale: None,
        }
    }

    fn blame(&self, code: &'static str, msg: String, span: Span) -> Blame {
        let mut b = Blame::new(code, msg, span);
        b.related = self.related.clone();
        b
    }
}

/// Which way an assertion goes. An exhale carries what its failures are reported
/// as, so there is no exhale without a blame (nor an inhale with one).
#[derive(Clone, Copy)]
enum Mode<'a> {
    Inhale,
    Exhale(&'a ExCx),
}

impl Mode<'_> {
    fn inhales(self) -> bool {
        matches!(self, Mode::Inhale)
    }
}

/// Per-assertion bookkeeping.
struct Run<'a, 'e> {
    mode: Mode<'a>,
    guard: Term,
    frame: &'a Frame<'e>,
    /// The state reads are evaluated in: current for inhale, pre-exhale for exhale.
    pre: State,
    scale: Option<Term>,
    check: bool,
    touched: BTreeSet<Rc<str>>,
    /// A predicate instance was given away (exhaled, not by `fold`/`unfold`):
    /// the heap of its footprint must be havocked, also in families this unit
    /// has not met yet (see `exhale_all`).
    gave_instance: bool,
    /// Single locations inhaled: the good-mask bound is also assumed for these
    /// ground terms, so that e.g. `Perm(a[0],1) ** Perm(b[0],1)` gives `a != b`
    /// without a term to trigger the quantified bound.
    inhaled: Vec<(Rc<str>, Vec<Term>)>,
}

impl Encoder<'_> {
    /// Inhales `e` under `cond`. `check`: also check well-definedness (for
    /// contracts inhaled by the unit itself; callee contracts were checked when
    /// the callee was verified).
    #[allow(clippy::too_many_arguments)]
    pub fn inhale(&mut self, guard: &Term, st: &mut State, fr: &Frame, e: &Expr, cond: &Term, scale: Option<&Term>, check: bool) {
        let mut run = Run {
            mode: Mode::Inhale,
            guard: guard.clone(),
            frame: fr,
            pre: st.clone(),
            scale: scale.cloned(),
            check,
            touched: BTreeSet::new(),
            gave_instance: false,
            inhaled: Vec::new(),
        };
        self.assertion(&mut run, st, e, cond);
        for fam in run.touched.clone() {
            self.good_mask(guard, st, &fam);
        }
        for (fam, args) in run.inhaled {
            let m = self.read_mask(st, &fam, args);
            self.assume(guard, m.le(&Term::real(1, 1)));
        }
    }

    /// Exhales `e` under `cond` (one clause; see [`Encoder::exhale_all`]).
    #[allow(clippy::too_many_arguments)]
    pub fn exhale(&mut self, guard: &Term, st: &mut State, fr: &Frame, e: &Expr, cond: &Term, scale: Option<&Term>, ex: &ExCx) {
        self.exhale_all(guard, st, fr, &[(e, ex.clone())], cond, scale);
    }

    /// Exhales several clauses as one assertion: pure parts of every clause are
    /// evaluated in the state before the whole exhale, permissions are removed
    /// left to right, and the heap is havocked once at the end.
    pub fn exhale_all(&mut self, guard: &Term, st: &mut State, fr: &Frame, parts: &[(&Expr, ExCx)], cond: &Term, scale: Option<&Term>) {
        let pre = st.clone();
        let mut work = st.clone();
        let mut touched = BTreeSet::new();
        let mut check_only = true;
        let mut keeps_heap = true;
        let mut gave_instance = false;
        for (e, ex) in parts {
            check_only &= ex.check_only;
            keeps_heap &= ex.keeps_heap;
            let mut run = Run {
                mode: Mode::Exhale(ex),
                guard: guard.clone(),
                frame: fr,
                pre: pre.clone(),
                scale: ex.scale.clone().or(scale.cloned()),
                check: true,
                touched: BTreeSet::new(),
                gave_instance: false,
                inhaled: Vec::new(),
            };
            self.assertion(&mut run, &mut work, e, cond);
            touched.extend(run.touched);
            gave_instance |= run.gave_instance;
        }
        if check_only {
            return;
        }
        if !keeps_heap {
            for fam in touched {
                self.havoc_heap(&mut work, &fam);
            }
            if gave_instance {
                // The families not met yet are at the state's base version:
                // a new base makes their heaps arbitrary too (their masks stay
                // empty, as they were).
                self.rebase(&mut work);
            }
        }
        *st = work;
    }

    fn acx<'s>(&self, run: &Run<'_, 's>, state: &State, cond: &Term) -> ECx<'s> {
        let mut cx = ECx::new(&run.guard, run.frame.env, Some(state.clone()), &run.frame.class);
        cx.this = run.frame.this.clone();
        cx.old = run.frame.old.clone();
        cx.result = run.frame.result.clone();
        cx.conds = vec![cond.clone()];
        cx.check = run.check;
        cx
    }

    fn bcx<'s>(&self, run: &Run<'_, 's>, read: &State, cond: &Term, binders: &[(Name, Term, Term)]) -> ECx<'s> {
        let mut cx = self.acx(run, read, cond);
        for (n, c, r) in binders {
            cx.binders.push((n.clone(), c.clone()));
            cx.conds.push(r.clone());
        }
        cx
    }

    fn assertion(&mut self, run: &mut Run, st: &mut State, e: &Expr, cond: &Term) {
        match &e.kind {
            ExprKind::Binary { op: BinOp::Star | BinOp::And, lhs, rhs } if !is_pure(e) => {
                self.assertion(run, st, lhs, cond);
                // Left-to-right: the right part is evaluated after the left one.
                if run.mode.inhales() {
                    run.pre = st.clone();
                }
                self.assertion(run, st, rhs, cond);
            }
            ExprKind::Binary { op: BinOp::Implies, lhs, rhs } if !is_pure(e) => {
                let read = if run.mode.inhales() { st.clone() } else { run.pre.clone() };
                let mut cx = self.acx(run, &read, cond);
                let c = self.expr(lhs, &mut cx);
                self.assertion(run, st, rhs, &cond.and2(&c));
            }
            ExprKind::Cond { cond: c, then_expr, else_expr } if !is_pure(e) => {
                let read = if run.mode.inhales() { st.clone() } else { run.pre.clone() };
                let mut cx = self.acx(run, &read, cond);
                let ct = self.expr(c, &mut cx);
                self.assertion(run, st, then_expr, &cond.and2(&ct));
                self.assertion(run, st, else_expr, &cond.and2(&ct.not()));
            }
            ExprKind::Perm { .. } | ExprKind::PointsTo { .. } if split_amount(e, false).is_some() => {
                let split = split_amount(e, false).expect("checked");
                self.assertion(run, st, &split, cond)
            }
            ExprKind::Perm { loc, amount } => self.perm(run, st, e, loc, Some(amount), cond, &[]),
            ExprKind::Call { receiver, method, args } if e.ty == crate::ast::Ty::Resource => {
                self.predicate_instance(run, st, e, receiver.as_deref(), &method.name, args, cond)
            }
            ExprKind::Value(loc) => self.perm(run, st, e, loc, None, cond, &[]),
            // `[p]R`: `R` with every amount multiplied by `p` (and by the scale
            // already in force, e.g. a par block's); `p` is checked non-negative.
            ExprKind::Scale { amount, expr } => {
                if matches!(amount.kind, ExprKind::Read) {
                    return self.unsupported(format!("scaling by `read` (`{}`)", self.snippet(e)), e.span);
                }
                let read = if run.mode.inhales() { st.clone() } else { run.pre.clone() };
                let mut cx = self.acx(run, &read, cond);
                let p = self.amount(run, &mut cx, Some(amount));
                let saved = std::mem::replace(&mut run.scale, p);
                self.assertion(run, st, expr, cond);
                run.scale = saved;
            }
            ExprKind::PointsTo { loc, amount, value } => {
                self.perm(run, st, e, loc, Some(amount), cond, &[]);
                if run.mode.inhales() {
                    run.pre = st.clone();
                }
                let eq = Expr {
                    kind: ExprKind::Binary { op: BinOp::Eq, lhs: loc.clone(), rhs: value.clone() },
                    span: e.span,
                    ty: crate::ast::Ty::Bool,
                };
                self.pure_part(run, st, &eq, cond);
            }
            ExprKind::Quant { kind: QuantKind::ForallStar | QuantKind::Forall, .. } if !is_pure(e) => {
                self.quantified(run, st, e, e, cond, Vec::new());
            }
            ExprKind::Builtin { func: crate::ast::Builtin::Matrix, args } => match super::qp::matrix_assertion(args, e.span) {
                Some(m) => self.assertion(run, st, &m, cond),
                None => self.unsupported(format!("`{}` (not a 2-D array)", self.snippet(e)), e.span),
            },
            _ if is_pure(e) => self.pure_part(run, st, e, cond),
            _ => self.unsupported(format!("this assertion (`{}`)", self.snippet(e)), e.span),
        }
    }

    fn pure_part(&mut self, run: &mut Run, st: &State, e: &Expr, cond: &Term) {
        match run.mode {
            Mode::Inhale => {
                let mut cx = self.acx(run, st, cond);
                let t = self.expr(e, &mut cx);
                self.assume(&run.guard.clone(), cond.implies(&t));
            }
            Mode::Exhale(ex) => {
                let pre = run.pre.clone();
                let mut cx = self.acx(run, &pre, cond);
                let t = self.expr(e, &mut cx);
                let b = ex.blame(ex.code, ex.what.clone(), ex.span.unwrap_or(e.span));
                let env = run.frame.env;
                self.check(&run.guard.clone(), Some(env), std::slice::from_ref(cond), t, b);
            }
        }
    }

    /// The permission amount, checked non-negative; `None` for a wildcard.
    fn amount(&mut self, run: &Run, cx: &mut ECx, amount: Option<&Expr>) -> Option<Term> {
        let a = amount?;
        if matches!(a.kind, ExprKind::Read) {
            return None;
        }
        let p = self.expr(a, cx).to_real();
        if cx.check && p.as_int_lit().is_none() && !matches!(p.node(), Node::RealLit(..)) {
            let b = Blame::new(codes::NEGATIVE_PERMISSION, format!("permission amount `{}` may be negative", self.snippet(a)), a.span);
            self.check(&cx.guard.clone(), Some(cx.env), &cx.conds.clone(), p.ge(&Term::real(0, 1)), b);
        } else if let Node::RealLit(n, _) = p.node() {
            if *n < 0 {
                self.failures.push(super::super::Failure::new(codes::NEGATIVE_PERMISSION, "negative permission amount", a.span));
            }
        }
        Some(match &run.scale {
            Some(s) => p.mul(&s.to_real()),
            None => p,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn perm(&mut self, run: &mut Run, st: &mut State, e: &Expr, loc: &Expr, amount: Option<&Expr>, cond: &Term, _b: &[()]) {
        let read = run.pre.clone();
        let mut cx = self.acx(run, &read, cond);
        let Some(Loc { fam, args }) = self.perm_location(loc, &mut cx) else {
            self.unsupported(format!("a permission to `{}`", self.snippet(loc)), loc.span);
            return;
        };
        let p = self.amount(run, &mut cx, amount);
        self.perm_at(run, st, e, loc, fam, args, p, cond);
    }

    /// The location of a single `Perm(x.f, p)`. As in Viper, `x` need not be
    /// known non-null: positive permission to a field of `null` is never held
    /// (inhaling it assumes `x != null`, see [`Encoder::perm_at`]), so an exhale
    /// at `null` fails for lack of permission. `requires Perm(move, 1\2) **
    /// Perm(move.i, read)` is thus self-framing. Array cells keep their null and
    /// bounds checks ([`Encoder::location`]).
    fn perm_location(&mut self, loc: &Expr, cx: &mut ECx) -> Option<Loc> {
        match &loc.kind {
            ExprKind::Field { obj, field } if matches!(obj.ty, crate::ast::Ty::Class(_)) => {
                let crate::ast::Ty::Class(class) = &obj.ty else { return None };
                let o = self.expr(obj, cx);
                let fam = self.field_family(class, &field.name)?;
                Some(Loc { fam, args: vec![o] })
            }
            _ => self.location(loc, cx),
        }
    }

    /// A permission to one location `args` of `fam` (`p`: `None` for a wildcard).
    #[allow(clippy::too_many_arguments)]
    fn perm_at(
        &mut self,
        run: &mut Run,
        st: &mut State,
        e: &Expr,
        loc: &Expr,
        fam: Rc<str>,
        args: Vec<Term>,
        p: Option<Term>,
        cond: &Term,
    ) {
        let guard = run.guard.clone();
        let at = |xs: &[Term]| Term::and(xs.iter().zip(&args).map(|(x, a)| x.eq(a)).collect());
        match run.mode {
            Mode::Inhale => {
                let p = match p {
                    Some(p) => p,
                    None => {
                        let w = self.fresh_const("wildcard", Sort::Real);
                        self.assume(&guard, w.gt(&Term::real(0, 1)));
                        w
                    }
                };
                self.update_mask(st, &fam, |xs| cond.and2(&at(xs)).ite(&p, &Term::real(0, 1)));
                run.inhaled.push((fam.clone(), args.clone()));
                if args.len() == 1 {
                    let nn = args[0].ne(&super::null_of(&args[0].sort()));
                    self.assume(&guard, cond.and2(&p.gt(&Term::real(0, 1))).implies(&nn));
                }
            }
            Mode::Exhale(ex) => {
                let held = self.read_mask_at(st, &fam, args.clone());
                let (goal, p) = match p {
                    Some(p) => (held.ge(&p), p),
                    None => {
                        // The amount is chosen below what is held only where
                        // something is held: assuming `0 < w < held` outright
                        // would assume `held > 0`, the very thing checked next.
                        let w = self.fresh_const("wildcard", Sort::Real);
                        let some = held.gt(&Term::real(0, 1));
                        self.assume(&guard, cond.and2(&some).implies(&Term::real(0, 1).lt(&w).and2(&w.lt(&held))));
                        (some, w)
                    }
                };
                let msg = format!("{}: insufficient permission for `{}`", ex.what, self.snippet(loc));
                let b = ex.blame(ex.perm_code, msg, ex.perm_span.unwrap_or(e.span));
                self.check(&guard, Some(run.frame.env), std::slice::from_ref(cond), goal, b);
                // Also in an `assert`: what one part of the assertion uses is not
                // there for the next (`Perm(x, write) ** Perm(x, write)` fails);
                // `exhale_all` drops the state of an `assert` afterwards.
                self.update_mask(st, &fam, |xs| cond.and2(&at(xs)).ite(&p.neg(), &Term::real(0, 1)));
            }
        }
        run.touched.insert(fam);
    }

    /// A predicate instance `p(e..)` (see `lower/resources.rs`): full permission to
    /// the location `(receiver, e..)` of the family `pred:C.p`. Unlike fields, an
    /// instance may be held more than once (folding a pure body twice), so no
    /// bound is assumed on its amount, and there is no heap to havoc.
    #[allow(clippy::too_many_arguments)]
    fn predicate_instance(
        &mut self,
        run: &mut Run,
        st: &mut State,
        e: &Expr,
        receiver: Option<&Expr>,
        name: &Name,
        args: &[Expr],
        cond: &Term,
    ) {
        let read = run.pre.clone();
        let mut cx = self.acx(run, &read, cond);
        let Some((fam, at)) = self.predicate_location(e, receiver, name, args, run.frame.this.clone(), &mut cx) else { return };
        let p = match &run.scale {
            Some(s) => Term::real(1, 1).mul(&s.to_real()),
            None => Term::real(1, 1),
        };
        let here = |xs: &[Term]| Term::and(xs.iter().zip(&at).map(|(x, a)| x.eq(a)).collect());
        match run.mode {
            Mode::Inhale => self.update_mask(st, &fam, |xs| cond.and2(&here(xs)).ite(&p, &Term::real(0, 1))),
            Mode::Exhale(ex) => {
                let held = self.read_mask(st, &fam, at.clone());
                let msg = format!("{}: the predicate instance `{}` may not be held", ex.what, self.snippet(e));
                let b = ex.blame(ex.perm_code, msg, ex.perm_span.unwrap_or(e.span));
                self.check(&run.guard.clone(), Some(run.frame.env), std::slice::from_ref(cond), held.ge(&p), b);
                // (In an `assert` too, as for field permissions.)
                self.update_mask(st, &fam, |xs| cond.and2(&here(xs)).ite(&p.neg(), &Term::real(0, 1)));
                // The instance's footprint is given away: every heap family,
                // where no direct permission is left (an over-approximation;
                // see `lower/resources.rs`).
                run.touched.extend(self.heap_families());
                run.gave_instance = true;
            }
        }
    }

    /// `\forall*` (possibly nested, with `==>`/`**` inside): binders become fresh
    /// constants; each `Perm` leaf is a quantified permission over them.
    fn quantified(&mut self, run: &mut Run, st: &mut State, whole: &Expr, e: &Expr, cond: &Term, binders: Vec<(Name, Term, Term)>) {
        // binders: (source name, constant, its range condition)
        let read = if run.mode.inhales() { st.clone() } else { run.pre.clone() };
        match &e.kind {
            ExprKind::Quant { kind: QuantKind::ForallStar | QuantKind::Forall, binder, guard, body } => {
                let sort = self.sort_of(&binder.ty.to_ty());
                let c = self.fresh_const(&binder.name.name, sort);
                let mut cx = self.bcx(run, &read, cond, &binders);
                cx.binders.push((binder.name.name.clone(), c.clone()));
                let g = self.expr(guard, &mut cx);
                let mut b = binders;
                b.push((binder.name.name.clone(), c, g));
                self.quantified(run, st, whole, body, cond, b);
            }
            ExprKind::Binary { op: BinOp::Star | BinOp::And, lhs, rhs } => {
                self.quantified(run, st, whole, lhs, cond, binders.clone());
                self.quantified(run, st, whole, rhs, cond, binders);
            }
            ExprKind::Binary { op: BinOp::Implies, lhs, rhs } => {
                let mut cx = self.bcx(run, &read, cond, &binders);
                let c = self.expr(lhs, &mut cx);
                let mut b = binders;
                let last = b.last_mut().expect("inside a quantifier");
                last.2 = last.2.and2(&c);
                self.quantified(run, st, whole, rhs, cond, b);
            }
            ExprKind::Perm { .. } | ExprKind::PointsTo { .. } if split_amount(e, true).is_some() => {
                let split = split_amount(e, true).expect("checked");
                self.quantified(run, st, whole, &split, cond, binders)
            }
            ExprKind::Perm { loc, amount } => self.qp_leaf(run, st, whole, e, loc, Some(amount), cond, &binders),
            ExprKind::Value(loc) => self.qp_leaf(run, st, whole, e, loc, None, cond, &binders),
            _ if is_pure(e) => {
                let mut cx = self.bcx(run, &read, cond, &binders);
                let t = self.expr(e, &mut cx);
                let range = Term::and(binders.iter().map(|b| b.2.clone()).collect());
                match run.mode {
                    Mode::Inhale => {
                        let vars: Vec<(Rc<str>, Sort)> = binders.iter().filter_map(|b| const_var(&b.1)).collect();
                        let names: Vec<Rc<str>> = vars.iter().map(|v| v.0.clone()).collect();
                        // Pinned binders (`tid == n-1 ==> a[0] == f(tid)`) are
                        // substituted: the fact becomes (partly) ground and
                        // needs no trigger for them.
                        let pin = super::qp::pinned(&range, &names);
                        let vars: Vec<(Rc<str>, Sort)> = vars.into_iter().filter(|v| !pin.contains_key(&v.0)).collect();
                        let names: Vec<Rc<str>> = vars.iter().map(|v| v.0.clone()).collect();
                        let matrix = range.implies(&t).subst(&pin);
                        let pats = super::triggers::choose(&names, &matrix);
                        let q = Term::forall(vars, pats, matrix, &format!("forall*@{}", e.span.start));
                        self.assume(&run.guard.clone(), cond.implies(&q));
                    }
                    Mode::Exhale(ex) => {
                        // The binders are free constants here: this is the
                        // skolemised form of the quantified check.
                        let b = ex.blame(ex.code, ex.what.clone(), ex.span.unwrap_or(e.span));
                        self.check(&run.guard.clone(), Some(run.frame.env), &[cond.clone(), range], t, b);
                    }
                }
            }
            _ => self.unsupported(format!("this quantified assertion (`{}`)", self.snippet(e)), e.span),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn qp_leaf(
        &mut self,
        run: &mut Run,
        st: &mut State,
        whole: &Expr,
        e: &Expr,
        loc: &Expr,
        amount: Option<&Expr>,
        cond: &Term,
        binders: &[(Name, Term, Term)],
    ) {
        let read = if run.mode.inhales() { st.clone() } else { run.pre.clone() };
        let mut cx = self.acx(run, &read, cond);
        for (n, c, r) in binders {
            cx.binders.push((n.clone(), c.clone()));
            cx.conds.push(r.clone());
        }
        let Some(Loc { fam, args }) = self.perm_location(loc, &mut cx) else {
            self.unsupported(format!("a quantified permission to `{}`", self.snippet(loc)), loc.span);
            return;
        };
        let p = self.amount(run, &mut cx, amount);
        let range = Term::and(binders.iter().map(|b| b.2.clone()).collect());
        let guard = run.guard.clone();
        let all: Vec<(Rc<str>, Sort)> = binders.iter().filter_map(|b| const_var(&b.1)).collect();
        let all_names: Vec<Rc<str>> = all.iter().map(|v| v.0.clone()).collect();
        // Binders pinned by the condition (`i == n-1 ==> Perm(a[0], 1)`) are
        // substituted away; with all of them pinned this is a plain permission.
        let pin = super::qp::pinned(&range, &all_names);
        let (args, range, p): (Vec<Term>, Term, Option<Term>) =
            (args.iter().map(|a| a.subst(&pin)).collect(), range.subst(&pin), p.map(|p| p.subst(&pin)));
        let bvars: Vec<(Rc<str>, Sort)> = all.into_iter().filter(|v| !pin.contains_key(&v.0)).collect();
        if bvars.is_empty() {
            self.perm_at(run, st, e, loc, fam, args, p, &cond.and2(&range));
            return;
        }
        let vars: Vec<Rc<str>> = bvars.iter().map(|v| v.0.clone()).collect();

        // The location with plainly defined functions unfolded (`newIdx(tid, k,
        // 10)` is `tid + k*10`, `idx(N, j, i)` is `N*j + i`): equal by their
        // definitional axioms, and what the inverse and injectivity reasoning see.
        let unfolded: Vec<Term> = args.iter().map(|a| self.unfold_defs(a)).collect();
        // Syntactic inverse: one binder, array receiver independent of it, affine index.
        let inverse = if vars.len() == 1 && args.len() == 2 && !args[0].mentions(&vars[0]) { affine(&unfolded[1], &vars[0]) } else { None };
        // Tiled and linearised indices: a closed-form inverse (`qp_solve.rs`),
        // which also proves injectivity.
        let solved = if inverse.is_none() && args.len() == 2 && !vars.iter().any(|v| args[0].mentions(v)) {
            self.solve_qp(&guard, cond, &args[1], &range, &bvars)
        } else {
            None
        };
        if inverse.is_none() && solved.is_none() {
            // Injectivity: two different binder values with permission give
            // different locations. Needed before the inverse functions are
            // defined (their axiom would otherwise be inconsistent).
            let copy = |me: &mut Self, tag: &str| -> HashMap<Rc<str>, Term> {
                bvars.iter().map(|(v, s)| (v.clone(), me.fresh_const(&format!("{v}{tag}"), s.clone()))).collect()
            };
            let (m1, m2) = (copy(self, "'1"), copy(self, "'2"));
            let pos =
                |p: &Option<Term>, m: &HashMap<Rc<str>, Term>| p.as_ref().map(|p| p.subst(m).gt(&Term::real(0, 1))).unwrap_or(Term::tru());
            let distinct_vars = Term::or(vars.iter().map(|v| m1[v].ne(&m2[v])).collect());
            let mut hyp = vec![cond.clone(), range.subst(&m1), range.subst(&m2), pos(&p, &m1), pos(&p, &m2), distinct_vars];
            if let (Mode::Inhale, Some(p)) = (run.mode, &p) {
                // Two instances that together hold more than a full permission
                // cannot name one location: inhaling both would exceed the
                // good-mask bound, so that state is infeasible (it would be
                // `false` after the inhale). Only pairs that fit into one
                // location need proving distinct. (On exhale no such argument
                // exists: the check is what keeps the exhale honest.)
                hyp.push(p.subst(&m1).add(&p.subst(&m2)).le(&Term::real(1, 1)));
            }
            // Compared unfolded, so that the product hints see the products.
            hyp.extend(super::qp::product_hints(&unfolded, &vars, &m1, &m2));
            let hyp = Term::and(hyp);
            let same = Term::and(unfolded.iter().map(|a| a.subst(&m1).eq(&a.subst(&m2))).collect());
            let b = Blame::new(
                codes::NOT_INJECTIVE,
                format!("quantified permission to `{}` may not be injective", self.snippet(loc)),
                whole.span,
            );
            if !self.prove(&guard, &hyp, &same.not(), Some((Some(run.frame.env), b))) {
                return;
            }
        }
        // Amount per location, for wildcards.
        let explicit = p.is_some();
        let p = match (p, run.mode) {
            (Some(p), _) => p,
            (None, Mode::Inhale) => {
                let w = self.fresh_const("wildcard", Sort::Real);
                self.assume(&guard, w.gt(&Term::real(0, 1)));
                w
            }
            // Each location gives away its own amount below what it holds.
            (None, Mode::Exhale(_)) => self.wildcard_fn(&guard, st, &fam, &args),
        };
        if let Mode::Exhale(ex) = run.mode {
            let held = self.read_mask_at(st, &fam, args.clone());
            let goal = if explicit { held.ge(&p) } else { held.gt(&Term::real(0, 1)) };
            let msg = format!("{}: insufficient permission for `{}`", ex.what, self.snippet(loc));
            let b = ex.blame(ex.perm_code, msg, ex.perm_span.unwrap_or(e.span));
            let proved = self.check(&guard, Some(run.frame.env), &[cond.clone(), range.clone()], goal, b);
            if proved && (!explicit || is_positive_literal(&p)) {
                self.frame_reads(run, &fam, &args, &bvars, cond.and2(&range));
            }
        }
        // (In an `assert` too: see `perm_at`.)
        if let Some(sv) = &solved {
            let arr = args[0].clone();
            self.solved_update(st, &fam, sv, &arr, &args[1], cond, &p, run.mode.inhales());
            run.touched.insert(fam);
            return;
        }
        let Some((k, d)) = inverse else {
            let leaf = super::qp::QpLeaf { fam: &fam, vars: &bvars, range: &range, args: &args, p: &p, inhale: run.mode.inhales() };
            self.qp_inverse_update(&guard, cond, st, leaf);
            run.touched.insert(fam);
            return;
        };
        let v = vars[0].clone();
        let arr = args[0].clone();
        let sign = if run.mode.inhales() { 1 } else { -1 };
        // The condition at the inverse with plain definitions unfolded: a
        // function application at `inv(j)` would be a new term for every
        // location the mask is read at, and quantifiers triggered by such
        // applications (`a[newIdx(tid, k, 10)] == …`) would feed on them.
        let range = self.unfold_defs(&range);
        self.update_mask(st, &fam, |xs| {
            let (x, j) = (&xs[0], &xs[1]);
            let shifted = j.sub(&d);
            let (inv, divisible) = match k {
                1 => (shifted, Term::tru()),
                -1 => (shifted.neg(), Term::tru()),
                k => (shifted.ediv(&Term::int(k)), shifted.emod(&Term::int(k.abs())).eq(&Term::int(0))),
            };
            let mut m = HashMap::new();
            m.insert(v.clone(), inv);
            let hit = Term::and(vec![x.eq(&arr), divisible, cond.clone(), range.subst(&m)]);
            let amt = super::qp_solve::amount_at(&p, &args, xs).subst(&m);
            hit.ite(&if sign > 0 { amt } else { amt.neg() }, &Term::real(0, 1))
        });
        run.touched.insert(fam);
    }
}

impl Encoder<'_> {
    /// After an exhale has proved that a quantified permission to the locations
    /// `args` (under `hyp`, over the binders `vars`) is held, with an amount that
    /// is a positive literal or a wildcard, assumes that the state before the
    /// exhale held some permission there.
    ///
    /// This is a consequence of what was proved, not a new fact: at least that
    /// amount was held when the permission was removed, and an exhale only
    /// removes non-negative amounts (each one checked), so the pre-exhale mask,
    /// in which the assertion's reads are checked, held at least as much. (After
    /// a failed check nothing is assumed, so the read errors after it are still
    /// reported.) Stated with the mask read itself as the trigger, it answers
    /// the read checks of `Perm(b[f(i)], read) ** b[f(i)] == …` with one
    /// instantiation instead of a walk down the mask versions (tiled VectorAdd:
    /// these read checks in its postconditions were its slowest queries,
    /// 0.3–1.1 s each; its Z3 effort halved).
    ///
    /// Not done for single locations: their read checks are cheap already, and
    /// the extra ground facts changed Z3's search on nonlinear goals (the
    /// motivational example's `a[tid + 1] == k * tid` invariant went from
    /// milliseconds to 1.5 s).
    fn frame_reads(&mut self, run: &Run, fam: &Rc<str>, args: &[Term], vars: &[(Rc<str>, Sort)], hyp: Term) {
        let held_before = self.read_mask(&run.pre, fam, args.to_vec());
        // Without its mask read as the trigger (one Z3 rejects: an `ite` from a
        // truncating `/` in the index) the fact would be left to Z3's pattern
        // inference, which is not what it is for.
        if run.mode.inhales() || vars.is_empty() || !vars.iter().all(|v| held_before.mentions(&v.0)) || !held_before.is_pattern_term(vars) {
            return;
        }
        let fact = hyp.implies(&held_before.gt(&Term::real(0, 1)));
        let q = Term::forall(vars.to_vec(), vec![vec![held_before]], fact, "framed-read");
        self.assume(&run.guard.clone(), q);
    }
}

/// `p` is a literal amount above zero (`write`, `1\2`, …).
/// `Perm(loc, c ? p : q)` (also `PointsTo`, and `?:` nested in `p` or `q`)
/// where a branch is `read`: `c ? Perm(loc, p) : Perm(loc, q)`, or, inside a
/// `\forall*` (`quantified`), `(c ==> Perm(loc, p)) ** (!c ==> Perm(loc, q))`.
/// Both mean the same as the original in every state (exactly one branch
/// applies, with its amount), and `read` becomes the wildcard amount of a
/// permission of its own, which is what it means there; `None` when the amount
/// has no such `?:`. Other uses of `read` as a value (`read + read`) stay
/// unsupported (`encode/expr.rs`): a wildcard has no value to compute with.
fn split_amount(e: &Expr, quantified: bool) -> Option<Expr> {
    fn has_read(a: &Expr) -> bool {
        match &a.kind {
            ExprKind::Read => true,
            ExprKind::Cond { then_expr, else_expr, .. } => has_read(then_expr) || has_read(else_expr),
            _ => false,
        }
    }
    let amount = match &e.kind {
        ExprKind::Perm { amount, .. } | ExprKind::PointsTo { amount, .. } => amount,
        _ => return None,
    };
    let ExprKind::Cond { cond, then_expr, else_expr } = &amount.kind else { return None };
    if !has_read(amount) {
        return None;
    }
    let with = |a: &Expr| {
        let mut x = e.clone();
        if let ExprKind::Perm { amount, .. } | ExprKind::PointsTo { amount, .. } = &mut x.kind {
            **amount = a.clone();
        }
        x
    };
    let (then_perm, else_perm) = (with(then_expr), with(else_expr));
    let mk = |kind: ExprKind, ty: crate::ast::Ty| Expr { kind, span: e.span, ty };
    let (rt, bt) = (crate::ast::Ty::Resource, crate::ast::Ty::Bool);
    Some(if quantified {
        let not_c = mk(ExprKind::Unary { op: crate::ast::UnOp::Not, operand: cond.clone() }, bt);
        let l = mk(ExprKind::Binary { op: BinOp::Implies, lhs: cond.clone(), rhs: Box::new(then_perm) }, rt.clone());
        let r = mk(ExprKind::Binary { op: BinOp::Implies, lhs: Box::new(not_c), rhs: Box::new(else_perm) }, rt.clone());
        mk(ExprKind::Binary { op: BinOp::Star, lhs: Box::new(l), rhs: Box::new(r) }, rt)
    } else {
        mk(ExprKind::Cond { cond: cond.clone(), then_expr: Box::new(then_perm), else_expr: Box::new(else_perm) }, rt)
    })
}

fn is_positive_literal(p: &Term) -> bool {
    match p.node() {
        Node::RealLit(n, d) => *n > 0 && *d > 0,
        _ => p.as_int_lit().is_some_and(|k| k > 0),
    }
}

fn const_var(t: &Term) -> Option<(Rc<str>, Sort)> {
    match t.node() {
        Node::Const(n, s) => Some((n.clone(), s.clone())),
        _ => None,
    }
}

/// `t = k·v + d` with `k ≠ 0` a constant and `d` free of `v`.
pub fn affine(t: &Term, v: &str) -> Option<(i128, Term)> {
    if !t.mentions(v) {
        return None;
    }
    let (k, d) = lin(t, v)?;
    (k != 0).then_some((k, d))
}

fn lin(t: &Term, v: &str) -> Option<(i128, Term)> {
    if !t.mentions(v) {
        return Some((0, t.clone()));
    }
    match t.node() {
        Node::Const(n, _) if &**n == v => Some((1, Term::int(0))),
        Node::Op(Op::Add, a, _) => {
            let (k1, d1) = lin(&a[0], v)?;
            let (k2, d2) = lin(&a[1], v)?;
            Some((k1.checked_add(k2)?, d1.add(&d2)))
        }
        Node::Op(Op::Sub, a, _) => {
            let (k1, d1) = lin(&a[0], v)?;
            let (k2, d2) = lin(&a[1], v)?;
            Some((k1.checked_sub(k2)?, d1.sub(&d2)))
        }
        Node::Op(Op::Neg, a, _) => {
            let (k, d) = lin(&a[0], v)?;
            Some((k.checked_neg()?, d.neg()))
        }
        Node::Op(Op::Mul, a, _) => match (a[0].as_int_lit(), a[1].as_int_lit()) {
            (Some(c), _) => {
                let (k, d) = lin(&a[1], v)?;
                Some((k.checked_mul(c)?, d.mul(&Term::int(c))))
            }
            (_, Some(c)) => {
                let (k, d) = lin(&a[0], v)?;
                Some((k.checked_mul(c)?, d.mul(&Term::int(c))))
            }
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_indices_are_recognised() {
        let i = Term::konst("i", Sort::Int);
        let n = Term::konst("n", Sort::Int);
        let t = Term::int(2).mul(&i).add(&n).sub(&Term::int(1));
        let (k, d) = affine(&t, "i").unwrap();
        assert_eq!(k, 2);
        assert_eq!(d, n.sub(&Term::int(1)));
        assert!(affine(&i.mul(&n), "i").is_none());
        assert!(affine(&n, "i").is_none());
    }
}
